package policy

import (
	"fmt"
	"math"
	"testing"
)

// A one-off dump of 500 messages into a queue fed at 10 msg/s, drained by
// 15 workers at 1 msg/s: it is a backlog for the latency floor, not an
// arrival rate for minutes. The interval that brings it observes 113.5 msg/s,
// which enters the EWMA at the dump bound, 10 + 3·√((10 + 12.5)/5) + 2.5 (half the in-flight change at 1 msg/s a slot); the
// next interval, at 10 msg/s again, enters in full. A real rise to 110 msg/s
// shows again in the second interval, which then enters in full too.
func TestDumpIsABacklogNotARate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		v2   int64   // visible at the sample after the jump
		obs2 float64 // its observation: Δtotal/5 + 15 busy slots
	}{
		{"a dump, then 10 msg/s", 475, (490.0-515)/5 + 15},
		{"a rise to 110 msg/s", 970, (985.0-515)/5 + 15},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, base(), asg(15, 15, 0))
			h.follow = false
			h.step(0, q(0, 10))
			h.settle(q(0, 10)) // λ = 10
			jump := h.step(tick, q(500, 15))
			obs1 := (515.0-10)/5 + 12.5 // 113.5 msg/s
			bound := dumpBound(10, 12.5, 5, 2.5)
			lambda := ewma(10, bound, 5, 60)
			if math.Abs(*jump.ArrivalRate-lambda) > 1e-9 {
				t.Fatalf("after the jump: arrival rate %v, want %v", *jump.ArrivalRate, lambda)
			}
			dumped := math.Round((obs1 - bound) * 5)
			if !hasReason(jump, fmt.Sprint(number(dumped)), "sized as a backlog, not a rate") {
				t.Fatalf("reasons %q do not name the %v dumped messages", jump.Reasons, dumped)
			}
			// The latency floor sizes for the backlog: λ + 500/30.
			if want := int(math.Ceil(lambda + 500.0/30)); *jump.Floors.Drain != want {
				t.Fatalf("drain floor %d, want %d", *jump.Floors.Drain, want)
			}
			// The next interval is within the bound of the last observation.
			if tc.obs2 > dumpBound(obs1, 15, 5, 0) {
				t.Fatalf("test arithmetic: %v above the bound", tc.obs2)
			}
			lambda = ewma(lambda, tc.obs2, 5, 60)
			d := h.step(tick, q(tc.v2, 15))
			if math.Abs(*d.ArrivalRate-lambda) > 1e-9 && !hasReason(d, "arrivals surging") {
				t.Fatalf("next interval: arrival rate %v, want %v", *d.ArrivalRate, lambda)
			}
			if hasReason(d, "sized as a backlog") {
				t.Fatalf("the next interval was held back too: %q", d.Reasons)
			}
			if tc.v2 == 475 {
				// Without the bound the EWMA would hold
				// ewma(ewma(10, 113.5), 10) ≈ 17.6 msg/s, 23 workers at the
				// 80 % ceiling; with it, 14.
				if want := int(math.Ceil(lambda / 0.8)); *d.Floors.Utilization != want || want != 14 {
					t.Fatalf("utilisation floor %d, want %d (= 14)", *d.Floors.Utilization, want)
				}
			}
		})
	}
}
