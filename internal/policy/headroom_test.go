package policy

import (
	"math"
	"testing"
	"time"
)

// A steady stream needs no headroom over its estimate: once the checker has
// seen a quarter hour of it, the measured ceiling is the busiest it runs a
// fleet, 90 % (measuredCeilingTop), and the utilisation floor ⌈λ ÷ 0.9μ⌉,
// where a fixed 80 % ceiling asks for ⌈λ ÷ 0.8μ⌉. Before that quarter hour
// the measured ceiling is its bound, 80 %. 40 msg/s of 1 s work: 40 in
// flight, 45 workers at 90 %, 50 at 80 %.
func TestMeasuredCeilingOfASteadyStream(t *testing.T) {
	t.Parallel()
	const lambda = 40.0
	for _, tc := range []struct {
		name             string
		utilization      float64
		early, afterward int
		reason           string
	}{
		{"measured", 0, 50, 45, "ceiling, measured"},
		{"set to 0.8", 0.8, 50, 50, "utilisation floor 50 at the 80 % ceiling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			s.Utilization = tc.utilization
			s.Forecast.Off = true
			h := newHarness(t, s, asg(50, 50, 0))
			for i := range 12 * 20 { // 20 minutes
				smp := q(0, int64(lambda))
				smp.Deleted = reading(lambda, h.now)
				d := h.step(tick, smp)
				if i > 12 && i < 12*14 && *d.Floors.Utilization != tc.early {
					t.Fatalf("sample %d, %v seen: utilisation floor %d, want %d before a quarter hour; reasons %q",
						i, h.now.Sub(t0), *d.Floors.Utilization, tc.early, d.Reasons)
				}
				if i == 12*20-1 {
					if want := tc.afterward; *d.Floors.Utilization != want || !hasReason(d, tc.reason) {
						t.Fatalf("after 20 minutes: utilisation floor %d, want %d and a reason %q; reasons %q",
							*d.Floors.Utilization, want, tc.reason, d.Reasons)
					}
					if tc.utilization == 0 && *d.Floors.Utilization != int(math.Ceil(lambda/measuredCeilingTop)) {
						t.Fatalf("measured: floor %d, want %v at the top ceiling %v", *d.Floors.Utilization, lambda, measuredCeilingTop)
					}
					want := tc.utilization
					if want == 0 {
						want = measuredCeilingTop
					}
					if c := d.Floors.UtilizationCeiling; c == nil || math.Abs(*c-want) > 1e-9 {
						t.Fatalf("the decision's ceiling %v, want %v", ptrValue(c), want)
					}
				}
			}
		})
	}
}

// Arrivals whose bursts a follower of their estimate would have kept
// late with any headroom up to the bound's keep the bound: every 4 minutes
// a minute at 3 × the rate, 40 msg/s of 1 s work between, a start delay of
// a minute (the test's fleet is in service at once at the count the checker
// asks for: the replay's follower launches as the setting says).
func TestMeasuredCeilingKeepsTheBoundForBursts(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = time.Minute
	s.Forecast.Off = true
	s.Max = 1000
	h := newHarness(t, s, asg(50, 50, 0))
	total := 40.0 // messages visible or in flight
	for i := range 12 * 30 {
		rate := 40.0
		if i%48 < 12 {
			rate = 120
		}
		served := math.Min(total, float64(h.fleet.InService))
		total = math.Max(total+rate*5-served*5, 0)
		busy := math.Min(total, float64(h.fleet.InService))
		d := h.step(tick, q(int64(math.Round(total-busy)), int64(math.Round(busy))))
		if i == 12*30-1 && !hasReason(d, "at the 80 % ceiling") {
			t.Fatalf("bursts 3 × the rate: want the 80 %% bound; reasons %q", d.Reasons)
		}
	}
}
