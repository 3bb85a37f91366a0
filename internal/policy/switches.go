package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// HoldSwitchNotUnderstood is the HoldReason of a group held because an
// operator's switch on its fleet is not understood (Decision.SwitchProblems).
const HoldSwitchNotUnderstood = "switch not understood"

// safety applies the guards that make the checker safe to own a fleet,
// after the sizing guards and before the clamp: it says when the fleet was
// not read (so nothing per worker can be trusted), and applies the
// operator's switches, from the configuration (Settings) or the fleet's
// tags (model.Switches), in this order: a pause holds the current count; a
// pin sets the count (the clamp still keeps it within the bounds); with
// scale-in off the count never falls below the current one.
func (c *call) safety() {
	switch {
	case c.fleet.Kind == "":
		c.reason("no fleet is read: current workers are the last desired count; per-worker metrics are not published")
	case !c.fleet.Known:
		c.reason("the fleet was not read: only Backlog and OldestMessageAge are published, so a policy tracking the per-worker ratio sees no data and holds")
	}

	c.scaleToZero()

	sw := c.fleet.Switches
	if len(sw.Warnings) > 0 {
		c.d.Warnings = append([]string(nil), sw.Warnings...)
	}
	problems := slices.Clone(sw.NotUnderstood)
	if sw.Pinned {
		// A pin outside the bounds is not clamped into them: the operator
		// asked for a count the fleet may not have, and what they meant
		// is not known.
		switch lo, hi, by := c.s.Bounds(c.fleet); {
		case sw.Pin > hi:
			problems = append(problems, fmt.Sprintf("pin=%d on the fleet is above the %s (%d): not clamped; the group is held, neither scaled in nor out", sw.Pin, by, hi))
		case sw.Pin < lo:
			problems = append(problems, fmt.Sprintf("pin=%d on the fleet is below the min (%d): not clamped; the group is held, neither scaled in nor out", sw.Pin, lo))
		}
	}
	if c.fleetFailed {
		// The switches were not read this time: those not understood at
		// the last read still hold the group until a read says otherwise.
		problems = c.st.switchProblems
	} else {
		c.st.switchProblems = problems
	}
	switch {
	case len(problems) > 0:
		// Intent that is not understood holds: neither in nor out, and no
		// scaling call (see the publisher), as a pause.
		c.d.SwitchProblems = problems
		c.d.Held, c.d.HoldReason = true, HoldSwitchNotUnderstood
		c.target = c.current
		c.reason("holding at %d, neither in nor out, no scaling call: %d switch(es) on the fleet not understood: %s; metrics are still published",
			c.current, len(problems), strings.Join(problems, "; "))
		return
	case sw.Paused || c.s.Paused:
		c.d.Paused = true
		c.d.Held, c.d.HoldReason = true, "paused"
		c.target = c.current
		if sw.Paused {
			c.d.PausedBy = sw.PausedBy
			if !sw.PausedSince.IsZero() {
				c.b.pausedSince = sw.PausedSince
				c.d.PausedSince = &c.b.pausedSince
			}
			who := sw.PausedBy
			if who == "" {
				who = "someone (no queue-checker:paused-by tag)"
			}
			c.reason("paused by %s since %s (tag queue-checker:paused on the fleet): holding at %d, no scaling; metrics are still published",
				who, sw.PausedSince.UTC().Format(time.RFC3339), c.current)
		} else {
			c.d.PausedBy = "configuration"
			c.reason("paused by the configuration (fleet.paused): holding at %d, no scaling; metrics are still published", c.current)
		}
		return
	case sw.Pinned || c.s.Pinned:
		n, by := c.s.Pin, "the configuration (fleet.pin)"
		if sw.Pinned {
			n, by = sw.Pin, "tag queue-checker:pin on the fleet"
		}
		c.b.pinned = n
		c.d.Pinned = &c.b.pinned
		c.target = n
		c.reason("pinned at %d by %s; the sizing asks for %d", n, by, c.rec)
	}
	if (sw.ScaleInOff || c.s.ScaleInOff) && c.target < c.current {
		by := "the configuration (fleet.scale_in: false)"
		if sw.ScaleInOff {
			by = "tag queue-checker:scale-in=false on the fleet"
		}
		c.reason("scale-in is off by %s: holding at %d instead of %d", by, c.current, c.target)
		c.target = c.current
	}
	c.d.ScaleInOff = sw.ScaleInOff || c.s.ScaleInOff
	c.takeoverHold()
}

// takeoverHold keeps a group's fleet from scaling in during the first
// scale-in window after this checker took its lease (Settings.TakenOver):
// the decisions of the previous owner within that window are not known
// here, so the new owner scales out as needed but scales in only once a
// whole window of its own has passed. Like every guard it comes before the
// clamp: the count held is within the bounds.
func (c *call) takeoverHold() {
	since, window := c.s.TakenOver, c.s.ScaleInStabilization
	if since.IsZero() || !c.fleet.Known || c.target >= c.fleet.Desired || window <= 0 {
		// With scale-in not stabilised there is no window to wait out.
		return
	}
	end := since.Add(window)
	if !c.now.Before(end) {
		return
	}
	wanted := c.target
	c.target = c.fleet.Desired
	c.d.Held = true
	c.d.HoldReason = fmt.Sprintf("lease taken over %s ago: no scale-in until one scale-in window (%s) has passed", c.now.Sub(since).Round(time.Second), window)
	c.reason("scale-in to %d held until %s: this checker took the group's lease at %s",
		wanted, end.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
}
