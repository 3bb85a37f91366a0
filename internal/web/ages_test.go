package web

import (
	"strings"
	"testing"
	"time"

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
