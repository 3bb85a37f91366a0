package sim

import (
	"math"
	"testing"
	"time"
)

// fixed-same-cost is the most workers, never scaled, that cost no more than
// the model over the scored window: n × the scored seconds is at most the
// model's worker-seconds, n + 1 × them more; its scores are the fixed
// policy's at n over the same messages. With a warm-up only the window
// after it counts, on both sides.
func TestFixedSameCostIsTheFleetAtTheModelsBill(t *testing.T) {
	t.Parallel()
	for _, warmUp := range []time.Duration{0, 10 * time.Minute} {
		rc := runConfig(t, ScenarioSpike, 20, 40*time.Minute)
		rc.World.WarmUp = warmUp
		m := mustRun(t, rc, PolicyModel)
		same := mustRun(t, rc, PolicyFixedSameCost)
		scored := (rc.Duration - warmUp).Seconds()
		n := same.Workers
		if n < rc.World.Min || float64(n)*scored > m.WorkerSeconds+1e-6 || float64(n+1)*scored <= m.WorkerSeconds {
			t.Fatalf("warm-up %v: %d workers over %v s for a model that cost %v worker-seconds: want the most that cost no more",
				warmUp, n, scored, m.WorkerSeconds)
		}
		if math.Abs(same.WorkerSeconds-float64(n)*scored) > 1e-6 {
			t.Errorf("warm-up %v: %d workers cost %v worker-seconds, want %v", warmUp, n, same.WorkerSeconds, float64(n)*scored)
		}
		fixed := rc
		fixed.World.Workers = n
		f := mustRun(t, fixed, PolicyFixed)
		if same.SLOAttainment != f.SLOAttainment || same.Messages != f.Messages || same.Policy != PolicyFixedSameCost {
			t.Errorf("warm-up %v: %s keeps %v of %d messages, the fixed fleet of %d %v of %d",
				warmUp, same.Policy, same.SLOAttainment, same.Messages, n, f.SLOAttainment, f.Messages)
		}
	}
}

// fixed-same-share is the fewest workers, never scaled, that keep at least
// the model's share of the scored messages within the promise: the fixed
// policy at n keeps as many as the model, at n − 1 fewer. Checked against
// runs of the fixed policy, not the search: on a spike met cold and after a
// warm-up (where that fleet costs more than the model) and on irregular
// bursts (where it costs less).
func TestFixedSameShareIsTheCheapestFleetThatKeepsTheModelsShare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		scenario string
		warmUp   time.Duration
	}{
		{"spike met cold", ScenarioSpike, 0},
		{"spike after a warm-up", ScenarioSpike, 10 * time.Minute},
		{"irregular after a warm-up", ScenarioIrregular, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rc := runConfig(t, tc.scenario, 20, 40*time.Minute)
			rc.World.WarmUp = tc.warmUp
			m := mustRun(t, rc, PolicyModel)
			same := mustRun(t, rc, PolicyFixedSameShare)
			n := same.Workers
			fixed := func(n int) Result {
				f := rc
				f.World.Workers = n
				return mustRun(t, f, PolicyFixed)
			}
			at := fixed(n)
			if same.Policy != PolicyFixedSameShare || same.SLOAttainment != at.SLOAttainment || same.WorkerSeconds != at.WorkerSeconds {
				t.Errorf("%s is not the fixed fleet of %d: %+v against %+v", same.Policy, n, same.Scores, at.Scores)
			}
			if at.SLOAttainment < m.SLOAttainment {
				t.Errorf("%d fixed workers keep %.4f, less than the model's %.4f", n, at.SLOAttainment, m.SLOAttainment)
			}
			if n > rc.World.Min {
				if fewer := fixed(n - 1); fewer.SLOAttainment >= m.SLOAttainment {
					t.Errorf("%d fixed workers keep %.4f, no less than the model's %.4f: %d is not the fewest", n-1, fewer.SLOAttainment, m.SLOAttainment, n)
				}
			}
			t.Logf("model %.2f %% at %.1f worker-hours; %d fixed workers %.2f %% at %.1f",
				100*m.SLOAttainment, m.WorkerSeconds/3600, n, 100*at.SLOAttainment, at.WorkerSeconds/3600)
		})
	}
}
