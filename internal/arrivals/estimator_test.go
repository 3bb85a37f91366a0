package arrivals

import (
	"math"
	"testing"
	"time"
)

// A queue steady at 10 msg/s in and out (the deleted count, stamped at each
// sample), then 500 messages in one 5 s interval: the interval observes
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
	for k := 1; k <= 2; k++ {
		at := step(k)
		if r, ok := e.Rate(); !ok || math.Abs(r-10) > 1e-9 || !e.Updated(at) {
			t.Fatalf("sample %d: rate %v (%v, updated %v), want 10", k, r, ok, e.Updated(at))
		}
		if _, _, ok := e.Dump(at); ok {
			t.Fatalf("sample %d: a dump on a steady queue", k)
		}
	}
	total += 500
	at := step(3)
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
	at = step(4)
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
// = 75 messages. Without the slots it measures nothing.
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
	if got, ok := e.Served(at); !ok || math.Abs(got-75) > 1e-9 {
		t.Fatalf("served %v (%v), want 75", got, ok)
	}
	if _, ok := e.Served(at.Add(time.Second)); ok {
		t.Error("served for a sample that measured nothing")
	}
	f.Servers = -1
	next := at.Add(5 * time.Second)
	f.DeletedAt = next
	e.Update(Counts{At: next, Visible: 143, InFlight: 3}, 1, f)
	if _, ok := e.Served(next); ok {
		t.Error("served without the slots")
	}
}
