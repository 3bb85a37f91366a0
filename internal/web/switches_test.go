package web

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// TestStatusPageShowsSwitches runs one cycle of a group whose fleet carries
// a pause and an ignored tag, and one pinned by the configuration, and
// reads the status page and the API.
func TestStatusPageShowsSwitches(t *testing.T) {
	t.Parallel()
	since := testStart.Add(-2 * time.Hour)
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		sample := func(g string) model.GroupSample {
			return model.GroupSample{Group: g, At: now, Visible: 50, Backlog: 50, Queues: 1, Answered: 1}
		}
		fleet := model.Fleet{Kind: "autoscaling", Name: "w", At: now, Known: true, Desired: 3, InService: 3, Max: 20}
		paused := fleet
		paused.Switches = model.Switches{Paused: true, PausedBy: "alice <ops>", PausedSince: since,
			Warnings: []string{`tag queue-checker:pin="lots" ignored: want a whole number of workers >= 0`}}
		return []model.Observation{{Sample: sample("paused"), Fleet: paused}, {Sample: sample("pinned"), Fleet: fleet}}, nil
	})
	groups := []policy.Settings{
		{Group: "paused", ServiceTime: time.Second, Latency: 30 * time.Second, Max: 20, StaleAfter: time.Minute},
		{Group: "pinned", ServiceTime: time.Second, Latency: 30 * time.Second, Max: 20, StaleAfter: time.Minute, Pinned: true, Pin: 0},
	}
	c, err := controller.New(controller.Options{Groups: groups, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(context.Background(), testStart); err != nil {
		t.Fatal(err)
	}
	h := newTestHandler(c, testStart)
	rec := get(t, h, "/")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		"Paused by alice &lt;ops&gt; since 2025-03-14T07:00:00Z: no scaling call; metrics are still published.",
		html.EscapeString(`Ignored: tag queue-checker:pin="lots" ignored: want a whole number of workers >= 0.`),
	} {
		if !strings.Contains(section(t, body, "paused"), want) {
			t.Errorf("the paused group's panel lacks %s", want)
		}
	}
	if !strings.Contains(section(t, body, "pinned"), "Pinned at 0 workers (within min and max).") {
		t.Errorf("the pinned group's panel does not say it is pinned at 0")
	}

	var doc struct {
		Groups []struct {
			Switches []string `json:"switches"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(get(t, h, "/api/v1/groups").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 2 || len(doc.Groups[0].Switches) != 2 || len(doc.Groups[1].Switches) != 1 {
		t.Errorf("API switches = %+v, want 2 notes for paused, 1 for pinned", doc.Groups)
	}
}
