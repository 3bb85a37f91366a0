package arrivals

import (
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// The start delay is measured from workers going from pending to in
// service: launched at 0, 10 and 20 s and each seen in service 95 s after
// its launch (sampled every 5 s), the measured delay is their 90th
// percentile, once five have started.
func TestMeasuredStartDelay(t *testing.T) {
	t.Parallel()
	var sd StartDelays
	at := t0
	var launches []time.Time
	inService := 2
	for i := range 60 {
		now := at.Add(time.Duration(i) * 5 * time.Second)
		if i < 6 {
			launches = append(launches, now)
		}
		var pending []time.Time
		for _, l := range launches {
			if now.Sub(l) < 95*time.Second {
				pending = append(pending, l)
			}
		}
		started := len(launches) - len(pending)
		sd.Observe(model.Fleet{Known: true, InService: inService + started, Pending: len(pending), PendingSince: pending}, now)
	}
	got, n, ok := sd.Measured(at.Add(5 * time.Minute))
	if !ok || n != 6 {
		t.Fatalf("measured %v from %d starts (ok %v), want 6", got, n, ok)
	}
	// Each start is seen at the first sample at or after launch + 95 s,
	// launch + 95 s rounded up to 5 s, and measured at the middle of the
	// interval before it: 92.5 s.
	if want := 92500 * time.Millisecond; got != want {
		t.Fatalf("start delay %v, want %v", got, want)
	}
	// Workers cancelled (pending gone, none in service more) are not starts.
	var sd2 StartDelays
	l := []time.Time{t0}
	sd2.Observe(model.Fleet{Known: true, InService: 3, Pending: 1, PendingSince: l}, t0)
	sd2.Observe(model.Fleet{Known: true, InService: 3}, t0.Add(5*time.Second))
	if _, n, _ := sd2.Measured(t0.Add(time.Minute)); n != 0 {
		t.Fatalf("a cancelled launch was measured as a start (%d)", n)
	}
}

// While a scale-out is starting, its fast starts are seen first: the
// workers still pending count with their age so far. 20 launched at once,
// 12 in service after 30 s, 8 still pending at 100 s: the 90th percentile
// is at least 100 s, not 30.
func TestMeasuredStartDelayCountsThoseStillPending(t *testing.T) {
	t.Parallel()
	var sd StartDelays
	launch := make([]time.Time, 20)
	for i := range launch {
		launch[i] = t0
	}
	sd.Observe(model.Fleet{Known: true, InService: 0, Pending: 20, PendingSince: launch}, t0)
	sd.Observe(model.Fleet{Known: true, InService: 12, Pending: 8, PendingSince: launch[:8]}, t0.Add(30*time.Second))
	now := t0.Add(100 * time.Second)
	sd.Observe(model.Fleet{Known: true, InService: 12, Pending: 8, PendingSince: launch[:8]}, now)
	got, n, ok := sd.Measured(now)
	if !ok || n != 12 {
		t.Fatalf("measured %v from %d starts (ok %v), want 12 starts", got, n, ok)
	}
	if got < 100*time.Second {
		t.Fatalf("start delay %v while 8 of 20 workers have been pending for 100 s", got)
	}
	// Once they have started, the starts alone decide.
	sd.Observe(model.Fleet{Known: true, InService: 20}, t0.Add(105*time.Second))
	if got, n, _ := sd.Measured(t0.Add(105 * time.Second)); n != 20 || got != 102500*time.Millisecond {
		t.Fatalf("after every start: %v from %d starts, want 102.5 s (the 19th of 20) from 20", got, n)
	}
}

// An ECS service's pending tasks carry the time the poller first saw them
// pending (never before their deployment's creation), as an Auto Scaling
// group's do: a scale-out three days into a deployment is measured from
// when its tasks were first seen, not from the deployment's creation.
func TestStartDelayFromECSFirstSeen(t *testing.T) {
	t.Parallel()
	created := t0.Add(-72 * time.Hour) // the deployment
	seen := func(n int) []time.Time {  // n tasks, each first seen pending at t0
		return slices.Repeat([]time.Time{t0}, n)
	}
	var sd StartDelays
	for _, r := range []struct {
		at               time.Duration
		inService, tasks int
	}{
		{0, 4, 6}, // desiredCount 4 -> 10: six tasks first seen pending
		{10 * time.Second, 4, 6},
		{20 * time.Second, 4, 6},
		{30 * time.Second, 7, 3}, // three started, measured at 25 s
		{40 * time.Second, 7, 3},
		{50 * time.Second, 7, 3},
		{60 * time.Second, 10, 0}, // the other three, at 55 s
	} {
		sd.Observe(model.Fleet{Kind: model.FleetECS, Known: true, InService: r.inService, Pending: r.tasks,
			PendingSince: seen(r.tasks)}, t0.Add(r.at))
	}
	got, n, ok := sd.Measured(t0.Add(2 * time.Minute))
	if !ok || n != 6 {
		t.Fatalf("measured %v from %d ECS starts (ok %v), want 6 starts", got, n, ok)
	}
	if want := 55 * time.Second; got != want {
		t.Fatalf("ECS start delay %v, want %v (from first seen, not the deployment's creation %v before)", got, want, t0.Sub(created))
	}
}
