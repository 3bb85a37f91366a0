package web

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// decodeAPI gets /api/v1/groups as generic JSON.
func decodeAPI(t *testing.T, h http.Handler) map[string]any {
	t.Helper()
	rec := get(t, h, "/api/v1/groups")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /api/v1/groups: %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	var doc map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return doc
}

// asJSON is v through encoding/json and back, for comparing with the
// generic form of the endpoint.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return out
}

func keysOf(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestGroupsAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		cycles int
	}{
		{name: "before the first cycle", cycles: 0},
		{name: "after one cycle", cycles: 1},
		{name: "after twenty cycles", cycles: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, now := newTestController(t, tt.cycles, 10*time.Second)
			now = now.Add(3 * time.Second)
			doc := decodeAPI(t, newTestHandler(c, now))

			want := []string{"aws_cost", "generated_at", "groups", "refresh_seconds"}
			if tt.cycles == 0 {
				// Before the first cycle /healthz says starting, and so does
				// the document.
				want = []string{"aws_cost", "generated_at", "groups", "health", "refresh_seconds"}
				if h, _ := doc["health"].(map[string]any); h["state"] != "starting" {
					t.Errorf("health before the first cycle = %v, want starting", doc["health"])
				}
			}
			if got := keysOf(doc); !slices.Equal(got, want) {
				t.Errorf("top-level keys %v, want %v", got, want)
			}
			if doc["generated_at"] != now.Format(time.RFC3339Nano) {
				t.Errorf("generated_at %v, want %v", doc["generated_at"], now.Format(time.RFC3339Nano))
			}
			if doc["refresh_seconds"] != 5.0 {
				t.Errorf("refresh_seconds %v, want 5", doc["refresh_seconds"])
			}
			groups, _ := doc["groups"].([]any)
			views := c.Views().Groups()
			if len(groups) != len(views) {
				t.Fatalf("%d groups, want %d", len(groups), len(views))
			}
			for i, v := range views {
				g := groups[i].(map[string]any)
				checkGroupJSON(t, g, v)
			}
		})
	}
}

// checkGroupJSON holds one group of the endpoint to the controller's view.
func checkGroupJSON(t *testing.T, g map[string]any, v readmodel.GroupView) {
	t.Helper()
	wantKeys := []string{"action_error", "ages", "backlog_trend", "bounds", "burst_note", "changes", "cost", "decision", "failures", "fleet", "fleet_minutes", "forecast_note",
		"history", "last_action", "name", "queues", "settings", "slo", "switches"}
	if got := keysOf(g); !slices.Equal(got, wantKeys) {
		t.Errorf("group keys %v, want %v", got, wantKeys)
	}
	if g["name"] != v.Settings.Group {
		t.Errorf("name %v, want %q", g["name"], v.Settings.Group)
	}

	s := g["settings"].(map[string]any)
	st := v.Settings.WithDefaults()
	for key, want := range map[string]float64{
		"min": float64(st.Min), "max": float64(st.Max), "cap": float64(st.Cap),
		"latency_seconds":      st.Latency.Seconds(),
		"drain_time_seconds":   st.DrainTime.Seconds(),
		"utilization":          st.Utilization,
		"service_time_seconds": st.ServiceTime.Seconds(),
		"throughput":           st.Throughput,
		"per_worker":           st.PerWorker(),
		"start_delay_seconds":  st.StartDelay.Seconds(),
		"safety_workers":       float64(st.SafetyWorkers),
	} {
		if s[key] != want {
			t.Errorf("%s: settings.%s = %v, want %v", v.Settings.Group, key, s[key], want)
		}
	}
	if s["utilization_measured"] != st.MeasuredCeiling {
		t.Errorf("%s: settings.utilization_measured = %v, want %v", v.Settings.Group, s["utilization_measured"], st.MeasuredCeiling)
	}

	// The decision is model.Decision's own JSON, null before the first cycle.
	if v.Decision == nil {
		if g["decision"] != nil {
			t.Errorf("%s: decision %v before the first cycle, want null", v.Settings.Group, g["decision"])
		}
	} else {
		want := asJSON(t, v.Decision).(map[string]any)
		if want["reasons"] == nil {
			want["reasons"] = []any{}
		}
		if !reflect.DeepEqual(g["decision"], want) {
			t.Errorf("%s: decision\n%v\nwant\n%v", v.Settings.Group, g["decision"], want)
		}
	}

	f := g["fleet"].(map[string]any)
	wantErr := ""
	if v.Fleet.Err != nil {
		wantErr = v.Fleet.Err.Error()
	}
	for key, want := range map[string]any{
		"kind": v.Fleet.Kind, "name": v.Fleet.Name, "known": v.Fleet.Known, "error": wantErr,
		"desired": float64(v.Fleet.Desired), "in_service": float64(v.Fleet.InService),
		"pending": float64(v.Fleet.Pending), "draining": float64(v.Fleet.Draining), "min": float64(v.Fleet.Min), "max": float64(v.Fleet.Max),
	} {
		if f[key] != want {
			t.Errorf("%s: fleet.%s = %v, want %v", v.Settings.Group, key, f[key], want)
		}
	}

	q := g["queues"].(map[string]any)
	if q["configured"] != float64(v.Sample.Queues) || q["answered"] != float64(v.Sample.Answered) {
		t.Errorf("%s: queues %v, want %d of %d", v.Settings.Group, q, v.Sample.Answered, v.Sample.Queues)
	}
	if q["asked"] != float64(v.Sample.Polling.Asked) || q["requests_per_minute"] != v.Sample.Polling.RequestsPerMinute ||
		q["monthly_cost_dollars"] != v.Sample.Polling.MonthlyCost || q["notice"] != strings.Join(v.Sample.Polling.Notices, "; ") {
		t.Errorf("%s: queues %v, want polling %+v", v.Settings.Group, q, v.Sample.Polling)
	}

	// Lists are arrays, never null, and equal to the view's.
	for key, want := range map[string]any{
		"failures": v.Sample.Failures, "history": v.History, "changes": v.Changes, "fleet_minutes": v.FleetMinutes,
	} {
		got, ok := g[key].([]any)
		if !ok {
			t.Errorf("%s: %s is %T, want an array", v.Settings.Group, key, g[key])
			continue
		}
		w, _ := asJSON(t, want).([]any)
		if w == nil {
			w = []any{}
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %s\n%v\nwant\n%v", v.Settings.Group, key, got, w)
		}
	}
	if !reflect.DeepEqual(g["last_action"], asJSON(t, v.LastAction)) {
		t.Errorf("%s: last_action %v, want %v", v.Settings.Group, g["last_action"], v.LastAction)
	}
	if g["action_error"] != v.ActionError {
		t.Errorf("%s: action_error %v, want %q", v.Settings.Group, g["action_error"], v.ActionError)
	}

	// The promise as an SLO: null before the first cycle, then the view's
	// status field by field.
	if v.SLO == nil {
		if g["slo"] != nil {
			t.Errorf("%s: slo %v with no estimate, want null", v.Settings.Group, g["slo"])
		}
		return
	}
	so, ok := g["slo"].(map[string]any)
	if !ok {
		t.Fatalf("%s: slo is %T, want an object", v.Settings.Group, g["slo"])
	}
	st2 := *v.SLO
	for key, want := range map[string]any{
		"objective": st2.Objective, "window_seconds": st2.Window.Seconds(),
		"share_hour": st2.HourShare, "share_window": st2.Share, "kept": st2.HourShare >= st2.Objective,
		"budget_left": st2.BudgetLeft, "burn_rate": st2.BurnRate, "trust": st2.Trust.String(), "why": st2.Why,
		"within_hour": st2.HourWithin, "late_hour": st2.HourLate, "within_window": st2.Within, "late_window": st2.Late,
	} {
		if so[key] != want {
			t.Errorf("%s: slo.%s = %v, want %v", v.Settings.Group, key, so[key], want)
		}
	}
	if len(so) != 13 {
		t.Errorf("%s: slo has keys %v, want the 13 checked", v.Settings.Group, keysOf(so))
	}
}

func TestGroupsAPIHistoryFollowsTheCycles(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 30, 10*time.Second)
	doc := decodeAPI(t, newTestHandler(c, now))
	g := doc["groups"].([]any)[0].(map[string]any)
	history := g["history"].([]any)
	if len(history) != 30 {
		t.Fatalf("%d points of history, want one per cycle: 30", len(history))
	}
	last := history[len(history)-1].(map[string]any)
	d := g["decision"].(map[string]any)
	for _, key := range []string{"backlog", "current_workers", "desired_workers", "recommended_workers", "oldest_age_seconds"} {
		if last[key] != d[key] {
			t.Errorf("newest point %s = %v, the decision says %v", key, last[key], d[key])
		}
	}
	if last["at"] != now.Format(time.RFC3339Nano) {
		t.Errorf("newest point at %v, want %v", last["at"], now)
	}
}

func TestRefreshEvery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		interval time.Duration
		want     time.Duration
	}{
		{"unset", 0, 5 * time.Second},
		{"fast cycles", 100 * time.Millisecond, time.Second},
		{"the cycle interval", 3 * time.Second, 3 * time.Second},
		{"slow cycles", time.Minute, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := refreshEvery(tt.interval); got != tt.want {
				t.Errorf("refreshEvery(%v) = %v, want %v", tt.interval, got, tt.want)
			}
		})
	}
}

// The demo's cycles run faster than its simulated interval: its page
// refreshes at the wall-clock pace it sets.
func TestRefreshOverridesTheInterval(t *testing.T) {
	t.Parallel()
	if got := (Options{Interval: 5 * time.Second, Refresh: 2 * time.Second}).refreshInterval(); got != 2*time.Second {
		t.Errorf("with Refresh 2s: %v, want 2s", got)
	}
	if got := (Options{Interval: 5 * time.Second}).refreshInterval(); got != 5*time.Second {
		t.Errorf("without Refresh: %v, want the interval, 5s", got)
	}
}

// The bill's sentences: 143 workers at $0.0416 are 143 × 0.0416 = $5.9488,
// "$5.95 an hour"; over 10 minutes 143 × 600 / 3600 × 0.0416 = $0.99147,
// "$0.99"; 60,000 messages make $16.52 per million; asks of 150 with the
// forecast and 140 without are $1.04 and $0.97: the forecast cost $0.07.
// Without a price the page says so.
func TestCostSentences(t *testing.T) {
	t.Parallel()
	per := 143 * 600.0 / 3600 * 0.0416 / 60000 * 1e6
	d := costOf(readmodel.Bill{Priced: true, WorkerCostPerHour: 0.0416, Workers: 143, DollarsPerHour: 143 * 0.0416,
		BilledSeconds: 600, WorkerHours: 143 * 600.0 / 3600, Dollars: 143 * 600.0 / 3600 * 0.0416, Messages: 60000,
		PerMillionMessages: &per, SizedWithForecastDollars: 150 * 600.0 / 3600 * 0.0416,
		SizedWithoutForecastDollars: 140 * 600.0 / 3600 * 0.0416, ForecastSavingDollars: -10 * 600.0 / 3600 * 0.0416})
	for _, want := range []string{"$5.95 an hour now (143 workers × $0.0416 an hour)", "$0.99 over the last 10 min", "$16.52 per million messages"} {
		if !strings.Contains(d.Summary, want) {
			t.Errorf("summary %q lacks %q", d.Summary, want)
		}
	}
	if want := "would have cost $0.97, with it $1.04: the forecast cost $0.07"; !strings.Contains(d.ForecastSummary, want) {
		t.Errorf("forecast summary %q lacks %q", d.ForecastSummary, want)
	}
	if d := costOf(readmodel.Bill{WorkerHours: 2}); !strings.HasPrefix(d.Summary, "no price set") || d.ForecastSummary != "" {
		t.Errorf("unpriced: %+v", d)
	}
}

func TestSpanText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		seconds float64
		want    string
	}{{0, "0 s"}, {44.6, "45 s"}, {600, "10 min"}, {3599, "59 min"}, {3600, "1 h"}, {12000, "3 h 20 min"}, {86400, "24 h"}} {
		if got := spanText(tt.seconds); got != tt.want {
			t.Errorf("spanText(%v) = %q, want %q", tt.seconds, got, tt.want)
		}
	}
}
