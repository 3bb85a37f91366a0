package web

import (
	"context"
	"encoding/json"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// A decision the controller did not act on shows why on the page, in the
// list of changes and in the API, from the decision's not_acted; the
// policy's reasons stay as the policy gave them.
func TestNotActedIsShown(t *testing.T) {
	t.Parallel()
	w := &world{backlog: 2000, step: 150, desired: 4}
	c, err := controller.New(controller.Options{Groups: testGroups(), Observer: controllertest.NewObserver(w.observe),
		Actuator: worldActuator{w: w}})
	if err != nil {
		t.Fatal(err)
	}
	const why = "the coordination block was added"
	now := testStart
	for i := range 12 {
		now = testStart.Add(time.Duration(i) * 10 * time.Second)
		// The first cycle is acted on; the busy group's count still climbs
		// in the second, which is not.
		if i == 1 {
			c.SetRestartNeeded(why)
		}
		_, _ = c.RunOnce(context.Background(), now) // the odd group's action fails
	}
	busy := c.Views().Groups()[0]
	if busy.Decision == nil || busy.Decision.NotActed == nil || busy.Decision.NotActed.Cause != model.NotActedRestartNeeded {
		t.Fatalf("the busy group's decision %+v does not carry why it was not acted on", busy.Decision)
	}
	for _, r := range busy.Decision.Reasons {
		if strings.Contains(r, "not acted on") || strings.Contains(r, why) {
			t.Errorf("the policy's reasons were written into: %q", r)
		}
	}
	message := busy.Decision.NotActed.Message
	if !strings.Contains(message, why) {
		t.Errorf("message %q does not name the refused reload", message)
	}

	h := newTestHandler(c, now)
	panel := section(t, get(t, h, "/").Body.String(), groupBusy)
	notice := `<p class="notice warn" data-show="decision.not_acted.message">`
	if !strings.Contains(panel, notice) {
		t.Errorf("the busy group's panel has no visible not-acted notice: want %s", notice)
	}
	if !strings.Contains(panel, html.EscapeString(message)) {
		t.Errorf("the panel does not show %q", message)
	}
	if strings.Contains(section(t, get(t, newTestHandler(actedController(t), now), "/").Body.String(), groupBusy), notice) {
		t.Errorf("a group acted on shows the not-acted notice")
	}

	var changed bool
	for _, ch := range busy.Changes {
		if ch.NotActed == nil {
			continue
		}
		changed = true
		want := html.EscapeString(strings.Join(append(ch.Reasons, "not acted on: "+ch.NotActed.Message), "; "))
		if !strings.Contains(panel, want) {
			t.Errorf("the change to %d is listed without why it was not acted on: want %s", ch.To, want)
		}
	}
	if !changed {
		t.Error("no change of the desired count while a restart was needed; the test shows nothing")
	}

	var doc struct {
		Groups []struct {
			Decision struct {
				NotActed *model.NotActed `json:"not_acted"`
			} `json:"decision"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(get(t, h, "/api/v1/groups").Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Groups) == 0 || doc.Groups[0].Decision.NotActed == nil || *doc.Groups[0].Decision.NotActed != *busy.Decision.NotActed {
		t.Errorf("/api/v1/groups: not_acted %+v, want %+v", doc.Groups, busy.Decision.NotActed)
	}
}

// actedController is the scripted world's controller after a few cycles, all
// acted on.
func actedController(t *testing.T) *controller.Controller {
	t.Helper()
	c, _ := newTestController(t, 6, 10*time.Second)
	return c
}
