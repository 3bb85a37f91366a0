package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A steady queue at 20 msg/s whose workers really take 450 ms where the
// settings say 200 ms: by Little's law 9 messages are in flight, and
// CloudWatch's deleted count, 20 msg/s, arrives for each minute 90 s after
// it starts (stamped at the minute's start). With learn: act the checker
// measures 450 ms, estimates the arrivals right (20 msg/s) and sizes with
// 2.2 msg/s per worker; with report it measures and says so but sizes with
// the configured value, whose Little's law reads 45 msg/s of arrivals; with
// off it measures nothing.
func TestLearnedServiceTime(t *testing.T) {
	t.Parallel()
	const lambda, trueS = 20.0, 0.45
	inFlight := int64(math.Round(lambda * trueS))
	tests := []struct {
		name        string
		learn       string
		wantArrival float64
		wantSizing  string
		measured    bool
		reason      string
	}{
		{"act", LearnAct, lambda, "measured", true, "service time measured 450 ms over the last"},
		{"report", LearnReport, lambda * trueS / 0.2, "configured", true, "sizing with the configured value (workers.learn: report)"},
		{"off", LearnOff, lambda * trueS / 0.2, "configured", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second,
				Min: 1, Max: 100, Learn: tt.learn, Forecast: ForecastSettings{Off: true}}
			h := newHarness(t, s, asg(12, 12, 0))
			h.follow = false
			var d model.Decision
			for i := range 12 * 12 { // 12 minutes of samples 5 s apart
				smp := q(0, inFlight)
				if now := h.now.Add(tick); now.Sub(t0) >= 90*time.Second {
					smp.Deleted = reading(lambda, now.Add(-90*time.Second).Truncate(time.Minute))
				}
				dt := tick
				if i == 0 {
					dt = 0
				}
				d = h.step(dt, smp)
			}
			m := d.Measured
			if m.SizingWith != tt.wantSizing || m.ConfiguredServiceTimeSeconds != 0.2 {
				t.Fatalf("sizing with %q (configured %v), want %q", m.SizingWith, m.ConfiguredServiceTimeSeconds, tt.wantSizing)
			}
			if !tt.measured {
				if m.ServiceTimeSeconds != nil || m.Confidence != nil {
					t.Fatalf("measured with learn: off: %+v", m)
				}
			} else {
				if m.ServiceTimeSeconds == nil || math.Abs(*m.ServiceTimeSeconds-trueS) > 0.01 {
					t.Fatalf("measured service time %v, want %v", ptrValue(m.ServiceTimeSeconds), trueS)
				}
				if m.PerWorkerThroughput == nil || math.Abs(*m.PerWorkerThroughput-1/trueS) > 0.1 {
					t.Fatalf("measured per worker %v, want %v", ptrValue(m.PerWorkerThroughput), 1/trueS)
				}
				if m.Confidence == nil || *m.Confidence < MeasuredConfidence {
					t.Fatalf("confidence %v after 10 good minutes", ptrValue(m.Confidence))
				}
				if !hasReason(d, tt.reason) {
					t.Fatalf("no reason %q in %q", tt.reason, d.Reasons)
				}
			}
			if d.ArrivalRate == nil || math.Abs(*d.ArrivalRate-tt.wantArrival) > 0.02*tt.wantArrival {
				t.Fatalf("arrival rate %v, want %v", ptrValue(d.ArrivalRate), tt.wantArrival)
			}
			// The utilisation floor is λ·S ÷ 0.8 either way (Little's law's
			// bias cancels in the offered load): ⌈9 ÷ 0.8⌉.
			if *d.Floors.Utilization != 12 {
				t.Fatalf("utilisation floor %d, want 12", *d.Floors.Utilization)
			}
		})
	}
}

// Without CloudWatch's deleted count nothing is measured, and the decision
// says what learning needs.
func TestLearningNeedsTheDeletedCount(t *testing.T) {
	t.Parallel()
	s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second, Min: 1, Max: 100}
	h := newHarness(t, s, asg(5, 5, 0))
	h.step(0, q(0, 3))
	d := h.step(tick, q(0, 3))
	if d.Measured.ServiceTimeSeconds != nil || d.Measured.SizingWith != "configured" {
		t.Fatalf("measured %+v without a deleted count", d.Measured)
	}
	if !hasReason(d, "learning the service time needs CloudWatch's NumberOfMessagesDeleted") {
		t.Fatalf("reasons %q do not say what learning needs", d.Reasons)
	}
}

func ptrValue(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
