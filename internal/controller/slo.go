package controller

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// groupSLO is the estimate of a group's messages started within the
// promise and its error budget, kept between cycles (docs/observability.md,
// "The promise as an SLO").
type groupSLO struct {
	tracker *slo.Tracker
	// promise, objective and window are those the tracker was made for:
	// a reload that changes one of them starts a new estimate.
	promise   time.Duration
	objective float64
	window    time.Duration
	// last is the time of the previous cycle fed in; zero before the
	// first and after the group came back from another checker.
	last time.Time
}

// sloInput is one cycle of a group as the estimate reads it: the visible
// and delayed counts and the oldest age of the sample, and the arrivals
// since the previous cycle at the decision's arrival rate.
func sloInput(s policy.Settings, o model.Observation, d model.Decision, since time.Duration, now time.Time) slo.Input {
	in := slo.Input{
		At:        now,
		Visible:   float64(o.Sample.Visible),
		Delayed:   float64(o.Sample.Delayed),
		OldestAge: -1,
		Unordered: !s.FIFO,
		Held:      d.Diagnosis == model.DiagMessagesHeld,
		Missing:   o.Sample.Missing(),
	}
	if r := o.Sample.OldestAge; r != nil {
		in.OldestAge, in.OldestAt = r.Value, r.At
	}
	if d.ArrivalRate != nil && since > 0 {
		in.Arrived = *d.ArrivalRate * since.Seconds()
	}
	return in
}

// observeSLO feeds one cycle of group g to its estimate, making a new one
// when there is none or the promise, its objective or the window changed,
// and returns the cycle's step and the budget's status after it.
func (st *groupState) observeSLO(g policy.Settings, o model.Observation, d model.Decision, now time.Time) (slo.Step, slo.Status) {
	s := g.WithDefaults()
	window := s.SLOWindow
	e := &st.slo
	if e.tracker == nil || e.promise != s.Latency || e.objective != s.LatencyQuantile || e.window != window {
		*e = groupSLO{tracker: slo.NewTracker(s.Latency, s.LatencyQuantile, window),
			promise: s.Latency, objective: s.LatencyQuantile, window: window}
	}
	var since time.Duration
	if !e.last.IsZero() && now.After(e.last) {
		since = now.Sub(e.last)
	}
	e.last = now
	step := e.tracker.Observe(sloInput(s, o, d, since, now))
	return step, e.tracker.Status(now)
}
