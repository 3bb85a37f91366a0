package sim

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// A rhythm the forecast fits to bursts after they came must prove itself
// before the warm capacity gives way to it. docs/traces/burst-C2.csv is an
// hour of bursts 7 to 15 minutes apart; its first three onsets, 11 and 13
// minutes apart, fit a 12-minute rhythm. Trusted at once, that rhythm
// dropped the ~190 warm workers and pre-started ~140 for the burst it
// expected at minute 36; the burst came a minute after they had gone and
// met ~20, and the model kept 78 % of messages within the promise after
// the first quarter hour, where the same model with the forecast off,
// which keeps warm what the bursts need, kept 82 %. The forecast must cost
// it no more than a point (it keeps 93 % once the rhythm waits for a burst
// it announced).
func TestRhythmFittedByChanceKeepsTheWarmCapacity(t *testing.T) {
	t.Parallel()
	sc, err := LoadScenario(filepath.Join("..", "..", "docs", "traces", "burst-C2.csv"), 0, 0, 11)
	if err != nil {
		t.Fatal(err)
	}
	run := func(forecastOff bool) Result {
		rc := issueRun(sc, 11)
		rc.World.WarmUp = 15 * time.Minute
		rc.World.Workers = capacity.SteadyFleet(capacity.Steady{Rate: sc.MeanRate(rc.Duration), PerWorker: 1, PerServer: 1, Concurrency: 1,
			Utilization: model.DefaultUtilization, Latency: 30, Quantile: model.DefaultLatencyQuantile}).Workers
		s := Settings(rc.World, rc.Interval, policy.PolicyModel)
		s.Forecast.Off = forecastOff
		rc.Settings = &s
		return mustRun(t, rc, PolicyModel)
	}
	with, without := run(false), run(true)
	t.Logf("within the promise: %.2f %% with the forecast, %.2f %% without", 100*with.SLOAttainment, 100*without.SLOAttainment)
	if with.SLOAttainment < without.SLOAttainment-0.01 {
		t.Errorf("with the forecast %.2f %% of messages within the promise, without %.2f %%: the rhythm cost more than a point",
			100*with.SLOAttainment, 100*without.SLOAttainment)
	}
}

// A warm start learns a recurring job's rhythm from the history it reads,
// where no burst was announced: a rhythm the history matched often enough
// (a job every 20 minutes, six times in two hours) times the bursts from
// the first decision, as before the restart. Kept warm instead until a
// burst is announced live, the job's workers cost 9 % more over the five
// scored hours of cron; restarted at 2 h the model costs at most 3 % more
// than never restarted.
func TestRhythmFromAWarmStartTimesTheBursts(t *testing.T) {
	t.Parallel()
	run := func(restartAt time.Duration) Result {
		rc := runConfig(t, ScenarioCron, 50, 6*time.Hour)
		rc.World.MetricDelay, rc.World.WarmUp, rc.RestartAt = time.Minute, time.Hour, restartAt
		return mustRun(t, rc, PolicyModel)
	}
	never, restarted := run(0), run(2*time.Hour)
	t.Logf("worker-hours: %.1f never restarted, %.1f restarted at 2h", never.WorkerSeconds/3600, restarted.WorkerSeconds/3600)
	if restarted.WorkerSeconds > 1.03*never.WorkerSeconds || restarted.SLOAttainment < never.SLOAttainment-0.01 {
		t.Errorf("restarted at 2h: %.1f worker-hours, %.2f %% within the promise; never restarted: %.1f, %.2f %%",
			restarted.WorkerSeconds/3600, 100*restarted.SLOAttainment, never.WorkerSeconds/3600, 100*never.SLOAttainment)
	}
}
