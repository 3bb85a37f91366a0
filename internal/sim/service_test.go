package sim

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim/peers"
)

// completionRate is the completions per second of w between from and to
// seconds, counted as arrivals less backlog at each end (w is advanced).
func completionRate(w *World, from, to float64) float64 {
	done := func(s float64) float64 {
		p := w.Snapshot(at(s))
		return float64(w.Scores().Messages - p.Backlog)
	}
	a := done(from)
	return (done(to) - a) / (to - from)
}

// A fixed fleet on a queue that never empties completes slots ÷ service
// time a second, unless a downstream pool of N connections is smaller
// than the slots: then N ÷ service time, however many workers run.
func TestDownstreamPoolCapsCompletions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		pool    int
		workers int
		svc     Service
		arrive  float64 // msg/s, twice what the fleet could do
		want    float64 // completions per second
	}{
		{"no pool", 0, 20, Service{Mean: 200 * time.Millisecond}, 200, 100},
		{"a pool above the fleet", 50, 20, Service{Mean: 200 * time.Millisecond}, 200, 100},
		{"a pool of 10 under 40 workers, 1 s each", 10, 40, Service{Dist: DistConstant, Mean: time.Second}, 80, 10},
		{"a pool of 25 under 100 workers, 200 ms each", 25, 100, Service{Mean: 200 * time.Millisecond}, 1000, 125},
		{"lognormal", 30, 90, Service{Dist: DistLognormal, Mean: 500 * time.Millisecond, CV: 2}, 360, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, _ := Builtin(ScenarioSteady, tt.arrive, time.Hour)
			w := mustWorld(t, Config{Scenario: sc, Service: tt.svc, DownstreamPool: tt.pool,
				Min: tt.workers, Max: tt.workers, Workers: tt.workers, Seed: 4})
			if got := completionRate(w, 300, 1500); math.Abs(got-tt.want) > 0.03*tt.want {
				t.Errorf("completions %.2f/s, want %v/s", got, tt.want)
			}
		})
	}
}

// A service change multiplies the service time of the messages taken from
// its time on: on a fleet of 10 that never runs out of messages, the mean
// service time is 10 ÷ completions per second.
func TestServiceChangesScaleTheServiceTime(t *testing.T) {
	t.Parallel()
	type span struct {
		from, to float64 // seconds
		mean     float64 // seconds of service
	}
	tests := []struct {
		name    string
		changes []ServiceChange
		spans   []span
	}{
		{"none", nil, []span{{300, 3500, 1}, {3900, 7000, 1}}},
		{"a deploy doubles it", []ServiceChange{{time.Hour, 2}},
			[]span{{300, 3500, 1}, {3900, 7000, 2}, {7500, 10500, 2}}},
		{"and another undoes it", []ServiceChange{{time.Hour, 2}, {2 * time.Hour, 1}},
			[]span{{300, 3500, 1}, {3900, 7000, 2}, {7500, 10500, 1}}},
		{"given out of order", []ServiceChange{{2 * time.Hour, 1}, {time.Hour, 2}},
			[]span{{300, 3500, 1}, {3900, 7000, 2}, {7500, 10500, 1}}},
		{"each relative to the drawn time", []ServiceChange{{time.Hour, 2}, {2 * time.Hour, 0.5}},
			[]span{{3900, 7000, 2}, {7500, 10500, 0.5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, _ := Builtin(ScenarioSteady, 40, time.Hour)
			w := mustWorld(t, Config{Scenario: sc, Service: Service{Mean: time.Second}, ServiceChanges: tt.changes,
				Min: 10, Max: 10, Workers: 10, Seed: 6})
			for _, sp := range tt.spans {
				if got := 10 / completionRate(w, sp.from, sp.to); math.Abs(got-sp.mean) > 0.03*sp.mean {
					t.Errorf("%v to %v s: mean service %.3f s, want %v s", sp.from, sp.to, got, sp.mean)
				}
			}
		})
	}
}

// launchDelays is the start delay of each worker still starting, in launch
// order, from the world's scheduled starts.
func launchDelays(w *World) []float64 {
	starts := map[int]float64{}
	for _, e := range w.events {
		if e.kind == evStart {
			starts[e.worker] = e.at
		}
	}
	var out []float64
	for id, wk := range w.workers {
		if at, ok := starts[id]; ok {
			out = append(out, at-wk.launched)
		}
	}
	return out
}

// Start delays are lognormal around StartDelay with the coefficient of
// variation asked for: the mean, the spread and the median (e^µ, the mean ÷
// √(1 + cv²)) of 20,000 launches match, and the fleet's pending workers at
// the median are about half.
func TestStartDelaySpread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cv   float64
	}{
		{"no spread", 0},
		{"cv 0.5", 0.5},
		{"cv 1", 1},
	}
	const n = 20000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), StartDelay: time.Minute, StartDelayCV: tt.cv,
				Min: 0, Max: n, Workers: 0, Seed: 8})
			w.SetDesired(t0, n)
			ds := launchDelays(w)
			if len(ds) != n {
				t.Fatalf("%d starts scheduled, want %d", len(ds), n)
			}
			sum, sq := 0.0, 0.0
			for _, d := range ds {
				sum += d
				sq += d * d
			}
			mean := sum / n
			sd := math.Sqrt(math.Max(0, sq/n-mean*mean))
			slices.Sort(ds)
			median := ds[n/2]
			wantMedian := 60 / math.Sqrt(1+tt.cv*tt.cv)
			if math.Abs(mean-60) > 0.03*60 || math.Abs(sd-tt.cv*60) > 0.08*tt.cv*60+1e-9 || math.Abs(median-wantMedian) > 0.03*wantMedian {
				t.Errorf("mean %.2f s, sd %.2f s, median %.2f s; want 60, %v and %.2f", mean, sd, median, tt.cv*60, wantMedian)
			}
			if tt.cv == 0 {
				return
			}
			pending := observe(t, w, median).Fleet.Pending
			if math.Abs(float64(pending)-n/2) > 0.02*n {
				t.Errorf("pending at the median delay: %d, want about %d", pending, n/2)
			}
		})
	}
}

// The k-th worker launched takes the k-th delay of the seed's stream,
// however the launches are spread over time; another seed draws others.
func TestStartDelaysFollowLaunchOrder(t *testing.T) {
	t.Parallel()
	world := func(seed uint64) *World {
		return mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), StartDelay: time.Minute, StartDelayCV: 1,
			Min: 0, Max: 20, Workers: 0, Seed: seed})
	}
	once, spread, other := world(1), world(1), world(2)
	once.SetDesired(at(0), 12)
	other.SetDesired(at(0), 12)
	spread.SetDesired(at(0), 5)
	spread.SetDesired(at(0.5), 9) // before any of them can start
	spread.SetDesired(at(0.75), 12)
	a, b, c := launchDelays(once), launchDelays(spread), launchDelays(other)
	if len(a) != 12 || len(b) != 12 || len(c) != 12 {
		t.Fatalf("%d, %d and %d launches, want 12 each", len(a), len(b), len(c))
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			t.Errorf("launch %d: delay %v at once, %v spread out", i, a[i], b[i])
		}
	}
	if slices.Equal(a, c) {
		t.Errorf("seeds 1 and 2 drew the same delays %v", a)
	}
}

// newPeer is the named policy's autoscaler for w, as a run makes it.
func newPeer(t *testing.T, name string, w *World) Autoscaler {
	t.Helper()
	as, err := NewAutoscaler(name, w, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// The settings' service time reaches the checker's settings and the peers'
// targets, never the world or the oracle, which know the world's.
func TestAssumedServiceTimeReachesTheSettingsNotTheWorld(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		assumed time.Duration
		want    time.Duration
	}{
		{"the same as the world", 0, 200 * time.Millisecond},
		{"half", 100 * time.Millisecond, 100 * time.Millisecond},
		{"double", 400 * time.Millisecond, 400 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, _ := Builtin(ScenarioSteady, 500, time.Hour)
			cfg := Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, AssumedServiceTime: tt.assumed,
				Concurrency: 2, LatencyTarget: 10 * time.Second, Min: 1, Max: 1000, Workers: 1}
			w := mustWorld(t, cfg)
			if got := Settings(cfg, 5*time.Second, policy.PolicyModel).ServiceTime; got != tt.want {
				t.Errorf("settings' service time %v, want %v", got, tt.want)
			}
			perReplica := 10 / tt.want.Seconds() * 2
			if k := newPeer(t, PolicyKEDA, w).(*peers.KEDA); math.Abs(k.QueueLength-perReplica) > 1e-9 {
				t.Errorf("KEDA queueLength %v, want %v", k.QueueLength, perReplica)
			}
			if p := newPeer(t, PolicyTargetTracking, w).(*peers.TargetTracking); math.Abs(p.Target-perReplica) > 1e-9 {
				t.Errorf("target tracking's target %v, want %v", p.Target, perReplica)
			}
			if got := completionRate(w, 60, 600); math.Abs(got-10) > 0.5 {
				t.Errorf("one worker of two slots completes %.2f/s, want the world's 10/s", got)
			}
		})
	}
}

// A worker killed on scale-in stops using the downstream: its messages,
// still in flight until their visibility timeout, are in service no more.
// About ten messages arrive at 1 s on two workers sharing one connection,
// 10 s each: the first taken takes 10 s, the second, with two in service,
// 20 s. The worker holding the first is killed at 5 s; the survivor then
// completes at about 21 s and, alone in service, every 10 s after.
func TestKilledWorkersLeaveThePool(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n1,10000\n1.001,0\n"),
		Service: Service{Dist: DistConstant, Mean: 10 * time.Second}, DownstreamPool: 1,
		Min: 0, Max: 5, Workers: 2, Seed: 1, ScaleIn: ScaleInKill, VisibilityTimeout: 30 * time.Second})
	observe(t, w, 5)
	w.SetDesired(at(5), 1)
	for _, tt := range []struct {
		s    float64
		want int64
	}{{20, 0}, {22, 1}, {32, 2}, {42, 3}, {52, 4}} {
		p := w.Snapshot(at(tt.s))
		if got := w.Scores().Messages - p.Backlog; got != tt.want {
			t.Errorf("completed by %v s: %d, want %d", tt.s, got, tt.want)
		}
	}
}

// A pool change sets the connections from its time on: 100 workers at
// 200 ms under a pool of 25 complete 125 msg/s, then 250 msg/s once the
// pool has 50, then all 500 msg/s once there is no pool.
func TestPoolChangesMoveTheCap(t *testing.T) {
	t.Parallel()
	sc, _ := Builtin(ScenarioSteady, 1000, 3*time.Hour)
	w := mustWorld(t, Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, DownstreamPool: 25,
		PoolChanges: []PoolChange{{At: 2 * time.Hour, Connections: 0}, {At: time.Hour, Connections: 50}},
		Min:         100, Max: 100, Workers: 100, Seed: 4})
	for _, span := range []struct{ from, to, want float64 }{{300, 3500, 125}, {3900, 7100, 250}, {7500, 10700, 500}} {
		if got := completionRate(w, span.from, span.to); math.Abs(got-span.want) > 0.03*span.want {
			t.Errorf("from %vs to %vs: completions %.2f/s, want %v/s", span.from, span.to, got, span.want)
		}
	}
}
