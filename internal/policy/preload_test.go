package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// fleetHistory is n minutes ending at end of deleted msg/s and mean in
// flight, the same every minute.
func fleetHistory(end time.Time, n int, deleted, inFlight float64) model.FleetHistory {
	h := model.FleetHistory{Start: end.Add(-time.Duration(n) * time.Minute), Deleted: make([]float64, n), InFlight: make([]float64, n)}
	for i := range n {
		h.Deleted[i], h.InFlight[i] = deleted, inFlight
	}
	return h
}

// 20 minutes of history at 30 msg/s with 12 in flight, ending two minutes
// before the first sample: the first decision sizes with the measured
// 400 ms (the settings say 200 ms), trusted, before any live minute. With
// learn: off nothing is taken, and the decision is the one the settings make.
func TestPreloadFleet(t *testing.T) {
	t.Parallel()
	now := t0.Add(30 * time.Second)
	h := fleetHistory(t0.Add(-time.Minute), 20, 30, 12)
	tests := []struct {
		name    string
		learn   string
		minutes int
		sizing  string
	}{
		{"act", LearnAct, 20, "measured"},
		{"report", LearnReport, 20, "configured"},
		{"off", LearnOff, 0, "configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Concurrency left unset: the defaults must make the same
			// measurement as Decide's, or the decision starts it over.
			s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second, Min: 1, Max: 100,
				Learn: tt.learn, Forecast: ForecastSettings{Off: true}}
			var st State
			if n := st.PreloadFleet(s, h); n != tt.minutes {
				t.Fatalf("PreloadFleet took %d minutes, want %d", n, tt.minutes)
			}
			if _, known := st.est.Rate(); st.haveLastDesired || st.haveLastCurrent || known {
				t.Fatalf("a preload decided something: %+v", st)
			}
			smp := q(0, 12)
			smp.At = now
			d := Decide(s, smp, asg(10, 10, 0), &st, now)
			checkDecision(t, s, asg(10, 10, 0), d)
			m := d.Measured
			if m.SizingWith != tt.sizing {
				t.Errorf("sizing with %q, want %q; reasons %q", m.SizingWith, tt.sizing, d.Reasons)
			}
			if tt.learn == LearnOff {
				if m.ServiceTimeSeconds != nil {
					t.Errorf("measured %v with learn: off", *m.ServiceTimeSeconds)
				}
				return
			}
			if m.ServiceTimeSeconds == nil || math.Abs(*m.ServiceTimeSeconds-0.4) > 1e-9 {
				t.Fatalf("measured service time %v, want 0.4 s", ptrValue(m.ServiceTimeSeconds))
			}
			if m.Confidence == nil || *m.Confidence < MeasuredConfidence {
				t.Fatalf("confidence %v, want at least %v", ptrValue(m.Confidence), MeasuredConfidence)
			}
			if tt.learn == LearnAct && !hasReason(d, "service time measured 400 ms over the last 20 minutes, configured 200 ms: sizing with 2.5 msg/s per worker, measured") {
				t.Errorf("reasons %q do not say the measured time sizes the fleet", d.Reasons)
			}
		})
	}
}

// A preload feeds the measurement and nothing else: with no usable sample
// the first decision holds, whatever the history measured.
func TestPreloadFleetNeverScalesOnItsOwn(t *testing.T) {
	t.Parallel()
	s := base()
	s.ServiceTime = 5 * time.Second // the history measures 50 ms: 100 times fewer workers
	var st State
	st.PreloadFleet(s, fleetHistory(t0, 20, 100, 5))
	fleet := asg(40, 40, 0)
	missing := model.GroupSample{Group: "g", At: t0, Queues: 1}
	d := Decide(s, missing, fleet, &st, t0.Add(time.Second))
	if !d.Held || d.DesiredWorkers != 40 {
		t.Fatalf("with no sample: desired %d (held %v), want held at 40; reasons %q", d.DesiredWorkers, d.Held, d.Reasons)
	}
}
