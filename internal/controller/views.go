package controller

import (
	"slices"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// Point is one cycle of a group, kept for the status page's charts.
type Point struct {
	At          time.Time `json:"at"`
	Backlog     int64     `json:"backlog"`
	Current     int       `json:"current_workers"`
	Desired     int       `json:"desired_workers"`
	Recommended int       `json:"recommended_workers"`
	OldestAge   *float64  `json:"oldest_age_seconds"`
}

func pointOf(d model.Decision) Point {
	return Point{At: d.At, Backlog: d.Backlog, Current: d.CurrentWorkers, Desired: d.DesiredWorkers,
		Recommended: d.RecommendedWorkers, OldestAge: d.OldestAgeSeconds}
}

// maxPoints bounds a group's history whatever the interval: an hour at 1 s.
const maxPoints = 3600

// ring holds the most recent points, oldest first, at most maxPoints and
// none older than the history window.
type ring struct {
	buf   []Point
	start int // index of the oldest point once the buffer is full
}

func (r *ring) add(p Point) {
	if len(r.buf) < maxPoints {
		r.buf = append(r.buf, p)
	} else {
		r.buf[r.start] = p
		r.start = (r.start + 1) % maxPoints
	}
}

// since returns the points not older than window before the newest, oldest first.
func (r *ring) since(window time.Duration) []Point {
	out := make([]Point, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	out = append(out, r.buf[:r.start]...)
	if len(out) == 0 {
		return out
	}
	cut := out[len(out)-1].At.Add(-window)
	i, _ := slices.BinarySearchFunc(out, cut, func(p Point, t time.Time) int { return p.At.Compare(t) })
	return out[i:]
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
	// Lease is the group's lease when several checkers share the groups;
	// nil when this checker runs alone.
	Lease *LeaseStatus
}

// Groups returns a view of every group, in configuration order.
func (c *Controller) Groups() []GroupView {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]GroupView, 0, len(c.groups))
	for _, g := range c.groups {
		st := c.states[g.Group]
		v := GroupView{Settings: g}
		if c.gate != nil {
			l := c.gate.Lease(g.Group)
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
			v.History = st.points.since(c.history)
			v.Changes = slices.Clone(st.changes)
		}
		out = append(out, v)
	}
	return out
}
