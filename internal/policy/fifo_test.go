package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A FIFO queue with six active message groups: 20 workers in service, 500
// messages waiting throughout, yet only six in flight (one per group), 30
// deleted a second (200 ms each). The workers past the groups wait: the
// group is held at ⌈6 × 1.25⌉ = 8, and says why. A standard queue with the
// same numbers is not held (its waiting messages would reach free slots, so
// the numbers mean something else there).
func TestFIFOMessageGroupsCapTheFleet(t *testing.T) {
	t.Parallel()
	for _, fifo := range []bool{true, false} {
		s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second,
			Min: 1, Max: 100, FIFO: fifo, Forecast: ForecastSettings{Off: true}}
		h := newHarness(t, s, asg(20, 20, 0))
		h.follow = false
		var d model.Decision
		for i := range 8 * 12 { // 8 minutes of samples 5 s apart
			smp := q(500, 6)
			if now := h.now.Add(tick); now.Sub(t0) >= 90*time.Second {
				smp.Deleted = reading(30, now.Add(-90*time.Second).Truncate(time.Minute))
			}
			dt := tick
			if i == 0 {
				dt = 0
			}
			d = h.step(dt, smp)
		}
		switch {
		case fifo && (d.DesiredWorkers != 8 || d.Diagnosis != model.DiagDownstreamLimited || !hasReason(d, "FIFO queue serves each message group", "at most 6 were in service")):
			t.Fatalf("FIFO: desired %d, diagnosis %q, reasons %q; want held at 8", d.DesiredWorkers, d.Diagnosis, d.Reasons)
		case !fifo && d.DesiredWorkers <= 8:
			t.Fatalf("standard queue: desired %d, reasons %q; want no FIFO limit", d.DesiredWorkers, d.Reasons)
		}
	}
}
