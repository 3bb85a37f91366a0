package capacity

import (
	"math"
	"testing"
)

// near reports whether got is within a relative tol of want (absolute for
// values near zero).
func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestCeilWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		x    float64
		want int
	}{
		{"8/0.8 is ten, not eleven", 8 / 0.8, 10},
		{"40/(5*0.8) is ten", 40 / (5 * 0.8), 10},
		{"exact integer", 7, 7},
		{"just below an integer", 2.9999999, 3},
		{"a real fraction above rounds up", 10.5, 11},
		{"above by more than the tolerance", 3.0000001, 4},
		{"model 10.1: 500*0.2/0.7", 500 * 0.2 / 0.7, 143},
		{"tiny positive need is one worker", 1e-12, 1},
		{"zero", 0, 0},
		{"negative", -3.5, 0},
		{"NaN", math.NaN(), 0},
		{"+Inf saturates", math.Inf(1), math.MaxInt32},
		{"huge saturates", 1e300, math.MaxInt32},
		{"-Inf", math.Inf(-1), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := CeilWorkers(tt.x); got != tt.want {
				t.Errorf("CeilWorkers(%v) = %d, want %d", tt.x, got, tt.want)
			}
		})
	}
}

// TestLittlesLaw checks the model page's (docs/model.md, 10.1 and 10.8) multiplications.
func TestLittlesLaw(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		arrival     float64
		service     float64
		utilization float64
		wantLoad    float64
		wantConc    int
	}{
		// docs/model.md 10.1: 500 msg/s at 200 ms is 100 in flight; at 0.7, 143 handlers.
		{"model 10.1 at 0.7", 500, 0.2, 0.7, 100, 143},
		// At 100 % utilisation the concurrency is the offered load itself.
		{"model 10.1 at 1.0", 500, 0.2, 1, 100, 100},
		// docs/model.md 10.8: 50 jobs/s at 200 ms: offered load 10.
		{"Erlang C example offered load", 50, 0.2, 1, 10, 10},
		// AWS Lambda's example: 5,000 req/s at 0.2 s is 1,000 concurrent.
		{"lambda example", 5000, 0.2, 1, 1000, 1000},
		// By hand: 3 msg/s at 1 s at 0.8 is 3/0.8 = 3.75: 4.
		{"hand: 3.75 rounds up", 3, 1, 0.8, 3, 4},
		{"no utilisation gives no answer", 500, 0.2, 0, 100, 0},
		{"no arrivals", 0, 0.2, 0.8, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := OfferedLoad(tt.arrival, tt.service); !near(got, tt.wantLoad, 1e-12) {
				t.Errorf("OfferedLoad = %v, want %v", got, tt.wantLoad)
			}
			if got := Concurrency(tt.arrival, tt.service, tt.utilization); got != tt.wantConc {
				t.Errorf("Concurrency = %d, want %d", got, tt.wantConc)
			}
		})
	}
}

func TestDrainSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		backlog float64
		service float64
		arrival float64
		want    float64
		drains  bool
	}{
		// docs/model.md 10.3: 1,000,000 at 600 served vs 500 arriving: 10,000 s.
		{"model 10.3", 1_000_000, 600, 500, 10_000, true},
		// docs/model.md 10.4: 18,000 at 8 × 2.4 = 19.2 vs 12: 18000/7.2 = 2500 s (41 min 40 s).
		{"planner example current pool", 18_000, 19.2, 12, 2500, true},
		{"equal rates never drain", 100, 5, 5, 0, false},
		{"more arrivals than service never drain", 100, 4, 5, 0, false},
		{"empty backlog drains at once even when overloaded", 0, 4, 5, 0, true},
		{"NaN service never drains", 100, math.NaN(), 5, 0, false},
		// By hand: 90 messages, 10 served, 1 arriving: 90/9 = 10 s.
		{"hand", 90, 10, 1, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := DrainSeconds(tt.backlog, tt.service, tt.arrival)
			if ok != tt.drains || !near(got, tt.want, 1e-12) {
				t.Errorf("DrainSeconds = %v, %v; want %v, %v", got, ok, tt.want, tt.drains)
			}
		})
	}
}

// TestBacklogPerWorker checks AWS's example quoted in model 10.1: 1,500
// messages, 10 instances, 0.1 s per message, 10 s acceptable latency.
func TestBacklogPerWorker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		latency     float64
		service     float64
		concurrency int
		backlog     float64
		wantTarget  float64
		wantWorkers int
	}{
		{"aws example", 10, 0.1, 1, 1500, 100, 15},
		// Two messages at once per worker doubles the target: 200; 1500/200 = 7.5: 8.
		{"concurrency two", 10, 0.1, 2, 1500, 200, 8},
		// By hand: 30 s at 0.2 s = 150 per worker; 1,000 messages: 6.67: 7.
		{"hand", 30, 0.2, 1, 1000, 150, 7},
		{"no service time", 10, 0, 1, 1500, 0, 0},
		{"no concurrency", 10, 0.1, 0, 1500, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			target := TargetBacklogPerWorker(tt.latency, tt.service, tt.concurrency)
			if !near(target, tt.wantTarget, 1e-12) {
				t.Errorf("TargetBacklogPerWorker = %v, want %v", target, tt.wantTarget)
			}
			if got := BacklogPerWorkerWorkers(tt.backlog, target); got != tt.wantWorkers {
				t.Errorf("BacklogPerWorkerWorkers = %d, want %d", got, tt.wantWorkers)
			}
		})
	}
	// The example's current value: 1500 / 10 = 150 per instance, above 100.
	if current := 1500.0 / 10; current != 150 {
		t.Errorf("current backlog per worker = %v, want 150", current)
	}
}

// TestPlannerFormulas checks the formula core of planner example on its three
// worked examples and on cases computed by hand.
func TestPlannerFormulas(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                                 string
		arrival, burst, perWorker, overhead  float64
		workers                              float64
		backlog, startDelay, drainTarget, u  float64
		wantArrival, wantPerWorker, wantNet  float64
		wantStart                            float64
		wantDrainFloor, wantUtilizationFloor int
	}{
		{
			// 8 × 2.4 − 12 = 7.2; (12 + 18000/1800)/2.4 = 22/2.4 = 9.17: 10;
			// 12/(2.4 × 0.8) = 6.25: 7.
			name: "planner example default queue", arrival: 12, perWorker: 2.4, workers: 8,
			backlog: 18_000, drainTarget: 1800, u: 0.8,
			wantArrival: 12, wantPerWorker: 2.4, wantNet: 7.2, wantStart: 18_000,
			wantDrainFloor: 10, wantUtilizationFloor: 7,
		},
		{
			// 20 × 1.25 = 25; 2 × 0.9 = 1.8; (25 + 30000/1200)/1.8 = 27.8: 28;
			// 25/(1.8 × 0.8) = 17.4: 18. No current workers: net = −25.
			name: "planner example burst and overhead", arrival: 20, burst: 25, perWorker: 2, overhead: 10,
			backlog: 30_000, drainTarget: 1200, u: 0.8,
			wantArrival: 25, wantPerWorker: 1.8, wantNet: -25, wantStart: 30_000,
			wantDrainFloor: 28, wantUtilizationFloor: 18,
		},
		{
			// 40/(5 × 0.8) = 10 exactly, which floating point makes 10.000000000000002.
			name: "planner example zero backlog", arrival: 40, perWorker: 5, workers: 8, u: 0.8, drainTarget: 1800,
			wantArrival: 40, wantPerWorker: 5, wantNet: 0, wantStart: 0,
			wantDrainFloor: 8, wantUtilizationFloor: 10,
		},
		{
			// Start delay 300 s: 18000 − 7.2 × 300 = 15840; (12 + 15840/1800)/2.4
			// = 20.8/2.4 = 8.67: 9.
			name: "hand: start delay shrinks the backlog", arrival: 12, perWorker: 2.4, workers: 8,
			backlog: 18_000, startDelay: 300, drainTarget: 1800, u: 0.8,
			wantArrival: 12, wantPerWorker: 2.4, wantNet: 7.2, wantStart: 15_840,
			wantDrainFloor: 9, wantUtilizationFloor: 7,
		},
		{
			// A shrinking pool grows the backlog: 2 × 2.4 − 12 = −7.2; 18000 + 7.2
			// × 600 = 22320; (12 + 22320/1800)/2.4 = 24.4/2.4 = 10.17: 11.
			name: "hand: start delay with a losing pool", arrival: 12, perWorker: 2.4, workers: 2,
			backlog: 18_000, startDelay: 600, drainTarget: 1800, u: 0.8,
			wantArrival: 12, wantPerWorker: 2.4, wantNet: -7.2, wantStart: 22_320,
			wantDrainFloor: 11, wantUtilizationFloor: 7,
		},
		{
			// 100 workers × 1 − 10 = 90 net; 1000 − 90 × 60 < 0: empty at start.
			name: "hand: backlog gone before workers start", arrival: 10, perWorker: 1, workers: 100,
			backlog: 1000, startDelay: 60, drainTarget: 600, u: 1,
			wantArrival: 10, wantPerWorker: 1, wantNet: 90, wantStart: 0,
			wantDrainFloor: 10, wantUtilizationFloor: 10,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			lam := EffectiveArrival(tt.arrival, tt.burst)
			mu := EffectivePerWorker(tt.perWorker, tt.overhead)
			net := NetDrain(tt.workers, mu, lam)
			start := BacklogAtStart(tt.backlog, net, tt.startDelay)
			if !near(lam, tt.wantArrival, 1e-12) || !near(mu, tt.wantPerWorker, 1e-12) ||
				!near(net, tt.wantNet, 1e-12) || !near(start, tt.wantStart, 1e-9) {
				t.Errorf("λ_eff, μ_eff, net, Q_start = %v, %v, %v, %v; want %v, %v, %v, %v",
					lam, mu, net, start, tt.wantArrival, tt.wantPerWorker, tt.wantNet, tt.wantStart)
			}
			if got := DrainFloor(lam, mu, start, tt.drainTarget); got != tt.wantDrainFloor {
				t.Errorf("DrainFloor = %d, want %d", got, tt.wantDrainFloor)
			}
			if got := UtilizationFloor(lam, mu, tt.u); got != tt.wantUtilizationFloor {
				t.Errorf("UtilizationFloor = %d, want %d", got, tt.wantUtilizationFloor)
			}
		})
	}
}

func TestFloorsWithoutAnswer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"drain floor without throughput", DrainFloor(10, 0, 100, 60), 0},
		{"drain floor without deadline keeps pace", DrainFloor(10, 2, 100, 0), 5},
		{"utilisation floor without throughput", UtilizationFloor(10, 0, 0.8), 0},
		{"utilisation floor without ceiling", UtilizationFloor(10, 2, 0), 0},
		{"backlog at start never negative", int(BacklogAtStart(10, 100, 10)), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.got != tt.want {
				t.Errorf("got %d, want %d", tt.got, tt.want)
			}
		})
	}
}
