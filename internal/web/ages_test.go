package web

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// A figure is shown with its age: the oldest message's age read from a
// CloudWatch minute 2–3 minutes old says so, and is not shown as now.
func TestAgesOf(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 14, 13, 11, 52, 0, time.UTC)
	minute := time.Date(2025, 3, 14, 13, 8, 0, 0, time.UTC) // ended 13:09:00, 172 s ago
	age := 0.5
	d := &model.Decision{At: now.Add(-4 * time.Second), Backlog: 576, OldestAgeSeconds: &age, OldestAgeAt: &minute}
	a := agesOf(d, now)
	if a.Sample == nil || *a.Sample != 4 {
		t.Errorf("sample age %v, want 4 s", a.Sample)
	}
	if a.OldestAge == nil || *a.OldestAge != 172 {
		t.Errorf("oldest age's age %v, want 172 s (now − the minute's end)", a.OldestAge)
	}
	if !strings.Contains(a.OldestAgeNote, "2m52s ago") || !strings.Contains(a.OldestAgeNote, "not now") {
		t.Errorf("note %q, want it to say 2m52s ago and not now", a.OldestAgeNote)
	}
	fresh := time.Date(2025, 3, 14, 13, 10, 0, 0, time.UTC) // ended 13:11:00, 52 s ago
	d.OldestAgeAt = &fresh
	if a := agesOf(d, now); a.OldestAgeNote != "" || a.OldestAge == nil || *a.OldestAge != 52 {
		t.Errorf("fresh minute: %+v, want 52 s and no note", a)
	}
	if a := agesOf(nil, now); a.Sample != nil || a.OldestAge != nil {
		t.Errorf("no decision: %+v, want nothing", a)
	}
}

// The forecast note never names a past time as one to come: a load due at
// 13:07:00 read at 13:11:52 is due since then, and one to come keeps its
// note.
func TestForecastNoteNeverInThePast(t *testing.T) {
	t.Parallel()
	due := time.Date(2025, 3, 14, 13, 7, 0, 0, time.UTC)
	keep := "keeping workers for the load due since 13:07:00 (every 20m, seen at :27, :47, :07, 3 of the last 4 times): the wait floor sizes for 40 msg/s"
	d := &model.Decision{At: time.Date(2025, 3, 14, 13, 6, 0, 0, time.UTC),
		Forecast: &model.Forecast{Rate: 40, At: due, Pattern: "every 20m", Confidence: 0.75}, Reasons: []string{keep}}
	for _, s := range []policy.Settings{{}, {Forecast: policy.ForecastSettings{ReportOnly: true}}} {
		before := forecastNoteAt(s, d, due.Add(-time.Minute))
		if before != forecastNote(s, d) {
			t.Errorf("before the load: %q, want forecastNote's %q", before, forecastNote(s, d))
		}
		after := forecastNoteAt(s, d, time.Date(2025, 3, 14, 13, 11, 52, 0, time.UTC))
		if strings.Contains(after, "expected at 13:07") || strings.Contains(after, "msg/s from 13:07") || !strings.Contains(after, "due since 13:07:00 UTC") {
			t.Errorf("at 13:11:52: %q, want the load due since 13:07:00, not expected at it", after)
		}
		if s.Forecast.ReportOnly != strings.HasPrefix(after, "Report only") {
			t.Errorf("report only %t: %q", s.Forecast.ReportOnly, after)
		}
	}
}

// The tables at a glance (the status page's overview and the summary of
// many groups) show the oldest message's age with how old the reading is
// when its CloudWatch minute is not the last one: 500 ms read from the
// minute to 09:08:00, on a page of 09:10:30, is as of 2m30s ago. A fresh
// reading is shown alone.
func TestOverviewSaysHowOldTheOldestAgeIs(t *testing.T) {
	t.Parallel()
	decided := time.Date(2025, 3, 14, 9, 10, 30, 0, time.UTC)
	minute := time.Date(2025, 3, 14, 9, 7, 0, 0, time.UTC) // ended 09:08:00, 150 s before the page
	settings := func(name string) policy.Settings {
		return policy.Settings{Group: name, ServiceTime: time.Second, Concurrency: 1, Latency: 20 * time.Second,
			Max: 50, StaleAfter: time.Minute}.WithDefaults()
	}
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		fleet := model.Fleet{Kind: "autoscaling", Name: "w", Known: true, Desired: 5, InService: 5, Max: 50, At: now}
		return []model.Observation{
			{Sample: model.GroupSample{Group: "stale", At: now, Visible: 576, Backlog: 576, Queues: 1, Answered: 1,
				OldestAge: &model.Reading{Value: 0.5, At: minute}}, Fleet: fleet},
			{Sample: model.GroupSample{Group: "fresh", At: now, Visible: 5, Backlog: 5, Queues: 1, Answered: 1,
				OldestAge: &model.Reading{Value: 7, At: decided.Truncate(time.Minute).Add(-time.Minute)}}, Fleet: fleet},
		}, nil
	})
	c, err := controller.New(controller.Options{Groups: []policy.Settings{settings("stale"), settings("fresh")}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(context.Background(), decided); err != nil {
		t.Fatal(err)
	}
	h := newTestHandler(c, decided)
	body := get(t, h, "/").Body.String()
	row := func(group string) string {
		start := strings.Index(body, `<tr data-group="`+group+`">`)
		if start < 0 {
			t.Fatalf("no overview row of %s", group)
		}
		return body[start : start+strings.Index(body[start:], "</tr>")]
	}
	stale := regexp.MustCompile(`<span class="stale-age"[^>]*>`)
	if r := row("stale"); !strings.Contains(r, ">500.0 ms</span>") || !strings.Contains(r, "(as of <span") ||
		!strings.Contains(r, ">2m30s ago</span>)") || strings.Contains(stale.FindString(r), "hidden") {
		t.Errorf("overview row of the stale reading does not say it is 2m30s old:\n%s", r)
	}
	if r := row("fresh"); !strings.Contains(r, ">7 s</span>") || !strings.Contains(stale.FindString(r), "hidden") {
		t.Errorf("overview row of the fresh reading shows an age:\n%s", r)
	}

	sum := newSummaryPage(Options{Controller: c, Now: func() time.Time { return decided }})
	oldest := map[string]string{}
	for _, r := range sum.Rows {
		oldest[r.Name] = r.Oldest
	}
	if oldest["stale"] != "500.0 ms (as of 2m30s ago)" || oldest["fresh"] != "7 s" {
		t.Errorf("summary's oldest ages %q, want 500.0 ms (as of 2m30s ago) and 7 s", oldest)
	}
}
