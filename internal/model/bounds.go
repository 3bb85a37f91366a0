package model

import "math"

// The bounds of a fleet's desired count, decided once here for the policy,
// the publisher, the read model, the status page and the simulator, so
// that what the page shows is what is set.
//
// Precedence, from DESIGN.md's "never exceed the group's max or a
// configured cap, or go below min":
//
//  1. The ceilings are hard and never exceeded: fleet.max, fleet.cap, and
//     the fleet's own maximum (an Auto Scaling group's MaxSize, as read).
//     The count is at most the lowest of them.
//  2. The floors hold below the ceilings: fleet.min, and the fleet's own
//     minimum (an Auto Scaling group's MinSize, below which AWS refuses a
//     desired count). The count is at least the highest of them.
//  3. When a floor is above a ceiling (a group whose own MaxSize is below
//     fleet.min), the ceiling wins: the count is the ceiling. When that
//     floor is the fleet's own minimum, the platform refuses every count
//     the ceilings allow: nothing can be set (Refused).
//
// An operator's pin (fleet.pin, the queue-checker:pin tag) is a count
// asked for, not a bound: it is clamped like any other.

// Limits are a group's configured bounds: fleet.min, fleet.max and
// fleet.cap (a Max or Cap of 0: none).
type Limits struct{ Min, Max, Cap int }

// Names of the limit that sets a bound (Bounds.HiBy, Bounds.LoBy).
const (
	LimitMin      = "min"
	LimitMax      = "max"
	LimitCap      = "cap"
	LimitGroupMin = "group's min"
	LimitGroupMax = "group's max"
)

// KindAutoScaling is the Fleet.Kind of an EC2 Auto Scaling group.
const KindAutoScaling = "autoscaling"

// Bounds are the lowest and highest desired count a fleet may be set to.
type Bounds struct {
	// Lo and Hi are the bounds: Lo <= Hi always; Hi is math.MaxInt when
	// nothing bounds the count from above.
	Lo, Hi int
	// HiBy names the ceiling that sets Hi (LimitMax, LimitGroupMax,
	// LimitCap; a tie goes to the cap, then to max), "" when none does.
	// LoBy names the floor that sets Lo (LimitMin, LimitGroupMin; a tie
	// goes to min), "" when none is above 0.
	HiBy, LoBy string
	// Floor is the highest floor, before a ceiling below it lowers Lo to
	// Hi; Crossed reports that it did.
	Floor   int
	Crossed bool
	// Refused: the fleet's own minimum is above a ceiling, so the platform
	// refuses every count the ceilings allow.
	Refused bool
}

// OwnBounds are the bounds the fleet's platform enforces on its desired
// count, as read: its Min and Max when it was read (Known); a Max of 0
// means none except for an Auto Scaling group, whose MaxSize of 0 holds
// it at zero (ECS services and Kubernetes workloads report 0 and 0).
// hi is -1 when there is no maximum.
func (f Fleet) OwnBounds() (lo, hi int) {
	if !f.Known {
		return 0, -1
	}
	lo, hi = max(f.Min, 0), -1
	if f.Max > 0 || f.Kind == KindAutoScaling {
		hi = max(f.Max, 0)
	}
	return lo, hi
}

// For are the bounds of the limits on fleet f (see the precedence above).
func (l Limits) For(f Fleet) Bounds {
	ownLo, ownHi := f.OwnBounds()
	return l.bounds(ownLo, ownHi)
}

// bounds are the limits' bounds with the fleet's own minimum ownLo and
// maximum ownHi (-1: none).
func (l Limits) bounds(ownLo, ownHi int) Bounds {
	b := Bounds{Hi: math.MaxInt}
	if l.Max > 0 {
		b.Hi, b.HiBy = l.Max, LimitMax
	}
	if ownHi >= 0 && ownHi < b.Hi {
		b.Hi, b.HiBy = ownHi, LimitGroupMax
	}
	if l.Cap > 0 && l.Cap <= b.Hi {
		b.Hi, b.HiBy = l.Cap, LimitCap
	}
	if l.Min > 0 {
		b.Floor, b.LoBy = l.Min, LimitMin
	}
	if ownLo > b.Floor {
		b.Floor, b.LoBy = ownLo, LimitGroupMin
	}
	b.Lo = b.Floor
	if b.Lo > b.Hi {
		b.Lo, b.Crossed = b.Hi, true
		b.Refused = ownLo > b.Hi
	}
	return b
}

// Clamp is n within the bounds.
func (b Bounds) Clamp(n int) int {
	return min(max(n, b.Lo), b.Hi)
}
