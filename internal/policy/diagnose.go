package policy

import (
	"math"

	"github.com/queuechecker/queue-checker/internal/model"
)

// diagnose reads depth and age against in-flight, in this order:
//
//   - unknown: no usable counts;
//   - not_consuming: messages visible, workers in service, in-flight near
//     zero and the visible count not falling, for streakSamples consecutive
//     samples spanning at least the start delay (workers just in service may
//     still be starting), with no completions measured: a crash loop or a
//     permissions error, which more workers will not fix;
//   - messages_held: in flight above the slots and far above what the
//     deletions explain, over the last whole minute CloudWatch counted (see
//     heldWatch): poison messages, an outage, a downstream that refuses the
//     work. It ranks above stuck, being more specific (workers that hang
//     hold at most their slots; held messages are more);
//   - stuck: in-flight at the fleet's capacity for streakSamples samples,
//     two minutes and stuckServiceTimes service times, while
//     NumberOfMessagesDeleted, over a period that began inside that streak,
//     is near zero. It needs the deleted count: without it, in-flight at
//     capacity with a growing depth reads the same as too few workers, and
//     Little's law, which assumes the messages complete, cannot tell them
//     apart;
//   - capped (set after the clamp, ranking below the two above): the cap or
//     max keeps the fleet below what the current load needs (see
//     currentNeed), not merely below a forecast;
//   - idle: nothing visible or delayed, little in flight, and nothing
//     arriving: an arrival estimate of 0 (below quietMessages over the
//     smoothing constant) and no completions measured, or, before any
//     estimate, nothing in flight at all. A group that receives and serves
//     a steady stream with an empty queue is healthy, not idle;
//   - under_provisioned: messages visible and in-flight at capacity, with the
//     current load needing more workers than there are, or the visible count
//     growing for streakSamples samples in a row at capacity (in a small
//     fleet every worker is busy now and then, and a depth that wobbles is
//     not a verdict); at the cap or max with the target above it, capped
//     instead: the limit, not the sizing, keeps the fleet short;
//   - catching_up: as under_provisioned, but the count asked for already
//     meets the load, workers are still starting and the oldest message is
//     within the promise (or its age unknown);
//   - late: messages visible and the oldest, by a fresh reading, older
//     than the promise: never healthy nor draining while the promise is
//     broken;
//   - draining: messages visible and the total (visible + in-flight +
//     delayed) shrinking, drainSamples samples in a row;
//   - healthy otherwise.
//
// Streaks count complete samples only, each sample once.
// drainSamples is how many samples in a row the total must fall for a
// group to be draining.
const drainSamples = 2

func (c *call) diagnose() {
	if !c.usable {
		c.diag = model.DiagUnknown
		return
	}
	st := c.st
	conc := float64(c.s.Concurrency)
	slots := float64(c.inService) * conc
	inFlight := float64(c.sample.InFlight)
	delayed := float64(c.sample.Delayed)
	atCap := inFlight >= atCapacityShare*slots
	nearZero := inFlight <= math.Floor(nearZeroShare*slots)
	serving := float64(c.inService) * c.mu
	completing := c.deletedOK && c.deleted > stuckCompletionShare*serving

	if !c.partial && c.at.After(st.lastDiagAt) {
		st.lastDiagAt = c.at
		falling := c.prevOK && c.visible < c.prev.visible
		if c.visible > 0 && c.inService > 0 && nearZero && !falling && !completing {
			if st.notConsuming == 0 {
				st.notConsumingSince = c.at
			}
			st.notConsuming++
		} else {
			st.notConsuming = 0
		}
		if c.inService > 0 && inFlight > 0 && atCap {
			if st.atCapacity == 0 {
				st.atCapSince, st.atCapLeast = c.at, serving
			}
			st.atCapLeast = math.Min(st.atCapLeast, serving)
			st.atCapacity++
			if c.prevOK && c.visible > c.prev.visible {
				st.growingAtCap++
			} else {
				st.growingAtCap = 0
			}
		} else {
			st.atCapacity, st.growingAtCap = 0, 0
		}
		if c.prevOK && c.visible+inFlight+delayed < c.prev.total() {
			st.shrinking++
		} else {
			st.shrinking = 0
		}
	}

	// Growth that says the fleet is short is growth sample after sample at
	// capacity: a depth that wobbles up and down is the noise of a busy
	// fleet, and a verdict read from one sample would change with each.
	growing := st.growingAtCap >= streakSamples
	// So is a drain: the total falling twice in a row, not once.
	shrinking := st.shrinking >= drainSamples
	switch {
	case st.notConsuming >= streakSamples && c.at.Sub(st.notConsumingSince) >= c.s.StartDelay:
		c.diag = model.DiagNotConsuming
	case c.held:
		c.diag = model.DiagMessagesHeld
	case c.stuck(serving):
		c.diag = model.DiagStuck
	case c.visible == 0 && delayed == 0 && inFlight <= idleShare*slots && c.nothingArrives(inFlight):
		c.diag = model.DiagIdle
	case c.visible > 0 && atCap && c.catchingUp():
		c.diag = model.DiagCatchingUp
	case c.visible > 0 && atCap && (c.recKnown && c.currentNeed() > c.current || growing):
		c.diag = model.DiagUnderProvisioned
	case c.visible > 0 && c.ageOK && c.latency() > 0 && c.age > c.latency():
		c.diag = model.DiagLate
	case c.visible > 0 && shrinking:
		c.diag = model.DiagDraining
	default:
		c.diag = model.DiagHealthy
	}
}

// stuck reports in-flight at capacity with completions near zero, measured
// by a deleted count whose period began inside the at-capacity streak.
func (c *call) stuck(serving float64) bool {
	st := c.st
	if st.atCapacity < streakSamples || !c.deletedOK || c.sample.Deleted.At.Before(st.atCapSince) {
		return false
	}
	streak := c.now.Sub(st.atCapSince)
	if streak < stuckMinStreak || streak.Seconds() < stuckServiceTimes*c.s.ServiceSeconds() {
		return false
	}
	// The deleted count is a minute's, within the streak: against the
	// fewest workers that served in it, not today's (a fleet that grew
	// since completes more than that minute shows).
	return c.deleted <= stuckCompletionShare*math.Min(serving, st.atCapLeast)
}

// nothingArrives reports that no load is measured: the arrival estimate is 0
// (quiet) and no fresh deleted count shows completions; before the first
// estimate, that nothing is in flight either.
func (c *call) nothingArrives(inFlight float64) bool {
	if c.deletedOK && c.deleted > 0 {
		return false
	}
	if c.lambdaKnown {
		return c.lambda == 0
	}
	return inFlight == 0
}

// currentNeed is the count the load now present needs: the recommendation
// without the forecast's share. When the forecast raised the arrivals the
// wait floor sizes for (peakEff above lambdaEff), it is the largest of the
// backlog floors, the utilisation floor and the Erlang C wait floor for
// today's arrivals, plus the safety workers; otherwise the recommendation
// itself. A fleet held below a forecast by the cap is not short of what
// today's load needs, so the forecast never makes a group capped or
// under-provisioned.
func (c *call) currentNeed() int {
	if !c.recKnown || c.s.Policy != PolicyModel || !(c.peakEff > c.lambdaEff) || c.muEff <= 0 {
		return c.rec
	}
	safety := min(max(c.s.SafetyWorkers, 0), maxRecommended)
	need := max(c.b.drain+safety, c.rateFloorAt(c.lambdaEff))
	return min(need, c.rec, maxRecommended)
}

// catchingUp reports a fleet whose desired count already meets the load
// with workers still starting and the promise held, and says when the last
// of them is expected in service.
func (c *call) catchingUp() bool {
	f := c.fleet
	if !f.Known || f.Pending <= 0 || !c.recKnown || c.currentNeed() > c.current {
		return false
	}
	if c.ageOK && c.latency() > 0 && c.age > c.latency() {
		return false
	}
	wait := c.s.StartDelay.Seconds() // a worker of unknown launch: at most the start delay
	if len(f.PendingSince) >= f.Pending {
		wait = 0
		for _, at := range f.PendingSince[:f.Pending] {
			if !at.IsZero() {
				wait = math.Max(wait, c.s.StartDelay.Seconds()-c.now.Sub(at).Seconds())
			}
		}
	}
	if wait < 1 {
		c.reason("catching up: %d workers are starting, due in service now; the oldest message is within the promise", f.Pending)
		return true
	}
	c.b.catchUp = seconds(wait)
	c.reason("catching up: %d workers are starting, the last in service in about %s; the oldest message is within the promise",
		f.Pending, &c.b.catchUp)
	return true
}
