package slo

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6g, want %.6g (±%g)", name, got, want, tol)
	}
}

// A queue served at once: every message starts within the interval it
// arrived in, none late.
func TestSteadyQueueIsOnTime(t *testing.T) {
	t.Parallel()
	e := NewEstimator(30 * time.Second)
	var within, late float64
	e.Observe(Input{At: at(0), Visible: 20, OldestAge: -1})
	for i := 1; i <= 100; i++ {
		st := e.Observe(Input{At: at(float64(5 * i)), Visible: 20, Arrived: 50, OldestAge: -1})
		within += st.Within
		late += st.Late
	}
	near(t, "late", late, 0, 1e-9)
	near(t, "within", within, 100*50, 1e-6)
}

// Nothing is served for a minute while one message a second arrives, then
// the whole backlog starts in the interval (55 s, 60 s], oldest first and
// evenly: the k-th message arrived at k s and started at 55 + k/12 s, so it
// waited 55 − 11k/12 s, past a 30 s promise for k < 300/11.
func TestBacklogStartedLateCountsItsOldPart(t *testing.T) {
	t.Parallel()
	e := NewEstimator(30 * time.Second)
	e.Observe(Input{At: at(0), OldestAge: -1})
	for i := 1; i < 12; i++ {
		st := e.Observe(Input{At: at(float64(5 * i)), Visible: float64(5 * i), Arrived: 5, OldestAge: -1})
		if st.Within+st.Late > 1e-9 {
			t.Fatalf("interval %d started %v messages; nothing was taken", i, st.Within+st.Late)
		}
	}
	st := e.Observe(Input{At: at(60), Visible: 0, Arrived: 5, OldestAge: -1})
	near(t, "late", st.Late, 300.0/11, 1e-9)
	near(t, "within", st.Within, 60-300.0/11, 1e-9)
	if e.Waiting() != 0 {
		t.Errorf("waiting = %v after the queue emptied", e.Waiting())
	}
}

// A backlog found at start with a known oldest age: 100 messages over the
// last 100 s. Taking 50 in the next 5 s interval takes the oldest half,
// [−100, −50], started over [0, 5]: waits from 100 s to 55 s, all late.
// Taking 50 more in the next takes [−50, 0] over [5, 10]: waits from 55 s
// down to 10 s, past 30 s for the first 25/45 of them.
func TestBacklogAtStartSpreadsOverOldestAge(t *testing.T) {
	t.Parallel()
	e := NewEstimator(30 * time.Second)
	st := e.Observe(Input{At: at(0), Visible: 100, OldestAge: 100, OldestAt: at(0)})
	if st.Trust != TrustRough || st.Why != WhyWarming {
		t.Errorf("first step trust = %v (%q), want rough while warming", st.Trust, st.Why)
	}
	st = e.Observe(Input{At: at(5), Visible: 50, OldestAge: -1})
	near(t, "first late", st.Late, 50, 1e-9)
	near(t, "first within", st.Within, 0, 1e-9)
	st = e.Observe(Input{At: at(10), Visible: 0, OldestAge: -1})
	near(t, "second late", st.Late, 50*25.0/45, 1e-9)
	near(t, "second within", st.Within, 50*20.0/45, 1e-9)
}

// A fresh oldest age older than the cohorts say moves the oldest cohort
// back: messages underestimated in age are late sooner. One that says they
// are younger is not taken (they may have started since it was read).
func TestOldestAgeAnchorsOnlyBackwards(t *testing.T) {
	t.Parallel()
	e := NewEstimator(30 * time.Second)
	e.Observe(Input{At: at(0), OldestAge: -1})
	e.Observe(Input{At: at(5), Visible: 10, Arrived: 10, OldestAge: -1}) // [0, 5]
	e.Observe(Input{At: at(10), Visible: 10, OldestAge: 60, OldestAt: at(10)})
	if o, _ := e.Oldest(); !o.Equal(at(-50)) {
		t.Errorf("oldest = %v, want %v (the age read)", o.Sub(t0), -50*time.Second)
	}
	e.Observe(Input{At: at(15), Visible: 10, OldestAge: 1, OldestAt: at(15)})
	if o, _ := e.Oldest(); !o.Equal(at(-50)) {
		t.Errorf("oldest = %v after a younger reading, want it kept at -50s", o.Sub(t0))
	}
	// A stale reading (older than ageFresh) is ignored.
	e.Observe(Input{At: at(600), Visible: 10, OldestAge: 5000, OldestAt: at(10)})
	if o, _ := e.Oldest(); !o.Equal(at(-50)) {
		t.Errorf("oldest = %v after a stale reading, want it kept at -50s", o.Sub(t0))
	}
}

// Visible messages the arrivals did not explain are taken as the newest.
func TestUnexplainedVisibleAreNewest(t *testing.T) {
	t.Parallel()
	e := NewEstimator(30 * time.Second)
	e.Observe(Input{At: at(0), OldestAge: -1})
	e.Observe(Input{At: at(5), Visible: 40, Arrived: 10, OldestAge: -1})
	near(t, "waiting", e.Waiting(), 40, 1e-9)
	if o, _ := e.Oldest(); !o.Equal(at(0)) {
		t.Errorf("oldest = %v, want the interval's start", o.Sub(t0))
	}
}

// Whatever the inputs, the messages started add up to the arrivals plus the
// backlog found minus the backlog left, and each step's counts are finite
// and not negative.
func TestStartedConserveMessages(t *testing.T) {
	t.Parallel()
	e := NewEstimator(20 * time.Second)
	visible := []float64{0, 7, 3, 900, 850, 0, 0, 12, math.NaN(), 5, 4000, 3990, -3, 1}
	arrived := []float64{0, 7, 9, 1200, 20, 1, math.Inf(1), 12, 4, -1, 2000, 800, 4, 0}
	var started, in float64
	for i := range visible {
		st := e.Observe(Input{At: at(float64(5 * i)), Visible: visible[i], Arrived: arrived[i], OldestAge: -1})
		for _, v := range []float64{st.Within, st.Late} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("step %d: %+v", i, st)
			}
		}
		started += st.Within + st.Late
		if i > 0 {
			in += finite(arrived[i])
		}
	}
	// Each time the visible count exceeded what arrived, the difference
	// was added as arrivals: count it in.
	want := in + e.added() - e.Waiting()
	near(t, "started", started, want, 1e-6)
}

// Cohorts beyond the ring's capacity merge; nothing is lost.
func TestCohortRingMerges(t *testing.T) {
	t.Parallel()
	e := NewEstimator(30 * time.Second)
	e.Observe(Input{At: at(0), OldestAge: -1})
	for i := 1; i <= 3*cohortCap; i++ {
		e.Observe(Input{At: at(float64(i)), Visible: float64(i), Arrived: 1, OldestAge: -1})
	}
	near(t, "waiting", e.Waiting(), 3*cohortCap, 1e-6)
	if e.count > cohortCap {
		t.Errorf("count = %d > %d", e.count, cohortCap)
	}
	if o, _ := e.Oldest(); !o.Equal(at(0)) {
		t.Errorf("oldest = %v, want 0 after merging", o.Sub(t0))
	}
	// Serving it all in the next second: those that waited more than 30 s
	// are late, about the last 30 s of arrivals within.
	st := e.Observe(Input{At: at(3*cohortCap + 1), Visible: 0, Arrived: 1, OldestAge: -1})
	near(t, "within", st.Within, 31, 1.0) // merged spans blur the edge by up to a merged span's share
	near(t, "late+within", st.Late+st.Within, 3*cohortCap+1, 1e-6)
}

func TestTrustReasons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    Input
		trust Trust
		why   string
	}{
		{"fifo", Input{}, TrustGood, ""},
		{"missing", Input{Missing: true}, TrustNone, WhyMissing},
		{"held", Input{Held: true, Unordered: true}, TrustRough, WhyHeld},
		{"standard queue", Input{Unordered: true}, TrustRough, WhyUnordered},
		{"delayed", Input{Delayed: 3}, TrustRough, WhyDelayed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := NewEstimator(10 * time.Second)
			e.Observe(Input{At: at(0), OldestAge: -1})
			in := tt.in
			in.At, in.OldestAge = at(60), -1
			st := e.Observe(in)
			if st.Trust != tt.trust || st.Why != tt.why {
				t.Errorf("trust = %v %q, want %v %q", st.Trust, st.Why, tt.trust, tt.why)
			}
		})
	}
}

func FuzzEstimator(f *testing.F) {
	f.Add(10.0, 5.0, 30.0, 2.0, 1.0, 100.0)
	f.Fuzz(func(t *testing.T, v1, a1, v2, a2, age, promise float64) {
		e := NewEstimator(time.Duration(math.Min(math.Abs(promise), 1e6) * float64(time.Second)))
		e.Observe(Input{At: at(0), Visible: v1, OldestAge: age, OldestAt: at(0)})
		for i, in := range []Input{{Visible: v2, Arrived: a1}, {Visible: v1, Arrived: a2, OldestAge: age, OldestAt: at(5)}} {
			in.At = at(float64(5 * (i + 1)))
			st := e.Observe(in)
			if st.Within < 0 || st.Late < 0 || math.IsNaN(st.Within+st.Late) || math.IsInf(st.Within+st.Late, 0) {
				t.Fatalf("step %+v", st)
			}
		}
	})
}

func BenchmarkObserve(b *testing.B) {
	e := NewEstimator(30 * time.Second)
	tr := NewTracker(30*time.Second, 0.99, 30*24*time.Hour)
	tr.est = e
	b.ReportAllocs()
	v := 0.0
	for i := 0; b.Loop(); i++ {
		// A backlog that grows for a minute and drains, over and over.
		if i%24 < 12 {
			v += 40
		} else {
			v = math.Max(v-45, 0)
		}
		tr.Observe(Input{At: at(float64(5 * i)), Visible: v, Arrived: 50, OldestAge: -1})
	}
}

func (e *Estimator) added() float64 { return e.unexplained }

// Arrivals by conservation: 12 more messages in the queues, and 4 busy
// slots on average over 5 s at 0.5 s a message complete 40: 52 arrived.
// In flight above the slots (a dead worker's messages) completes nothing.
func TestArrived(t *testing.T) {
	t.Parallel()
	prev := Counts{Visible: 10, InFlight: 3, Slots: -1}
	cur := Counts{Visible: 20, InFlight: 5, Slots: -1}
	near(t, "arrived", Arrived(prev, cur, 5, 0.5), 12+40, 1e-9)
	prev.Slots, cur.Slots = 2, 2
	near(t, "arrived, capped at the slots", Arrived(prev, cur, 5, 0.5), 12+20, 1e-9)
	near(t, "falling counts", Arrived(Counts{Visible: 100}, Counts{}, 5, 1), 0, 0)
	near(t, "no service time", Arrived(prev, cur, 5, 0), 0, 0)
}
