package slo

import (
	"testing"
	"time"
)

// An oldest-age reading speaks of the messages visible when it was read:
// after the queue has emptied, the messages that arrived since are not
// moved back to it. A queue drained at once, with a CloudWatch minute
// that saw a 32 s wait (read as of its end, 90 s before), starts its new
// messages within a 20 s promise.
func TestAnAgeReadingDoesNotAgeLaterArrivals(t *testing.T) {
	t.Parallel()
	e := NewEstimator(20 * time.Second)
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	read := t0.Add(10 * time.Minute)
	var late, within float64
	for i := 0; i <= 150; i++ {
		at := t0.Add(time.Duration(i) * 5 * time.Second)
		in := Input{At: at, Arrived: 20, OldestAge: -1}
		if i == 0 {
			in.Arrived = 0
		}
		if at.After(read.Add(90*time.Second)) && at.Before(read.Add(3*time.Minute)) {
			in.OldestAge, in.OldestAt = 32, read
		}
		st := e.Observe(in)
		if at.After(read) {
			late += st.Late
			within += st.Within
		}
	}
	if within == 0 || late > 1e-9 {
		t.Errorf("after the reading: %v within, %v late; want every message within the promise", within, late)
	}
}

// The tracker takes times before 1970 as well (a simulation that starts
// at the zero time): the buckets of the same steps read the same.
func TestTrackerBeforeTheEpoch(t *testing.T) {
	t.Parallel()
	for _, start := range []time.Time{{}, time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)} {
		tr := NewTracker(20*time.Second, 0.99, 24*time.Hour)
		var at time.Time
		for i := range 2 * 720 {
			at = start.Add(time.Duration(i) * 5 * time.Second)
			tr.Add(at, Step{Within: 9, Late: 1})
		}
		s := tr.Status(at)
		if s.HourWithin != 9*720 || s.HourLate != 720 || s.Within != 9*2*720 || s.Late != 2*720 {
			t.Errorf("from %s: %+v, want the last hour's 720 steps and both hours' 1,440", start, s)
		}
	}
}
