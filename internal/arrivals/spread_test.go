package arrivals

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// saturatedRun feeds an Estimator a queue whose slots of 4 s work stay
// busy (a deep visible backlog) while the arrival rate of each 5 s interval
// is rate(i); it returns the estimator, how many intervals before stepAt
// read a surge, and the first interval from stepAt on that did (-1: none).
func saturatedRun(n, stepAt int, slots float64, rate func(i int) float64) (e *Estimator, calm, first int) {
	const dt = 5 * time.Second
	e = new(Estimator)
	at := t0
	visible := 20_000.0
	f := Flow{Servers: slots, PerServer: 0.25, Keep: 7 * time.Minute, Tau: time.Minute}
	e.Update(Counts{At: at, Visible: visible, InFlight: slots}, 1, f)
	first = -1
	for i := range n {
		at = at.Add(dt)
		visible += (rate(i) - slots*0.25) * dt.Seconds()
		e.Update(Counts{At: at, Visible: math.Max(visible, 5_000), InFlight: slots}, 1, f)
		if _, ok := e.Surge(at); ok {
			if i < stepAt {
				calm++
			} else if first < 0 {
				first = i
			}
		}
	}
	return e, calm, first
}

// wander is lognormal noise of σ 0.3 on a mean of 1, correlated over 30 s
// (an AR(1) of the log at 5 s steps), the way a web server's per-second
// arrivals wander within a minute.
func wander(seed uint64, n int) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	const sigma, tau, dt = 0.3, 30.0, 5.0
	phi := math.Exp(-dt / tau)
	x := r.NormFloat64() * sigma
	out := make([]float64, n)
	for i := range out {
		out[i] = math.Exp(x - sigma*sigma/2)
		x = phi*x + math.Sqrt(1-phi*phi)*sigma*r.NormFloat64()
	}
	return out
}

// Traffic that wanders by tens of percent within a minute is no surge: the
// surge test measures the intervals' spread around the estimate and asks a
// surge to stand out of it, not only out of counting noise. Over 100 minutes
// of 30 msg/s wandering with σ 0.3, ten seeds, counting noise alone
// (σ = √((m + 25) ÷ 5 s), about 3.4 msg/s) reads 400 of the 12,000
// intervals as surges (25 to 54 a seed); the measured spread (about 9
// msg/s) leaves 79. A step to three times the rate on the same wander is
// still read within two intervals, as on Poisson arrivals.
func TestSurgeStandsOutOfTheTrafficsOwnSpread(t *testing.T) {
	t.Parallel()
	const n, stepAt = 1440, 1200
	total := 0
	for seed := range uint64(10) {
		w := wander(seed, n)
		_, calm, _ := saturatedRun(stepAt, stepAt, 100, func(i int) float64 { return 30 * w[i] })
		total += calm
		_, _, first := saturatedRun(n, stepAt, 100, func(i int) float64 {
			if i >= stepAt {
				return 90 * w[i]
			}
			return 30 * w[i]
		})
		if first < 0 || first > stepAt+1 {
			t.Errorf("seed %d: a step to 3× read at interval %d, want %d or %d", seed, first, stepAt, stepAt+1)
		}
	}
	if total > 10*stepAt/100 {
		t.Errorf("%d of %d intervals of wandering traffic read as surges, want at most 1 %%", total, 10*stepAt)
	}
}

// On Poisson arrivals the measured spread is counting noise, and a step of
// half again is still read at once: 200 msg/s to 300 msg/s, at 5 s.
func TestSurgeOnPoissonArrivalsIsReadAsBefore(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 7))
	const n, stepAt = 600, 400
	counts := make([]float64, n)
	for i := range counts {
		mean := 200.0 * 5
		if i >= stepAt {
			mean = 300 * 5
		}
		// Poisson by its normal approximation at these counts.
		counts[i] = math.Max(mean+math.Sqrt(mean)*r.NormFloat64(), 0) / 5
	}
	e, calm, first := saturatedRun(n, stepAt, 800, func(i int) float64 { return counts[i] })
	if calm > 0 {
		t.Errorf("%d surges read on steady Poisson arrivals", calm)
	}
	if first != stepAt+1 {
		t.Errorf("a step of half again read at interval %d, want %d (the second, the lower of two measurements)", first, stepAt+1)
	}
	if s := e.Spread(); !(s > 0.5*200 && s < 2*300) {
		t.Errorf("spread %v (msg/s)² s on Poisson arrivals of 200 to 300 msg/s, want about the rate", s)
	}
}

// A burst's end does not widen the spread: Poisson arrivals at 50 msg/s,
// then five minutes at 15 times that. When the burst ends, the estimate's
// lag behind it shrinks through the spread's bound for minutes; the spread
// waits two smoothing times after the last jump beyond twice its bound, so
// five minutes after the burst it is at most twice what it was before it
// (about 1.9: the burst's own counting noise at 750 msg/s, taken while it
// lasted, decays over ten smoothing times), where taking the tail widened
// it from 40 to 272 (msg/s)² s, and each burst widened it again.
func TestSpreadIsNotWidenedByABurst(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 5))
	const dt = 5 * time.Second
	var e Estimator
	at := t0
	f := Flow{Servers: -1, Keep: 7 * time.Minute, Tau: time.Minute}
	total := 0.0
	e.Update(Counts{At: at}, 1, f)
	step := func(rate float64, n int) {
		for range n {
			at = at.Add(dt)
			mean := rate * dt.Seconds()
			total += math.Max(mean+math.Sqrt(mean)*r.NormFloat64(), 0)
			e.Update(Counts{At: at, Visible: total}, 1, f)
		}
	}
	step(50, 720)
	before := e.Spread()
	step(750, 60)
	step(50, 60)
	t.Logf("spread %v before, %v after", before, e.Spread())
	if after := e.Spread(); !(before > 0) || after > 2*before {
		t.Errorf("spread %v (msg/s)² s five minutes after a burst, %v before it", after, before)
	}
}
