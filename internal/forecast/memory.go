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
	f.memExcess, f.memN = 0, 0
	ex := &f.memEx
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
	f.memN, f.memSpan, f.memHorizon = n, float64(f.last-from+1)+memoryPrior, float64(hm)
	f.memExcess = f.memLevel(memoryChance)
}

// memLevel is the highest excess of the recent bursts (memory) for which
// bursts at least that far above the baseline come within the horizon with
// probability chance or more; 0 when none does.
func (f *Forecaster) memLevel(chance float64) float64 {
	xs := f.memEx[:f.memN]
	for i := len(xs) - 1; i >= 0; i-- {
		count := float64(len(xs) - i) // bursts at least xs[i] above the baseline
		if 1-math.Exp(-count/f.memSpan*f.memHorizon) >= chance {
			return xs[i]
		}
	}
	return 0
}
