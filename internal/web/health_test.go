package web

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
)

// What /healthz says when it is not ok is on the page and in /api, so that
// an engineer reading the page learns that a restart is needed (or which
// groups have no owner) without probing the endpoint.
func TestPageAndAPIShowUnhealthy(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 3, 5*time.Second)
	h := newTestHandler(c, now)

	doc := decodeAPI(t, h)
	if _, ok := doc["health"]; ok {
		t.Fatalf("/api carries health %v while /healthz is ok", doc["health"])
	}
	if body := get(t, h, "/").Body.String(); !strings.Contains(body, `data-health hidden`) {
		t.Errorf("the status page shows a health notice while healthy")
	}

	c.SetRestartNeeded("the coordination block was added")
	if rec := get(t, h, "/healthz"); rec.Code != 503 {
		t.Fatalf("/healthz = %d with a restart needed, want 503", rec.Code)
	}
	doc = decodeAPI(t, h)
	hd, _ := doc["health"].(map[string]any)
	if hd["state"] != "unhealthy" || hd["detail"] != "restart needed: the coordination block was added" {
		t.Errorf("/api health = %v, want unhealthy, restart needed", doc["health"])
	}
	body := get(t, h, "/").Body.String()
	if strings.Contains(body, `data-health hidden`) || !strings.Contains(body, "unhealthy: restart needed: the coordination block was added") {
		t.Errorf("the status page does not show that a restart is needed")
	}
}

// degradedGate is a gate whose table holds a group nobody can take.
type degradedGate struct{ leaseGate }

func (degradedGate) Degraded() error {
	return errors.New("lease table leases: 1 group(s) with no owner for more than a lease duration (15s): odd")
}

// A problem of the lease table's data (a group nobody can take) is no
// liveness failure: /healthz stays 200 and says it, /readyz is 503 naming
// the group, and the page and /api show it.
func TestDegradedIsAliveButNotReady(t *testing.T) {
	t.Parallel()
	c, err := controller.New(controller.Options{Groups: testGroups(),
		Observer: controllertest.NewObserver((&world{backlog: 2000, step: 150, desired: 4}).observe),
		Actuator: worldActuator{w: &world{desired: 4}}, Gate: degradedGate{}})
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.RunOnce(context.Background(), testStart)
	h := newTestHandler(c, testStart)
	if rec := get(t, h, "/healthz"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "degraded") {
		t.Errorf("/healthz = %d %q, want 200 saying degraded", rec.Code, rec.Body.String())
	}
	if rec := get(t, h, "/readyz"); rec.Code != 503 || !strings.Contains(rec.Body.String(), "odd") {
		t.Errorf("/readyz = %d %q, want 503 naming the group", rec.Code, rec.Body.String())
	}
	hd, _ := decodeAPI(t, h)["health"].(map[string]any)
	if hd["state"] != "degraded" || !strings.Contains(fmt.Sprint(hd["detail"]), "odd") {
		t.Errorf("/api health = %v, want degraded naming the group", hd)
	}
	if body := get(t, h, "/").Body.String(); strings.Contains(body, `data-health hidden`) || !strings.Contains(body, "degraded: lease table") {
		t.Errorf("the status page does not show the degraded lease table")
	}
}

// A group name of megabytes in a request is repeated cut short in the
// answer: by /api, the status page and /plan alike.
func TestHugeGroupNameIsNotEchoed(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 1, 5*time.Second)
	h := newTestHandler(c, now)
	huge := strings.Repeat("x", 3<<20)
	for _, path := range []string{"/api/v1/groups?group=", "/?group=", "/plan?group="} {
		rec := get(t, h, path+huge)
		if n := rec.Body.Len(); n > 64<<10 {
			t.Errorf("%s<3 MB name>: %d bytes answered, want the name cut short", path, n)
		}
		if !strings.Contains(rec.Body.String(), "bytes)") {
			t.Errorf("%s<3 MB name>: the answer does not say how long the name was: %.300s", path, rec.Body.String())
		}
	}
}
