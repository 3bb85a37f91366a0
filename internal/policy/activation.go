package policy

import "time"

// DefaultActivation is the backlog (visible plus delayed messages) that
// wakes a group at zero workers when Settings.Activation is 0.
const DefaultActivation = 1

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
//   - with workers, it goes to zero only once nothing has been visible,
//     delayed or in flight for the scale-in stabilisation window, counted
//     from the first empty sample. Until then it keeps one worker, so sparse
//     traffic (a message every few minutes) finds a worker running instead
//     of launching and retiring one for every message.
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
	switch {
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
