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
			Warnings: []string{`tag queue-checker:paused-at="yesterday" ignored: want a time such as 2025-03-01T12:00:00Z`}}
		unread := fleet
		unread.Switches = model.Switches{NotUnderstood: []string{`tag "queue-checker:no-scale-in" is not a switch this checker reads: the group is held, neither scaled in nor out`}}
		return []model.Observation{{Sample: sample("paused"), Fleet: paused}, {Sample: sample("pinned"), Fleet: fleet}, {Sample: sample("unread"), Fleet: unread}}, nil
	})
	groups := []policy.Settings{
		{Group: "paused", ServiceTime: time.Second, Latency: 30 * time.Second, Max: 20, StaleAfter: time.Minute},
		{Group: "pinned", ServiceTime: time.Second, Latency: 30 * time.Second, Max: 20, StaleAfter: time.Minute, Pinned: true, Pin: 0},
		{Group: "unread", ServiceTime: time.Second, Latency: 30 * time.Second, Max: 20, StaleAfter: time.Minute},
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
		html.EscapeString(`Note: tag queue-checker:paused-at="yesterday" ignored: want a time such as 2025-03-01T12:00:00Z.`),
	} {
		if !strings.Contains(section(t, body, "paused"), want) {
			t.Errorf("the paused group's panel lacks %s", want)
		}
	}
	if !strings.Contains(section(t, body, "pinned"), "Pinned at 0 workers (within the bounds).") {
		t.Errorf("the pinned group's panel does not say it is pinned at 0")
	}

	// The group held for a switch not understood says so, though its
	// backlog asks for more workers: 50 messages at 1 s each within 30 s.
	unread := section(t, body, "unread")
	if want := html.EscapeString(`Held, switch not understood: tag "queue-checker:no-scale-in" is not a switch this checker reads`); !strings.Contains(unread, want) {
		t.Errorf("the unread group's panel lacks %s", want)
	}

	var doc struct {
		Groups []struct {
			Name     string   `json:"name"`
			Switches []string `json:"switches"`
			Decision struct {
				DesiredWorkers int      `json:"desired_workers"`
				Held           bool     `json:"held"`
				HoldReason     string   `json:"hold_reason"`
				SwitchProblems []string `json:"switch_problems"`
			} `json:"decision"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(get(t, h, "/api/v1/groups").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) != 3 || len(doc.Groups[0].Switches) != 2 || len(doc.Groups[1].Switches) != 1 || len(doc.Groups[2].Switches) != 1 {
		t.Fatalf("API switches = %+v, want 2 notes for paused, 1 for pinned, 1 for unread", doc.Groups)
	}
	if u := doc.Groups[2]; u.Name != "unread" || !u.Decision.Held || u.Decision.HoldReason != policy.HoldSwitchNotUnderstood ||
		len(u.Decision.SwitchProblems) != 1 || u.Decision.DesiredWorkers != 3 {
		t.Errorf("API decision of the unread group = %+v, want held at 3 for the switch not understood", u)
	}
}
