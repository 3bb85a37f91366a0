package forecast

import (
	"math"
	"slices"
)

// The burst memory: recent bursts no pattern explains.

// memory computes the recent-bursts rate (see forecaster): bursts are the
// onsets of hot runs no pattern explains within the last memoryMinutes, each
// with its excess, its run's peak over the baseline before it. Counting them
// as a Poisson process over the history seen (plus memoryPrior minutes
// without bursts, so that a short history does not make one burst look
// frequent), the level kept is the highest excess e for which bursts at
// least e above the baseline come within the horizon with probability
// memoryChance or more: 1 − exp(−(bursts ≥ e) ÷ span × horizon).
func (f *Forecaster) memory(hm int64) {
	f.memExcess = 0
	var ex [maxBursts]float64
	n := 0
	from := max(f.first, f.last-memoryMinutes+1)
	for g := f.last; g >= from && n < maxBursts; g-- {
		if !f.isOnset(g) || f.isExplain(g) {
			continue
		}
		b, ok := f.baseline(g)
		if !ok {
			// A burst before the first baseline: against today's.
			if b, ok = f.base, f.baseOK; !ok {
				continue
			}
		}
		_, peak := f.run(g)
		if e := peak - b; e > 0 {
			ex[n] = e
			n++
		}
	}
	if n == 0 {
		return
	}
	xs := ex[:n]
	slices.Sort(xs)
	span := float64(f.last-from+1) + memoryPrior
	for i := n - 1; i >= 0; i-- {
		count := float64(n - i) // bursts at least xs[i] above the baseline
		if 1-math.Exp(-count/span*float64(hm)) >= memoryChance {
			f.memExcess = xs[i]
			return
		}
	}
}
