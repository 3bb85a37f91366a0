package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// heldWorld is a queue whose workers stop deleting part of what they
// receive at onset: sent msg/s arrive throughout; before onset every one is
// deleted after service seconds; from onset only deleted msg/s are, and the
// rest stay in flight (received again at once whenever their visibility
// timeout returns them), so the in-flight count grows by sent − deleted a
// second, whatever the fleet. CloudWatch's minutes (sent and deleted, msg/s)
// are stamped with their start and delivered a minute after they end.
type heldWorld struct {
	sent, deleted, service float64
	onset                  time.Time
}

func (w heldWorld) deletedAt(t time.Time) float64 {
	if t.Before(w.onset) {
		return w.sent
	}
	return w.deleted
}

// sample is the world at now, with the newest CloudWatch minute delivered.
func (w heldWorld) sample(now time.Time) model.GroupSample {
	inFlight := w.deletedAt(now) * w.service
	if now.After(w.onset) {
		inFlight += (w.sent - w.deleted) * now.Sub(w.onset).Seconds()
	}
	s := q(0, int64(math.Round(inFlight)))
	if m := now.Truncate(time.Minute).Add(-2 * time.Minute); !m.Before(t0) {
		s.Sent = reading(w.sent, m)
		s.Deleted = reading(w.deletedAt(m), m)
	}
	return s
}

// Messages received and not deleted (30 % poison, an outage, a downstream
// that serves 2 msg/s of 3) must not inflate the arrival estimate, must be
// named within two minutes of their onset, and must hold the fleet at its
// count from before: in today's arithmetic every in-flight message up to
// the slots completes at the per-slot rate, so the estimate grows with the
// fleet and the fleet with the estimate.
func TestHeldMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		sent, deleted float64
		kind          string
	}{
		{"poison 30 %", 2, 1.4, model.HeldPoison},
		{"outage", 3, 0, model.HeldOutage},
		{"downstream serves 2 msg/s", 3, 2, model.HeldPoison},
	}
	for _, learn := range []string{LearnAct, LearnOff} {
		for _, tt := range tests {
			t.Run(tt.name+" learn "+learn, func(t *testing.T) {
				t.Parallel()
				s := base()
				s.Max = 12
				s.Learn = learn
				const dt = 5 * time.Second
				w := heldWorld{sent: tt.sent, deleted: tt.deleted, service: 1, onset: t0.Add(5 * time.Minute)}
				h := newHarness(t, s, asg(3, 3, 0))
				before := 0
				var named time.Time
				for h.now.Before(w.onset.Add(5 * time.Minute)) {
					next := h.now.Add(dt)
					d := h.step(dt, w.sample(next))
					if h.now.Before(w.onset) {
						before = d.DesiredWorkers
						if d.HeldMessages != nil || d.Diagnosis == model.DiagMessagesHeld {
							t.Fatalf("%s: held messages named before the onset: %+v", h.now.Sub(t0), d.HeldMessages)
						}
						continue
					}
					if d.ArrivalRate == nil {
						t.Fatalf("%s: no arrival estimate", h.now.Sub(t0))
					}
					// Within the sent count's noise (two standard deviations
					// of a minute's Poisson count) until the held messages are
					// named, then within 20 %.
					lim := tt.sent + 2*math.Sqrt(tt.sent/60) + 1e-9
					if named.IsZero() {
						if *d.ArrivalRate > lim {
							t.Errorf("%s: arrival estimate %v, %v sent (at most %v)", h.now.Sub(w.onset), *d.ArrivalRate, tt.sent, lim)
						}
					} else if math.Abs(*d.ArrivalRate/tt.sent-1) > 0.2 {
						t.Errorf("%s: arrival estimate %v, %v sent: more than 20 %% off", h.now.Sub(w.onset), *d.ArrivalRate, tt.sent)
					}
					if d.DesiredWorkers > before*3/2 {
						t.Errorf("%s: desired %d, above 1.5 × the %d before the onset", h.now.Sub(w.onset), d.DesiredWorkers, before)
					}
					if d.HeldMessages != nil && named.IsZero() {
						named = h.now
					}
					if named.IsZero() {
						continue
					}
					hm := d.HeldMessages
					if hm == nil || d.Diagnosis != model.DiagMessagesHeld {
						t.Fatalf("%s: held messages named at %s and no longer: %s %+v", h.now.Sub(w.onset), named.Sub(w.onset), d.Diagnosis, d.Reasons)
					}
					if d.DesiredWorkers != before || hm.HoldAt != before {
						t.Errorf("%s: desired %d (hold at %d), want the %d before the onset", h.now.Sub(w.onset), d.DesiredWorkers, hm.HoldAt, before)
					}
					if hm.Kind != tt.kind || !hm.Since.Equal(w.onset) || hm.Sent == nil || *hm.Sent != tt.sent || hm.Deleted != tt.deleted {
						t.Errorf("%s: held messages %+v, want kind %s since %s, %v sent, %v deleted", h.now.Sub(w.onset), *hm, tt.kind, w.onset, tt.sent, tt.deleted)
					}
					// The minute's in flight less what its deletions explain;
					// each sample is held until the next, 5 s later.
					m := hm.Minute
					mid := w.deletedAt(m)*w.service + (w.sent-w.deleted)*(m.Sub(w.onset).Seconds()+27.5)
					// (A measured service time, when it sizes, may explain more.)
					if math.Abs(hm.InFlight-mid) > 3 || hm.Held > hm.InFlight-tt.deleted*w.service+1e-6 || hm.Held < hm.InFlight/2 {
						t.Errorf("%s: in flight %v, held %v; want about %v and %v", h.now.Sub(w.onset), hm.InFlight, hm.Held, mid, mid-tt.deleted*w.service)
					}
					want := "poison messages?"
					if tt.kind == model.HeldOutage {
						want = "an outage?"
					}
					if !hasReason(d, "received and not deleted ("+want+")") || !hasReason(d, "holding at", "the count before they began") {
						t.Errorf("%s: reasons %q", h.now.Sub(w.onset), d.Reasons)
					}
					if tt.kind == model.HeldPoison && !hasReason(d, "maxReceiveCount") {
						t.Errorf("%s: no redrive policy in %q", h.now.Sub(w.onset), d.Reasons)
					}
				}
				if named.IsZero() {
					t.Fatalf("held messages never named; last decision %s %q", h.log[len(h.log)-1].Diagnosis, h.log[len(h.log)-1].Reasons)
				}
				if late := named.Sub(w.onset); late > 2*time.Minute+dt {
					t.Errorf("held messages named %s after the onset, want within 2 minutes (and one interval)", late)
				}
				if before < 3 || before > 6 {
					t.Errorf("the fleet before the onset was %d: the world is not the one meant", before)
				}
			})
		}
	}
}

// Batch consumers delete what they hold, a healthy fleet holds no more than
// D × S: neither is held.
func TestHeldNotForDeletedWork(t *testing.T) {
	t.Parallel()
	s := base()
	// Workers of one slot each receive ten and delete them as a batch: 9
	// messages in flight on 3 slots, all deleted, 3 msg/s, at 3 s each.
	s.ServiceTime = 3 * time.Second
	h := newHarness(t, s, asg(3, 3, 0))
	h.follow = false
	for h.now.Before(t0.Add(6 * time.Minute)) {
		smp := q(0, 9)
		if m := h.now.Add(5 * time.Second).Truncate(time.Minute).Add(-2 * time.Minute); !m.Before(t0) {
			smp.Sent, smp.Deleted = reading(3, m), reading(3, m)
		}
		d := h.step(5*time.Second, smp)
		if d.HeldMessages != nil || d.Diagnosis == model.DiagMessagesHeld {
			t.Fatalf("%s: messages held named for work that is deleted: %+v %q", h.now.Sub(t0), d.HeldMessages, d.Reasons)
		}
	}
}
