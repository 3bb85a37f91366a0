package ceiling

import (
	"math"
	"testing"
	"time"
)

// queue is a saturated queue fed at arrive msg/s whose slots each complete
// 4 msg/s, at most limit msg/s in all (0: no limit); sample returns its
// total after each 5 s interval.
type queue struct {
	total, arrive, limit float64
}

func (q *queue) step(slots float64) float64 {
	done := slots * 4
	if q.limit > 0 {
		done = math.Min(done, q.limit)
	}
	q.total += (q.arrive - done) * 5
	return q.total
}

// feed runs the queue for n intervals at slots from interval i, and
// returns the next interval.
func feed(s *Step, q *queue, i, n int, slots float64) int {
	for range n {
		total := q.step(slots)
		s.Observe(t0.Add(time.Duration(i)*5*time.Second), total, total-slots, slots, 4)
		i++
	}
	return i
}

func TestStepSuspectsAScaleOutThatHardlyMovedTheQueue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		limit, arrive float64
		before, after float64
		arriveAfter   float64 // arrivals after the scale-out (0: as before)
		want          bool
	}{
		// 16 → 488 slots at 4 msg/s against a downstream of 480 msg/s:
		// the queue's growth falls by 416 msg/s where 1,888 were promised.
		{"a pool of 120 slots met by a scale-out to 488", 480, 500, 16, 488, 0, true},
		{"no pool: the queue drains as promised", 0, 500, 16, 488, 0, false},
		{"a pool above the fleet", 4000, 500, 16, 488, 0, false},
		// Arrivals that rise at the moment the workers arrive, by less than
		// half of what they promised, leave no suspicion.
		{"arrivals rise by a third of the promise as the workers arrive", 0, 500, 100, 400, 900, false},
		// Arrivals that double as 50 slots arrive: the queue grows 300 msg/s
		// faster where the slots promised 200 msg/s less; no downstream
		// leaves the growth rising, a surge that began with the scale-out.
		{"arrivals double as the workers arrive", 0, 500, 100, 150, 1000, false},
		// A scale-out too small to tell from counting noise.
		{"one slot more", 480, 500, 100, 101, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s Step
			q := &queue{total: 50000, arrive: tt.arrive, limit: tt.limit}
			i := feed(&s, q, 0, 6, tt.before)
			if tt.arriveAfter > 0 {
				q.arrive = tt.arriveAfter
			}
			i = feed(&s, q, i, 3, tt.after)
			now := t0.Add(time.Duration(i) * 5 * time.Second)
			k, ok := s.Suspected(now)
			if ok != tt.want {
				t.Fatalf("suspected %v (%+v), want %v", ok, k, tt.want)
			}
			if !ok {
				return
			}
			if k.Before != tt.before || k.After != tt.after {
				t.Errorf("scale-out %v → %v, want %v → %v", k.Before, k.After, tt.before, tt.after)
			}
			// The fall is what the downstream added: 480 − 64 msg/s.
			if want := tt.limit - tt.before*4; math.Abs(k.Fall-want) > 1e-6 || math.Abs(k.Promised-(tt.after-tt.before)*4) > 1e-6 {
				t.Errorf("fall %.1f promised %.1f, want %.1f and %.1f", k.Fall, k.Promised, want, (tt.after-tt.before)*4)
			}
			if _, ok := s.Suspected(k.At.Add(StepSuspectFor + time.Second)); ok {
				t.Error("the suspicion outlived StepSuspectFor")
			}
			s.Settle()
			if _, ok := s.Suspected(now); ok {
				t.Error("still suspected after Settle")
			}
		})
	}
}

// TestStepForgetsOnScaleIn: a suspicion about more slots is moot once the
// fleet is smaller again.
func TestStepForgetsOnScaleIn(t *testing.T) {
	t.Parallel()
	var s Step
	q := &queue{total: 50000, arrive: 500, limit: 480}
	i := feed(&s, q, 0, 6, 16)
	i = feed(&s, q, i, 3, 488)
	if _, ok := s.Suspected(t0.Add(time.Duration(i) * 5 * time.Second)); !ok {
		t.Fatal("no suspicion to forget")
	}
	i = feed(&s, q, i, 1, 120)
	if _, ok := s.Suspected(t0.Add(time.Duration(i) * 5 * time.Second)); ok {
		t.Fatal("suspected after the fleet went back to 120")
	}
}

// TestStepReadsAProbeThatGained: a fleet held at a ceiling of 120 slots
// (4 msg/s each) probes 144 after its pool grew to 240: the queue's growth
// falls by the 96 msg/s the new slots promise, and the Detector takes the
// probe as gained at once, minutes before a saturated minute could say so,
// and probes again with twice the step. A scale-out that is not the probe
// out (no probe, or from elsewhere than the knee) is not taken.
func TestStepReadsAProbeThatGained(t *testing.T) {
	t.Parallel()
	var d Detector
	end := grow(&d, 0, []float64{40, 100, 100}, pool(60, 0.2), nil)
	now := t0.Add(time.Duration(end) * time.Minute)
	if c, _ := d.At(now, true, 1); c.Workers != 60 {
		t.Fatalf("ceiling %d, want 60", c.Workers)
	}
	k := ScaleOut{At: now.Add(ProbeEvery + 2*time.Minute), Before: 60, After: 72}
	if d.ProbeMoved(k) {
		t.Fatal("a scale-out taken for a probe while none was out")
	}
	if c, _ := d.At(now.Add(ProbeEvery), true, 1); c.Workers != 72 {
		t.Fatalf("probe %d, want 72", c.Workers)
	}
	if d.ProbeMoved(ScaleOut{At: k.At, Before: 20, After: 72}) {
		t.Fatal("a scale-out from 20 taken for the probe from 60")
	}
	if !d.ProbeMoved(k) {
		t.Fatal("the probe's scale-out was not taken")
	}
	// The next probe at once, 40 % past the new knee of 72.
	if c, _ := d.At(k.At, true, 1); c.Workers != 72+29 {
		t.Fatalf("after the probe gained: ceiling %d, want %d", c.Workers, 72+29)
	}

	var s Step
	q := &queue{total: 50000, arrive: 700, limit: 960}
	i := feed(&s, q, 0, 6, 120)
	feed(&s, q, i, 3, 144)
	g, ok := s.TakeGain()
	if !ok || g.Before != 120 || g.After != 144 || math.Abs(g.Fall-96) > 1e-6 {
		t.Fatalf("gain %+v %v, want 120 → 144 falling by 96 msg/s", g, ok)
	}
	if _, ok := s.TakeGain(); ok {
		t.Fatal("a gain taken twice")
	}
}
