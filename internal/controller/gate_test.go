package controller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// fakeGate permits the groups in until, up to their times.
type fakeGate struct {
	mu      sync.Mutex
	until   map[string]time.Time
	leases  map[string]model.LeaseStatus
	syncErr error
	health  error
	syncs   int
	synced  time.Time // the time of the last Sync
}

func (g *fakeGate) Sync(_ context.Context, now time.Time) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.syncs++
	g.synced = now
	return g.syncErr
}

func (g *fakeGate) Permit(group string) (time.Time, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	u, ok := g.until[group]
	return u, ok
}

func (g *fakeGate) Lease(group string) model.LeaseStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.leases[group]
}

func (g *fakeGate) Peers() []model.Peer {
	return []model.Peer{{Identity: "me", Leases: 1}, {Identity: "other", Leases: 1}}
}
func (g *fakeGate) Identity() string { return "me" }
func (g *fakeGate) Healthy() error   { return g.health }

// TestGateActsOnlyOnPermittedGroups: a group another checker holds is
// not decided; a permitted one is acted on under a deadline
// no later than its lease's end.
func TestGateActsOnlyOnPermittedGroups(t *testing.T) {
	until := time.Now().Add(time.Hour)
	gate := &fakeGate{
		until:  map[string]time.Time{"mine": until},
		leases: map[string]model.LeaseStatus{"mine": {Owner: "me", Held: true, Acting: true}, "theirs": {Owner: "other"}},
	}
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("mine", now, 100, 3), observation("theirs", now, 100, 3)}, nil
	})
	act := &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("mine"), settings("theirs")}, Observer: obs, Actuator: act,
		Logger: zaptest.NewLogger(t), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Group != "mine" {
		t.Fatalf("decisions %+v, want the held group's alone", ds)
	}
	if gate.syncs != 1 {
		t.Errorf("gate synced %d times in one cycle, want 1", gate.syncs)
	}
	if !gate.synced.Equal(t0) {
		t.Errorf("gate synced as of %v, want the cycle's time %v", gate.synced, t0)
	}
	if _, ok := act.Last("theirs"); ok {
		t.Errorf("acted on a group whose lease another checker holds")
	}
	applied, ok := act.Last("mine")
	dl := applied.Deadline
	if !ok {
		t.Fatalf("did not act on the group it holds")
	}
	if dl.IsZero() || dl.After(until) {
		t.Errorf("action deadline %v, want at most the lease's end %v", dl, until)
	}
	views := c.Views().Groups()
	if views[0].Lease == nil || views[0].Lease.Owner != "me" || views[1].Lease.Owner != "other" {
		t.Errorf("views' leases = %+v, %+v", views[0].Lease, views[1].Lease)
	}
	if co := c.Views().Coordination(); co == nil || co.Identity != "me" || len(co.Peers) != 2 {
		t.Errorf("Coordination() = %+v", co)
	}
}

// TestGateSyncFailure: a failed lease sync leaves the groups unacted on
// without failing the cycle (the gate logs and reports it), and the gate's
// health is the controller's.
func TestGateSyncFailure(t *testing.T) {
	gate := &fakeGate{syncErr: errors.New("table unreachable"), health: errors.New("lease table t: no good exchange")}
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("g", now, 100, 3)}, nil
	})
	act := &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("g")}, Observer: obs, Actuator: act, Logger: zaptest.NewLogger(t), Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(context.Background(), t0); err != nil {
		t.Errorf("RunOnce error = %v, want none: the gate reports its own", err)
	}
	if gate.syncs != 1 {
		t.Errorf("gate synced %d times, want 1", gate.syncs)
	}
	if applied := act.Applied(); len(applied) != 0 {
		t.Errorf("acted without a permit: %v", applied)
	}
	if h := c.Health(t0, t0, time.Minute); h.State != HealthUnhealthy || !strings.Contains(h.Detail, "lease table") {
		t.Errorf("Health = %+v, want unhealthy with the gate's error", h)
	}
	gate.health = nil
	if h := c.Health(t0, t0, time.Minute); h.State != HealthOK {
		t.Errorf("Health = %+v once the gate is healthy, want ok", h)
	}
}

// activatingObserver is a fakeObserver that records SetGroupActive and
// observes only the active groups.
type activatingObserver struct {
	mu     sync.Mutex
	active map[string]bool
	calls  []string // "group=true|false", in order
}

func (o *activatingObserver) SetGroupActive(group string, active bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.active[group] = active
	o.calls = append(o.calls, fmt.Sprintf("%s=%t", group, active))
}

func (o *activatingObserver) Observe(_ context.Context, now time.Time) ([]model.Observation, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []model.Observation
	for _, g := range []string{"mine", "theirs"} {
		if o.active[g] {
			out = append(out, observation(g, now, 100, 3))
		}
	}
	return out, nil
}

// TestGateLeavesPeerGroupsOut: a group another checker holds is made
// inactive in the observer, not decided, and its series are removed;
// when its lease is taken here it is activated before the cycle's
// observation, decided and exported again.
func TestGateLeavesPeerGroupsOut(t *testing.T) {
	gate := &fakeGate{
		until:  map[string]time.Time{"mine": time.Now().Add(time.Hour)},
		leases: map[string]model.LeaseStatus{"mine": {Owner: "me", Held: true, Acting: true}, "theirs": {Owner: "me", Held: true}},
	}
	obs := &activatingObserver{active: map[string]bool{}}
	reg := prometheus.NewRegistry()
	c, err := New(Options{Groups: []policy.Settings{settings("mine"), settings("theirs")}, Observer: obs,
		Actuator: &controllertest.Actuator{},
		Logger:   zaptest.NewLogger(t), Gate: gate, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	series := func(group string) int {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "group" && l.GetValue() == group {
						n++
					}
				}
			}
		}
		return n
	}
	decided := func(at time.Time) []string {
		t.Helper()
		ds, err := c.RunOnce(context.Background(), at)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range ds {
			if d.Backlog != 100 {
				t.Errorf("%s decided on a backlog of %d, want the observed 100", d.Group, d.Backlog)
			}
			names = append(names, d.Group)
		}
		return names
	}

	if got := decided(t0); !slices.Equal(got, []string{"mine", "theirs"}) {
		t.Fatalf("both held: decided %v", got)
	}
	if series("theirs") == 0 {
		t.Fatal("a held group exports no series")
	}

	gate.mu.Lock()
	gate.leases["theirs"] = model.LeaseStatus{Owner: "other"}
	gate.mu.Unlock()
	if got := decided(t0.Add(5 * time.Second)); !slices.Equal(got, []string{"mine"}) {
		t.Errorf("theirs held elsewhere: decided %v, want mine alone", got)
	}
	if obs.active["theirs"] || !obs.active["mine"] {
		t.Errorf("observer's active groups %v, want mine alone", obs.active)
	}
	if n := series("theirs"); n != 0 {
		t.Errorf("a group held elsewhere still exports %d series", n)
	}
	if series("mine") == 0 {
		t.Error("the held group's series went too")
	}
	if v := c.Views().Groups()[1]; v.Lease == nil || v.Lease.Owner != "other" || v.Decision != nil {
		t.Errorf("view of theirs: lease %+v, decision %+v; want owner other and no stale decision", v.Lease, v.Decision)
	}

	gate.mu.Lock()
	gate.leases["theirs"] = model.LeaseStatus{Owner: "me", Held: true, Since: t0.Add(10 * time.Second)}
	gate.mu.Unlock()
	if got := decided(t0.Add(10 * time.Second)); !slices.Equal(got, []string{"mine", "theirs"}) {
		t.Errorf("theirs taken back: decided %v, want both", got)
	}
	if series("theirs") == 0 {
		t.Error("a group taken back exports no series")
	}
	want := []string{"mine=true", "theirs=true", "mine=true", "theirs=false", "mine=true", "theirs=true"}
	if !slices.Equal(obs.calls, want) {
		t.Errorf("SetGroupActive calls %v, want %v", obs.calls, want)
	}
}
