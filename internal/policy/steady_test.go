package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// erlangCByHand is the Erlang C example's formula as written:
// C(c, a) = (a^c/c!) / [(1 − a/c)·Σ_{i<c} a^i/i! + a^c/c!], for c > a.
func erlangCByHand(c int, a float64) float64 {
	sum, term := 0.0, 1.0 // term = a^i/i!
	for i := 0; i < c; i++ {
		sum += term
		term *= a / float64(i+1)
	}
	return term / ((1-a/float64(c))*sum + term)
}

// quantileServersByHand scans c up from the offered load for the first pool
// in which at most miss of the messages wait longer than t:
// P(Wq > t) = C(c, a)·e^−(cμ − λ)t.
func quantileServersByHand(lambda, perServer, t, miss float64) int {
	a := lambda / perServer
	for c := int(a) + 1; ; c++ {
		if erlangCByHand(c, a)*math.Exp(-(float64(c)*perServer-lambda)*t) <= miss {
			return c
		}
	}
}

// On a steady stream (constant counts, a known deleted rate) the model policy
// recommends exactly the largest of its floors computed independently, and
// where the latency is tight that is the Erlang C worker count.
func TestSteadyStreamAgreesWithErlangC(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		lambda      float64
		serviceTime time.Duration
		throughput  float64
		concurrency int
		latency     time.Duration
		quantile    float64
		utilization float64
		safety      int
		waitGoverns bool
	}{
		// Seed 002's queue: 50 msg/s at 200 ms.
		{"Erlang C example, 99 % within 100 ms", 50, 200 * time.Millisecond, 0, 1, 100 * time.Millisecond, 0, 1, 0, true},
		{"Erlang C example, 90 % within 50 ms", 50, 200 * time.Millisecond, 0, 1, 50 * time.Millisecond, 0.9, 1, 0, true},
		{"four slots per worker", 50, 200 * time.Millisecond, 0, 4, 50 * time.Millisecond, 0, 1, 0, true},
		{"measured throughput", 12, 0, 2.4, 1, 500 * time.Millisecond, 0, 1, 0, true},
		{"a big pool", 400, 200 * time.Millisecond, 0, 1, 20 * time.Millisecond, 0, 1, 2, true},
		// A generous promise: the utilisation ceiling governs.
		{"utilisation governs", 50, 200 * time.Millisecond, 0, 1, 30 * time.Second, 0, 0.7, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := Settings{Group: "g", ServiceTime: tc.serviceTime, Throughput: tc.throughput, Concurrency: tc.concurrency,
				Latency: tc.latency, LatencyQuantile: tc.quantile, Utilization: tc.utilization, SafetyWorkers: tc.safety,
				Min: 1, Max: 1000}
			perWorker := tc.throughput
			if perWorker == 0 {
				perWorker = float64(tc.concurrency) / tc.serviceTime.Seconds()
			}
			perServer := perWorker / float64(tc.concurrency)
			quantile := tc.quantile
			if quantile == 0 {
				quantile = 0.99
			}
			// Little's law: the steady stream keeps λ·S messages in flight.
			inFlight := int64(math.Round(tc.lambda / perServer))
			servers := quantileServersByHand(tc.lambda, perServer, tc.latency.Seconds(), 1-quantile)
			if got, ok := capacity.WaitQuantileFloor(tc.lambda, perServer, tc.latency.Seconds(), 1-quantile); !ok || got != servers {
				t.Fatalf("capacity.WaitQuantileFloor = %d, %v; by hand %d", got, ok, servers)
			}
			wait := (servers + tc.concurrency - 1) / tc.concurrency
			util := int(math.Ceil(tc.lambda/(perWorker*tc.utilization) - 1e-9))
			drain := int(math.Ceil((tc.lambda + float64(inFlight)/model.DefaultDrainTime.Seconds()) / perWorker))
			want := max(wait, util, drain) + tc.safety
			t.Logf("floors by hand: wait %d (%d slots), utilisation %d, drain %d; want %d", wait, servers, util, drain, want)
			if tc.waitGoverns && want != wait+tc.safety {
				t.Fatalf("test case does not exercise the wait floor: wait %d util %d drain %d", wait, util, drain)
			}

			h := newHarness(t, s, asg(1, 1, 0))
			for i := 0; i < 20; i++ {
				smp := q(0, inFlight)
				// A count of the last minute, read at once: it covers
				// every interval (the fleet of one worker here holds more
				// in flight than its slot, so Little's law would not).
				smp.Deleted = reading(tc.lambda, h.now)
				dt := tick
				if i == 0 {
					dt = 0
				}
				d := h.step(dt, smp)
				if i == 0 {
					continue // the arrival rate is not known yet
				}
				if *d.ArrivalRate != tc.lambda {
					t.Fatalf("step %d: arrival %v, want %v", i, *d.ArrivalRate, tc.lambda)
				}
				if *d.Floors.Wait != wait || *d.Floors.Utilization != util || *d.Floors.Drain != drain {
					t.Fatalf("step %d: floors wait %v util %v drain %v, want %d %d %d", i,
						*d.Floors.Wait, *d.Floors.Utilization, *d.Floors.Drain, wait, util, drain)
				}
				if d.RecommendedWorkers != want || d.DesiredWorkers != want {
					t.Fatalf("step %d: recommended %d desired %d, want %d; reasons %q", i, d.RecommendedWorkers, d.DesiredWorkers, want, d.Reasons)
				}
			}
		})
	}
}

// The planner example's first worked example, with the queue's own numbers: 12 msg/s,
// 2.4 msg/s per worker, 18,000 waiting, a 30-minute target, 8 workers. The
// drain floor is 10, the current drain time about 41 min 40 s.
func TestPlannerDrainFloor(t *testing.T) {
	t.Parallel()
	s := Settings{Group: "g", Throughput: 2.4, DrainTime: 30 * time.Minute, Min: 1, Max: 50}
	h := newHarness(t, s, asg(8, 8, 0))
	smp := q(18000, 0)
	smp.Deleted = reading(12, t0)
	h.step(0, smp)
	d := h.step(tick, smp)
	if *d.Floors.Drain != 10 || *d.Floors.Utilization != 7 || d.DesiredWorkers != 10 {
		t.Fatalf("drain %d util %d desired %d, want 10, 7, 10", *d.Floors.Drain, *d.Floors.Utilization, d.DesiredWorkers)
	}
	if math.Abs(*d.DrainSeconds-18000/7.2) > 1e-6 {
		t.Fatalf("drain seconds %v, want %v", *d.DrainSeconds, 18000/7.2)
	}
	if math.Abs(*d.Utilization-12/19.2) > 1e-12 {
		t.Fatalf("utilisation %v, want %v", *d.Utilization, 12/19.2)
	}
}

func TestSettingsHelpers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		s                 Settings
		perWorker, target float64
	}{
		{"service time", Settings{ServiceTime: 100 * time.Millisecond, Latency: 10 * time.Second}, 10, 100},
		{"service time and concurrency", Settings{ServiceTime: 2 * time.Second, Concurrency: 4, Latency: 30 * time.Second}, 2, 60},
		{"throughput wins", Settings{ServiceTime: time.Second, Throughput: 2.4, Latency: 10 * time.Second}, 2.4, 24},
		{"NaN throughput falls back", Settings{ServiceTime: time.Second, Throughput: math.NaN(), Latency: 10 * time.Second}, 1, 10},
		{"infinite throughput is unknown", Settings{Throughput: math.Inf(1), Latency: 10 * time.Second}, 0, 0},
		{"nothing known", Settings{Latency: 10 * time.Second}, 0, 0},
		{"no latency", Settings{ServiceTime: time.Second}, 1, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.s.PerWorker(); got != tc.perWorker {
				t.Errorf("PerWorker = %v, want %v", got, tc.perWorker)
			}
			if got := tc.s.TargetBacklogPerWorker(); math.Abs(got-tc.target) > 1e-9 {
				t.Errorf("TargetBacklogPerWorker = %v, want %v", got, tc.target)
			}
		})
	}
}
