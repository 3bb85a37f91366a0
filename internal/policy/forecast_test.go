package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// minutesPerDay is a day in minutes.
const minutesPerDay = 24 * 60

// fcStart is a minute-aligned start for the forecast's tests.
var fcStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// Through Decide: a group warmed with the history of a job every 20 minutes
// is sized for it before it comes, says so, and reports the forecast.
func TestDecidePreStartsForForecastJob(t *testing.T) {
	t.Parallel()
	s := Settings{Policy: PolicyModel, ServiceTime: time.Second, Concurrency: 1, Latency: 30 * time.Second,
		Max: 500, StartDelay: time.Minute, StaleAfter: time.Minute}
	counts := forecasttest.Minutes(5, 4*60, func(i int) float64 {
		if i%20 == 7 || i%20 == 8 {
			return 200
		}
		return 10
	})
	var st State
	if n := st.Preload(s, model.MinuteHistory{Start: fcStart, Counts: counts}); n != len(counts) {
		t.Fatalf("preloaded %d minutes, want %d", n, len(counts))
	}
	// 4 h in: the next job is at 04:07; decide from 04:05:50, every 5 s,
	// over a quiet queue at 10 msg/s: a start delay and an interval ahead
	// reaches the job's minute at 04:05:55.
	fleet := model.Fleet{Kind: "autoscaling", Known: true, Desired: 13, InService: 13, Max: 500}
	at := fcStart.Add(4*time.Hour + 5*time.Minute + 50*time.Second)
	var d model.Decision
	for i := range 3 {
		now := at.Add(time.Duration(i) * 5 * time.Second)
		smp := model.GroupSample{At: now, Visible: 0, InFlight: 10, Backlog: 10, Queues: 1, Answered: 1,
			Deleted: &model.Reading{Value: 10, At: now}}
		d = Decide(s, smp, fleet, &st, now)
	}
	if d.Forecast == nil || d.Forecast.Pattern != "every 20m0s" || !d.Forecast.At.Equal(fcStart.Add(4*time.Hour+7*time.Minute)) {
		t.Fatalf("forecast %+v, want the job every 20m0s at 04:07", d.Forecast)
	}
	// 200 msg/s at 1 s a message needs over 200 workers once it has come;
	// before, those that keep its first 70 s (the start delay and two
	// intervals: until workers launched when it comes start) within half
	// the 30 s promise, at least 200 × 70 ÷ (70 + 15) = 165, by the wait
	// floor.
	if d.Floors.Wait == nil || *d.Floors.Wait < 165 || d.DesiredWorkers < 165 {
		t.Fatalf("wait floor %v, desired %d: want at least 165 for the job", d.Floors.Wait, d.DesiredWorkers)
	}
	if !hasReason(d, "seen 12 of 12 times, every 20m0s, chance") || !hasReason(d, "workers for the load expected at 04:07:00") {
		t.Fatalf("reasons %q", d.Reasons)
	}
	// Report-only: the same forecast is shown, and the count is what it is
	// with no forecast at all. The job's runs the history holds are bursts
	// to the burst learner either way: with nothing to pre-start them, the
	// workers they need are kept warm.
	decide := func(s Settings) model.Decision {
		var st State
		st.Preload(s, model.MinuteHistory{Start: fcStart, Counts: counts})
		var d model.Decision
		for i := range 3 {
			now := at.Add(time.Duration(i) * 5 * time.Second)
			smp := model.GroupSample{At: now, InFlight: 10, Backlog: 10, Queues: 1, Answered: 1,
				Deleted: &model.Reading{Value: 10, At: now}}
			d = Decide(s, smp, fleet, &st, now)
		}
		return d
	}
	s.Forecast.ReportOnly = true
	d = decide(s)
	s.Forecast.ReportOnly, s.Forecast.Off = false, true
	off := decide(s)
	if d.Forecast == nil || d.DesiredWorkers != off.DesiredWorkers || off.Forecast != nil || hasReason(d, "pre-starting") {
		t.Fatalf("report-only: forecast %+v, desired %d; with the forecast off %d: want the forecast shown, nothing pre-started and the same count",
			d.Forecast, d.DesiredWorkers, off.DesiredWorkers)
	}
}
