package arrivals

import (
	"math"
	"time"
)

// The arrival estimate is an EWMA: while arrivals climb steadily it lags
// them by the climb over its time constant τ, and the workers launched now
// serve the rate of a start delay later. So while the estimate itself has
// climbed through the whole of its last 2τ (the model policy only), the
// sizing adds the climb over τ + the start delay to it:
//
//	rise = slope × (τ + start delay),  slope = the least of three parts' slopes
//
// over the window's parts τ, τ/2 and τ/2. For a steady ramp this is the rate
// when the new workers are in service. Each later part must climb at least
// trendKeep times as fast as the one before: a ramp climbs evenly (or
// faster, as the estimate catches up with it), while the estimate's
// approach to a step slows by e^-½ from one half τ to the next, so a step
// adds nothing (the backlog floors and the surge serve it). Each part must
// climb by more than trendSigmas standard deviations of the noise of the
// difference of two estimates and by trendMinShare of the estimate (the
// half parts by half of that), so that noise and the slow swings of a day
// do not add workers; the rise is at most the estimate itself. A falling
// estimate adds and removes nothing: scale-in follows the estimate as it is.
const (
	// trendMinShare is the least climb over τ, as a share of the estimate,
	// that counts as a trend: less, the utilisation ceiling's headroom
	// absorbs.
	trendMinShare = 0.1
	// trendSigmas is how many standard deviations of the noise of the
	// difference of two estimates τ apart the climb over τ must exceed.
	trendSigmas = 3
	// trendMarks is how many estimates the last 2τ keeps, at least 2τ ÷
	// trendMarks apart.
	trendMarks = 16
	// trendKeep is the least share of the climb's speed each later part of
	// the window keeps: between a ramp's 1 and a step's e^-½ ≈ 0.61.
	trendKeep = 0.8
)

// Trend keeps the arrival estimates of the last 2τ. The zero value is
// ready to use.
type Trend struct {
	at   []int64 // Unix nanoseconds, oldest first
	rate []float64
}

// Reset forgets the estimates kept.
func (t *Trend) Reset() { t.at, t.rate = t.at[:0], t.rate[:0] }

// Observe records the estimate at a sample, and drops what is older than
// span before the newest kept but the newest such mark (the window's start
// is interpolated).
func (t *Trend) Observe(at time.Time, rate float64, span time.Duration) {
	ns := at.UnixNano()
	if n := len(t.at); n > 0 {
		if ns < t.at[n-1] {
			t.Reset()
		} else if n > 1 && ns-t.at[n-2] < int64(span)/trendMarks {
			// Too close to the mark before the newest: the newest moves.
			t.at[n-1], t.rate[n-1] = ns, rate
			t.trim(ns, span)
			return
		}
	}
	t.at, t.rate = append(t.at, ns), append(t.rate, rate)
	t.trim(ns, span)
}

func (t *Trend) trim(ns int64, span time.Duration) {
	drop := 0
	for drop+1 < len(t.at) && t.at[drop+1] <= ns-int64(span) {
		drop++
	}
	if drop > 0 {
		t.at = append(t.at[:0], t.at[drop:]...)
		t.rate = append(t.rate[:0], t.rate[drop:]...)
	}
}

// value is the estimate at ns, interpolated between marks; false before
// the first.
func (t *Trend) value(ns int64) (float64, bool) {
	if len(t.at) == 0 || ns < t.at[0] {
		return 0, false
	}
	for i := 1; i < len(t.at); i++ {
		if ns <= t.at[i] {
			a, b := t.at[i-1], t.at[i]
			if b == a {
				return t.rate[i], true
			}
			f := float64(ns-a) / float64(b-a)
			return t.rate[i-1] + f*(t.rate[i]-t.rate[i-1]), true
		}
	}
	return t.rate[len(t.rate)-1], true
}

// Rise is what the sizing adds to the estimate rate at now (see above), 0
// when the estimate has not climbed as a ramp through the last 2τ, and the
// slope, in msg/s per second. noise is the estimate's variance as measured
// on a level that does not move, (msg/s)², 0 when not known: a climb that
// noise explains is no climb either.
func (t *Trend) Rise(now time.Time, rate float64, tau, startDelay time.Duration, noise float64) (rise, slope float64) {
	if tau <= 0 || rate <= 0 {
		return 0, 0
	}
	ns := now.UnixNano()
	first, ok := t.value(ns - 2*int64(tau))
	if !ok {
		return 0, 0
	}
	mid, _ := t.value(ns - int64(tau))
	// The noise of an EWMA of Poisson counts is √(λ ÷ 2τ); the
	// observations count the arrivals and the completions, twice the
	// variance; the measured noise when larger; two estimates τ apart are
	// correlated by e^-1.
	sigma := math.Sqrt(math.Max(2*rate/(2*tau.Seconds()), noise)) * math.Sqrt(2*(1-math.Exp(-1)))
	need := math.Max(trendSigmas*sigma, trendMinShare*rate)
	late, _ := t.value(ns - int64(tau)/2)
	sa, sb, sc := (mid-first)/tau.Seconds(), 2*(late-mid)/tau.Seconds(), 2*(rate-late)/tau.Seconds()
	if mid-first <= need || late-mid <= need/2 || rate-late <= need/2 || sb < trendKeep*sa || sc < trendKeep*sb {
		return 0, 0
	}
	slope = min(sa, sb, sc)
	rise = math.Min(slope*(tau+max(startDelay, 0)).Seconds(), rate)
	return rise, slope
}
