package web

import (
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

func TestForecastNote(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 14, 14, 5, 30, 0, time.UTC)
	next := time.Date(2025, 3, 14, 14, 7, 0, 0, time.UTC)
	job := &model.Forecast{Rate: 40, At: next, Pattern: "every 20m0s", Confidence: 0.75, Seen: 3, Of: 4}
	bursts := &model.Forecast{Rate: 12.5, At: at, Pattern: "recent bursts", Confidence: 0.05}
	// The bet on the job: 30 of the 45 workers its wait floor asks for.
	bet := *job
	bet.Floor, bet.SizedFor = model.FloorWait, 44
	bet.Bet = &model.Bet{Workers: 30, Need: 45, Chance: 0.326, LateIfMissed: 1200}
	// The job under way: its occurrence came at 14:05.
	came := *job
	came.At, came.Floor, came.SizedFor = at.Add(-30*time.Second), model.FloorUtilization, 44
	// An occurrence not come whose floor the bet could not lower.
	ahead := *job
	ahead.Floor, ahead.SizedFor = model.FloorWait, 44
	sizedBursts := *bursts
	sizedBursts.Floor, sizedBursts.SizedFor = model.FloorWait, 13.75
	acting := policy.Settings{}
	report := policy.Settings{Forecast: policy.ForecastSettings{ReportOnly: true}}
	tests := []struct {
		name string
		s    policy.Settings
		d    *model.Decision
		want string
	}{
		{"no decision", acting, nil, ""},
		{"no forecast", acting, &model.Decision{At: at, Reasons: []string{"drain floor 3"}}, ""},
		{"the bet on an occurrence not yet come", acting,
			&model.Decision{At: at, Forecast: &bet, Reasons: []string{"arrivals 2 msg/s"}},
			"Seen 3 of 4 times (every 20m0s), chance 32.6 %: pre-starting 30 of the 45 workers the wait floor asks for the 44 msg/s expected at 14:07:00 UTC; missed, about 1,200 messages would wait past the promise."},
		{"an occurrence under way", acting,
			&model.Decision{At: at, Forecast: &came},
			"Keeping workers for the load expected at 14:05:00 UTC (every 20m0s, 3 of the last 4 times): the utilisation floor sizes for 44 msg/s."},
		{"an occurrence ahead without a bet", acting,
			&model.Decision{At: at, Forecast: &ahead},
			"Pre-starting for the load expected at 14:07:00 UTC (every 20m0s, 3 of the last 4 times): the wait floor sizes for 44 msg/s."},
		{"recent bursts sized for", acting,
			&model.Decision{At: at, Forecast: &sizedBursts},
			"The wait floor sizes for 13.75 msg/s: bursts that high came often enough lately to be expected within the next start delay."},
		{"report only: what the forecast expects, and that it changes nothing", report,
			&model.Decision{At: at, Forecast: job, Reasons: []string{"arrivals 2 msg/s"}},
			"Report only, the count is not changed for it: the forecast expects up to 40 msg/s from 14:07:00 UTC (every 20m0s, 75.0 % of recent occurrences as expected)."},
		{"a forecast that sized nothing (below today's floors)", acting,
			&model.Decision{At: at, Forecast: bursts, Reasons: []string{"arrivals 20 msg/s"}},
			"The forecast expects up to 12.5 msg/s within the next start delay (recent bursts, 5.0 % of recent occurrences as expected)."},
		{"the reasons are not read", acting,
			&model.Decision{At: at, Forecast: job, Reasons: []string{"pre-starting for the load expected at 14:07:00 (every 20m0s): the wait floor sizes for 40 msg/s"}},
			"The forecast expects up to 40 msg/s from 14:07:00 UTC (every 20m0s, 75.0 % of recent occurrences as expected)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := forecastNote(tt.s, tt.d); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBacklogTrend(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	drain := 600.0
	rate := 5.0
	hist := func(backlogs ...int64) []readmodel.Point {
		// One point every 30 s, the last at now.
		var out []readmodel.Point
		for i, b := range backlogs {
			out = append(out, readmodel.Point{At: now.Add(-time.Duration(len(backlogs)-1-i) * 30 * time.Second), Backlog: b})
		}
		return out
	}
	tests := []struct {
		name    string
		d       *model.Decision
		history []readmodel.Point
		want    string
	}{
		{"nothing waits", &model.Decision{At: now, Backlog: 0, Diagnosis: model.DiagCapped}, hist(50, 10, 0), ""},
		{"no data", &model.Decision{At: now, Backlog: 10, Diagnosis: model.DiagUnknown}, hist(5, 10), ""},
		{"healthy: the advice does not depend on it", &model.Decision{At: now, Backlog: 10, Diagnosis: model.DiagHealthy}, hist(5, 8, 10), ""},
		// 1,200 fewer over the minute: 20 msg/s net; 1,800 left clear in 90 s.
		{"capped and falling over the last minute", &model.Decision{At: now, Backlog: 1800, Diagnosis: model.DiagCapped}, hist(3000, 2400, 1800),
			"The backlog is falling: 1,200 messages fewer than 1m ago; at that pace it clears in about 1m30s."},
		{"capped and growing over the last minute", &model.Decision{At: now, Backlog: 900, DrainSeconds: &drain, Diagnosis: model.DiagCapped}, hist(300, 600, 900),
			"The backlog is growing: 600 messages more than 1m ago; it will keep growing until the fleet catches up."},
		{"one message more", &model.Decision{At: now, Backlog: 41, Diagnosis: model.DiagUnderProvisioned}, hist(40, 38, 41),
			"The backlog is growing: 1 message more than 1m ago; it will keep growing until the fleet catches up."},
		{"steady", &model.Decision{At: now, Backlog: 40, Diagnosis: model.DiagUnderProvisioned}, hist(40, 38, 40), "The backlog is steady: as large as 1m ago."},
		{"under a minute of history: the drain time", &model.Decision{At: now, Backlog: 40, DrainSeconds: &drain, ArrivalRate: &rate, Diagnosis: model.DiagDraining}, hist(60, 40),
			"At the current arrivals the workers clear the backlog in about 10m."},
		{"under a minute of history, never drains", &model.Decision{At: now, Backlog: 40, ArrivalRate: &rate, Diagnosis: model.DiagCapped}, hist(40),
			"At the current arrivals the workers do not clear the backlog: it will keep growing."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := backlogTrend(tt.d, tt.history); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	// The advice of a capped group no longer claims the backlog grows: the
	// trend says which way it goes.
	if a := diagnosisOf(model.DiagCapped).Advice; strings.Contains(a, "grow") {
		t.Errorf("capped advice %q claims a trend", a)
	}
}

func TestArrivalsChartDrawsTheForecast(t *testing.T) {
	t.Parallel()
	end := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	rate := func(x float64) *float64 { return &x }
	hist := []readmodel.Point{
		{At: end.Add(-5 * time.Minute), Arrival: rate(2)},
		{At: end.Add(-150 * time.Second), Arrival: rate(3), Forecast: rate(40)},
		{At: end, Arrival: rate(2.5), Forecast: rate(40)},
	}
	var spec chartSpec
	for _, c := range charts {
		if c.ID == "arrivals" {
			spec = c
		}
	}
	v := renderChart(spec, nil, hist, end)
	g := geometry
	x := func(ms int64) string {
		return coord(float64(g.Left) + float64(ms)/float64(5*60_000)*float64(g.plotW()))
	}
	// The axis tops at 50 (niceMax of 40).
	y := func(n float64) string { return coord(float64(g.Top) + float64(g.plotH()) - n/50*float64(g.plotH())) }
	want := map[string]string{
		"arrival_rate":  "M" + x(0) + "," + y(2) + "L" + x(150_000) + "," + y(3) + "L" + x(300_000) + "," + y(2.5),
		"forecast_rate": "M" + x(150_000) + "," + y(40) + "H" + x(300_000),
	}
	for _, p := range v.Paths {
		if p.D != want[p.Key] {
			t.Errorf("%s: d = %q, want %q", p.Key, p.D, want[p.Key])
		}
	}
	if wantDesc := "Last 5m. arrivals: now 2.5, highest 3; forecast: now 40, highest 40."; v.Desc != wantDesc {
		t.Errorf("text alternative %q, want %q", v.Desc, wantDesc)
	}
}

func TestForecastMode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    policy.Settings
		want string
	}{
		{policy.Settings{}, "act"},
		{policy.Settings{Forecast: policy.ForecastSettings{ReportOnly: true}}, "report"},
		{policy.Settings{Forecast: policy.ForecastSettings{Off: true, ReportOnly: true}}, "off"},
		{policy.Settings{Policy: policy.PolicyBacklogPerWorker}, "off"},
	} {
		d := settingsOf(tt.s)
		if d.Forecast != tt.want || d.ForecastHistorySeconds != model.DefaultForecastHistory.Seconds() {
			t.Errorf("settings %+v: forecast %q over %v s, want %q over 8 days", tt.s.Forecast, d.Forecast, d.ForecastHistorySeconds, tt.want)
		}
	}
}
