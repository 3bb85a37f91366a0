package sim

import (
	"errors"
	"math"
	"testing"
	"time"
)

// warmUpRun is a 40-minute run of a bursty trace, scored after its first
// 15 minutes.
func warmUpRun(t *testing.T, sc Scenario) RunConfig {
	t.Helper()
	return RunConfig{
		World: Config{Scenario: sc, Service: Service{Mean: 300 * time.Millisecond},
			StartDelay: time.Minute, Min: 1, Max: 300, Workers: 2, LatencyTarget: 15 * time.Second, Seed: 3,
			WarmUp: 15 * time.Minute},
		Duration: 40 * time.Minute, Interval: 5 * time.Second,
	}
}

// fixed-warm-up's fleet is the fewest fixed workers that start 99 % of the
// warm-up's messages within the promise, found here by trying every fleet
// from one worker up on runs of the warm-up alone (not by the policy's
// gallop and bisection), and that fleet, run over the whole run, scores
// as a fixed fleet of its size does.
func TestFixedWarmUpIsTheFewestThatHoldOverTheWarmUp(t *testing.T) {
	t.Parallel()
	rc := warmUpRun(t, burstyTrace(t, 9, 40*time.Minute))
	got, err := RunPolicy(t.Context(), rc, PolicyFixedWarmUp)
	if err != nil {
		t.Fatal(err)
	}

	seen := rc
	seen.Duration, seen.World.WarmUp = rc.World.WarmUp, 0
	want := 0
	for n := rc.World.Min; n <= rc.World.Max; n++ {
		seen.World.Workers = n
		r, err := RunPolicy(t.Context(), seen, PolicyFixed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Messages == 0 {
			t.Fatal("no messages in the warm-up: the case tests nothing")
		}
		if r.SLOAttainment >= PromiseShare {
			want = n
			break
		}
	}
	if want <= rc.World.Min {
		t.Fatalf("the fewest fleet that holds over the warm-up is %d, the minimum: the case tests nothing", want)
	}
	if got.Workers != want {
		t.Errorf("fixed-warm-up: %d workers, want %d (the fewest that keep 99 %% of the warm-up's messages)", got.Workers, want)
	}

	full := rc
	full.World.Workers = want
	fixed, err := RunPolicy(t.Context(), full, PolicyFixed)
	if err != nil {
		t.Fatal(err)
	}
	if got.Scores != fixed.Scores {
		t.Errorf("fixed-warm-up scores %+v, a fixed fleet of %d %+v: not the same run", got.Scores, want, fixed.Scores)
	}
	// Scored after the warm-up, a fleet that never moves costs its size ×
	// the scored seconds and launches nothing.
	if ws := float64(want) * (rc.Duration - rc.World.WarmUp).Seconds(); math.Abs(got.WorkerSeconds-ws) > 1e-6 || got.Launches != 0 {
		t.Errorf("fixed-warm-up: %v worker-seconds and %d launches, want %v and none", got.WorkerSeconds, got.Launches, ws)
	}
}

// Its size comes from the warm-up alone: traffic after it changes its
// score, never its size. A warm-up with no message at all sizes it at the
// minimum, by hand: every one of no messages was within the promise. A
// warm-up that no fleet within the bounds holds gives the largest.
func TestFixedWarmUpSizesFromTheWarmUpAlone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rows  [2]string // two traces, the same over the warm-up
		min   int
		max   int
		fleet int // 0: the same for both, not known by hand
	}{
		{name: "quiet warm-up", rows: [2]string{"0,0\n900,5\n2400,5\n", "0,0\n900,200\n2400,200\n"}, min: 2, max: 300, fleet: 2},
		{name: "quiet warm-up, no minimum", rows: [2]string{"0,0\n900,5\n2400,5\n", "0,0\n900,50\n2400,50\n"}, min: 0, max: 300, fleet: 0},
		{name: "busy warm-up", rows: [2]string{"0,20\n900,0\n2400,0\n", "0,20\n900,100\n2400,100\n"}},
		{name: "warm-up no fleet holds", rows: [2]string{"0,400\n900,1\n2400,1\n", "0,400\n900,0\n2400,0\n"}, min: 1, max: 20, fleet: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var res [2]Result
			for i, rows := range tt.rows {
				rc := warmUpRun(t, csvScenario(t, rows))
				if tt.max > 0 {
					rc.World.Min, rc.World.Max, rc.World.Workers = tt.min, tt.max, tt.min
				}
				r, err := RunPolicy(t.Context(), rc, PolicyFixedWarmUp)
				if err != nil {
					t.Fatal(err)
				}
				res[i] = r
			}
			if res[0].Workers != res[1].Workers {
				t.Errorf("%d workers and %d: the traffic after the warm-up changed the fleet", res[0].Workers, res[1].Workers)
			}
			if tt.max > 0 && res[0].Workers != tt.fleet {
				t.Errorf("%d workers, want %d", res[0].Workers, tt.fleet)
			}
			if res[0].Scores == res[1].Scores {
				t.Error("the same scores for different traffic after the warm-up: the case tests nothing")
			}
		})
	}
}

// Without a warm-up it has seen nothing to size from, and says so.
func TestFixedWarmUpNeedsAWarmUp(t *testing.T) {
	t.Parallel()
	rc := warmUpRun(t, burstyTrace(t, 9, 40*time.Minute))
	rc.World.WarmUp = 0
	if _, err := RunPolicy(t.Context(), rc, PolicyFixedWarmUp); !errors.Is(err, ErrNoWarmUp) {
		t.Errorf("error %v, want ErrNoWarmUp", err)
	}
}
