package arrivals

import (
	"math"
	"testing"
	"time"
)

// A queue steady at 10 msg/s in and out (the deleted count, stamped at each
// sample) for a minute, then 500 messages in one 5 s interval: the interval observes
// 500/5 + 10 = 110 msg/s, which enters the EWMA at the dump bound 10 +
// 3·√((10 + 10)/5) = 16; the other (110 − 16) × 5 = 470 messages are held
// back, and the estimate without the bound is the EWMA step to 110. The next
// interval, steady again, holds nothing back. Lower moves the estimate down
// only.
func TestEstimatorHoldsADumpBack(t *testing.T) {
	t.Parallel()
	const dt, tau = 5.0, 60.0
	var e Estimator
	total := 100.0
	step := func(k int) time.Time {
		at := t0.Add(time.Duration(k) * 5 * time.Second)
		f := Flow{Deleted: 10, DeletedAt: at, DeletedOK: true, Keep: 7 * time.Minute, Servers: -1, Tau: time.Minute}
		e.Update(Counts{At: at, Visible: total - 10, InFlight: 10}, 1, f)
		return at
	}
	step(0)
	if _, known := e.Rate(); known {
		t.Fatal("an estimate from a single sample without a sent count")
	}
	// A minute of steady samples: the observations cover τ, and the
	// estimate is an EWMA from then on.
	for k := 1; k <= 12; k++ {
		at := step(k)
		if r, ok := e.Rate(); !ok || math.Abs(r-10) > 1e-9 || !e.Updated(at) {
			t.Fatalf("sample %d: rate %v (%v, updated %v), want 10", k, r, ok, e.Updated(at))
		}
		if _, _, ok := e.Dump(at); ok {
			t.Fatalf("sample %d: a dump on a steady queue", k)
		}
	}
	total += 500
	at := step(13)
	if obs, ok := e.Observation(at); !ok || math.Abs(obs-110) > 1e-9 {
		t.Fatalf("observation %v (%v), want 110", obs, ok)
	}
	bound := dumpBound(10, 10, dt, 0)
	dumped, unbounded, ok := e.Dump(at)
	if !ok || math.Abs(dumped-(110-bound)*dt) > 1e-9 {
		t.Fatalf("dumped %v (%v), want %v", dumped, ok, (110-bound)*dt)
	}
	if want := ewma(10, 110, dt, tau); math.Abs(unbounded-want) > 1e-9 {
		t.Fatalf("the estimate without the bound %v, want %v", unbounded, want)
	}
	rate, _ := e.Rate()
	if want := ewma(10, bound, dt, tau); math.Abs(rate-want) > 1e-9 {
		t.Fatalf("rate %v, want %v (the observation at the bound)", rate, want)
	}
	if _, ok := e.Surge(at); ok {
		t.Fatal("a surge without the fleet's slots")
	}
	at = step(14)
	if _, _, ok := e.Dump(at); ok {
		t.Fatal("the steady interval after the dump held messages back")
	}
	if obs, ok := e.Observation(at); !ok || math.Abs(obs-10) > 1e-9 {
		t.Fatalf("observation after the dump %v (%v), want 10", obs, ok)
	}
	if e.Lower(100) {
		t.Fatal("Lower raised the estimate")
	}
	if !e.Lower(5) {
		t.Fatal("Lower(5) left the estimate above 5")
	}
	if r, _ := e.Rate(); r != 5 {
		t.Fatalf("rate %v after Lower(5)", r)
	}
	// A repeat of the last sample teaches nothing.
	if _, ok := e.Update(Counts{At: at, Visible: total - 10, InFlight: 10}, 1, Flow{Servers: -1, Tau: time.Minute}); ok {
		t.Fatal("a repeated sample compared with itself")
	}
}

// ewma is the documented smoothing step: α = 1 − exp(−Δt/τ).
func ewma(prev, obs, dt, tau float64) float64 {
	return prev + (1-math.Exp(-dt/tau))*(obs-prev)
}

// Served counts an interval's completions by Little's law over the slots
// in service, whatever the observation took: with a fresh deleted count of
// 10 msg/s, 4 slots at 2 msg/s each and 6 then 3 messages in flight (at
// most 4 in service: 4 then 3), the total growing by 40 over 5 s, the
// observation is 40/5 + 10 = 18 msg/s and Served (40 + (4 + 3)/2 × 2 × 5)
// = 75 messages, 35 of them completions. Without the slots it measures
// nothing.
func TestEstimatorServedCountsCompletionsBySlots(t *testing.T) {
	t.Parallel()
	var e Estimator
	f := Flow{Deleted: 10, DeletedOK: true, PerServer: 2, Servers: 4, Keep: 7 * time.Minute, Tau: time.Minute}
	f.DeletedAt = t0
	e.Update(Counts{At: t0, Visible: 100, InFlight: 6}, 1, f)
	at := t0.Add(5 * time.Second)
	f.DeletedAt = at
	e.Update(Counts{At: at, Visible: 143, InFlight: 3}, 1, f)
	if obs, ok := e.Observation(at); !ok || math.Abs(obs-18) > 1e-9 {
		t.Fatalf("observation %v (%v), want 18 (the deleted count)", obs, ok)
	}
	if got, done, ok := e.Served(at); !ok || math.Abs(got-75) > 1e-9 || math.Abs(done-35) > 1e-9 {
		t.Fatalf("served %v, %v of them completions (%v), want 75 and 35", got, done, ok)
	}
	if _, _, ok := e.Served(at.Add(time.Second)); ok {
		t.Error("served for a sample that measured nothing")
	}
	f.Servers = -1
	next := at.Add(5 * time.Second)
	f.DeletedAt = next
	e.Update(Counts{At: next, Visible: 143, InFlight: 3}, 1, f)
	if _, _, ok := e.Served(next); ok {
		t.Error("served without the slots")
	}
}

// Until the observations cover τ the estimate is their mean, each weighed
// by the time it covers; from then on an EWMA. A queue with no completions
// known whose total grows by 50 in 5 s (10 msg/s), then by 120 in 10 s (12
// msg/s, within the dump bound of 10 + 3·√(10 ÷ 10)): the mean is (10·5 +
// 12·10) ÷ 15 = 11.33, where an EWMA started at 10 would give 10 + (1 −
// e^(−10/60))·2 = 10.31. Then 45 s more at 12 msg/s cover the minute: (10·5
// + 12·55) ÷ 60 = 11.83. The next 5 s at 12 enter with α = 1 − e^(−5/60).
func TestEstimatorStartsAsAMean(t *testing.T) {
	t.Parallel()
	var e Estimator
	total, at := 0.0, t0
	step := func(secs, grow float64) float64 {
		at = at.Add(time.Duration(secs * float64(time.Second)))
		total += grow
		e.Update(Counts{At: at, Visible: total}, 1, Flow{Servers: -1, Tau: time.Minute, Keep: 7 * time.Minute})
		r, _ := e.Rate()
		return r
	}
	step(0, 0)
	if r := step(5, 50); math.Abs(r-10) > 1e-9 {
		t.Fatalf("first estimate %v, want 10", r)
	}
	if r, want := step(10, 120), (10*5+12*10)/15.0; math.Abs(r-want) > 1e-9 {
		t.Fatalf("estimate after 15 s %v, want the mean %v", r, want)
	}
	var r float64
	for range 9 {
		r = step(5, 60)
	}
	mean := (10*5 + 12*55) / 60.0
	if math.Abs(r-mean) > 1e-9 {
		t.Fatalf("estimate after a minute %v, want the mean %v", r, mean)
	}
	if r, want := step(5, 60), ewma(mean, 12, 5, 60); math.Abs(r-want) > 1e-9 {
		t.Fatalf("estimate past the minute %v, want the EWMA step %v", r, want)
	}
}

// A longer interval needs no deeper queue before a surge is read: 100
// slots at 1 msg/s, steady at 80 msg/s with the queue empty, then 150
// msg/s, 50 msg/s into the queue. An interval is saturated once its start
// holds 5 s of the slots' work (500 messages), or the interval's work when
// it is shorter. At 5 s that is the third interval of the step (15 s in);
// at 10 s the second (20 s in), where a queue holding the whole interval's
// work (1,000) would wait for the third (30 s in).
func TestEstimatorReadsASurgeAtLongIntervals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dt   time.Duration
		want int // the first interval of the step whose surge is read
	}{{5 * time.Second, 2}, {10 * time.Second, 1}} {
		var e Estimator
		at := t0
		visible := 0.0
		update := func(inFlight float64) {
			e.Update(Counts{At: at, Visible: visible, InFlight: inFlight}, 1,
				Flow{Servers: 100, PerServer: 1, Keep: 7 * time.Minute, Tau: time.Minute})
		}
		update(80)
		for range 12 {
			at = at.Add(tc.dt)
			update(80)
		}
		first := -1
		for i := range 4 {
			at = at.Add(tc.dt)
			visible += 50 * tc.dt.Seconds()
			update(100)
			if r, ok := e.Surge(at); ok && first < 0 {
				// The lower of two intervals' measurements; the step's first
				// counts the 80 slots busy at its start (80 + 52 = 132).
				if r < 132-1e-6 || r > 150+1e-6 {
					t.Fatalf("%v: surge %v, want 132 to 150", tc.dt, r)
				}
				first = i
			}
		}
		if first != tc.want {
			t.Errorf("%v: surge first read at interval %d of the step, want %d", tc.dt, first, tc.want)
		}
	}
}
