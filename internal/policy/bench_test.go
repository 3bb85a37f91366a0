package policy

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// benchSettings is a typical group: 200 ms per message, 4 per worker, a 30 s
// promise, a 90 s start delay.
func benchSettings() Settings {
	return Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Concurrency: 4, Latency: 30 * time.Second,
		Min: 1, Max: 200, StartDelay: 90 * time.Second, StaleAfter: 15 * time.Second}
}

// benchSample is a busy queue whose depth wobbles with i.
func benchSample(i int, at time.Time) model.GroupSample {
	v := int64(200 + (i*37)%400)
	return model.GroupSample{Group: "g", At: at, Visible: v, InFlight: 60, Backlog: v + 60, Queues: 2, Answered: 2,
		Deleted: &model.Reading{Value: 300, At: at.Add(-2 * time.Minute)}}
}

// BenchmarkDecide is one decision on a warmed state.
func BenchmarkDecide(b *testing.B) {
	s := benchSettings()
	fleet := asg(20, 18, 2)
	fleet.PendingSince = []time.Time{t0, t0}
	var st State
	now := t0
	for i := range 100 {
		now = now.Add(5 * time.Second)
		Decide(s, benchSample(i, now), fleet, &st, now)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		now = now.Add(5 * time.Second)
		d := Decide(s, benchSample(i, now), fleet, &st, now)
		fleet.Desired = d.DesiredWorkers
	}
}

// BenchmarkDecide10000Groups is one interval of 10,000 groups, each with its
// own State: one op is 10,000 decisions. It also reports the heap the
// States hold once their windows are full (20 simulated minutes of falling
// arrivals, the case that keeps most window entries), per group.
func BenchmarkDecide10000Groups(b *testing.B) {
	const groups = 10_000
	s := benchSettings()
	fleets := make([]model.Fleet, groups)
	for g := range fleets {
		fleets[g] = asg(10+g%50, 10+g%50, 0)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	states := make([]State, groups)
	now := t0
	round := func(i int) {
		now = now.Add(5 * time.Second)
		for g := range groups {
			smp := benchSample(i+g, now)
			smp.Deleted.Value = 300 * math.Exp(-float64(i)/200) // falling
			d := Decide(s, smp, fleets[g], &states[g], now)
			fleets[g].Desired, fleets[g].InService = d.DesiredWorkers, d.DesiredWorkers
		}
	}
	for i := range 240 {
		round(i)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapAlloc-before.HeapAlloc) / groups
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		round(240 + i)
	}
	b.ReportMetric(held, "state-B/group")
}

// BenchmarkDecideWithForecastHistory is one decision of a group whose
// forecast holds its full history, 8 days of minutes and five weeks of five
// minutes: a base load with a job every 20 minutes and a daily batch,
// preloaded as at a warm start. Decisions run
// every 5 s, so one in twelve closes a minute and recomputes the forecast.
func BenchmarkDecideWithForecastHistory(b *testing.B) {
	s := benchSettings()
	start := t0.Add(-8 * 24 * time.Hour).Truncate(time.Minute)
	counts := forecasttest.Minutes(1, 8*minutesPerDay, func(i int) float64 {
		switch {
		case i%20 == 7 || i%20 == 8:
			return 1500
		case i%minutesPerDay >= 120 && i%minutesPerDay < 135:
			return 900
		}
		return 300
	})
	// The 27 days before, at five minutes: the same rhythm.
	weekly := make([]float64, 27*minutesPerDay/5)
	for i := range weekly {
		m := i * 5
		weekly[i] = 5 * 60 * 300
		if m%20 == 5 || m%minutesPerDay >= 120 && m%minutesPerDay < 135 { // the job's five minutes, the batch
			weekly[i] = 5 * 60 * 700
		}
	}
	var st State
	st.Preload(s, model.MinuteHistory{Start: start, Counts: counts,
		WeeklyStart: start.Add(-27 * 24 * time.Hour), Weekly: weekly})
	fleet := asg(20, 18, 2)
	fleet.PendingSince = []time.Time{t0, t0}
	now := t0
	for i := range 100 {
		now = now.Add(5 * time.Second)
		Decide(s, benchSample(i, now), fleet, &st, now)
	}
	// One reading, updated in place: the sample's own allocation is not
	// the decision's.
	deleted := new(model.Reading)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		now = now.Add(5 * time.Second)
		smp := benchSample(i, now)
		*deleted = *smp.Deleted
		smp.Deleted = deleted
		d := Decide(s, smp, fleet, &st, now)
		fleet.Desired = d.DesiredWorkers
	}
}
