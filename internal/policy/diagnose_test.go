package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

func TestDiagnosis(t *testing.T) {
	t.Parallel()
	type step struct {
		visible, inFlight int64
		deleted           float64 // msg/s over the minute starting 30 s after t0; < 0: none
	}
	steps := func(n int, f func(i int) step) []step {
		out := make([]step, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	cases := []struct {
		name   string
		s      func() Settings
		fleet  model.Fleet
		follow bool
		steps  []step
		want   string // diagnosis of the last step
		held   string // its hold reason, if held
	}{
		{"idle: nothing waiting, nothing in flight", base, asg(2, 2, 0), true,
			steps(3, func(int) step { return step{0, 0, -1} }), model.DiagIdle, ""},
		{"healthy: a few waiting, workers partly busy", base, asg(20, 20, 0), true,
			steps(3, func(int) step { return step{5, 10, -1} }), model.DiagHealthy, ""},
		{"draining: a big fleet eats a backlog", base, asg(200, 200, 0), true,
			steps(3, func(i int) step { return step{3000 - int64(i)*700, 150, -1} }), model.DiagDraining, ""},
		{"under_provisioned: depth grows, every worker busy", base, asg(10, 10, 0), false,
			steps(2, func(i int) step { return step{100 + int64(i)*100, 10, -1} }), model.DiagUnderProvisioned, ""},
		// 4 workers at 1 s per message busy for a moment while a couple of
		// messages wait: the 2-3 msg/s stream needs no more than 4, and
		// one saturated sample is the noise of a small fleet.
		{"one busy sample of a small fleet is not under-provisioned", base, asg(4, 4, 0), true,
			[]step{{0, 2, -1}, {0, 3, -1}, {0, 2, -1}, {1, 4, -1}, {2, 4, -1}}, model.DiagHealthy, ""},
		{"not_consuming: depth, workers, nothing in flight", base, asg(5, 5, 0), true,
			steps(4, func(i int) step { return step{500 + int64(i)*20, 0, -1} }), model.DiagNotConsuming, "not consuming"},
		{"stuck: every slot held, nothing deleted", func() Settings { s := base(); s.Max = 10; return s }, asg(10, 10, 0), true,
			steps(30, func(i int) step { return step{100 + int64(i)*50, 10, deletedFrom(i, 0)} }), model.DiagStuck, "stuck"},
		{"at the max with deletions is capped, not stuck", func() Settings { s := base(); s.Max = 10; return s }, asg(10, 10, 0), true,
			steps(30, func(i int) step { return step{100 + int64(i)*50, 10, deletedFrom(i, 10)} }), model.DiagCapped, ""},
		{"at the max without a deleted count is capped: stuck needs it", func() Settings { s := base(); s.Max = 10; return s }, asg(10, 10, 0), true,
			steps(30, func(i int) step { return step{100 + int64(i)*50, 10, -1} }), model.DiagCapped, ""},
		{"scale from zero is under-provisioned, not not-consuming", func() Settings { s := base(); s.Min = 0; return s }, asg(0, 0, 0), false,
			steps(4, func(i int) step { return step{50 + int64(i)*20, 0, -1} }), model.DiagUnderProvisioned, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.s(), tc.fleet)
			h.follow = tc.follow
			var d model.Decision
			for i, st := range tc.steps {
				smp := q(st.visible, st.inFlight)
				if st.deleted >= 0 {
					smp.Deleted = reading(st.deleted, t0.Add(30*time.Second))
				}
				dt := tick
				if i == 0 {
					dt = 0
				}
				d = h.step(dt, smp)
			}
			if d.Diagnosis != tc.want {
				t.Fatalf("diagnosis %q, want %q; reasons %q", d.Diagnosis, tc.want, d.Reasons)
			}
			if tc.held != "" && (!d.Held || d.HoldReason != tc.held) {
				t.Fatalf("held %v %q, want %q", d.Held, d.HoldReason, tc.held)
			}
		})
	}
	t.Run("unknown: no queue answered", func(t *testing.T) {
		t.Parallel()
		smp := q(0, 0)
		smp.Answered, smp.Queues, smp.At = 0, 1, t0
		d := Decide(base(), smp, asg(3, 3, 0), &State{}, t0)
		if d.Diagnosis != model.DiagUnknown {
			t.Fatalf("diagnosis %q", d.Diagnosis)
		}
	})
}

// deletedFrom gives the deleted rate v from step 20 (t0 + 100 s) on, when the
// minute starting at t0 + 30 s has ended and CloudWatch has it; before, none.
func deletedFrom(i int, v float64) float64 {
	if i < 20 {
		return -1
	}
	return v
}

// A fleet that receives nothing is held where it is, with the reason; it
// never scales in, even past the window, and scaling resumes once messages
// flow again.
func TestNotConsumingHoldsAndRecovers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, base(), asg(5, 5, 0))
	var d model.Decision
	held := 0
	for i := 0; i < 100; i++ {
		d = h.step(tick, q(500+int64(i)*20, 0))
		if d.Diagnosis == model.DiagNotConsuming {
			if held == 0 {
				held = d.CurrentWorkers
			}
			if d.DesiredWorkers != held || !hasReason(d, "more workers will not fix") {
				t.Fatalf("step %d: desired %d, want held at %d; reasons %q", i, d.DesiredWorkers, held, d.Reasons)
			}
		}
	}
	if held == 0 || d.Diagnosis != model.DiagNotConsuming {
		t.Fatalf("never diagnosed not_consuming; last %q", d.Diagnosis)
	}
	// The workers recover: every slot busy, the backlog falls.
	d = h.step(tick, q(2000, int64(held)))
	if d.Diagnosis == model.DiagNotConsuming || d.Held {
		t.Fatalf("after recovery: diagnosis %q held %v", d.Diagnosis, d.Held)
	}
	if d.DesiredWorkers <= held {
		t.Fatalf("after recovery: desired %d, want a scale-out from %d for 2,000 waiting", d.DesiredWorkers, held)
	}
}

// Workers just in service may still be starting: with a 60 s start delay,
// a fleet is not called not_consuming before its streak spans 60 s.
func TestNotConsumingWaitsForTheStartDelay(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = time.Minute
	h := newHarness(t, s, asg(5, 5, 0))
	h.follow = false
	for i := 0; i <= 12; i++ {
		dt := tick
		if i == 0 {
			dt = 0
		}
		d := h.step(dt, q(500, 0))
		elapsed := time.Duration(i) * tick
		if got := d.Diagnosis == model.DiagNotConsuming; got != (elapsed >= time.Minute) {
			t.Fatalf("after %s: diagnosis %q", elapsed, d.Diagnosis)
		}
	}
}
