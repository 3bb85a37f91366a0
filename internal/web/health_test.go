package web

import (
	"strings"
	"testing"
	"time"
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
