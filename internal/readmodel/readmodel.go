// Package readmodel is what the status page, /api and the KEDA scaler read
// of the groups: each group's latest decision, sample, fleet and action,
// its recent history for the charts, its changes of the desired count, its
// fleet's bill and what the checker's own AWS calls for it cost. The
// controller feeds it once per group and cycle (Record); the readers take
// copies (Groups, Group, Summaries, Latest), so that a page never holds the
// loop up, and the loop never waits for a page longer than a copy takes.
package readmodel

import (
	"math"
	"slices"
	"sync"
	"time"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/callrate"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// Leases is what the views show of the groups' leases when several
// checkers share the groups: the controller's gate.
type Leases interface {
	// Lease describes a group's lease.
	Lease(group string) model.LeaseStatus
	// Peers lists the live checkers, this one included.
	Peers() []model.Peer
	// Identity names this checker among its peers.
	Identity() string
}

// Options make a Model.
type Options struct {
	Groups []policy.Settings // one per group, names unique, in configuration order
	// History is how far back the charts reach; 0 means 1 hour.
	History time.Duration
	// Leases, when set, gives each view its group's lease; nil when this
	// checker runs alone.
	Leases Leases
	// Prices price the checker's own AWS calls (awsbill.go); zero prices
	// bill nothing.
	Prices awscost.Prices
}

// Model is the read model of the groups. It is safe for concurrent use: the
// controller records while the HTTP server reads.
type Model struct {
	mu      sync.RWMutex
	groups  []policy.Settings
	states  map[string]*groupState
	history time.Duration
	leases  Leases
	prices  awscost.Prices
}

// groupState is what the read model keeps of one group between cycles.
type groupState struct {
	decision  *model.Decision
	sample    model.GroupSample
	fleet     model.Fleet
	action    *model.Action
	actionErr string
	points    ring
	meter     meter
	changes   []Change
	// minutes are the fleet measurement's good minutes, oldest first.
	minutes []FleetMinute
	// elsewhere is set while another checker holds the group's lease:
	// its latest decision is not this checker's.
	elsewhere bool
	// calls are the group's AWS calls per minute at its last decision;
	// published rates its PutMetricData requests, decision by decision.
	calls       awscost.Rates
	published   callrate.Window
	lastCallsAt time.Time
	// slo is the promise's error budget at the last cycle; nil before.
	slo *slo.Status
}

// maxChanges is how many recent changes of the desired count a group keeps.
const maxChanges = 20

// Change is one change of a group's desired count.
type Change struct {
	At      time.Time `json:"at"`
	From    int       `json:"from"`
	To      int       `json:"to"`
	Reasons []string  `json:"reasons"`
	// NotActed is the decision's: why the controller did not act on the
	// change; nil when it was free to.
	NotActed *model.NotActed `json:"not_acted"`
}

// New makes a Model of the groups, none of them recorded yet.
func New(o Options) *Model {
	m := &Model{history: o.History, leases: o.Leases, prices: o.Prices, states: map[string]*groupState{}}
	if m.history <= 0 {
		m.history = time.Hour
	}
	m.SetGroups(o.Groups)
	return m
}

// SetGroups replaces the groups, as after a configuration reload: groups
// that keep their name keep what was recorded (history, changes, bill);
// groups that are gone lose it.
func (m *Model) SetGroups(groups []policy.Settings) {
	m.mu.Lock()
	defer m.mu.Unlock()
	states := make(map[string]*groupState, len(groups))
	for _, g := range groups {
		if st, ok := m.states[g.Group]; ok {
			states[g.Group] = st
		} else {
			states[g.Group] = &groupState{}
		}
	}
	m.groups, m.states = slices.Clone(groups), states
}

// Record is one cycle of one group, as the controller feeds it.
type Record struct {
	Settings policy.Settings
	Sample   model.GroupSample
	Fleet    model.Fleet
	Decision model.Decision
	// Action is what the actuator did; nil when it was not asked (the
	// group's last action stands).
	Action *model.Action
	// ActionErr is why the action failed; nil when it did not.
	ActionErr error
	// FleetMinutes are the fleet measurement's good minutes after the
	// decision, oldest first; copied.
	FleetMinutes []measure.GoodMinute
	// Interval is the loop's interval: the span a group's first decision
	// stands for in the rate of its calls.
	Interval time.Duration
	// SLO is the promise's error budget after the cycle; nil when not
	// estimated.
	SLO *slo.Status
}

// Record keeps one cycle of a group, and returns what the group's own AWS
// calls cost now. A group not configured (reloaded away) is ignored.
func (m *Model) Record(r Record) AWSCost {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.states[r.Settings.Group]
	if st == nil {
		return AWSCost{}
	}
	d := r.Decision
	prev := st.decision
	st.elsewhere = false
	st.decision = &d
	st.sample = r.Sample
	st.fleet = r.Fleet
	if r.Action != nil {
		a := *r.Action
		st.action = &a
	}
	st.actionErr = ""
	if r.ActionErr != nil {
		st.actionErr = r.ActionErr.Error()
	}
	st.slo = nil
	if r.SLO != nil {
		s := *r.SLO
		st.slo = &s
	}
	st.points.add(pointOf(d, r.SLO), m.history)
	st.meter.add(r.Settings, r.Fleet, d)
	st.meterCalls(r.Sample, d, r.Action, r.Interval)
	st.minutes = appendFleetMinutes(st.minutes[:0], r.FleetMinutes)
	if prev != nil && prev.DesiredWorkers != d.DesiredWorkers {
		st.changes = append(st.changes, Change{At: d.At, From: prev.DesiredWorkers, To: d.DesiredWorkers, Reasons: d.Reasons, NotActed: d.NotActed})
		if len(st.changes) > maxChanges {
			st.changes = slices.Delete(st.changes, 0, len(st.changes)-maxChanges)
		}
	}
	return m.groupCost(st)
}

// Leave marks a group whose lease another checker holds: its last
// decision, sample, action and calls are dropped, so that the views show
// the group's owner rather than stale numbers, until it is recorded here
// again.
func (m *Model) Leave(group string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := m.states[group]
	if st == nil {
		return
	}
	st.elsewhere = true
	st.decision, st.action, st.actionErr = nil, nil, ""
	st.sample, st.fleet = model.GroupSample{Group: group}, model.Fleet{}
	st.calls = awscost.Rates{} // its calls are the holder's
	st.slo = nil
}

// FleetMinute is one good minute of the group's fleet measurement, for the
// status page's chart of throughput against workers (docs/measuring.md).
type FleetMinute struct {
	Workers     float64 `json:"workers"`                // mean workers in service
	Completions float64 `json:"completions_per_second"` // messages deleted, msg/s
	// Saturated: a visible backlog throughout and every slot busy, so the
	// completions are what these workers can do.
	Saturated bool `json:"saturated"`
}

// appendFleetMinutes appends the good minutes with a finite worker count
// and completions to out, oldest first.
func appendFleetMinutes(out []FleetMinute, mins []measure.GoodMinute) []FleetMinute {
	for _, m := range mins {
		if isFinite(m.Workers) && isFinite(m.Deleted) { // a NaN would fail the whole JSON document
			out = append(out, FleetMinute{Workers: m.Workers, Completions: m.Deleted, Saturated: m.Saturated})
		}
	}
	return out
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
