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

// Trust has hysteresis: a measurement is used from MeasuredConfidence on,
// and once in use, down to MeasuredConfidenceKept. The queue of
// TestLearnedServiceTime measures 450 ms for 12 minutes; then the deleted
// count stops coming, and the confidence fades linearly (between 2 and 30
// minutes after the last good minute) through 0.5 and 0.3. The measured
// value sizes until it falls below 0.3, not 0.5; on the way up the
// configured one sized until 0.5.
func TestMeasuredTrustHasHysteresis(t *testing.T) {
	t.Parallel()
	const lambda, trueS = 20.0, 0.45
	s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second,
		Min: 1, Max: 100, Learn: LearnAct, Forecast: ForecastSettings{Off: true}}
	h := newHarness(t, s, asg(12, 12, 0))
	h.follow = false
	inFlight := int64(math.Round(lambda * trueS))
	var upConfigured, upMeasured, keptBelow, droppedBelow bool
	wasMeasured := false
	for i := range 45 * 12 { // 45 minutes of samples 5 s apart
		smp := q(0, inFlight)
		now := h.now.Add(tick)
		if now.Sub(t0) >= 90*time.Second && now.Sub(t0) < 12*time.Minute {
			smp.Deleted = reading(lambda, now.Add(-90*time.Second).Truncate(time.Minute))
		}
		dt := tick
		if i == 0 {
			dt = 0
		}
		d := h.step(dt, smp)
		m := d.Measured
		if m.Confidence == nil {
			continue
		}
		conf, measured := *m.Confidence, m.SizingWith == "measured"
		switch {
		case !wasMeasured && measured && conf < MeasuredConfidence:
			t.Fatalf("at %v: measured in use from confidence %v, below %v", now.Sub(t0), conf, MeasuredConfidence)
		case wasMeasured && !measured && conf >= MeasuredConfidenceKept:
			t.Fatalf("at %v: measured dropped at confidence %v, at least %v", now.Sub(t0), conf, MeasuredConfidenceKept)
		case wasMeasured && measured && conf < MeasuredConfidenceKept:
			t.Fatalf("at %v: measured kept at confidence %v, below %v", now.Sub(t0), conf, MeasuredConfidenceKept)
		}
		switch {
		case !wasMeasured && !measured && conf > 0 && conf < MeasuredConfidence:
			upConfigured = true
		case !wasMeasured && measured:
			upMeasured = true
		case measured && conf < MeasuredConfidence:
			keptBelow = true
			if !hasReason(d, "still in use down to 30 %") {
				t.Fatalf("at %v: reasons %q do not say the measurement is kept", now.Sub(t0), d.Reasons)
			}
		case wasMeasured && !measured:
			droppedBelow = true
		}
		wasMeasured = measured
	}
	if !upConfigured || !upMeasured || !keptBelow || !droppedBelow {
		t.Fatalf("configured on the way up %v, measured from 0.5 %v, kept below 0.5 %v, dropped below 0.3 %v: want all",
			upConfigured, upMeasured, keptBelow, droppedBelow)
	}
}
