package measure

import (
	"math"
	"testing"
	"time"
)

// batchInFlight is what 6 one-slot workers that receive up to ten messages,
// handle them one at a time (0.3 s each) and delete them as a batch show
// every 5 s at 5 msg/s: batches of a few messages, held for their whole
// handling, so the count comes in lumps around a mean of 5.5, below the 6
// slots, and now and then above them.
var batchInFlight = []float64{2, 9, 4, 8, 3, 7, 6, 5, 4, 8, 2, 8}

// An over-provisioned batch consumer holds fewer in flight than its slots on
// average, so Little's law reads the time a message waits in its batch
// (5.5 ÷ 5 msg/s = 1.1 s) as the service time, almost four times the 0.3 s a
// message takes. The measurement must come within 25 % of the time per
// message or say that it cannot tell (Batching, not Saturated).
func TestBatchConsumerWithSlotsToSpare(t *testing.T) {
	t.Parallel()
	const (
		workers   = 6
		deleted   = 5.0 // msg/s, every message received is deleted
		perMsg    = 0.3 // s
		minutes   = 10
		wantWaits = 1.1 // s: the mean in flight ÷ the deletions
	)
	mean := 0.0
	for _, v := range batchInFlight {
		mean += v
	}
	mean /= float64(len(batchInFlight))
	if !near(mean/deleted, wantWaits, 1e-9) || mean >= workers {
		t.Fatalf("the series is not the one meant: mean %v", mean)
	}
	for _, prior := range []time.Duration{time.Second, 3 * time.Second} {
		e := New(Config{ServiceTime: prior})
		for m := range minutes + 2 {
			for i, s := 0, 0.0; s < 60; i, s = i+1, s+5 {
				e.Sample(at(m, s), 0, batchInFlight[i%len(batchInFlight)], workers, true)
				if d := m - 2; d >= 0 && d < minutes {
					e.Minute(at(d, 0), deleted, math.NaN())
				}
			}
		}
		est := e.Estimate()
		if est.Minutes < minutes-1 {
			t.Fatalf("prior %s: %d minutes learned, want %d: %+v", prior, est.Minutes, minutes, est)
		}
		within := math.Abs(est.ServiceTime.Seconds()/perMsg-1) <= 0.25
		cannotTell := est.Batching && !est.Saturated
		if !within && !cannotTell {
			t.Errorf("prior %s: measured %v (Batching %v, Saturated %v): neither within 25 %% of %v s nor flagged",
				prior, est.ServiceTime, est.Batching, est.Saturated, perMsg)
		}
	}
}

// Workers that handle what they receive never hold more than their slots:
// the same mean in flight, spread without lumps above the slots, is no
// batching.
func TestNoBatchingWithinSlots(t *testing.T) {
	t.Parallel()
	e := New(Config{ServiceTime: time.Second})
	series := []float64{5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6}
	for m := range 8 {
		for i, s := 0, 0.0; s < 60; i, s = i+1, s+5 {
			e.Sample(at(m, s), 0, series[i], 6, true)
			if d := m - 2; d >= 0 && d < 6 {
				e.Minute(at(d, 0), 5, math.NaN())
			}
		}
	}
	if est := e.Estimate(); est.Batching || !near(est.ServiceTime.Seconds(), 1.1, 1e-6) {
		t.Errorf("%+v, want 1.1 s and no batching", est)
	}
}
