package readmodel

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

func record(group string, at time.Time, desired int) Record {
	return Record{
		Settings: policy.Settings{Group: group},
		Sample:   model.GroupSample{Group: group, At: at},
		Decision: model.Decision{Group: group, At: at, DesiredWorkers: desired, Reasons: []string{"because"}},
		Interval: 5 * time.Second,
	}
}

// Each record is the group's latest; a change of the desired count is kept
// with its reasons; an action stands until the next one; an action's error
// lasts one record.
func TestRecordKeepsTheLatestAndTheChanges(t *testing.T) {
	t.Parallel()
	m := New(Options{Groups: []policy.Settings{{Group: "a"}, {Group: "b"}}})
	if v, ok := m.Group("a"); !ok || v.Decision != nil || len(v.History) != 0 {
		t.Fatalf("before any record: %+v, %v", v, ok)
	}
	r := record("a", t0, 3)
	r.Action = &model.Action{Group: "a", Scaled: true, From: 1, To: 3}
	m.Record(r)
	r = record("a", t0.Add(5*time.Second), 3)
	r.ActionErr = errors.New("AccessDenied")
	m.Record(r)
	m.Record(record("a", t0.Add(10*time.Second), 5))

	v, _ := m.Group("a")
	if v.Decision == nil || v.Decision.DesiredWorkers != 5 || !v.Decision.At.Equal(t0.Add(10*time.Second)) {
		t.Errorf("decision %+v, want the third", v.Decision)
	}
	if len(v.Changes) != 1 || v.Changes[0].From != 3 || v.Changes[0].To != 5 || v.Changes[0].Reasons[0] != "because" {
		t.Errorf("changes %+v, want one, 3 -> 5", v.Changes)
	}
	if v.LastAction == nil || v.LastAction.To != 3 || v.ActionError != "" {
		t.Errorf("last action %+v (error %q), want the first record's, no error", v.LastAction, v.ActionError)
	}
	if len(v.History) != 3 || v.History[2].Desired != 5 {
		t.Errorf("history %+v, want three points ending at 5", v.History)
	}
	// A view is a copy.
	v.Decision.Reasons[0] = "changed"
	if again, _ := m.Group("a"); again.Decision.Reasons[0] != "because" {
		t.Error("a view's reasons are the model's")
	}

	r = record("b", t0, 2)
	r.ActionErr = errors.New("AccessDenied")
	m.Record(r)
	sums := m.Summaries()
	if len(sums) != 2 || sums[0].Name != "a" || sums[0].ActionError || !sums[1].ActionError || sums[1].Decision.DesiredWorkers != 2 {
		t.Errorf("summaries %+v", sums)
	}
	if l, ok := m.Latest("a"); !ok || !l.Held || l.Decision == nil || l.Decision.DesiredWorkers != 5 {
		t.Errorf("Latest(a) = %+v, %v", l, ok)
	}
	if _, ok := m.Latest("gone"); ok {
		t.Error("Latest of a group not configured")
	}
	if m.NumGroups() != 2 || m.Coordination() != nil {
		t.Errorf("%d groups, coordination %+v; want 2, none", m.NumGroups(), m.Coordination())
	}
	// A group not configured is not recorded.
	if got := m.Record(record("gone", t0, 1)); got != (AWSCost{}) {
		t.Errorf("cost %+v of a group not configured", got)
	}
}

type leases struct{ owner map[string]string }

func (l leases) Lease(g string) model.LeaseStatus {
	return model.LeaseStatus{Owner: l.owner[g], Held: l.owner[g] == "me"}
}
func (leases) Peers() []model.Peer { return nil }
func (leases) Identity() string    { return "me" }

// A group another checker holds shows its owner and none of this
// checker's numbers, until it is recorded here again; its history stays.
func TestLeaveShowsTheOwner(t *testing.T) {
	t.Parallel()
	ls := leases{owner: map[string]string{"a": "me"}}
	m := New(Options{Groups: []policy.Settings{{Group: "a"}}, Leases: ls})
	r := record("a", t0, 4)
	r.Fleet = model.Fleet{Known: true, Desired: 4}
	r.Sample.Polling = model.Polling{RequestsPerMinute: 12}
	r.FleetMinutes = []measure.GoodMinute{{Workers: 4, Deleted: 8}}
	m.Record(r)
	if got := m.AWSCost().Rates.SQSRequests; got != 12 {
		t.Fatalf("SQS requests %v a minute, want 12", got)
	}

	ls.owner["a"] = "other"
	m.Leave("a")
	v, _ := m.Group("a")
	if v.Decision != nil || v.Fleet.Known || v.Sample.Group != "a" || v.FleetMinutes != nil || len(v.History) != 1 {
		t.Errorf("view after leaving %+v", v)
	}
	if v.Lease == nil || v.Lease.Owner != "other" {
		t.Errorf("lease %+v, want other's", v.Lease)
	}
	if l, _ := m.Latest("a"); l.Held || l.Owner != "other" || l.Decision != nil {
		t.Errorf("Latest %+v", l)
	}
	if got := m.AWSCost().Rates.SQSRequests; got != 0 {
		t.Errorf("SQS requests %v a minute billed here, want the holder's", got)
	}
	if co := m.Coordination(); co == nil || co.Identity != "me" || co.Peers == nil {
		t.Errorf("coordination %+v", co)
	}

	ls.owner["a"] = "me"
	m.Record(record("a", t0.Add(5*time.Second), 6))
	if v, _ := m.Group("a"); v.Decision == nil || v.Decision.DesiredWorkers != 6 || len(v.History) != 2 || v.FleetMinutes != nil {
		t.Errorf("view back here %+v", v)
	}
}

// A reload keeps the groups that stay and forgets the others.
func TestSetGroupsKeepsTheGroupsThatStay(t *testing.T) {
	t.Parallel()
	m := New(Options{Groups: []policy.Settings{{Group: "a"}, {Group: "b"}}})
	m.Record(record("a", t0, 1))
	m.Record(record("b", t0, 2))
	m.SetGroups([]policy.Settings{{Group: "c"}, {Group: "b"}})
	views := m.Groups()
	if len(views) != 2 || views[0].Settings.Group != "c" || views[0].Decision != nil ||
		views[1].Decision == nil || views[1].Decision.DesiredWorkers != 2 {
		t.Errorf("views after the reload %+v", views)
	}
	if _, ok := m.Group("a"); ok {
		t.Error("group a still shown")
	}
}

// The fleet's good minutes are shown as the controller last fed them; a
// minute with a NaN or an infinity (which would fail the JSON document) is
// left out.
func TestFleetMinutes(t *testing.T) {
	t.Parallel()
	m := New(Options{Groups: []policy.Settings{{Group: "a"}}})
	r := record("a", t0, 3)
	r.FleetMinutes = []measure.GoodMinute{{Workers: 3, Deleted: 6, Saturated: true}, {Workers: math.NaN(), Deleted: 1},
		{Workers: 2, Deleted: math.Inf(1)}}
	m.Record(r)
	v, _ := m.Group("a")
	if len(v.FleetMinutes) != 1 || v.FleetMinutes[0] != (FleetMinute{Workers: 3, Completions: 6, Saturated: true}) {
		t.Errorf("minutes %+v, want the one finite", v.FleetMinutes)
	}
	r = record("a", t0.Add(5*time.Second), 3)
	r.FleetMinutes = []measure.GoodMinute{{Workers: 3, Deleted: 6}, {Workers: 4, Deleted: 7}}
	m.Record(r)
	v, _ = m.Group("a")
	if len(v.FleetMinutes) != 2 || v.FleetMinutes[1].Completions != 7 {
		t.Errorf("minutes %+v, want the two recorded", v.FleetMinutes)
	}
	v.FleetMinutes[0].Workers = 99
	if again, _ := m.Group("a"); again.FleetMinutes[0].Workers != 3 {
		t.Error("a view's minutes are the model's")
	}
}

// The checker's own calls: 60 SQS requests a minute at $0.40 a million
// over a 730-hour month are 60 × 60 × 730 × 0.4e-6 = $1.0512; new prices
// reprice the views.
func TestOwnCallsPriced(t *testing.T) {
	t.Parallel()
	m := New(Options{Groups: []policy.Settings{{Group: "a"}}, Prices: awscost.Prices{SQSPerMillionRequests: 0.40}})
	r := record("a", t0, 1)
	r.Sample.Polling = model.Polling{RequestsPerMinute: 60}
	if got := m.Record(r).Bill.Total; math.Abs(got-1.0512) > 1e-9 {
		t.Errorf("recorded cost $%v a month, want $1.0512", got)
	}
	m.SetPrices(awscost.Prices{SQSPerMillionRequests: 0.80})
	if v, _ := m.Group("a"); math.Abs(v.AWSCost.Bill.Total-2.1024) > 1e-9 {
		t.Errorf("view's cost $%v a month, want $2.1024", v.AWSCost.Bill.Total)
	}
}
