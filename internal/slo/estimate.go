// Package slo estimates how many of a group's messages started within the
// latency promise, from what SQS shows (the visible count, the arrivals the
// checker estimates, the oldest message's age), and keeps the promise's
// error budget over a window. It is pure: time comes in with each input.
//
// The estimate. In a first-in, first-out queue the messages still visible
// are the newest ones to arrive: with V visible, the oldest of them arrived
// when the arrivals counted back from now reach V. So the estimator keeps
// the arrivals of the recent past as cohorts (the messages of one interval,
// spread evenly over it), and each interval:
//
//  1. adds the interval's arrivals as a new cohort;
//  2. takes messages from the oldest cohorts until what is left is the
//     visible count: those are the messages started in the interval,
//     started one after another evenly over it, oldest first;
//  3. counts as late each started message that arrived more than the
//     promise before it started: along the messages taken from one cohort
//     both the arrival and the start move evenly, so the wait does too, and
//     the late part is where it passes the promise.
//
// When more messages are visible than the cohorts hold (arrivals were
// underestimated), the difference is added as arrivals of the last
// interval: the newest.
// A fresh age of the oldest message (CloudWatch's
// ApproximateAgeOfOldestMessage) moves the oldest cohort back to it when it
// says messages are older than the cohorts do, never forward: a message
// found older than thought is late sooner.
//
// Where the estimate cannot be trusted, each step says so (Trust):
// standard queues deliver roughly, not strictly, in order; delayed messages
// become visible after they arrived; held messages (poison, an outage)
// come back to the queue after their visibility timeout and are counted
// again; and during its first promise-length the estimator does not know
// the ages of the backlog it started on.
package slo

import (
	"math"
	"time"
)

// Trust says how far a step's estimate can be relied on.
type Trust int

const (
	// TrustGood means the queue is read as first-in, first-out and
	// nothing disturbed the counts.
	TrustGood Trust = iota
	// TrustRough means the estimate is an approximation (see Step.Why).
	TrustRough
	// TrustNone means nothing is known for the step.
	TrustNone
)

// String is the trust's name as the page, the API and the logs show it.
func (t Trust) String() string {
	switch t {
	case TrustGood:
		return "good"
	case TrustRough:
		return "rough"
	default:
		return "none"
	}
}

// Why a step is not TrustGood, the most severe reason first.
const (
	WhyMissing   = "no sample this interval"
	WhyHeld      = "messages are held and return to the queue: redeliveries are counted as arrivals"
	WhyWarming   = "the ages of the backlog found at start are not known yet"
	WhyUnordered = "a standard queue delivers in rough order only"
	WhyDelayed   = "delayed messages become visible after they arrive"
)

// Input is one interval of one group, as the daemon and the simulator see it.
type Input struct {
	At time.Time
	// Visible is the messages waiting to be received.
	Visible float64
	// Arrived is the messages that arrived since the previous input (the
	// arrival estimate × the time since then).
	Arrived float64
	// OldestAge is the age of the oldest visible message, seconds, as read
	// at OldestAt; < 0 when unknown.
	OldestAge float64
	OldestAt  time.Time
	// Delayed is the messages delayed (not yet visible).
	Delayed float64
	// Unordered: a standard queue, whose order of delivery is best effort.
	Unordered bool
	// Held: messages are held (poison, an outage), and return to the queue.
	Held bool
	// Missing: no data this interval; the step counts nothing.
	Missing bool
}

// Step is what one interval started: messages started within the promise and
// messages started late, as estimated, with how far to trust them.
type Step struct {
	Within, Late float64
	Trust        Trust
	Why          string // empty when Trust is TrustGood
}

// cohortCap bounds the cohorts kept: when full, the two oldest merge into
// one spanning both. 128 five-second intervals are nearly 11 minutes;
// older messages keep their count and span, spread evenly over it. 3 KB a
// group.
const cohortCap = 128

// cohort is n messages that arrived evenly over [from, to], times in seconds
// since the estimator's epoch.
type cohort struct {
	from, to, n float64
}

// ageFresh is how old an oldest-age reading may be and still correct the
// cohorts: CloudWatch's minutes come a minute or two late.
const ageFresh = 3 * time.Minute

// Estimator turns intervals into the messages started within and past the
// promise. The zero value is not ready: use NewEstimator. Not safe for
// concurrent use.
type Estimator struct {
	promise float64 // seconds
	epoch   time.Time
	started bool
	last    float64 // seconds since epoch of the last input
	warmTo  float64 // until this time the backlog found at start is unknown

	ring  [cohortCap]cohort
	head  int // index of the oldest cohort
	count int
	sum   float64 // messages in the cohorts

	// unexplained counts the visible messages no arrival accounted for:
	// the backlog found at start, and what the arrivals underestimated.
	unexplained float64
}

// NewEstimator is an estimator for a promise of the given length.
func NewEstimator(promise time.Duration) *Estimator {
	return &Estimator{promise: math.Max(promise.Seconds(), 0)}
}

// Waiting is the messages the estimator holds as waiting.
func (e *Estimator) Waiting() float64 { return e.sum }

// Oldest is the arrival time of the oldest message the estimator holds as
// waiting; false when it holds none.
func (e *Estimator) Oldest() (time.Time, bool) {
	if e.count == 0 {
		return time.Time{}, false
	}
	return e.epoch.Add(time.Duration(e.ring[e.head].from * float64(time.Second))), true
}

// Observe folds one interval in and returns what it started.
func (e *Estimator) Observe(in Input) Step {
	if in.Missing {
		return Step{Trust: TrustNone, Why: WhyMissing}
	}
	if !e.started {
		e.start(in)
		return e.trust(Step{}, in, e.last)
	}
	t := in.At.Sub(e.epoch).Seconds()
	if !(t > e.last) {
		return Step{Trust: TrustNone, Why: WhyMissing} // a repeat or out of order
	}
	prev := e.last
	e.last = t
	visible := finite(in.Visible)
	if a := finite(in.Arrived); a > 0 {
		e.push(cohort{from: prev, to: t, n: a})
	}
	e.anchor(in, t)
	var st Step
	// Started: everything above the visible count, oldest first, started
	// evenly over the interval in that order.
	started := e.sum - visible
	k := 0.0 // started so far
	for e.sum > visible+1e-9 && e.count > 0 {
		c := &e.ring[e.head]
		take := math.Min(c.n, e.sum-visible)
		cut := c.from + (c.to-c.from)*take/c.n // the newest arrival taken
		s0 := prev + (t-prev)*k/started
		s1 := prev + (t-prev)*(k+take)/started
		late := lateShare(s0-c.from, s1-cut, e.promise) * take
		st.Late += late
		st.Within += take - late
		k += take
		if take >= c.n-1e-9 {
			e.pop()
			continue
		}
		c.from, c.n = cut, c.n-take
		e.sum -= take
	}
	if e.count == 0 {
		e.sum = 0
	}
	if extra := visible - e.sum; extra > 1e-9 {
		// Visible messages the arrivals did not account for: the newest.
		e.push(cohort{from: prev, to: t, n: extra})
		e.unexplained += extra
	}
	return e.trust(st, in, t)
}

// start takes the first input: the backlog found is spread over the oldest
// age when it is known, else taken as just arrived (the estimate then
// counts lateness from what this process has seen), and the steps of the
// first promise-length say that its ages are not known.
func (e *Estimator) start(in Input) {
	e.started = true
	e.epoch = in.At
	e.last = 0
	e.warmTo = e.promise
	v := finite(in.Visible)
	if v <= 0 {
		return
	}
	span := 0.0
	if in.OldestAge >= 0 && in.At.Sub(in.OldestAt) <= ageFresh {
		span = in.OldestAge + in.At.Sub(in.OldestAt).Seconds()
	}
	e.push(cohort{from: -span, to: 0, n: v})
	e.unexplained += v
}

// anchor moves the oldest cohort back to a fresh oldest-age reading that says
// the oldest message is older than the cohorts hold. The reading speaks of
// the messages visible when it was read: a cohort that arrived after that
// (the queue emptied since) is not moved.
func (e *Estimator) anchor(in Input, now float64) {
	if in.OldestAge < 0 || e.count == 0 || in.OldestAt.IsZero() || in.At.Sub(in.OldestAt) > ageFresh {
		return
	}
	readAt := in.OldestAt.Sub(e.epoch).Seconds()
	arrived := readAt - in.OldestAge
	c := &e.ring[e.head]
	if arrived < c.from && arrived < now && c.from < readAt {
		c.from = arrived
	}
}

// trust sets the step's trust from what disturbs the counts; at is the
// step's time, seconds since the epoch.
func (e *Estimator) trust(st Step, in Input, at float64) Step {
	switch {
	case in.Held:
		st.Trust, st.Why = TrustRough, WhyHeld
	case at < e.warmTo:
		st.Trust, st.Why = TrustRough, WhyWarming
	case in.Unordered:
		st.Trust, st.Why = TrustRough, WhyUnordered
	case in.Delayed > 0:
		st.Trust, st.Why = TrustRough, WhyDelayed
	}
	return st
}

// lateShare is the share of messages whose waits run evenly from w0 to w1
// that waited longer than promise.
func lateShare(w0, w1, promise float64) float64 {
	switch {
	case w0 > promise && w1 > promise:
		return 1
	case w0 <= promise && w1 <= promise:
		return 0
	}
	u := (promise - w0) / (w1 - w0) // where the wait crosses the promise
	if w0 > promise {
		return u
	}
	return 1 - u
}

func (e *Estimator) push(c cohort) {
	if e.count == cohortCap {
		// Merge the two oldest.
		a := e.ring[e.head]
		e.pop()
		b := &e.ring[e.head]
		b.from, b.n = a.from, a.n+b.n
		e.sum += a.n
	}
	e.ring[(e.head+e.count)%cohortCap] = c
	e.count++
	e.sum += c.n
}

func (e *Estimator) pop() {
	e.sum -= e.ring[e.head].n
	e.head = (e.head + 1) % cohortCap
	e.count--
}

// finite is v, or 0 when v is negative, NaN or infinite.
func finite(v float64) float64 {
	if v > 0 && !math.IsInf(v, 1) {
		return v
	}
	return 0
}
