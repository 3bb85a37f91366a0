package policy

import (
	"math"
	"time"
)

// No motion for noise. The arrival estimate wanders around a steady rate by
// more than Poisson counting explains: each interval's observation adds the
// change of three approximate counts to completions read from the in-flight
// count, errors that persist for about the smoothing time, so on steady
// traffic the estimate moves the rate floors up and down a worker or two
// every few minutes, beyond the deadband. A change of the estimate its own
// noise explains is no change: the rate floors size for the rate they were
// last sized for (held) while the estimate stays within noiseSigmas
// standard deviations of it and the fleet keeps up (see keepsUp).
//
// The standard deviation is measured, as the estimate's spread around its
// near mean f, an EWMA of it with time constant T = noiseNear × τ (τ =
// ArrivalSmoothing): σ² is an EWMA, time constant noiseSlow × τ, of
// (estimate − f)² × (T + τ) ÷ T, since noise correlated over τ shows only
// T ÷ (T + τ) of its variance around an EWMA over T. It is never less than
// Poisson counting alone gives an EWMA of time constant τ, λ ÷ 2τ. A level
// that moves at s msg/s a second keeps the estimate s × T from f, so a day's
// swing adds (s × T)² to σ², not the (s × noiseSlow × τ)² it would add
// around the slow mean m (an EWMA over noiseSlow × τ), which would read the
// swing as noise and hold a falling fleet; a step adds to σ for a while,
// which holds nothing while the fleet cannot keep up.
//
// A level that moves is no noise either: every noiseSlow × τ the slow mean
// is compared with its value one such window before (drift), and while it
// moved by more than its own noise (noiseSigmas × σ ÷ √noiseSlow), over the
// last whole window or already within the current one, nothing is held, so
// a ramp or a day's swing is followed as before.
type rateNoise struct {
	m, v float64 // the slow mean, msg/s, and the estimate's variance, (msg/s)²
	f    float64 // the near mean, msg/s (see observe)
	n    int     // estimates observed
	// anchor is the slow mean at the start of the current window, elapsed
	// the seconds since, and drift the slow mean's change over the last
	// whole window (NaN until one has passed).
	anchor, elapsed, drift float64
}

// Tuning of the noise hold (see rateNoise).
const (
	noiseSigmas = 3
	noiseSlow   = 10
	// noiseNear: the spread is measured around the estimate's EWMA over
	// noiseNear × τ, near enough that a moving level adds little to it.
	noiseNear = 2
	// noiseMinObs is how many estimates must be observed before the spread
	// holds anything.
	noiseMinObs = 24
)

// observe adds the estimate est at the end of an interval dt seconds long;
// tau is the estimate's time constant, seconds.
func (rn *rateNoise) observe(est, dt, tau float64) {
	if !(dt > 0) || !(tau > 0) || math.IsNaN(est) || math.IsInf(est, 0) {
		return
	}
	if rn.n == 0 {
		rn.m, rn.v, rn.f = est, 0, est
		rn.anchor, rn.elapsed, rn.drift = est, 0, math.NaN()
	} else {
		a := 1 - math.Exp(-dt/(noiseSlow*tau))
		rn.m += a * (est - rn.m)
		rn.f += (1 - math.Exp(-dt/(noiseNear*tau))) * (est - rn.f)
		d := est - rn.f
		rn.v += a * (d*d*(noiseNear+1)/noiseNear - rn.v)
		if rn.elapsed += dt; rn.elapsed >= noiseSlow*tau {
			rn.drift, rn.anchor, rn.elapsed = rn.m-rn.anchor, rn.m, 0
		}
	}
	rn.n++
}

// sigma is the estimate's standard deviation at rate lam, tau seconds of
// smoothing; ok is false while too few estimates are known.
func (rn *rateNoise) sigma(lam, tau float64) (float64, bool) {
	if rn.n < noiseMinObs || !(tau > 0) {
		return 0, false
	}
	return math.Sqrt(math.Max(rn.v, math.Max(lam, 0)/(2*tau))), true
}

// still is the estimate's measured variance while the level does not move
// (its slow mean drifted by no more than its own noise over the last
// window), (msg/s)²; 0 while unknown or while the level moves, when the
// spread measures the move as much as the noise. tau is the estimate's time
// constant, seconds.
func (rn *rateNoise) still(tau float64) float64 {
	sigma, ok := rn.sigma(rn.m, tau)
	if !ok || rn.moves(noiseSigmas*sigma/math.Sqrt(noiseSlow)) {
		return 0
	}
	return rn.v
}

// moves reports whether the level moves: the slow mean drifted by more
// than sm over its last whole window, or has already within the current one
// (so that a decline is seen within the window it begins in), or no window
// has passed yet.
func (rn *rateNoise) moves(sm float64) bool {
	if !(math.Abs(rn.drift) <= sm) {
		return true
	}
	return math.Abs(rn.m-rn.anchor) > sm
}

// learnNoise feeds the estimate to the noise measurement.
func (c *call) learnNoise() {
	st := c.st
	if !c.prevOK || !st.est.Updated(c.at) {
		return
	}
	if c.surging || st.bursts.on {
		// A surge or a burst is no noise: the spread is measured afresh
		// after it.
		st.noise = rateNoise{}
		return
	}
	rate, _ := st.est.Rate()
	st.noise.observe(rate, c.at.Sub(c.prev.at).Seconds(), c.s.ArrivalSmoothing.Seconds())
}

// keepsUp reports whether the fleet keeps up with the arrivals now: its
// workers keep pace with them, the visible messages are fewer than half a
// promise's arrivals, and the oldest message, when known, is within half the
// promise.
func (c *call) keepsUp() bool {
	if !c.lambdaKnown || float64(c.current)*c.muEff < c.lambdaEff {
		return false
	}
	if latency := c.latency(); latency > 0 {
		if c.visible > c.lambda*latency/2 || c.ageOK && c.age > latency/2 {
			return false
		}
	}
	return true
}

// noiseCheck sets c.noiseHold (see rateNoise): the estimate is within
// noiseSigmas of its noise of its slow mean, the fleet keeps up, and the
// fleet's count is one the rate floors give for a rate within noiseSigmas
// of the slow mean's own noise (σ ÷ √noiseSlow). The floors still size for
// the estimate; the guard leaves the fleet as it is.
func (c *call) noiseCheck(lam float64) {
	s, rn := c.s, &c.st.noise
	tau := s.ArrivalSmoothing.Seconds()
	sigma, ok := rn.sigma(c.lambda, tau)
	plain := ok && c.lambda > 0 && !c.surging && c.rise == 0 && c.peakEff <= c.lambdaEff && lam == c.lambdaEff &&
		(!c.bp.known || !c.bp.f.on) && c.keepsUp()
	if !plain || math.Abs(c.lambda-rn.m) > noiseSigmas*sigma {
		return
	}
	sm := noiseSigmas * sigma / math.Sqrt(noiseSlow)
	if rn.moves(sm) {
		return // the level moves (or has not been watched a whole window)
	}
	lo := c.rateFloorAt(effectiveArrival(math.Max(rn.m-sm, 0), s.BurstReserve))
	hi := c.rateFloorAt(effectiveArrival(rn.m+sm, s.BurstReserve))
	c.noiseHold = lo <= c.current && c.current <= hi
	c.noiseLo, c.noiseHi, c.noiseMean = lo, hi, rn.m
}

// noiseReason says why the fleet is left as it is.
func (c *call) noiseReason() {
	c.reason("arrivals %s msg/s are within the estimate's noise of their %s average, %s msg/s, which the rate floors size with %d to %d workers, and the fleet keeps up: %d workers, no change",
		number(c.lambda), c.st.texts.of(time.Duration(noiseSlow)*c.s.ArrivalSmoothing, slotWindow), number(c.noiseMean), c.noiseLo, c.noiseHi, c.current)
}
