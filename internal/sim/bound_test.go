//go:build !race

package sim

// The oracle's bounds, run without the race detector (make test runs them
// so): every policy on every built-in scenario, and an exhaustive search.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// The oracle is a bound: on every built-in scenario and on random bursty
// traces it starts at least the promise share of the messages within the
// promise, at no more worker-seconds than the cheapest fixed fleet that
// does (fixed-best), and no policy beats it on both the share and the cost.
func TestOracleBoundsEveryPolicy(t *testing.T) {
	t.Parallel()
	type tcase struct {
		name string
		sc   Scenario
		rate float64
	}
	var cases []tcase
	for _, name := range BuiltinScenarios {
		sc, err := BuiltinSeeded(name, 20, time.Hour, 2)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, tcase{name, sc, 20})
	}
	for seed := range uint64(3) {
		cases = append(cases, tcase{fmt.Sprintf("random bursts %d", seed), burstyTrace(t, seed, time.Hour), 0})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := RunConfig{
				World: Config{Scenario: tc.sc, Service: Service{Mean: 200 * time.Millisecond, Dist: DistLognormal, CV: 1},
					StartDelay: time.Minute, Min: 1, Max: 200, Workers: 4, LatencyTarget: 10 * time.Second, Seed: 5,
					MetricsExact: true, WarmUp: 10 * time.Minute},
				Duration: time.Hour, Interval: 5 * time.Second,
			}
			res, err := Run(t.Context(), rc, Policies)
			if err != nil {
				t.Fatal(err)
			}
			by := map[string]Result{}
			for _, r := range res {
				by[r.Policy] = r
			}
			o, fb := by[PolicyOracle], by[PolicyFixedBest]
			if fb.SLOAttainment >= PromiseShare && o.SLOAttainment < PromiseShare {
				t.Errorf("oracle keeps %.2f %% within the promise, fixed-best (%d workers) %.2f %%", 100*o.SLOAttainment, fb.Workers, 100*fb.SLOAttainment)
			}
			if o.WorkerSeconds > fb.WorkerSeconds {
				t.Errorf("oracle %.0f worker-seconds, more than fixed-best's %.0f (%d workers)", o.WorkerSeconds, fb.WorkerSeconds, fb.Workers)
			}
			for _, r := range res {
				if r.Policy == PolicyOracle || r.Policy == PolicyOracleInstant {
					continue
				}
				if r.SLOAttainment > o.SLOAttainment && r.WorkerSeconds < o.WorkerSeconds {
					t.Errorf("%s beats the oracle: %.2f %% at %.0f worker-seconds, against %.2f %% at %.0f",
						r.Policy, 100*r.SLOAttainment, r.WorkerSeconds, 100*o.SLOAttainment, o.WorkerSeconds)
				}
			}
			if i := by[PolicyOracleInstant]; i.WorkerSeconds > o.WorkerSeconds*1.001 {
				t.Errorf("oracle-instant %.0f worker-seconds, more than the oracle's %.0f", i.WorkerSeconds, o.WorkerSeconds)
			}
		})
	}
}

// script is a fleet that sets the desired count at given steps.
type script struct {
	w     *World
	every time.Duration
	start time.Time
	n     []int
}

func (s script) Step(_ context.Context, now time.Time) error {
	i := int(now.Sub(s.start) / s.every)
	if i < len(s.n) && now.Sub(s.start)%s.every == 0 {
		s.w.SetDesired(now, s.n[i])
	}
	return nil
}

// On tiny instances the oracle costs within 30 % of the cheapest plan
// found by trying every plan of a grid of decisions 20 s apart (every
// fleet from 0 to the top at the start and at each decision), at no
// smaller share. The oracle decides every 5 s, as the simulator's default
// interval, which the search cannot afford. Measured: 1.10× on the first
// instance, 1.27× on the second. The gap is the fluid plan's: it smooths a
// burst over the deadline and rounds a fraction of a worker up to a whole
// one for as long as the smoothing lasts, where the best plan runs the
// whole worker for a shorter time; and it prices a launch only through
// the keep rule.
func TestOracleNearTheExhaustiveSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		trace      string
		top, steps int
		startDelay time.Duration
		latency    time.Duration
		within     float64
	}{
		{"two bursts of 2.6 msg/s, at most 3 workers", "0,0.3\n30,2.6\n55,0.3\n80,2.6\n95,0.3\n120,0.3\n", 3, 6, 20 * time.Second, 15 * time.Second, 1.3},
		{"two bursts of 2.2 msg/s and a quiet tail, at most 2 workers", "0,0.3\n30,2.2\n55,0.3\n80,2.2\n95,0.3\n160,0.3\n", 2, 8, 20 * time.Second, 15 * time.Second, 1.3},
	}
	every := 20 * time.Second
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := RunConfig{
				World: Config{Scenario: csvScenario(t, tt.trace), Service: Service{Mean: time.Second},
					StartDelay: tt.startDelay, Min: 0, Max: tt.top, Workers: 0, LatencyTarget: tt.latency, Seed: 6},
				Duration: time.Duration(tt.steps) * every, Interval: 5 * time.Second,
			}
			oracle, err := RunPolicy(t.Context(), rc, PolicyOracle)
			if err != nil {
				t.Fatal(err)
			}
			if oracle.SLOAttainment < PromiseShare {
				t.Fatalf("oracle keeps %.3f", oracle.SLOAttainment)
			}
			best, plans := math.Inf(1), 0
			var bestPlan []int
			n := make([]int, tt.steps)
			for code := range int(math.Pow(float64(tt.top+1), float64(tt.steps))) {
				c := code
				for i := range n {
					n[i], c = c%(tt.top+1), c/(tt.top+1)
				}
				cfg := rc.World
				cfg.Workers = n[0]
				res, _, err := rc.runWorld(t.Context(), "scripted", cfg, func(w *World) Autoscaler {
					return script{w: w, every: every, start: cfg.Start, n: slices.Clone(n)}
				}, -1)
				if err != nil {
					t.Fatal(err)
				}
				if res.SLOAttainment >= PromiseShare {
					plans++
					if res.WorkerSeconds < best {
						best, bestPlan = res.WorkerSeconds, slices.Clone(n)
					}
				}
			}
			if plans == 0 {
				t.Fatal("no plan holds the promise share: the instance tests nothing")
			}
			if oracle.WorkerSeconds > best*tt.within {
				t.Errorf("oracle %.0f worker-seconds, more than %.2f× the best of %d plans that hold, %.0f (%v)", oracle.WorkerSeconds, tt.within, plans, best, bestPlan)
			}
			t.Logf("oracle %.0f worker-seconds (%.2f %%): %.2f× the best of %d plans that hold, %.0f (%v)",
				oracle.WorkerSeconds, 100*oracle.SLOAttainment, oracle.WorkerSeconds/best, plans, best, bestPlan)
		})
	}
}
