package arrivals

import (
	"math"
	"testing"
	"time"
)

// When the per-slot rate moves (the measured one replaces the configured),
// the estimate moves with it at once, but never below the sent count, which
// every observation is raised to: batch consumers measured slower than
// their settings said, 4 msg/s sent, dropped the estimate to half of it.
func TestPerSlotMoveKeepsTheSentCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		sentOK     bool
		from, to   float64 // per-slot rate
		inFlight   float64
		sent, want float64
	}{
		// 2 in flight at 3.33 msg/s a slot: about 6.67 msg/s, bounded by the
		// sent count's noise at 4.52; the move to 2 msg/s a slot takes
		// 2.67 off, below the 4 sent: held at 4.
		{"slower, sent known", true, 10.0 / 3, 2, 2, 4, 4},
		// No sent count: the move alone, 6.67 − 2.67 = 4.
		{"slower, no sent count", false, 10.0 / 3, 2, 2, 0, 4},
		// Faster: the move up is not bounded below.
		{"faster", true, 2, 10.0 / 3, 2, 4, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e Estimator
			flow := Flow{PerServer: tc.from, Servers: 3, Tau: time.Minute, Keep: 7 * time.Minute, Sent: tc.sent, SentOK: tc.sentOK}
			at := t0
			for i := 0; i < 60; i++ {
				e.Update(Counts{At: at, InFlight: tc.inFlight}, 1, flow)
				at = at.Add(5 * time.Second)
			}
			before, _ := e.Rate()
			flow.PerServer = tc.to
			e.Update(Counts{At: at, InFlight: tc.inFlight}, 1, flow)
			got, _ := e.Rate()
			moved := before + (tc.to-tc.from)*tc.inFlight
			switch {
			case tc.want < 0:
				// Moved up, then bounded by the sent count's noise.
				bound := math.Max(tc.sent+2*math.Sqrt(tc.sent/60), 0)
				if got < before-1e-9 || got > math.Max(bound, moved)+1e-9 {
					t.Errorf("estimate %v → %v, moved %v, bound %v", before, got, moved, bound)
				}
			case tc.sentOK:
				if got < tc.sent-1e-9 || got > before+1e-9 {
					t.Errorf("estimate %v → %v, %v sent: below it, or raised", before, got, tc.sent)
				}
				if moved >= tc.sent {
					t.Fatalf("the move to %v, %v, does not cross the sent count: not the case meant", tc.to, moved)
				}
			default:
				if math.Abs(got-moved) > 0.2 {
					t.Errorf("estimate %v → %v, want about %v", before, got, moved)
				}
			}
		})
	}
}
