package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// leaseGate is a controller.Gate of our own: this checker holds the busy
// group; another holds the odd one.
type leaseGate struct{}

func (leaseGate) Sync(context.Context, time.Time) error { return nil }
func (leaseGate) Permit(group string) (time.Time, bool) {
	return testStart.Add(time.Hour), group == groupBusy
}

func (leaseGate) Lease(group string) model.LeaseStatus {
	if group == groupBusy {
		return model.LeaseStatus{Owner: "checker-a", Held: true, Acting: true, Since: testStart}
	}
	return model.LeaseStatus{Owner: "checker-b"}
}

func (leaseGate) Peers() []model.Peer {
	return []model.Peer{{Identity: "checker-a", Leases: 1}, {Identity: "checker-b", Leases: 1}}
}
func (leaseGate) Identity() string { return "checker-a" }
func (leaseGate) Healthy() error   { return nil }

// TestLeaseOwners: with several checkers, /api/v1/groups and the status
// page name each group's owner and the checkers seen.
func TestLeaseOwners(t *testing.T) {
	t.Parallel()
	w := &world{backlog: 2000, step: 150, desired: 4}
	c, err := controller.New(controller.Options{Groups: testGroups(), Observer: controllertest.NewObserver(w.observe),
		Actuator: worldActuator{w: w}, Gate: leaseGate{}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.RunOnce(context.Background(), testStart)
	h := newTestHandler(c, testStart)

	var doc struct {
		Groups []struct {
			Name  string `json:"name"`
			Lease *struct {
				Owner string `json:"owner"`
				Held  bool   `json:"held"`
			} `json:"lease"`
		} `json:"groups"`
		Coordination *struct {
			Identity string `json:"identity"`
			Peers    []struct {
				Identity string `json:"identity"`
				Leases   int    `json:"leases"`
			} `json:"peers"`
		} `json:"coordination"`
	}
	if err := json.Unmarshal(get(t, h, "/api/v1/groups").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Coordination == nil || doc.Coordination.Identity != "checker-a" || len(doc.Coordination.Peers) != 2 {
		t.Fatalf("coordination = %+v, want checker-a and two peers", doc.Coordination)
	}
	want := map[string]string{groupBusy: "checker-a", groupOdd: "checker-b"}
	for _, g := range doc.Groups {
		if g.Lease == nil || g.Lease.Owner != want[g.Name] || g.Lease.Held != (g.Name == groupBusy) {
			t.Errorf("group %s lease = %+v, want owner %s", g.Name, g.Lease, want[g.Name])
		}
	}
	if w.desired == 4 {
		t.Errorf("the held group was not acted on")
	}

	page := get(t, h, "/").Body.String()
	for _, s := range []string{"<th scope=\"col\">Owner</th>", `data-field="lease.owner"`, ">checker-b<", "checker-b (1 groups)", "This checker: <strong>checker-a</strong>"} {
		if !strings.Contains(page, s) {
			t.Errorf("status page lacks %q", s)
		}
	}

	alone, _ := newTestController(t, 1, 5*time.Second)
	page = get(t, newTestHandler(alone, testStart), "/").Body.String()
	if strings.Contains(page, "Owner</th>") || strings.Contains(page, "data-peers") {
		t.Errorf("a checker running alone shows lease owners")
	}
}
