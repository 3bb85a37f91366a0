package policy

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A steady queue at 20 msg/s whose workers really take 450 ms where the
// settings say 200 ms: by Little's law 9 messages are in flight, and
// CloudWatch's deleted count, 20 msg/s, arrives for each minute 90 s after
// it starts (stamped at the minute's start). With learn: act the checker
// measures 450 ms, estimates the arrivals right (20 msg/s) and sizes with
// 2.2 msg/s per worker; with report it measures and says so but sizes with
// the configured value, whose Little's law reads 45 msg/s of arrivals; with
// off it measures nothing.
func TestLearnedServiceTime(t *testing.T) {
	t.Parallel()
	const lambda, trueS = 20.0, 0.45
	inFlight := int64(math.Round(lambda * trueS))
	tests := []struct {
		name        string
		learn       string
		wantArrival float64
		wantSizing  string
		measured    bool
		reason      string
	}{
		{"act", LearnAct, lambda, "measured", true, "service time measured 450 ms over the last"},
		{"report", LearnReport, lambda * trueS / 0.2, "configured", true, "sizing with the configured value (workers.learn: report)"},
		{"off", LearnOff, lambda * trueS / 0.2, "configured", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second,
				Min: 1, Max: 100, Learn: tt.learn, Forecast: ForecastSettings{Off: true}}
			h := newHarness(t, s, asg(12, 12, 0))
			h.follow = false
			var d model.Decision
			for i := range 12 * 12 { // 12 minutes of samples 5 s apart
				smp := q(0, inFlight)
				if now := h.now.Add(tick); now.Sub(t0) >= 90*time.Second {
					smp.Deleted = reading(lambda, now.Add(-90*time.Second).Truncate(time.Minute))
				}
				dt := tick
				if i == 0 {
					dt = 0
				}
				d = h.step(dt, smp)
			}
			m := d.Measured
			if m.SizingWith != tt.wantSizing || m.ConfiguredServiceTimeSeconds != 0.2 {
				t.Fatalf("sizing with %q (configured %v), want %q", m.SizingWith, m.ConfiguredServiceTimeSeconds, tt.wantSizing)
			}
			if !tt.measured {
				if m.ServiceTimeSeconds != nil || m.Confidence != nil {
					t.Fatalf("measured with learn: off: %+v", m)
				}
			} else {
				if m.ServiceTimeSeconds == nil || math.Abs(*m.ServiceTimeSeconds-trueS) > 0.01 {
					t.Fatalf("measured service time %v, want %v", ptrValue(m.ServiceTimeSeconds), trueS)
				}
				if m.PerWorkerThroughput == nil || math.Abs(*m.PerWorkerThroughput-1/trueS) > 0.1 {
					t.Fatalf("measured per worker %v, want %v", ptrValue(m.PerWorkerThroughput), 1/trueS)
				}
				if m.Confidence == nil || *m.Confidence < MeasuredConfidence {
					t.Fatalf("confidence %v after 10 good minutes", ptrValue(m.Confidence))
				}
				if !hasReason(d, tt.reason) {
					t.Fatalf("no reason %q in %q", tt.reason, d.Reasons)
				}
			}
			if d.ArrivalRate == nil || math.Abs(*d.ArrivalRate-tt.wantArrival) > 0.02*tt.wantArrival {
				t.Fatalf("arrival rate %v, want %v", ptrValue(d.ArrivalRate), tt.wantArrival)
			}
			// The utilisation floor is λ·S ÷ 0.8 either way (Little's law's
			// bias cancels in the offered load): ⌈9 ÷ 0.8⌉.
			if *d.Floors.Utilization != 12 {
				t.Fatalf("utilisation floor %d, want 12", *d.Floors.Utilization)
			}
		})
	}
}

// Without CloudWatch's deleted count nothing is measured, and the decision
// says what learning needs.
func TestLearningNeedsTheDeletedCount(t *testing.T) {
	t.Parallel()
	s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second, Min: 1, Max: 100}
	h := newHarness(t, s, asg(5, 5, 0))
	h.step(0, q(0, 3))
	d := h.step(tick, q(0, 3))
	if d.Measured.ServiceTimeSeconds != nil || d.Measured.SizingWith != "configured" {
		t.Fatalf("measured %+v without a deleted count", d.Measured)
	}
	if !hasReason(d, "learning the service time needs CloudWatch's NumberOfMessagesDeleted") {
		t.Fatalf("reasons %q do not say what learning needs", d.Reasons)
	}
}

// The start delay is measured from workers going from pending to in
// service: launched at 0, 10 and 20 s and each seen in service 95 s after
// its launch (sampled every 5 s), the measured delay is their 90th
// percentile, once five have started.
func TestMeasuredStartDelay(t *testing.T) {
	t.Parallel()
	var sd startDelays
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
		sd.observe(model.Fleet{Known: true, InService: inService + started, Pending: len(pending), PendingSince: pending}, now)
	}
	got, n, ok := sd.measured(at.Add(5 * time.Minute))
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
	var sd2 startDelays
	l := []time.Time{t0}
	sd2.observe(model.Fleet{Known: true, InService: 3, Pending: 1, PendingSince: l}, t0)
	sd2.observe(model.Fleet{Known: true, InService: 3}, t0.Add(5*time.Second))
	if _, n, _ := sd2.measured(t0.Add(time.Minute)); n != 0 || sd2.n != 0 {
		t.Fatalf("a cancelled launch was measured as a start (%d)", sd2.n)
	}
}

func ptrValue(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// While a scale-out is starting, its fast starts are seen first: the
// workers still pending count with their age so far. 20 launched at once,
// 12 in service after 30 s, 8 still pending at 100 s: the 90th percentile
// is at least 100 s, not 30.
func TestMeasuredStartDelayCountsThoseStillPending(t *testing.T) {
	t.Parallel()
	var sd startDelays
	launch := make([]time.Time, 20)
	for i := range launch {
		launch[i] = t0
	}
	sd.observe(model.Fleet{Known: true, InService: 0, Pending: 20, PendingSince: launch}, t0)
	sd.observe(model.Fleet{Known: true, InService: 12, Pending: 8, PendingSince: launch[:8]}, t0.Add(30*time.Second))
	now := t0.Add(100 * time.Second)
	sd.observe(model.Fleet{Known: true, InService: 12, Pending: 8, PendingSince: launch[:8]}, now)
	got, n, ok := sd.measured(now)
	if !ok || n != 12 {
		t.Fatalf("measured %v from %d starts (ok %v), want 12 starts", got, n, ok)
	}
	if got < 100*time.Second {
		t.Fatalf("start delay %v while 8 of 20 workers have been pending for 100 s", got)
	}
	// Once they have started, the starts alone decide.
	sd.observe(model.Fleet{Known: true, InService: 20}, t0.Add(105*time.Second))
	if got, n, _ := sd.measured(t0.Add(105 * time.Second)); n != 20 || got != 102500*time.Millisecond {
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
	var sd startDelays
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
		sd.observe(model.Fleet{Kind: model.FleetECS, Known: true, InService: r.inService, Pending: r.tasks,
			PendingSince: seen(r.tasks)}, t0.Add(r.at))
	}
	got, n, ok := sd.measured(t0.Add(2 * time.Minute))
	if !ok || n != 6 {
		t.Fatalf("measured %v from %d ECS starts (ok %v), want 6 starts", got, n, ok)
	}
	if want := 55 * time.Second; got != want {
		t.Fatalf("ECS start delay %v, want %v (from first seen, not the deployment's creation %v before)", got, want, t0.Sub(created))
	}
}
