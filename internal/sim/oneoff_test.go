package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
)

// oneOffSurges is days of 50 msg/s with perDay surges at random times, each
// 5 to 20 minutes at 3, 4 or 6 times the base: nothing recurs but by chance.
func oneOffSurges(t testing.TB, seed uint64, days, perDay int) Scenario {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 24))
	type surge struct{ at, end time.Duration }
	var ss []surge
	for d := range days {
		for range perDay {
			at := time.Duration(d)*24*time.Hour + time.Duration(r.IntN(24*60-30))*time.Minute
			ss = append(ss, surge{at, at + time.Duration(5+r.IntN(16))*time.Minute})
		}
	}
	slices.SortFunc(ss, func(a, b surge) int { return int(a.at - b.at) })
	factors := []float64{3, 4, 6}
	segs := []Segment{{0, 50}}
	for _, s := range ss {
		if s.at <= segs[len(segs)-1].At {
			continue // overlaps the one before
		}
		segs = append(segs, Segment{s.at, 50 * factors[r.IntN(len(factors))]}, Segment{s.end, 50})
	}
	sc := Scenario{Name: "one-off surges", Segments: segs, Length: time.Duration(days) * 24 * time.Hour}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// Where surges come once and never again, betting on their recurrence is
// cheap: over two days of one-off surges (the first with no record of
// recurrence to doubt a bet by) the model costs at most 2.5 % more
// worker-hours than the same model that never bets (a late cost so small
// that no pre-start pays), and holds the promise for as many messages.
func TestBetsOnOneOffSurgesAreCheap(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 3}
	if raceEnabled {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		sc := oneOffSurges(t, seed, 2, 4)
		run := func(lateCost float64) Result {
			rc := runConfig(t, ScenarioSteady, 50, sc.Length)
			rc.World.Scenario, rc.World.StartDelay, rc.World.MetricDelay = sc, 90*time.Second, time.Minute
			s := Settings(rc.World, rc.Interval, PolicyModel)
			s.Forecast.LateCost = lateCost
			rc.Settings = &s
			return mustRun(t, rc, PolicyModel)
		}
		bet, never := run(policy.DefaultLateCost), run(1e-9)
		t.Logf("seed %d: betting %.1f worker-hours, %.3f %%; never %.1f, %.3f %%", seed,
			bet.WorkerSeconds/3600, 100*bet.SLOAttainment, never.WorkerSeconds/3600, 100*never.SLOAttainment)
		if bet.WorkerSeconds > 1.025*never.WorkerSeconds {
			t.Errorf("seed %d: betting costs %.1f worker-hours, never betting %.1f: want at most 2.5 %% more",
				seed, bet.WorkerSeconds/3600, never.WorkerSeconds/3600)
		}
		if bet.SLOAttainment < never.SLOAttainment-0.0005 {
			t.Errorf("seed %d: betting holds the promise for %.3f %%, never betting %.3f %%",
				seed, 100*bet.SLOAttainment, 100*never.SLOAttainment)
		}
	}
}
