package policy

import (
	"math"
	"testing"
)

// A surge: 15 workers at 1 msg/s each, 10 msg/s arriving, then 110 msg/s.
// The first interval (empty queue at its start) is not saturated; the second
// starts with 495 visible messages, more than the 15 slots complete in 5 s
// (75), so every slot is busy throughout and the arrivals it measures are
// exact: the decision uses them, not the smoothed estimate that has barely
// moved.
func TestSurgeOverSaturatedIntervals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		v1, v2     int64 // visible at the two samples after the steady ones
		wantSurge  bool
		wantArrive float64 // when surging
	}{
		// m1 = (495+15−10)/5 + min(10, 15)·1 = 110; m2 = (970−495)/5 + 15 = 110.
		{"two intervals at 110 msg/s", 495, 970, true, 110},
		// m2 = (1045−495)/5 + 15 = 125; the lower of the two, 110, is the surge.
		{"the lower of the two intervals", 495, 1045, true, 110},
		// A dump of 495 messages in one interval, then 10 msg/s against 15
		// busy slots: m2 = (470−495)/5 + 15 = 10. Not a rate.
		{"a one-interval dump is not a surge", 495, 470, false, 0},
		// 70 visible at the start of the second interval: fewer than the 75
		// the slots complete in it, so it is not saturated.
		{"not saturated", 70, 600, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, base(), asg(15, 15, 0))
			h.follow = false
			h.step(0, q(0, 10))
			h.settle(q(0, 10)) // λ = 10: Δtotal 0, (10+10)/2 in flight at 1 msg/s
			// The smoothed estimate, by Little's law without a deleted count
			// (busy slots are the mean in-flight, at most 15), each
			// observation held to the dump bound over the larger of the last
			// observation and the estimate.
			obs1 := float64(tc.v1+15-10)/5 + 12.5
			lambda := ewma(10, math.Min(obs1, dumpBound(10, 12.5, 5, 2.5)), 5, 60)
			h.step(tick, q(tc.v1, 15))
			obs2 := float64(tc.v2-tc.v1)/5 + 15
			ref := math.Max(lambda, obs1)
			lambda = ewma(lambda, math.Min(obs2, dumpBound(ref, 15, 5, 0)), 5, 60)
			d := h.step(tick, q(tc.v2, 15))
			surged := hasReason(d, "arrivals surging")
			if surged != tc.wantSurge {
				t.Fatalf("surging %v, want %v; reasons %q", surged, tc.wantSurge, d.Reasons)
			}
			want := lambda
			if tc.wantSurge {
				want = tc.wantArrive
			}
			if d.ArrivalRate == nil || math.Abs(*d.ArrivalRate-want) > 1e-9 {
				t.Fatalf("arrival rate %v, want %v", d.ArrivalRate, want)
			}
			if tc.wantSurge {
				// The latency floor sizes for the surge: 110 msg/s plus the
				// visible messages started within 30 s, at 1 msg/s per worker.
				n := int(math.Ceil(want + float64(tc.v2)/30))
				if *d.Floors.Drain != n || d.RecommendedWorkers != n {
					t.Fatalf("drain floor %d, recommended %d, want %d; reasons %q", *d.Floors.Drain, d.RecommendedWorkers, n, d.Reasons)
				}
			}
		})
	}
}

// The surge must stand three standard deviations of counting noise above the
// estimate, σ = √((m + completions)/Δt): a queue held at 100 visible by 15
// busy slots (15 msg/s), then two intervals growing at m − 15 msg/s. Just
// below the threshold the decision keeps the smoothed estimate; just above,
// it takes m.
func TestSurgeNeedsThreeSigmas(t *testing.T) {
	t.Parallel()
	// The smoothed estimate after the two intervals, and the surge's margin
	// over it, by the documented formulas.
	// The first growing interval is held to the dump bound over 15 (15
	// completions); the second is within the bound of the first.
	lambdaAfter := func(m float64) float64 {
		return ewma(ewma(15, math.Min(m, dumpBound(15, 15, 5, 0)), 5, 60), m, 5, 60)
	}
	margin := func(m float64) float64 { return m - 3*math.Sqrt((m+15)/5) - lambdaAfter(m) }
	// The margin grows with m: bisect for its zero.
	lo, hi := 15.0, 100.0
	for range 60 {
		if mid := (lo + hi) / 2; margin(mid) > 0 {
			hi = mid
		} else {
			lo = mid
		}
	}
	// Visible counts are whole: m moves in steps of 1/5 msg/s.
	below := math.Floor(lo*5)/5 - 0.2
	above := math.Ceil(hi*5)/5 + 0.2
	for _, tc := range []struct {
		m    float64
		want bool
	}{{below, false}, {above, true}} {
		h := newHarness(t, base(), asg(15, 15, 0))
		h.follow = false
		h.step(0, q(100, 15))
		h.settle(q(100, 15)) // λ = 15; 100 visible ≥ the 75 the slots complete in 5 s
		grow := int64(math.Round((tc.m - 15) * 5))
		h.step(tick, q(100+grow, 15)) // the previous interval's m is 15: no surge yet
		d := h.step(tick, q(100+2*grow, 15))
		if got := hasReason(d, "arrivals surging"); got != tc.want {
			t.Errorf("m %v: surging %v, want %v (threshold at %v); reasons %q", tc.m, got, tc.want, hi, d.Reasons)
		}
		want := lambdaAfter(tc.m)
		if tc.want {
			want = tc.m
		}
		if math.Abs(*d.ArrivalRate-want) > 1e-6 {
			t.Errorf("m %v: arrival rate %v, want %v", tc.m, *d.ArrivalRate, want)
		}
	}
}
