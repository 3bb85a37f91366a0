package main

import (
	"testing"
)

// A flash crowd of steps a minute each (docs/traces/flash-steps.csv: 12 →
// 148 → 252 → 566 → 458 → 300 → 100 → 12 msg/s from minute 28, 1 s of
// lognormal work, a 60 s start delay, a 30 s promise). A policy that
// learns of the first step when it comes leaves most of that step's first
// half-minute late (the 15 workers there serve 15 of its 148 msg/s until
// new ones start); the model keeps 92–95 %: its fleet grows from the
// interval the backlog starts to grow, no learned burst holds it, no
// minute of 15 workers reads as a stuck fleet of 439, and nothing is
// released at the top of a step. Three of these cases were under 91 %
// while one of those held it (84.8 %, 85.6 %, 90.7 %).
func TestFlashCrowdSteps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ interval, seed string }{{"1s", "3"}, {"1s", "4"}, {"5s", "1"}, {"5s", "5"}, {"10s", "1"}} {
		t.Run(tc.interval+"/"+tc.seed, func(t *testing.T) {
			t.Parallel()
			res := simJSON(t, "--scenario", "../../docs/traces/flash-steps.csv", "--service-dist", "lognormal",
				"--service-time", "1s", "--start-delay", "1m", "--latency-target", "30s", "--min", "1", "--max", "3000",
				"--warm-up", "15m", "--interval", tc.interval, "--seed", tc.seed, "--policy", "model")
			if len(res) != 1 {
				t.Fatalf("%d results", len(res))
			}
			if share := res[0].SLOAttainment; share < 0.915 {
				t.Errorf("%s interval, seed %s: %.2f %% within the promise, want at least 91.5 %%", tc.interval, tc.seed, 100*share)
			}
		})
	}
}
