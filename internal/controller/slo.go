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
	// prev are the counts of the last cycle with data, at prevAt; have is
	// false before the first and after the group came back from another
	// checker.
	prev   slo.Counts
	prevAt time.Time
	have   bool
}

// sloCounts are the counts of a cycle the arrivals are reckoned from: the
// sample's visible, in-flight and delayed messages, and the slots of the
// workers that complete messages (in service or draining, × concurrency),
// unknown while the fleet is.
func sloCounts(s policy.Settings, o model.Observation, d model.Decision) slo.Counts {
	c := slo.Counts{Visible: float64(o.Sample.Visible), InFlight: float64(o.Sample.InFlight),
		Delayed: float64(o.Sample.Delayed), Slots: -1}
	if o.Fleet.Known {
		c.Slots = float64((max(d.InServiceWorkers, 0) + max(d.DrainingWorkers, 0)) * max(s.Concurrency, 1))
	}
	return c
}

// sloServiceTime is the time a message holds a slot, seconds, for Little's
// law in the arrivals: the measured one while the policy sizes with the
// measurement (the settings' is often a high percentile, which would count
// too few completions and so too few arrivals), else the settings'.
func sloServiceTime(s policy.Settings, d model.Decision) float64 {
	if m := d.Measured; m.SizingWith == "measured" && m.ServiceTimeSeconds != nil && *m.ServiceTimeSeconds > 0 {
		return *m.ServiceTimeSeconds
	}
	if per := s.PerWorker(); per > 0 {
		return float64(max(s.Concurrency, 1)) / per
	}
	return 0
}

// sloInput is one cycle of a group as the estimate reads it: the visible
// and delayed counts and CloudWatch's oldest age of the sample, and the arrivals
// since the previous cycle with data by conservation (slo.Arrived, at the
// service time of sloServiceTime).
func (e *groupSLO) sloInput(s policy.Settings, o model.Observation, d model.Decision, now time.Time) slo.Input {
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
		// CloudWatch's datapoint is the largest age of the minute that
		// starts at r.At: read it as of the minute's end, as the simulator
		// measures the estimate.
		in.OldestAge, in.OldestAt = r.Value, r.At.Add(time.Minute)
	}
	if in.Missing {
		return in // the next cycle with data counts the arrivals since the last
	}
	c := sloCounts(s, o, d)
	if e.have && now.After(e.prevAt) {
		if service := sloServiceTime(s, d); service > 0 {
			in.Arrived = slo.Arrived(e.prev, c, now.Sub(e.prevAt).Seconds(), service)
		}
	}
	e.prev, e.prevAt, e.have = c, now, true
	return in
}

// observeSLO feeds one cycle of group g to its estimate, making a new one
// when there is none or the promise, its objective or the window changed,
// and returns the cycle's step and the budget's status after it.
func (st *groupState) observeSLO(g policy.Settings, o model.Observation, d model.Decision, now time.Time) (slo.Step, slo.Status) {
	s := g.WithDefaults()
	e := &st.slo
	if e.tracker == nil || e.promise != s.Latency || e.objective != s.LatencyQuantile || e.window != s.SLOWindow {
		*e = groupSLO{tracker: slo.NewTracker(s.Latency, s.LatencyQuantile, s.SLOWindow),
			promise: s.Latency, objective: s.LatencyQuantile, window: s.SLOWindow}
	}
	step := e.tracker.Observe(e.sloInput(s, o, d, now))
	status := e.tracker.Status(now)
	st.deciding.Lock()
	st.policy.SpendBudget(budgetOf(status))
	st.deciding.Unlock()
	return step, status
}

// budgetOf is the error budget the policy spends, from the estimate's
// status: known once the last hour has messages (an estimate still rough,
// or short of a promise since the start, is the best there is).
func budgetOf(s slo.Status) model.Budget {
	return model.Budget{
		Known:     s.HourWithin+s.HourLate > 0,
		Allowance: 1 - s.Objective,
		Spent:     1 - s.BudgetLeft,
		Left:      s.BudgetLeft,
		BurnRate:  s.BurnRate,
	}
}
