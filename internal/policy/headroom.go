package policy

import (
	"math"

	"github.com/queuechecker/queue-checker/internal/futures"
)

// measuredCeilingTop is the busiest a measured ceiling runs the fleet. The
// replay finds the headroom the last hour's arrivals needed; a surge the
// hour did not hold meets only what is left. Up to 100 %, the flash steps
// (docs/traces/flash-steps.csv, 1 s work, 5 s interval, seeds 1–60: make
// flash) kept a mean of 0.5 point fewer messages within the promise (8 runs
// below 93.5 % against 2), for 1–3 % less cost on the built-in scenarios. A
// small fleet run that busy also has minutes with a backlog at every sample,
// which the fleet measurement reads as saturated: its throughput per worker
// then comes from a few hundred deletions, off by their counting noise (4 %
// low in one traced run), and so is the arrivals' estimate of the fleet
// grown for the surge.
const measuredCeilingTop = 0.9

// headroomShare is the share of the plan's allowance (planAim) a measured
// ceiling may spend on the last hour's arrivals: the rate floors leave the
// rest of the promise's allowance to what they do not see coming (a surge,
// a burst the hour did not hold).
const headroomShare = 0.2

// ceiling is the utilisation ceiling the rate floors size with: the
// setting, or, when it is measured (Settings.MeasuredCeiling), the busiest
// at which a fleet that follows the arrival estimate, its launches a start
// delay late, would have started all but headroomShare of the plan's
// allowance of the last hour's arrivals within the promise (Book.Headroom):
// at most measuredCeilingTop, and never with more headroom than the
// setting's bound. Until the book keeps holdMinSpan of the past, and
// without a promise, the bound.
func (c *call) ceiling() float64 {
	s := c.s
	if !s.MeasuredCeiling || s.Policy != PolicyModel || !(c.latency() > 0) {
		return s.Utilization
	}
	allowance := c.headroomAllowance()
	h, ok := c.replayed(&c.st.headroom, allowance, func(b *futures.Book) (float64, bool) {
		f := futures.Follower{Headroom: 1 / s.Utilization, Least: 1 / measuredCeilingTop,
			Tau: s.ArrivalSmoothing.Seconds(), Lag: s.StartDelay.Seconds()}
		return b.Headroom(f, c.latency(), allowance)
	})
	if !ok || !(h > 0) {
		return s.Utilization
	}
	return math.Min(math.Max(s.Utilization, 1/h), measuredCeilingTop)
}

// headroomAllowance is the share of the last hour's arrivals a measured
// ceiling may leave late.
func (c *call) headroomAllowance() float64 {
	return (1 - c.s.LatencyQuantile) * planAim(c.st.budget) * headroomShare
}

// utilReason says the utilisation floor and the ceiling it is at: the
// setting, or what measuring it found.
func (c *call) utilReason() {
	s, h := c.s, &c.st.headroom
	u := c.ceiling()
	switch {
	case !s.MeasuredCeiling || !(c.latency() > 0) || s.Policy != PolicyModel:
		c.reason("utilisation floor %d at the %s ceiling", c.b.util, percent(u))
	case h.steps == 0 || !h.ok:
		c.reason("utilisation floor %d at the %s ceiling until the checker has seen %s of arrivals to measure it from",
			c.b.util, percent(u), span(holdMinSpan))
	case u <= s.Utilization:
		c.reason("utilisation floor %d at the %s ceiling, measured: the last hour's arrivals, followed as estimated with launches a start delay late, needed all its headroom for all but %s %% of them to start within the promise",
			c.b.util, percent(u), number(100*c.headroomAllowance()))
	default:
		c.reason("utilisation floor %d at a %s ceiling, measured: the busiest, up to %s, at which the last hour's arrivals, followed as estimated with launches a start delay late, would have started all but %s %% of them within the promise (no less busy than %s)",
			c.b.util, percent(u), percent(measuredCeilingTop), number(100*c.headroomAllowance()), percent(s.Utilization))
	}
}
