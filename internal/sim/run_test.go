package sim

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

func runConfig(t testing.TB, scenario string, rate float64, d time.Duration) RunConfig {
	t.Helper()
	sc, err := Builtin(scenario, rate, d)
	if err != nil {
		t.Fatal(err)
	}
	return RunConfig{
		World: Config{Start: t0, Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, Concurrency: 1,
			StartDelay: time.Minute, Min: 1, Max: 200, Workers: int(math.Ceil(rate * 0.2 / 0.8)), LatencyTarget: 10 * time.Second, Seed: 1},
		Duration: d,
		Interval: 5 * time.Second,
	}
}

// issueRun is an hour of sc with the settings of the bursty-traffic
// measurements: 1 s lognormal service, a 60 s start delay, a 30 s promise,
// 1 to 3,000 workers, CloudWatch's metrics a minute late, decisions every
// 5 s.
func issueRun(sc Scenario, seed uint64) RunConfig {
	return RunConfig{
		World: Config{Start: t0, Scenario: sc, Service: Service{Dist: DistLognormal, Mean: time.Second, CV: 1}, Concurrency: 1,
			StartDelay: time.Minute, Min: 1, Max: 3000, LatencyTarget: 30 * time.Second, Seed: seed, MetricDelay: time.Minute},
		Duration: time.Hour, Interval: 5 * time.Second,
	}
}

// mustRun runs the named policy on rc, failing the test on an error.
func mustRun(t testing.TB, rc RunConfig, name string) Result {
	t.Helper()
	r, err := RunPolicy(context.Background(), rc, name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Every policy, the checker's through the controller, runs on the same
// arrivals and leaves a series point per interval plus the end.
func TestRunEveryPolicy(t *testing.T) {
	t.Parallel()
	rc := runConfig(t, ScenarioSpike, 10, 30*time.Minute)
	var progressed time.Duration
	rc.Progress = func(d time.Duration) { progressed += d }
	// All but fixed-warm-up, which needs a warm-up (warmup_test.go): the
	// run scores every minute of it.
	policies := slices.DeleteFunc(slices.Clone(Policies), func(p string) bool { return p == PolicyFixedWarmUp })
	res, err := Run(context.Background(), rc, policies)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(policies) {
		t.Fatalf("%d results, want %d", len(res), len(policies))
	}
	if want := time.Duration(len(policies)) * rc.Duration; progressed != want {
		t.Errorf("progress reported %v, want %v", progressed, want)
	}
	for i, r := range res {
		if r.Policy != policies[i] {
			t.Errorf("result %d: %q, want %q", i, r.Policy, policies[i])
		}
		if r.Messages != res[0].Messages {
			t.Errorf("%s: %d messages, %s had %d: the arrivals must not depend on the policy", r.Policy, r.Messages, res[0].Policy, res[0].Messages)
		}
		if n := len(r.Series); n != 360+1 || r.Series[n-1].T != 1800 {
			t.Errorf("%s: %d points ending at %v s, want 361 ending at 1800 s", r.Policy, n, r.Series[n-1].T)
		}
		// The cost is the area under the workers series (sampled every 5 s,
		// so within the changes' slop).
		area := 0.0
		for j := 1; j < len(r.Series); j++ {
			area += float64(r.Series[j-1].Workers) * (r.Series[j].T - r.Series[j-1].T)
		}
		if math.Abs(area-r.WorkerSeconds) > 0.05*r.WorkerSeconds+float64(r.ScalingActions)*5*200 {
			t.Errorf("%s: worker seconds %v, series area %v", r.Policy, r.WorkerSeconds, area)
		}
	}
	fixed := res[5]
	if fixed.Policy != PolicyFixed || fixed.ScalingActions != 0 || math.Abs(fixed.WorkerSeconds-3*1800) > 1e-6 {
		t.Errorf("fixed: %+v, want 3 workers for 1800 s and no action", fixed.Scores)
	}
}

// The checker's model policy on a steady queue holds the promise at no more
// than the fixed fleet sized for it (18 msg/s at 200 ms under 80 %
// utilisation: 5 workers, not on the edge of 4 or 6), and the oracle is no
// dearer than either, with exact metrics and with CloudWatch's. The world
// starts with an empty queue and an idle fleet, which no queue already
// flowing shows a checker that starts: until CloudWatch has a minute to
// read, the model's first arrival estimates come from that idle start
// (Little's law on nothing in flight), so with CloudWatch's metrics the
// first minutes are left out. With them the completions of each interval
// come from its in-flight samples (Little's law), a noisier count on a
// fleet of five than 60 s of exact deletions: the fleet touches a sixth
// worker now and then, which may cost up to 5 % more than the fixed fleet.
func TestModelHoldsASteadyPromise(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		exact  bool
		delay  time.Duration
		warmUp time.Duration
		slack  float64 // the model's cost may exceed the fixed fleet's by this share
	}{
		{"exact metrics", true, 0, 0, 0.001},
		{"CloudWatch's, a minute late", false, time.Minute, 5 * time.Minute, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := runConfig(t, ScenarioSteady, 18, 30*time.Minute)
			rc.World.MetricsExact, rc.World.MetricDelay, rc.World.WarmUp = tt.exact, tt.delay, tt.warmUp
			res, err := Run(context.Background(), rc, []string{PolicyModel, PolicyFixed, PolicyOracle})
			if err != nil {
				t.Fatal(err)
			}
			model, fixed, oracle := res[0], res[1], res[2]
			if model.SLOAttainment < 0.999 || oracle.SLOAttainment < PromiseShare {
				t.Errorf("slo: model %v, oracle %v; want >= 0.999 and >= %v", model.SLOAttainment, oracle.SLOAttainment, PromiseShare)
			}
			if model.WorkerSeconds > fixed.WorkerSeconds*(1+tt.slack) || oracle.WorkerSeconds > model.WorkerSeconds {
				t.Errorf("worker seconds: model %v, fixed %v, oracle %v", model.WorkerSeconds, fixed.WorkerSeconds, oracle.WorkerSeconds)
			}
		})
	}
}

func TestRunRejects(t *testing.T) {
	t.Parallel()
	rc := runConfig(t, ScenarioSteady, 50, time.Minute)
	tests := []struct {
		name   string
		change func(*RunConfig)
		policy string
	}{
		{"unknown policy", func(*RunConfig) {}, "hpa"},
		{"no interval", func(rc *RunConfig) { rc.Interval = 0 }, PolicyFixed},
		{"no duration", func(rc *RunConfig) { rc.Duration = 0 }, PolicyFixed},
		{"bad world", func(rc *RunConfig) { rc.World.Workers = 500 }, PolicyFixed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := rc
			tt.change(&c)
			if _, err := Run(context.Background(), c, []string{tt.policy}); err == nil {
				t.Error("Run succeeded")
			}
		})
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, runConfig(t, ScenarioSteady, 50, time.Hour), []string{PolicyFixed}); err == nil {
		t.Error("a cancelled run succeeded")
	}
}

// BenchmarkSimulatedHours is the simulator's speed at 100 msg/s on a fixed
// fleet of 25 (80 % utilisation): simulated hours per wall-clock second.
func BenchmarkSimulatedHours(b *testing.B) {
	sc, err := Builtin(ScenarioSteady, 100, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	start := time.Now()
	for i := 0; b.Loop(); i++ {
		w, err := NewWorld(Config{Start: t0, Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
			Min: 25, Max: 25, Workers: 25, LatencyTarget: 10 * time.Second, Seed: uint64(i)})
		if err != nil {
			b.Fatal(err)
		}
		for s := 5.0; s <= 3600; s += 5 {
			w.Snapshot(at(s))
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sim-hours/s")
}

// BenchmarkModelPolicyHour is one simulated hour at 100 msg/s driven by the
// checker's model policy through the controller every 5 s.
func BenchmarkModelPolicyHour(b *testing.B) {
	sc, err := Builtin(ScenarioDiurnal, 100, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	rc := RunConfig{World: Config{Start: t0, Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
		StartDelay: time.Minute, Min: 1, Max: 200, Workers: 25, LatencyTarget: 10 * time.Second, Seed: 1},
		Duration: time.Hour, Interval: 5 * time.Second}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := RunPolicy(context.Background(), rc, PolicyModel); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sim-hours/s")
}

// BenchmarkPeersHour is one simulated hour at 100 msg/s of the bursty
// scenario for each peer and both oracles, every 5 s.
func BenchmarkPeersHour(b *testing.B) {
	sc, err := Builtin(ScenarioBursty, 100, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	rc := RunConfig{World: Config{Start: t0, Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
		StartDelay: time.Minute, Min: 1, Max: 200, Workers: 25, LatencyTarget: 10 * time.Second, Seed: 1},
		Duration: time.Hour, Interval: 5 * time.Second}
	peers := []string{PolicyKEDA, PolicyTargetTracking, PolicyStep, PolicyOracle, PolicyOracleInstant}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if _, err := Run(context.Background(), rc, peers); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(peers))/time.Since(start).Seconds(), "sim-hours/s")
}
