package policy

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/queueworld"
)

// worldRun drives Decide against a queueworld.World whose time zero is
// start (on a minute): each tick the world runs to the decision's time
// with the fleet's count of workers (all in service), and the sample
// carries the newest CloudWatch minute, stamped with its start and
// delivered a minute after it ends, as SQS publishes them.
type worldRun struct {
	h     *harness
	w     *queueworld.World
	start time.Time
}

func newWorldRun(t *testing.T, s Settings, w *queueworld.World, start time.Time, workers int) *worldRun {
	h := newHarness(t, s, asg(workers, workers, 0))
	h.now = start.Add(time.Duration(w.Now() * float64(time.Second)))
	return &worldRun{h: h, w: w, start: start}
}

// step runs the world for dt and decides.
func (r *worldRun) step(dt time.Duration) (model.Decision, model.GroupSample) {
	r.h.t.Helper()
	r.w.Run(r.h.now.Add(dt).Sub(r.start).Seconds(), r.h.fleet.Desired)
	smp := worldSample(r.w, r.start)
	return r.h.step(dt, smp), smp
}

// worldSample is w's counts now, with the newest CloudWatch minute.
func worldSample(w *queueworld.World, start time.Time) model.GroupSample {
	v, f := w.Counts()
	s := q(int64(v), int64(f))
	k := int(math.Floor(w.Now()/60)) - 2
	if sent, deleted, over := w.Minute(k); k >= 0 && over {
		m := start.Add(time.Duration(k) * time.Minute)
		s.Sent, s.Deleted = reading(float64(sent)/60, m), reading(float64(deleted)/60, m)
	}
	return s
}

// Messages received and not deleted and returned by their visibility
// timeout (15 s) to be received again: an outage, poison at 10, 30 and 60
// %, a downstream that serves 2 msg/s of 3. Little's law over the slots
// they keep busy, and a saturated queue of returned messages, read as a
// surge five times what was sent, and the fleet went to its max before
// CloudWatch's deleted count named them. From the first sample of the
// onset (20 s into a minute), the fleet must stay within 1.5 times its
// count before, and, once they are named, at that count; an outage is
// named an outage from its first naming, poison and the wall poison.
func TestHeldRedeliveredFromOnset(t *testing.T) {
	t.Parallel()
	const onset = 320.0 // seconds of world time: 3m20s
	tests := []struct {
		name   string
		handle queueworld.Handling
		kind   string
	}{
		{"outage", queueworld.Outage(onset, 1), model.HeldOutage},
		{"poison 10 %", queueworld.Poison(0.1, onset, 1), model.HeldPoison},
		{"poison 30 %", queueworld.Poison(0.3, onset, 1), model.HeldPoison},
		{"poison 60 %", queueworld.Poison(0.6, onset, 1), model.HeldPoison},
		{"downstream serves 2 msg/s of 3", queueworld.Wall(2, onset, 1), model.HeldPoison},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			s.Max = 12
			s.CloudWatchCounts = true
			// The world runs two minutes before the checker's first sample.
			start := t0.Add(-2 * time.Minute)
			w := &queueworld.World{Rate: func(float64) float64 { return 3 }, Handle: tt.handle}
			w.Run(120, 3)
			r := newWorldRun(t, s, w, start, 3)
			on := start.Add(time.Duration(onset * float64(time.Second)))
			before := 0
			var named time.Time
			for r.h.now.Before(on.Add(5 * time.Minute)) {
				d, smp := r.step(5 * time.Second)
				at := r.h.now.Sub(on)
				if r.h.now.Before(on) {
					before = d.DesiredWorkers
					if d.HeldMessages != nil {
						t.Fatalf("%s: held messages named before the onset: %+v", at, d.HeldMessages)
					}
					continue
				}
				if 2*d.DesiredWorkers > 3*before {
					t.Errorf("%s: desired %d, above 1.5 × the %d before the onset; reasons %q", at, d.DesiredWorkers, before, d.Reasons)
				}
				if d.ArrivalRate == nil {
					t.Fatalf("%s: no arrival rate", at)
				}
				// Until named, within the sent count's noise (two standard
				// deviations of a minute's Poisson count).
				if lim := 3 + 2*math.Sqrt(3.0/60) + 1e-9; named.IsZero() && d.HeldMessages == nil && *d.ArrivalRate > lim {
					t.Errorf("%s: arrival rate %v, 3 msg/s sent (at most %v)", at, *d.ArrivalRate, lim)
				}
				for _, why := range d.Reasons {
					if strings.Contains(why, "would only receive them again") {
						t.Errorf("%s: a false reason: %q", at, why)
					}
				}
				hm := d.HeldMessages
				if hm == nil {
					if !named.IsZero() {
						t.Fatalf("%s: named at %s, then not: %s %q", at, named.Sub(on), d.Diagnosis, d.Reasons)
					}
					continue
				}
				first := named.IsZero()
				if first {
					named = r.h.now
					t.Logf("%s: named (%d in flight, %d visible): %q", at, smp.InFlight, smp.Visible, d.Reasons)
				}
				if d.DesiredWorkers != before || hm.HoldAt != before || d.Diagnosis != model.DiagMessagesHeld {
					t.Errorf("%s: desired %d, hold at %d (%s); want the %d before the onset", at, d.DesiredWorkers, hm.HoldAt, d.Diagnosis, before)
				}
				// Poison that takes every worker's time leaves nothing
				// deleted after a while: an outage, truly. The first naming
				// and every one of an outage must be right.
				if (first || tt.kind == model.HeldOutage) && hm.Kind != tt.kind {
					t.Errorf("%s: named %s, want %s: %+v", at, hm.Kind, tt.kind, *hm)
				}
				if !hasReason(d, "holding at", "the count before they began") {
					t.Errorf("%s: no hold among %q", at, d.Reasons)
				}
			}
			if named.IsZero() {
				t.Fatalf("never named; last %s %q", r.h.log[len(r.h.log)-1].Diagnosis, r.h.log[len(r.h.log)-1].Reasons)
			}
			// The minute the onset falls in is delivered a minute after it
			// ends, 1m40s after the onset; the next a minute later.
			if late := named.Sub(on); late > 2*time.Minute+40*time.Second+5*time.Second {
				t.Errorf("named %s after the onset", late)
			}
			if before < 3 || before > 6 {
				t.Errorf("the fleet before the onset was %d: not the world meant", before)
			}
		})
	}
}

// A hold explains what it held, and no more. 30 % poison at 2 msg/s, kept
// in flight (an hour's visibility timeout), then good load of 8 msg/s more:
// the hold kept 3 workers while the visible messages climbed past a
// thousand. Workers must be added within two intervals of the load's
// onset, and the share of messages deleted within the promise must be no
// worse than with the same good load and no poison at all.
func TestHeldHoldsNoNewWork(t *testing.T) {
	t.Parallel()
	const (
		onset = 180.0         // poison from here (world time)
		surge = onset + 200.0 // good load of 8 msg/s more from here
		dt    = 5 * time.Second
	)
	rate := func(x float64) float64 {
		if x >= surge {
			return 10
		}
		return 2
	}
	run := func(poison bool) (within, late int, r *worldRun, added time.Time, level int) {
		s := base()
		s.Max = 40
		s.CloudWatchCounts = true
		start := t0.Add(-time.Minute)
		w := &queueworld.World{Rate: rate, Visibility: 3600}
		w.Handle = func(m queueworld.Message, _ float64) (float64, bool) {
			if !poison || m.Arrived < onset {
				return 1, true
			}
			// 30 % of the 2 msg/s: 6 % of all once the good load comes.
			p := 0.3
			if m.Arrived >= surge {
				p = 0.06
			}
			return 1, math.Floor(float64(m.ID+1)*p) == math.Floor(float64(m.ID)*p)
		}
		w.Run(60, 3)
		r = newWorldRun(t, s, w, start, 3)
		on := start.Add(time.Duration(surge * float64(time.Second)))
		for r.h.now.Before(on.Add(7 * time.Minute)) {
			d, _ := r.step(dt)
			if !r.h.now.After(on) {
				level = d.DesiredWorkers
				if poison && r.h.now.Add(time.Minute).After(on) && d.HeldMessages == nil {
					t.Fatalf("%s: no held messages named before the surge: %s %q", r.h.now.Sub(on), d.Diagnosis, d.Reasons)
				}
				continue
			}
			if added.IsZero() && d.DesiredWorkers > level {
				added = r.h.now
				t.Logf("poison %t: workers added %s after the surge: %q", poison, added.Sub(on), d.Reasons)
			}
			for _, why := range d.Reasons {
				if strings.Contains(why, "would only receive them again") {
					t.Errorf("%s: a false reason: %q", r.h.now.Sub(on), why)
				}
			}
		}
		within, late = w.Served()
		return within, late, r, added, level
	}
	wIn, wLate, r, added, level := run(true)
	cIn, cLate, _, _, _ := run(false)
	on := t0.Add(-time.Minute).Add(time.Duration(surge * float64(time.Second)))
	if added.IsZero() || added.Sub(on) > 2*dt {
		t.Errorf("held at %d: workers added at %v after the surge, want within two intervals", level, added.Sub(on))
	}
	share, control := float64(wIn)/float64(wIn+wLate), float64(cIn)/float64(cIn+cLate)
	t.Logf("within the promise: %.4f with the poison (%d late), %.4f without (%d late)", share, wLate, control, cLate)
	if share < control-0.002 {
		t.Errorf("%.4f of the messages within the promise during the hold, %.4f without poison", share, control)
	}
	last := r.h.log[len(r.h.log)-1]
	if last.HeldMessages == nil || !hasReason(last, "new work") && !hasReason(last, "holding at") {
		t.Errorf("the last decision: %+v %q", last.HeldMessages, last.Reasons)
	}
}

// Batch consumers (receive ten, handle them one at a time for 0.3 s, delete
// the batch) hold more in flight than their slots and delete what they
// hold: no hold, no diagnosis of held messages, the arrival rate within 20
// % of what was sent from the first minute CloudWatch has counted, and no
// count the same load served one message at a time does not also have;
// also when the load and the checker start together (cold), its first
// minute falling short by the batches it took into flight.
func TestBatchConsumersAreNoSurgeNorPoison(t *testing.T) {
	t.Parallel()
	decide := func(t *testing.T, batch int, fill float64, cold bool) (counts map[int]bool, log []model.Decision) {
		s := base()
		s.ServiceTime = 300 * time.Millisecond
		s.CloudWatchCounts = true
		start := t0.Add(-time.Minute)
		w := &queueworld.World{Rate: func(float64) float64 { return 4 }, Handle: queueworld.Steady(0.3), Batch: batch, Fill: fill}
		if cold {
			start = t0
		} else {
			w.Run(60, 3)
		}
		r := newWorldRun(t, s, w, start, 3)
		counts = map[int]bool{}
		sentSeen := false
		for r.h.now.Before(t0.Add(12 * time.Minute)) {
			d, smp := r.step(5 * time.Second)
			counts[d.DesiredWorkers] = true
			if d.HeldMessages != nil || d.Diagnosis == model.DiagMessagesHeld {
				t.Errorf("%s: held messages named for batches: %+v %q", r.h.now.Sub(t0), d.HeldMessages, d.Reasons)
			}
			sentSeen = sentSeen || smp.Sent != nil
			if sentSeen && (d.ArrivalRate == nil || math.Abs(*d.ArrivalRate/4-1) > 0.2) {
				t.Errorf("%s: arrival rate %v, 4 msg/s sent", r.h.now.Sub(t0), d.ArrivalRate)
			}
		}
		return counts, r.h.log
	}
	for _, cold := range []bool{false, true} {
		control, _ := decide(t, 1, 0, cold)
		for _, tc := range []struct {
			batch int
			fill  float64
		}{{10, 0}, {10, 1}, {10, 2}} {
			t.Run(fmt.Sprintf("batch %d fill %vs cold %t", tc.batch, tc.fill, cold), func(t *testing.T) {
				t.Parallel()
				counts, log := decide(t, tc.batch, tc.fill, cold)
				over := 0
				for _, d := range log {
					if int64(d.InFlight) > int64(d.InServiceWorkers)+2 {
						over++
					}
				}
				if over == 0 && tc.fill > 0 {
					t.Fatalf("no sample held more in flight than the slots: not the world meant")
				}
				for n := range counts {
					if !control[n] {
						t.Errorf("a count of %d workers, which the same load one message at a time never had (%v)", n, control)
					}
				}
			})
		}
	}
}
