package policy

import (
	"math"
	"testing"
	"time"
)

// A burst of 3,000 messages over 30 s (100 msg/s) every 3 minutes on 5 msg/s:
// the learner counts the bursts, their size, length and gaps, and their
// need: the heaviest window no longer than D + L = 90 s, by work ÷ (w + 30 s).
func TestBurstLearnerLearnsBursts(t *testing.T) {
	t.Parallel()
	var bl burstLearner
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const dt, window, latency = 5.0, 90.0, 30.0
	at := t0
	for s := 0; s < 30*60; s += dt {
		at = t0.Add(time.Duration(s+dt) * time.Second)
		msgs := 5 * dt
		if s%180 >= 120 && s%180 < 150 {
			msgs = 100 * dt
		}
		bl.observe(at, dt, msgs, window, latency)
	}
	f := bl.facts(at)
	if f.n < 8 || f.n > 10 {
		t.Fatalf("%d bursts learned in 30 minutes, want 9 or 10 ends seen", f.n)
	}
	if math.Abs(f.msgs-3000) > 1 || math.Abs(f.length-30) > 0.1 || math.Abs(f.gap-150) > 0.1 {
		t.Errorf("median burst %v messages over %v s, gap %v s; want 3000, 30, 150", f.msgs, f.length, f.gap)
	}
	// The heaviest window is the burst alone: 3000 ÷ (30 + 30) = 50 msg/s;
	// with 60 s of base, (3000 + 300) ÷ 120 = 27.5; a part of the burst,
	// 100·w ÷ (w + 30) < 50.
	if want := 50.0; math.Abs(f.need-want) > 0.01 {
		t.Errorf("need %v msg/s, want %v", f.need, want)
	}
	if math.Abs(f.base-5) > 0.5 {
		t.Errorf("base %v msg/s, want 5", f.base)
	}
	// Regular gaps: within the next 10 s right after a burst no burst is
	// likely but for the one unseen gap; 150 s on, one is due.
	f.quiet = 0
	if got := f.chance(10); got > 0.2 {
		t.Errorf("chance right after a burst %v, want at most 1/(gaps+1)", got)
	}
	f.quiet = 145
	if got := f.chance(10); got < 0.9 {
		t.Errorf("chance when the next burst is due %v, want about 1", got)
	}
	// The bursts stop: past twice the longest gap, none is expected, and
	// after the memory they are forgotten.
	f.quiet = 301
	if got := f.chance(10); got != 0 {
		t.Errorf("chance after twice the longest gap %v, want 0", got)
	}
	if g := bl.facts(at.Add(burstMemory + time.Minute)); g.n != 0 {
		t.Errorf("%d bursts remembered after the memory, want 0", g.n)
	}
}

// Steady Poisson-like counts make no bursts.
func TestBurstLearnerSteadyHasNoBursts(t *testing.T) {
	t.Parallel()
	var bl burstLearner
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	for i := range 2000 {
		at = t0.Add(time.Duration(5*(i+1)) * time.Second)
		// 50 msg/s ± 3σ of its counting noise, alternating.
		msgs := 250 + 3*math.Sqrt(250)*float64(i%3-1)
		bl.observe(at, 5, msgs, 90, 30)
	}
	if f := bl.facts(at); f.n != 0 || f.on {
		t.Errorf("%d bursts (on: %v) in steady arrivals, want none", f.n, f.on)
	}
}

// Bursts measured with a per-slot rate since found wrong by more than a
// quarter (here the service time measured at twice the configured one) are
// forgotten; a measurement that moves the rate by less keeps them.
func TestBurstLearnerForgetsBurstsMeasuredWithAWrongRate(t *testing.T) {
	t.Parallel()
	learn := func(bl *burstLearner, t0 time.Time) time.Time {
		at := t0
		for s := 0; s < 20*60; s += 5 {
			at = t0.Add(time.Duration(s+5) * time.Second)
			msgs := 25.0
			if s%180 >= 120 && s%180 < 150 {
				msgs = 500
			}
			bl.observe(at, 5, msgs, 90, 30)
		}
		return at
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		after float64
		kept  bool
	}{{10, true}, {8.5, true}, {12, true}, {5, false}, {20, false}} {
		var bl burstLearner
		bl.measuredWith(10)
		at := learn(&bl, t0)
		before := bl.facts(at).n
		if before < 5 {
			t.Fatalf("%d bursts learned, want at least 5", before)
		}
		bl.measuredWith(tt.after)
		if n := bl.facts(at).n; (n == before) != tt.kept || (!tt.kept && n != 0) {
			t.Errorf("per-slot rate 10 then %v: %d of %d bursts kept, want all: %v", tt.after, n, before, tt.kept)
		}
	}
}
