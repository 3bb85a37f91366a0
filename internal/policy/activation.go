package policy

import (
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// DefaultActivation is the backlog (visible plus delayed messages) that
// wakes a group at zero workers when Settings.Activation is 0.
const DefaultActivation = model.DefaultActivation

// zeroState is what scale to zero remembers between decisions.
type zeroState struct {
	// quietSince is the first sample of the current run of samples with
	// nothing visible, delayed or in flight; zero while messages are seen.
	quietSince time.Time
}

// scaleToZero applies the rules of a group whose Min is 0, after the
// sizing guards:
//
//   - at zero workers, the group stays asleep until the visible and delayed
//     messages reach Settings.Activation (default 1), and wakes with at least
//     one worker as soon as they do: within one interval of a message;
//
//   - with workers, it goes to zero only once nothing has been visible,
//     delayed or in flight for the scale-in stabilisation window, counted
//     from the first empty sample. Until then it keeps one worker, so sparse
//     traffic (a message every few minutes) finds a worker running instead
//     of launching and retiring one for every message.
//
//   - and not while the forecast expects load, or while messages come often
//     enough that one is expected within the start delay (see
//     expectingMessage): a worker launched for each message would make each
//     wait a start delay, past the promise, for the price of the worker kept.
//
// Decisions on data that cannot be trusted (missing, invalid, stale, or an
// unread fleet) are left to the guards, which hold.
func (c *call) scaleToZero() {
	if c.lo > 0 {
		return
	}
	zs := &c.st.zero
	if !c.usable || c.stale || c.fleetFailed {
		return
	}
	waiting := c.sample.Visible + c.sample.Delayed
	if waiting+c.sample.InFlight > 0 || c.partial {
		zs.quietSince = time.Time{}
	} else if zs.quietSince.IsZero() {
		zs.quietSince = c.at
	}
	activation := int64(c.s.Activation)
	if activation <= 0 {
		activation = DefaultActivation
	}
	forecast := c.s.forecasting() && c.d.Forecast != nil && c.peakEff > c.lambdaEff
	switch {
	case c.current == 0 && waiting < activation && forecast && c.target > 0:
		c.reason("waking from zero for the load the forecast expects")
	case c.current == 0 && waiting < activation:
		if c.target > 0 {
			c.reason("staying at zero: %d visible or delayed, below the activation threshold %d", waiting, activation)
		}
		c.target = 0
	case c.current == 0:
		if c.target < 1 {
			c.target = 1
		}
		c.reason("waking from zero: %d visible or delayed reach the activation threshold %d", waiting, activation)
	case c.target == 0 && !c.d.Held && forecast:
		c.target = 1
		c.reason("keeping 1 worker: the forecast expects load")
	case c.target == 0 && !c.d.Held && c.expectingMessage():
		c.target = 1
	case c.target == 0 && !c.d.Held:
		window := max(c.s.ScaleInStabilization, 0)
		quiet := time.Duration(0)
		if !zs.quietSince.IsZero() {
			quiet = c.at.Sub(zs.quietSince)
		}
		if zs.quietSince.IsZero() || quiet < window {
			c.target = 1
			c.reason("keeping 1 worker until nothing has been visible, delayed or in flight for %s (quiet for %s)", window, quiet.Round(time.Second))
			return
		}
		c.reason("scaling to zero: nothing visible, delayed or in flight for %s", quiet.Round(time.Second))
	}
}

// expectingMessage reports whether the arrivals of the last hour make a
// message within the next start delay and interval likely: at their mean
// rate λ, as a Poisson process, 1 − exp(−λ × (start delay + interval)) is
// memoryChance (5 %) or more. At a start delay of 1 minute that is a
// message every 20 minutes or more often. It says so in the reasons.
func (c *call) expectingMessage() bool {
	if c.s.Forecast.Off || c.s.StartDelay <= 0 {
		return false
	}
	mean, ok := c.st.fc.RecentMean(expectMinutes)
	if !ok {
		return false
	}
	span := c.s.StartDelay + c.st.lastDt
	p := 1 - math.Exp(-mean*span.Seconds())
	if p < forecast.MemoryChance {
		return false
	}
	c.reason("keeping 1 worker: at %s msg/min over the last hour, a message is expected within the %s start delay (%s)",
		number(mean*60), c.s.StartDelay, percent(p))
	return true
}

// expectMinutes is the history expectingMessage reads.
const expectMinutes = 60
