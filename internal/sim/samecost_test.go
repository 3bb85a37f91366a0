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
