package sim

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestWaitQuantilesWithinTheirBucket(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		draw func() float64
	}{
		{"exponential around 1 s", func() float64 { return r.ExpFloat64() }},
		{"microseconds", func() float64 { return r.Float64() * 2e-3 }},
		{"hours", func() float64 { return 3600 * (1 + r.Float64()) }},
		{"mostly zero", func() float64 { return max(0, r.NormFloat64()) }},
	}
	for _, tt := range tests {
		var ws waitStats
		vals := make([]float64, 20000)
		for i := range vals {
			vals[i] = tt.draw()
			ws.add(vals[i])
		}
		slices.Sort(vals)
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
			want := vals[int(math.Ceil(q*float64(len(vals))))-1] // nearest rank
			got := ws.quantile(q)
			if math.Abs(got-want) > 0.002*want+1e-6 {
				t.Errorf("%s: q%v = %v, want %v", tt.name, q, got, want)
			}
		}
	}
}
