package readmodel

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// Point is one cycle of a group, kept for the status page's charts.
type Point struct {
	At          time.Time `json:"at"`
	Backlog     int64     `json:"backlog"`
	Current     int       `json:"current_workers"`
	Desired     int       `json:"desired_workers"`
	Recommended int       `json:"recommended_workers"`
	OldestAge   *float64  `json:"oldest_age_seconds"`
	// Arrival is the smoothed arrival estimate, msg/s; Forecast the rate
	// the forecast expected within the next start delay. Nil when unknown
	// or when there was no forecast.
	Arrival  *float64 `json:"arrival_rate"`
	Forecast *float64 `json:"forecast_rate"`
	// BudgetLeft is the share of the promise's error budget left
	// (slo.Status.BudgetLeft), at least 0: an overspent budget is drawn as
	// spent. Nil when not estimated.
	BudgetLeft *float64 `json:"budget_left"`
}

func pointOf(d model.Decision, s *slo.Status) Point {
	p := Point{At: d.At, Backlog: d.Backlog, Current: d.CurrentWorkers, Desired: d.DesiredWorkers,
		Recommended: d.RecommendedWorkers, OldestAge: d.OldestAgeSeconds, Arrival: d.ArrivalRate}
	if d.Forecast != nil {
		f := d.Forecast.Rate
		p.Forecast = &f
	}
	if s != nil && !math.IsNaN(s.BudgetLeft) {
		b := max(s.BudgetLeft, 0)
		p.BudgetLeft = &b
	}
	return p
}

// maxPoints bounds a group's history whatever the interval: an hour at 1 s.
const maxPoints = 3600

// ring holds the most recent points, oldest first: none older than the
// history window before the newest, and at most maxPoints. The points are
// kept in a compact form, 40 bytes each and without pointers, because a
// checker of thousands of groups keeps an hour of them for every group.
type ring struct {
	buf  []pointRec
	head int // index of the oldest point kept
}

// pointRec is a Point in 48 bytes: the time in Unix nanoseconds, counts as
// 32-bit numbers, the oldest age, the arrival estimate, the forecast and
// the budget left as float32s that are NaN when unknown.
type pointRec struct {
	at                             int64
	backlog                        int64
	current, desired, recommended  int32
	age, arrival, forecast, budget float32
}

// f32 is *v as a float32, NaN when v is nil.
func f32(v *float64) float32 {
	if v == nil {
		return float32(math.NaN())
	}
	return float32(*v)
}

// f64 is the float32 v as a *float64, nil when it is NaN.
func f64(v float32) *float64 {
	if math.IsNaN(float64(v)) {
		return nil
	}
	x := float64(v)
	return &x
}

func clamp32(n int) int32 { return int32(max(min(n, math.MaxInt32), math.MinInt32)) }

func recOf(p Point) pointRec {
	return pointRec{at: p.At.UnixNano(), backlog: p.Backlog, current: clamp32(p.Current), desired: clamp32(p.Desired),
		recommended: clamp32(p.Recommended), age: f32(p.OldestAge), arrival: f32(p.Arrival), forecast: f32(p.Forecast),
		budget: f32(p.BudgetLeft)}
}

func (r pointRec) point() Point {
	return Point{At: time.Unix(0, r.at).UTC(), Backlog: r.backlog, Current: int(r.current), Desired: int(r.desired),
		Recommended: int(r.recommended), OldestAge: f64(r.age), Arrival: f64(r.arrival), Forecast: f64(r.forecast),
		BudgetLeft: f64(r.budget)}
}

// add appends p and drops the points older than window before it (none
// when window ≤ 0) and beyond maxPoints. The buffer grows by a quarter at a
// time and is compacted before it grows, so it holds at most about 1.25
// times the points kept.
func (r *ring) add(p Point, window time.Duration) {
	rec := recOf(p)
	if len(r.buf) == cap(r.buf) && r.head > 0 {
		n := copy(r.buf, r.buf[r.head:])
		r.buf, r.head = r.buf[:n], 0
	}
	if len(r.buf) == cap(r.buf) {
		grown := make([]pointRec, len(r.buf), len(r.buf)+len(r.buf)/4+16)
		copy(grown, r.buf)
		r.buf = grown
	}
	r.buf = append(r.buf, rec)
	if window > 0 {
		cut := rec.at - int64(window)
		for r.head < len(r.buf) && r.buf[r.head].at < cut {
			r.head++
		}
	}
	if len(r.buf)-r.head > maxPoints {
		r.head = len(r.buf) - maxPoints
	}
}

// since returns the points not older than window before the newest, oldest first.
func (r *ring) since(window time.Duration) []Point {
	kept := r.buf[r.head:]
	if len(kept) == 0 {
		return []Point{}
	}
	cut := kept[len(kept)-1].at - int64(window)
	i, _ := slices.BinarySearchFunc(kept, cut, func(p pointRec, t int64) int { return cmp.Compare(p.at, t) })
	out := make([]Point, 0, len(kept)-i)
	for _, rec := range kept[i:] {
		out = append(out, rec.point())
	}
	return out
}

// GroupView is everything known about one group, for the status page and
// its JSON endpoint. It is a copy: the caller may keep it.
type GroupView struct {
	Settings    policy.Settings
	Decision    *model.Decision // nil before the first cycle
	Sample      model.GroupSample
	Fleet       model.Fleet
	LastAction  *model.Action
	ActionError string
	History     []Point
	Changes     []Change // most recent last
	// FleetMinutes are the recent good minutes of the fleet's
	// measurement, oldest first; none while it measures nothing.
	FleetMinutes []FleetMinute
	// Lease is the group's lease when several checkers share the groups;
	// nil when this checker runs alone.
	Lease *model.LeaseStatus
	// Bill is the fleet in dollars over the last day (bill.go).
	Bill Bill
	// AWSCost is what the checker's own AWS calls for the group cost a
	// month at the last minute's rate (awsbill.go).
	AWSCost AWSCost
	// SLO is the promise's error budget at the last cycle; nil before
	// the first and while another checker holds the group.
	SLO *slo.Status
}

// Groups returns a view of every group, in configuration order.
func (m *Model) Groups() []GroupView {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]GroupView, 0, len(m.groups))
	for _, g := range m.groups {
		out = append(out, m.viewOf(g))
	}
	return out
}

// viewOf copies what is known of group g; m.mu must be held.
func (m *Model) viewOf(g policy.Settings) GroupView {
	st := m.states[g.Group]
	v := GroupView{Settings: g}
	if m.leases != nil {
		l := m.leases.Lease(g.Group)
		v.Lease = &l
	}
	if st != nil {
		if st.decision != nil {
			d := *st.decision
			d.Reasons = slices.Clone(d.Reasons)
			v.Decision = &d
		}
		v.Sample = st.sample
		v.Sample.Failures = slices.Clone(st.sample.Failures)
		v.Fleet = st.fleet
		v.Fleet.PendingSince = slices.Clone(st.fleet.PendingSince)
		if st.action != nil {
			a := *st.action
			v.LastAction = &a
		}
		v.ActionError = st.actionErr
		v.History = st.points.since(m.history)
		v.Changes = slices.Clone(st.changes)
		current := 0
		if st.decision != nil {
			current = st.decision.CurrentWorkers
		}
		v.Bill = st.meter.bill(g.WorkerCostPerHour, current)
		v.AWSCost = m.groupCost(st)
		if st.slo != nil && !st.elsewhere {
			s := *st.slo
			v.SLO = &s
		}
		if !st.elsewhere && len(st.minutes) > 0 {
			v.FleetMinutes = slices.Clone(st.minutes)
		}
	}
	return v
}
