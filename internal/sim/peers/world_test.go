package peers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/sim"
	"github.com/queuechecker/queue-checker/internal/sim/peers"
)

// These tests drive the peers on the simulator's world, as a comparison
// runs them.

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func mustWorld(t *testing.T, cfg sim.Config) *sim.World {
	t.Helper()
	cfg.Start = t0
	w, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// csvScenario is a scenario from rows of "t,rate".
func csvScenario(t *testing.T, rows string) sim.Scenario {
	t.Helper()
	sc, err := sim.ParseCSV("test", strings.NewReader("t_seconds,arrivals_per_second\n"+rows))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func observe(t *testing.T, w *sim.World, s float64) model.Observation {
	t.Helper()
	obs, err := w.Observe(context.Background(), at(s))
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 {
		t.Fatalf("observations = %d, want 1", len(obs))
	}
	return obs[0]
}

// settings are what a peer's user knows of a world: its promise, service
// time and concurrency.
func settings(cfg sim.Config) peers.Settings {
	return peers.Settings{Latency: cfg.LatencyTarget, ServiceTime: cfg.SettingsServiceTime(), Concurrency: max(cfg.Concurrency, 1)}
}

// KEDA reads the queue every polling interval; the HPA syncs every 15 s on
// the value read last, so a backlog that appears just after a poll is
// acted on at the next poll.
func TestKEDAPollsEvery30Seconds(t *testing.T) {
	t.Parallel()
	// 1,000 messages arrive at once at 31 s; nothing is served (1-hour service).
	cfg := sim.Config{Scenario: csvScenario(t, "0,0\n31,100000\n31.01,0\n"), Service: sim.Service{Dist: sim.DistConstant, Mean: time.Hour},
		Min: 1, Max: 1000, Workers: 1, Seed: 1, LatencyTarget: 10 * time.Second}
	w := mustWorld(t, cfg)
	k := peers.NewKEDA(w, settings(cfg), peers.Defaults()) // queueLength 10 ÷ 3600 × 1: tiny, so any backlog scales out
	ctx := context.Background()
	for s := 0.0; s <= 45; s += 5 {
		if err := k.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
		desired := observe(t, w, s).Fleet.Desired
		// Polls at 0 and 30 s see nothing; the next, at 60 s, sees the backlog.
		if desired != 1 {
			t.Fatalf("desired at %v s = %d, want 1: the backlog arrived after the last poll", s, desired)
		}
	}
	for s := 50.0; s <= 60; s += 5 {
		if err := k.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
	}
	if desired := observe(t, w, 60).Fleet.Desired; desired <= 1 {
		t.Errorf("desired at 60 s = %d, want a scale-out after the poll at 60 s", desired)
	}
}

// The metric reaches the alarms a lag after its minute: a backlog that
// appears in minute 0 is first read at 2 minutes with a 1-minute lag, and
// the third breaching datapoint (minute 2) at 4 minutes.
func TestTargetTrackingSeesMetricsLate(t *testing.T) {
	t.Parallel()
	cfg := sim.Config{Scenario: csvScenario(t, "0,1000\n"), Service: sim.Service{Dist: sim.DistConstant, Mean: time.Hour},
		Min: 1, Max: 10000, Workers: 1, Seed: 1, LatencyTarget: 10 * time.Second}
	w := mustWorld(t, cfg)
	p := peers.NewTargetTracking(w, settings(cfg), peers.Defaults())
	ctx := context.Background()
	first := -1.0
	for s := 0.0; s <= 600; s += 5 {
		if err := p.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
		if first < 0 && observe(t, w, s).Fleet.Desired > 1 {
			first = s
		}
	}
	if first != 240 {
		t.Errorf("first scale-out at %v s, want 240 s", first)
	}
}

// Step scaling evaluates 1-minute datapoints and waits out its 300 s
// cooldown: with a backlog that only grows, the fleet gains two workers
// every 5 minutes.
func TestStepScalingActsOncePerPeriod(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, sim.Config{Scenario: csvScenario(t, "0,100\n"), Service: sim.Service{Dist: sim.DistConstant, Mean: time.Hour},
		Min: 1, Max: 100, Workers: 1, Seed: 1})
	p := peers.NewStepScaling(w, peers.Defaults())
	ctx := context.Background()
	for s := 0.0; s <= 1800; s += 5 {
		if err := p.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
	}
	// The first minute's average (≈ 2,750 messages) is past 1,500: +2 at
	// 60 s, then +2 at 360, 660, 960, 1260 and 1560 s once each cooldown
	// has passed: 1 + 12.
	if got := observe(t, w, 1800).Fleet.Desired; got != 13 {
		t.Errorf("desired after 30 minutes = %d, want 13", got)
	}
}
