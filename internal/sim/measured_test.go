package sim

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
)

// The checker's model policy on a world whose downstream is a pool of 23
// connections, met a third of the way in when the step scenario triples the
// arrivals (150 msg/s would need some 38 workers at 200 ms): it finds the
// ceiling and, over the last hour, keeps within 15 % of the pool on
// average (probing a step above it now and then), where with learning off
// it pays for the maximum and holds the promise no better.
func TestModelSettlesAtTheDownstreamCeiling(t *testing.T) {
	t.Parallel()
	const pool = 23
	run := func(learn string) Result {
		rc := runConfig(t, ScenarioStep, 50, 2*time.Hour)
		rc.World.DownstreamPool, rc.World.MetricDelay, rc.Learn = pool, time.Minute, learn
		return mustRun(t, rc, PolicyModel)
	}
	act, off := run(policy.LearnAct), run(policy.LearnOff)
	sum, n := 0.0, 0
	for _, p := range act.Series {
		if p.T >= 3600 {
			sum += float64(p.Workers)
			n++
		}
	}
	if mean := sum / float64(n); mean > pool*1.15 || mean < pool*0.85 {
		t.Errorf("learning: %.1f workers on average over the last hour, want within 15 %% of the pool's %d", mean, pool)
	}
	if act.WorkerSeconds > 0.6*off.WorkerSeconds {
		t.Errorf("learning costs %.0f worker-seconds, learning off %.0f: want at most 60 %%", act.WorkerSeconds, off.WorkerSeconds)
	}
	if act.SLOAttainment < off.SLOAttainment-0.001 {
		t.Errorf("learning holds the promise for %.2f %%, learning off %.2f %%", 100*act.SLOAttainment, 100*off.SLOAttainment)
	}
}

// A deploy that doubles the service time an hour in: the measured service
// time follows it, and no message waits past the promise later than 10
// minutes after the change.
func TestLateMessagesStopAfterADeploy(t *testing.T) {
	t.Parallel()
	for _, sc := range []string{ScenarioSteady, ScenarioDiurnal, ScenarioBursty} {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			rc := runConfig(t, sc, 50, 2*time.Hour)
			rc.World.MetricDelay = time.Minute
			rc.World.ServiceChanges = []ServiceChange{{At: time.Hour, Factor: 2}}
			r := mustRun(t, rc, PolicyModel)
			last := -1.0
			for _, p := range r.Series {
				if p.T >= 3600 && p.OldestAge > rc.World.LatencyTarget.Seconds() {
					last = p.T
				}
			}
			if last-3600 > 600 {
				t.Errorf("a message waited past the promise %.0f s after the change, want within 600 s", last-3600)
			}
		})
	}
}

// poolRun is two hours of a built-in scenario at rate msg/s with the
// settings of the pool measurements: 250 ms lognormal service, a 90 s
// start delay, a 30 s promise, 1 to 3,000 workers from workers, CloudWatch's
// metrics a minute late, decisions every 5 s; no pool until the caller
// sets one.
func poolRun(t *testing.T, scenario string, rate float64, workers int, seed uint64) RunConfig {
	t.Helper()
	sc, err := Builtin(scenario, rate, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return RunConfig{
		World: Config{Start: t0, Scenario: sc, Service: Service{Dist: DistLognormal, Mean: 250 * time.Millisecond, CV: 1},
			Concurrency: 1, StartDelay: 90 * time.Second, Min: 1, Max: 3000, Workers: workers,
			LatencyTarget: 30 * time.Second, Seed: seed, MetricDelay: time.Minute},
		Duration: 2 * time.Hour, Interval: 5 * time.Second,
	}
}

// Surges meet a downstream pool of 120 connections at 250 ms (480 msg/s):
// no fleet past 120 adds completions. On cron (750 msg/s for 90 s every
// 20 minutes) each burst holds the fleet at the learned ceiling and
// probes past it; a probe that meets the same pool sets the ceiling back,
// and the workers past it are never taken for slower work. On spike
// (500 msg/s for 5 minutes) the first scale-out (16 → 488 workers) hardly
// moves the queue, and no more workers are bought on the arrivals that
// Little's law then reads from 488 busy slots. Either way the model pays
// at most 1.3× its own run without the pool (before: cron seed 3 paid
// 3.1×, spike 1.5×, buying 1,160 workers).
func TestSurgesMeetAPoolAtLittleCost(t *testing.T) {
	t.Parallel()
	for _, scenario := range []string{ScenarioCron, ScenarioSpike} {
		for seed := uint64(1); seed <= 3; seed++ {
			run := func(pool int) Result {
				rc := poolRun(t, scenario, 50, 17, seed)
				rc.World.DownstreamPool = pool
				return mustRun(t, rc, PolicyModel)
			}
			free, pooled := run(0), run(120)
			if pooled.WorkerSeconds > 1.3*free.WorkerSeconds {
				t.Errorf("%s, seed %d: %.0f worker-seconds with the pool, %.0f without: want at most 1.3×",
					scenario, seed, pooled.WorkerSeconds, free.WorkerSeconds)
			}
		}
	}
}

// A downstream pool that changes under saturated traffic: the step
// scenario at 600 msg/s from 40 minutes needs some 190 workers at 250 ms.
// A pool that grows from 120 to 240 connections an hour in is followed up
// by probes whose step doubles while they add throughput, each read from
// the samples as soon as its workers move the queue: the backlog the
// smaller pool built (some 230,000 messages, which 120 workers would never
// drain) is gone 28 minutes after the change (with one step of 20 % every
// 10 minutes it was not after 35), and the fleet never passes twice the
// new pool on the way. A pool that shrinks from 240 to 120 is found within 10
// minutes, and the fleet holds within 30 % of it while its backlog grows.
func TestAMovingPoolIsFollowed(t *testing.T) {
	t.Parallel()
	run := func(seed uint64, from, to int) Result {
		rc := poolRun(t, ScenarioStep, 200, 63, seed)
		rc.World.DownstreamPool, rc.World.PoolChanges = from, []PoolChange{{At: time.Hour, Connections: to}}
		return mustRun(t, rc, PolicyModel)
	}
	for seed := uint64(1); seed <= 3; seed++ {
		grown := run(seed, 120, 240)
		most := 0
		var left int64 = -1
		for _, p := range grown.Series {
			if p.T >= 3600 {
				most = max(most, p.Workers)
			}
			if left < 0 && p.T >= 3600+28*60 {
				left = p.Backlog
			}
		}
		if left > 1000 {
			t.Errorf("seed %d, pool 120 → 240: a backlog of %d 28 minutes after the pool grew", seed, left)
		}
		if most > 480 {
			t.Errorf("seed %d, pool 120 → 240: %d workers after the pool grew, past twice the pool", seed, most)
		}

		shrunk := run(seed, 240, 120)
		for _, p := range shrunk.Series {
			if p.T >= 3600+10*60 && p.Backlog > 1000 && p.Workers > 156 {
				t.Errorf("seed %d, pool 240 → 120: %d workers at %v with a backlog of %d, more than 30 %% past the pool",
					seed, p.Workers, time.Duration(p.T)*time.Second, p.Backlog)
				break
			}
		}
	}
}
