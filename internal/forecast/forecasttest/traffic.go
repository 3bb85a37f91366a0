// Package forecasttest makes the arrival counts the forecast's tests feed
// it: minutes of Poisson counts around a rate that varies by minute.
package forecasttest

import (
	"math"
	"math/rand/v2"
)

// Poisson draws a Poisson count of mean m: Knuth's method for small means,
// the normal approximation for large ones.
func Poisson(r *rand.Rand, m float64) float64 {
	if m <= 0 {
		return 0
	}
	if m > 50 {
		return math.Max(0, math.Round(m+math.Sqrt(m)*r.NormFloat64()))
	}
	l, k, p := math.Exp(-m), 0.0, 1.0
	for {
		p *= r.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// Minutes makes n minutes of Poisson counts whose mean per minute is
// rate(i) × 60 for minute i, drawn from seed.
func Minutes(seed uint64, n int, rate func(i int) float64) []float64 {
	r := rand.New(rand.NewPCG(seed, 99))
	c := make([]float64, n)
	for i := range c {
		c[i] = Poisson(r, rate(i)*60)
	}
	return c
}
