package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A negative deadband or stabilisation window turns the guard off; zero
// means the default. The configuration maps an explicit 0 to "off".
func TestGuardsTurnedOff(t *testing.T) {
	t.Parallel()
	t.Run("no deadband: +2 of 20 is applied", func(t *testing.T) {
		t.Parallel()
		s := base()
		s.Utilization = 0.75
		s.Deadband = -1
		h := newHarness(t, s, asg(20, 20, 0))
		var last int
		for range 80 {
			last = h.step(tick, q(0, 16)).DesiredWorkers
		}
		// 16 msg/s at 1 s per message and a 0.75 ceiling: ceil(16/0.75) = 22.
		if last != 22 {
			t.Fatalf("desired %d, want 22 with the deadband off", last)
		}
	})
	t.Run("no stabilisation: scale in at once", func(t *testing.T) {
		t.Parallel()
		s := base()
		s.ScaleInStabilization = -time.Second
		s.Forecast.Off = true // size for the latest rate alone
		h := newHarness(t, s, asg(40, 40, 0))
		for range 30 {
			h.step(tick, q(0, 30))
		}
		// The stream drops from 30 to 8 msg/s: ceil(8/0.8) = 10. With
		// no window the fleet follows the smoothed estimate down within
		// minutes instead of holding the old peak for five.
		var d = h.log[len(h.log)-1]
		for range 36 { // 3 minutes
			d = h.step(tick, q(0, 8))
		}
		if d.DesiredWorkers > 12 {
			t.Fatalf("3 minutes after the drop: desired %d, want near 10 with stabilisation off; reasons %q", d.DesiredWorkers, d.Reasons)
		}
		for _, d := range h.log {
			if hasReason(d, "scale-in stabilised") {
				t.Fatalf("a decision was stabilised with the window off: %q", d.Reasons)
			}
		}
	})
	t.Run("zero means the default", func(t *testing.T) {
		t.Parallel()
		s := base().WithDefaults()
		if s.Deadband != model.DefaultDeadband || s.ScaleInStabilization != model.DefaultForecastStabilization {
			t.Fatalf("defaults with the forecast: deadband %v, window %v", s.Deadband, s.ScaleInStabilization)
		}
		reactive := base()
		reactive.Forecast.Off = true
		if w := reactive.WithDefaults().ScaleInStabilization; w != model.DefaultScaleInStabilization {
			t.Fatalf("default window without the forecast: %v, want %v", w, model.DefaultScaleInStabilization)
		}
		off := base()
		off.Deadband, off.ScaleInStabilization = -1, -1
		off = off.WithDefaults().WithDefaults()
		if off.Deadband >= 0 || off.ScaleInStabilization >= 0 {
			t.Fatalf("off did not survive WithDefaults twice: %v, %v", off.Deadband, off.ScaleInStabilization)
		}
	})
}

// A stabilisation window no longer than the sampling interval must not
// freeze the fleet: every sample is a little more than a window after the
// last, which is not a restart.
func TestShortWindowStillScalesIn(t *testing.T) {
	t.Parallel()
	s := base()
	s.ScaleInStabilization = time.Second
	s.StaleAfter = 3 * time.Second
	s.Forecast.Off = true
	s.ArrivalSmoothing = time.Second
	h := newHarness(t, s, asg(5, 5, 0))
	var d = h.step(1001*time.Millisecond, q(0, 0))
	for range 30 {
		d = h.step(1001*time.Millisecond, q(0, 0))
	}
	// An empty queue with nothing arriving needs the min, 1.
	if d.DesiredWorkers != 1 {
		t.Fatalf("after 30 samples of an empty queue: desired %d, want the min 1; reasons %q", d.DesiredWorkers, d.Reasons)
	}
}
