package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// randomCorridor is a corridor of n cells around a random walk of work,
// lo ≤ up, with the string's ends pinned at 0 and lo[n].
func randomCorridor(r *rand.Rand, n int) (lo, up []float64) {
	lo, up = make([]float64, n+1), make([]float64, n+1)
	a := 0.0
	for k := 1; k <= n; k++ {
		if r.IntN(3) == 0 {
			a += r.Float64() * 20
		}
		up[k] = a
		lo[k] = math.Max(0, a-r.Float64()*15)
	}
	return lo, up
}

// minMaxSlope is the least peak slope of any path from (0, 0) to (n, lo[n])
// within the corridor: by the corridor's geometry, the largest rise any
// path must make between two points, (lo[j] − up[i]) ÷ (j − i), over every
// pair i < j (with up[0] = 0 and lo[n] the end).
func minMaxSlope(lo, up []float64, h float64) float64 {
	n := len(lo) - 1
	upper := slices.Clone(up)
	upper[0], upper[n] = 0, lo[n]
	best := math.Inf(-1)
	for i := 0; i <= n; i++ {
		for j := i + 1; j <= n; j++ {
			best = math.Max(best, (lo[j]-upper[i])/(float64(j-i)*h))
		}
	}
	return best
}

// The taut string stays within the corridor, ends at the lower bound, and
// its peak slope is the least any path through the corridor can have,
// computed independently over every pair of points.
func TestTautStringIsFeasibleWithTheLeastPeak(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 5))
	for trial := range 300 {
		n := 1 + r.IntN(60)
		h := 0.5 + r.Float64()
		lo, up := randomCorridor(r, n)
		slopes := tautString(lo, up, h)
		if len(slopes) != n {
			t.Fatalf("trial %d: %d slopes for %d cells", trial, len(slopes), n)
		}
		s, peak := 0.0, math.Inf(-1)
		for k, v := range slopes {
			s += v * h
			peak = math.Max(peak, v)
			if s < lo[k+1]-1e-6 || s > up[k+1]+1e-6 {
				t.Fatalf("trial %d: S(%d) = %v outside [%v, %v]", trial, k+1, s, lo[k+1], up[k+1])
			}
		}
		if math.Abs(s-lo[n]) > 1e-6 {
			t.Errorf("trial %d: ends at %v, want %v", trial, s, lo[n])
		}
		if want := minMaxSlope(lo, up, h); math.Abs(peak-want) > 1e-6*math.Max(1, want) {
			t.Errorf("trial %d: peak slope %v, least possible %v", trial, peak, want)
		}
	}
}

// The taut string is the smoothest path: no other path through the
// corridor has a smaller sum of squared slopes. Checked against the
// corridor's own upper bound and against random paths within it.
func TestTautStringIsTheSmoothest(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	sumSq := func(path []float64) float64 {
		v := 0.0
		for k := 1; k < len(path); k++ {
			d := path[k] - path[k-1]
			v += d * d
		}
		return v
	}
	for trial := range 100 {
		n := 2 + r.IntN(40)
		lo, up := randomCorridor(r, n)
		slopes := tautString(lo, up, 1)
		str := make([]float64, n+1)
		for k, v := range slopes {
			str[k+1] = str[k] + v
		}
		for range 20 {
			// A random path within the corridor, ending at lo[n].
			p := make([]float64, n+1)
			for k := 1; k < n; k++ {
				p[k] = lo[k] + r.Float64()*(up[k]-lo[k])
			}
			p[n] = lo[n]
			if sumSq(p) < sumSq(str)-1e-6 {
				t.Fatalf("trial %d: a path with squared slopes %v beats the string's %v", trial, sumSq(p), sumSq(str))
			}
		}
	}
}

// fluidLateness runs the plan's fluid picture independently: a first in,
// first out queue of the grid's work served at the planned fleet's slots,
// and returns the most seconds any cell's work waits past its cell's
// start before it is all taken.
func fluidLateness(g workGrid, fleet []int32, conc int) float64 {
	type cell struct{ start, left float64 }
	var queue []cell
	worst := 0.0
	for k, w := range g.work {
		if w > 0 {
			queue = append(queue, cell{start: float64(k) * g.h, left: w})
		}
		capa := float64(fleet[k]) * float64(conc) * g.h
		for capa > 0 && len(queue) > 0 {
			take := math.Min(capa, queue[0].left)
			queue[0].left -= take
			capa -= take
			if queue[0].left <= 1e-9 {
				worst = math.Max(worst, float64(k+1)*g.h-queue[0].start)
				queue = queue[1:]
			}
		}
	}
	return worst
}

// In the fluid picture the planned fleet takes every cell's work within
// the deadline, a cell of slack included, and never exceeds the top.
func TestPlannedFleetTakesTheWorkWithinTheDeadline(t *testing.T) {
	t.Parallel()
	sc := csvScenario(t, "0,20\n300,200\n330,20\n900,20\n")
	for _, conc := range []int{1, 3} {
		cfg := Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, Concurrency: conc, Min: 1, Max: 500, Workers: 1, Seed: 4}
		g := newWorkGrid(cfg, 900, 0.5)
		for _, deadline := range []float64{0.5, 5, 10, 30} {
			fleet := roundFleet(g.plannedFleet(deadline, conc, 500), 0, 500)
			if late := fluidLateness(g, fleet, conc); late > deadline+g.h+1e-6 {
				t.Errorf("concurrency %d, deadline %v s: work taken %v s after its cell began", conc, deadline, late)
			}
			if m := slices.Max(fleet); m > 500 {
				t.Errorf("planned %d workers, more than the top", m)
			}
		}
		// A longer deadline is a smoother, smaller plan at the burst.
		short, long := slices.Max(g.plannedFleet(2, conc, 500)), slices.Max(g.plannedFleet(30, conc, 500))
		if short > 500 || long > 500 {
			t.Errorf("concurrency %d: plans of %v and %v workers, beyond the top", conc, short, long)
		}
		if long >= short {
			t.Errorf("concurrency %d: the burst's plan peaks at %.1f with 30 s, %.1f with 2 s", conc, long, short)
		}
	}
}

// The plan draws the very messages the world will see: their count and
// their work, with the service change in force when each arrives.
func TestPlanSeesTheWorldsMessages(t *testing.T) {
	t.Parallel()
	sc, _ := Builtin(ScenarioBursty, 30, time.Hour)
	cfg := Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond, Dist: DistLognormal, CV: 2}, Min: 1, Max: 1000, Workers: 1000,
		ServiceChanges: []ServiceChange{{At: 30 * time.Minute, Factor: 3}}, Seed: 8}
	g := newWorkGrid(cfg, 3600, 1)
	w := mustWorld(t, cfg)
	w.SetDesired(at(3600), 1000)
	var count int64
	var work float64
	for k := range g.work {
		count += int64(g.count[k])
		work += g.work[k]
	}
	if s := w.Scores(); s.Messages != count {
		t.Errorf("plan drew %d messages, the world saw %d", count, s.Messages)
	}
	// With a fleet that never makes a message wait, the world's busy
	// slot-seconds are the messages' work.
	if busy := w.busySeconds(); math.Abs(busy-work) > 1e-6*work {
		t.Errorf("plan's work %v slot-seconds, the world's %v", work, busy)
	}
	if g.scored != count {
		t.Errorf("plan scores %d of its %d messages without a warm-up", g.scored, count)
	}
	// With a warm-up, the plan scores the messages the world scores, and
	// the miss budget is the promise share's complement of them.
	cfg.WarmUp = 20 * time.Minute
	g = newWorkGrid(cfg, 3600, 1)
	w = mustWorld(t, cfg)
	w.SetDesired(at(3600), 1000)
	scored := w.Scores().Messages
	if g.scored != scored || scored >= count || scored == 0 {
		t.Errorf("plan scored %d messages after the warm-up, the world %d (of %d)", g.scored, scored, count)
	}
	if want := scored / 100; g.missBudget() != want {
		t.Errorf("miss budget %d for %d scored messages, want %d", g.missBudget(), scored, want)
	}
}

// planOf is a plan of one cell per second: n workers over [from, to).
func planOf(cells int, steps ...[3]int) []int32 {
	p := make([]int32, cells)
	for _, s := range steps {
		for k := s[0]; k < s[1]; k++ {
			p[k] = int32(s[2])
		}
	}
	return p
}

// With one start delay for every worker the oracle asks at every step for
// the most workers the plan needs from now until a start delay and an
// interval ahead: each worker launched one start delay before it is
// needed, kept through a lull shorter than a start delay, released at the
// start of a longer one.
func TestOracleFollowsThePlanOneStartDelayAhead(t *testing.T) {
	t.Parallel()
	// 4 workers, 20 from 300 s to 400 s, 4, 20 again from 440 s (a lull of
	// 40 s, shorter than the 60 s start delay) to 500 s, then 4, and 20
	// from 700 s (a lull of 200 s).
	plan := planOf(1000, [3]int{0, 1000, 4}, [3]int{300, 400, 20}, [3]int{440, 500, 20}, [3]int{700, 800, 20})
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,1\n"), Service: Service{Mean: 200 * time.Millisecond}, StartDelay: time.Minute, Min: 1, Max: 100, Workers: 4})
	o := newOracle(w, 5*time.Second, plan, 1)
	for _, tt := range []struct {
		s    float64
		want int
	}{
		{0, 4}, {234, 4}, {235, 20}, {300, 20}, {399, 20}, {420, 20}, {499, 20}, {500, 4}, {634, 4}, {635, 20}, {799, 20}, {800, 4},
	} {
		if got := o.size(oneWorker, at(tt.s)); got != tt.want {
			t.Errorf("at %v s: %d workers, want %d", tt.s, got, tt.want)
		}
	}
}

// oneWorker is an observation of an empty queue and a fleet of one.
var oneWorker = model.Observation{Fleet: model.Fleet{Desired: 1, InService: 1}}

// With start delays that vary, the oracle makes the q-th launch from now
// when its own delay d_q and an interval reach the time the fleet must
// exceed current + q − 1, and scales in only as far as every coming launch
// can restore in time: the largest need within d_i, less i − 1. Both are
// computed here from the delays the world will draw, for a plan that
// rises from low to high at 300 s and, for the scale-in, a fleet that the
// plan wants high until 100 s and again from 300 s.
func TestOracleLaunchesByEachStartDelay(t *testing.T) {
	t.Parallel()
	const low, high = 5, 30
	tests := []struct {
		name    string
		plan    []int32
		current int
		from    float64 // seconds; the rise is due at 300 s
	}{
		{"launching for a rise", planOf(1000, [3]int{0, 300, low}, [3]int{300, 1000, high}), low, 0},
		{"keeping a fleet for the next rise", planOf(1000, [3]int{0, 100, high}, [3]int{100, 300, low}, [3]int{300, 1000, high}), high, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := mustWorld(t, Config{Scenario: csvScenario(t, "0,1\n"), Service: Service{Mean: 200 * time.Millisecond},
				StartDelay: time.Minute, StartDelayCV: 1, Min: 1, Max: 1000, Workers: 1, Seed: 9})
			o := newOracle(w, 5*time.Second, tt.plan, 1)
			delays := w.startDelaysAhead(nil, high)
			needAt := func(s, d float64) int {
				if s+d+5 >= 300 {
					return high
				}
				return low
			}
			obs := model.Observation{Fleet: model.Fleet{InService: tt.current, Desired: tt.current}}
			changed := 0
			for s := tt.from + 5; s < 300; s += 5 {
				want := 0
				for q := 1; q <= high; q++ {
					if needAt(s, delays[q-1]) >= tt.current+q {
						want = tt.current + q
					}
				}
				if want == 0 {
					for i := 1; i <= high; i++ {
						want = max(want, needAt(s, delays[i-1])-i+1)
					}
				}
				got := o.size(obs, at(s))
				if got != want {
					t.Errorf("at %v s: size %d, want %d", s, got, want)
				}
				if got != tt.current {
					changed++
				}
			}
			if changed == 0 {
				t.Error("the fleet never changed: the case tests nothing")
			}
		})
	}
}

// fixed-best is the fewest workers that hold the promise share: one fewer
// does not.
func TestFixedBestIsTheFewestThatHold(t *testing.T) {
	t.Parallel()
	rc := RunConfig{
		World: Config{Scenario: burstyTrace(t, 9, 40*time.Minute), Service: Service{Mean: 300 * time.Millisecond},
			StartDelay: time.Minute, Min: 1, Max: 300, Workers: 2, LatencyTarget: 15 * time.Second, Seed: 3},
		Duration: 40 * time.Minute, Interval: 5 * time.Second,
	}
	best, err := RunPolicy(t.Context(), rc, PolicyFixedBest)
	if err != nil {
		t.Fatal(err)
	}
	if best.SLOAttainment < PromiseShare {
		t.Fatalf("fixed-best (%d workers) keeps %.3f", best.Workers, best.SLOAttainment)
	}
	for _, n := range []int{best.Workers, best.Workers - 1} {
		fixed := rc
		fixed.World.Workers = n
		r, err := RunPolicy(t.Context(), fixed, PolicyFixed)
		if err != nil {
			t.Fatal(err)
		}
		if holds := r.SLOAttainment >= PromiseShare; holds != (n == best.Workers) {
			t.Errorf("a fixed fleet of %d keeps %.4f (fixed-best: %d workers)", n, r.SLOAttainment, best.Workers)
		}
		if n == best.Workers && r.Scores != best.Scores {
			t.Errorf("fixed at %d scores %+v, fixed-best %+v: not the same messages", n, r.Scores, best.Scores)
		}
	}
}

// bursty is a random trace of bursts: quiet at 2 msg/s, with bursts of
// 20-80 s at 10-40× that, 1-6 minutes apart.
func burstyTrace(t *testing.T, seed uint64, d time.Duration) Scenario {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 77))
	var b strings.Builder
	for at := 0.0; at < d.Seconds(); {
		fmt.Fprintf(&b, "%d,2\n", int(at))
		at += 60 + r.Float64()*300
		if at >= d.Seconds() {
			break
		}
		fmt.Fprintf(&b, "%d,%d\n", int(at), 20+r.IntN(60))
		at += 20 + r.Float64()*60
	}
	fmt.Fprintf(&b, "%d,2\n", int(d.Seconds()))
	return csvScenario(t, b.String())
}
