package policy

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// wild draws values that configuration and samples should never hold, along
// with ordinary ones.
type wild struct{ r *rand.Rand }

func (w wild) int() int {
	switch w.r.IntN(10) {
	case 0:
		return 0
	case 1:
		return -1 - w.r.IntN(1000)
	case 2:
		return math.MaxInt
	case 3:
		return math.MinInt
	case 4:
		return math.MaxInt32
	case 5:
		return w.r.IntN(1_000_000)
	default:
		return w.r.IntN(200)
	}
}

func (w wild) count() int64 {
	switch w.r.IntN(10) {
	case 0:
		return 0
	case 1:
		return -1 - w.r.Int64N(1000)
	case 2:
		return math.MaxInt64
	case 3:
		return w.r.Int64N(1 << 40)
	default:
		return w.r.Int64N(5000)
	}
}

func (w wild) float() float64 {
	switch w.r.IntN(12) {
	case 0:
		return 0
	case 1:
		return math.NaN()
	case 2:
		return math.Inf(1)
	case 3:
		return math.Inf(-1)
	case 4:
		return -w.r.Float64() * 100
	case 5:
		return math.MaxFloat64
	case 6:
		return 1e300 * w.r.Float64()
	case 7:
		return math.SmallestNonzeroFloat64
	default:
		return w.r.Float64() * 100
	}
}

func (w wild) duration() time.Duration {
	switch w.r.IntN(10) {
	case 0:
		return 0
	case 1:
		return -time.Duration(w.r.Int64N(int64(time.Hour)))
	case 2:
		return math.MaxInt64
	case 3:
		return time.Duration(w.r.Int64N(int64(time.Millisecond)))
	default:
		return time.Duration(w.r.Int64N(int64(10 * time.Minute)))
	}
}

func (w wild) time(now time.Time) time.Time {
	switch w.r.IntN(8) {
	case 0:
		return time.Time{}
	case 1:
		return now.Add(time.Duration(w.r.Int64N(int64(time.Hour))))
	default:
		return now.Add(-time.Duration(w.r.Int64N(int64(10 * time.Minute))))
	}
}

func (w wild) reading(now time.Time) *model.Reading {
	if w.r.IntN(3) == 0 {
		return nil
	}
	return &model.Reading{Value: w.float(), At: w.time(now)}
}

func (w wild) settings() Settings {
	policies := []string{"", PolicyModel, PolicyBacklogPerWorker, "nonsense"}
	return Settings{
		Group: "g", Policy: policies[w.r.IntN(len(policies))],
		ServiceTime: w.duration(), Concurrency: w.int(), Throughput: w.float(),
		Latency: w.duration(), DrainTime: w.duration(), Utilization: w.float(),
		BurstReserve: w.float(), OverheadReserve: w.float(), SafetyWorkers: w.int(),
		Min: w.int(), Max: w.int(), Cap: w.int(),
		StartDelay: w.duration(), ScaleInStabilization: w.duration(), Deadband: w.float(),
		MaxStepOut: w.int(), StaleAfter: w.duration(), ArrivalSmoothing: w.duration(),
		LatencyQuantile: w.float(), MetricStaleAfter: w.duration(),
	}
}

func (w wild) sample(now time.Time) model.GroupSample {
	s := model.GroupSample{
		Group: "g", At: w.time(now),
		Visible: w.count(), InFlight: w.count(), Delayed: w.count(), Backlog: w.count(),
		Queues: w.r.IntN(4), Answered: w.r.IntN(4),
		OldestAge: w.reading(now), Sent: w.reading(now), Deleted: w.reading(now),
	}
	if s.Answered < s.Queues && w.r.IntN(2) == 0 {
		s.Failures = []model.QueueFailure{{Queue: "q", Region: "r", Class: model.ErrClassTimeout}}
	}
	return s
}

func (w wild) fleet(now time.Time) model.Fleet {
	kinds := []string{"", "autoscaling", "ecs"}
	f := model.Fleet{Kind: kinds[w.r.IntN(3)], Known: w.r.IntN(4) != 0,
		Desired: w.int(), Min: w.int(), Max: w.int(), InService: w.int(), Pending: w.int(), Draining: w.int()}
	for range w.r.IntN(4) {
		f.PendingSince = append(f.PendingSince, w.time(now))
	}
	return f
}

// TestPropertyBounds feeds random settings, samples and fleets, NaN,
// negatives and huge values included, through sequences of decisions on one
// State, and checks every decision: within [Min, min(Max, Cap)] (Min winning
// a conflict), finite, JSON-encodable; and never below the fleet's count on
// missing, invalid, partial or stale data.
func TestPropertyBounds(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run("seed "+string(rune('0'+seed)), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
			w := wild{r}
			for range 300 {
				s := w.settings()
				if r.IntN(2) == 0 {
					s.TakenOver = w.time(t0)
				}
				var st State
				now := t0
				for range 1 + r.IntN(6) {
					now = now.Add(time.Duration(r.Int64N(int64(2*time.Minute))) - 10*time.Second)
					smp, f := w.sample(now), w.fleet(now)
					d := Decide(s, smp, f, &st, now)
					checkDecision(t, s, f, d)
					checkNoScaleInOnBadData(t, s, smp, f, d, now)
				}
			}
		})
	}
}

// checkNoScaleInOnBadData: with the fleet known, bad data never takes the
// desired count below the fleet's own (within the bounds).
func checkNoScaleInOnBadData(t *testing.T, s Settings, smp model.GroupSample, f model.Fleet, d model.Decision, now time.Time) {
	t.Helper()
	if !f.Known {
		return
	}
	s = s.WithDefaults()
	stale := s.StaleAfter > 0 && !smp.At.IsZero() && now.Sub(smp.At) > s.StaleAfter
	bad := smp.Missing() || smp.Partial() || stale ||
		smp.Visible < 0 || smp.InFlight < 0 || smp.Delayed < 0 || smp.Backlog < 0
	if !bad {
		return
	}
	lo, hi, _ := s.Bounds(f)
	floor := min(max(f.Desired, lo), hi)
	if d.DesiredWorkers < floor {
		t.Fatalf("scaled in on bad data: fleet %d, desired %d (bounds %d..%d); reasons %q",
			f.Desired, d.DesiredWorkers, lo, hi, d.Reasons)
	}
}

// FuzzDecide runs two decisions on one State from fuzzed inputs and checks
// the same properties.
func FuzzDecide(f *testing.F) {
	f.Add(int64(3000), int64(15), int64(0), int64(3015), 1, 1, int64(time.Second), 1, 0.0, int64(30*time.Second),
		1, 50, 0, 15, 15, 0, 10.0, 10.0, 0.0, int64(5*time.Second))
	f.Add(int64(0), int64(0), int64(0), int64(0), 2, 1, int64(0), 0, 2.4, int64(0),
		5, 3, 2, 4, 4, 2, math.NaN(), math.Inf(1), -1.0, int64(-time.Second))
	f.Add(int64(math.MaxInt64), int64(-1), int64(7), int64(1), 1, 1, int64(math.MaxInt64), math.MaxInt, 1e300, int64(1),
		0, 0, 0, math.MaxInt, -5, 3, 1e308, 0.0, 1e9, int64(time.Hour))
	f.Fuzz(func(t *testing.T, visible, inFlight, delayed, backlog int64, queues, answered int,
		serviceNs int64, concurrency int, throughput float64, latencyNs int64,
		minW, maxW, capW, desired, inService, pending int,
		sent, deleted, age float64, dtNs int64) {
		s := Settings{Group: "g", ServiceTime: time.Duration(serviceNs), Concurrency: concurrency, Throughput: throughput,
			Latency: time.Duration(latencyNs), Min: minW, Max: maxW, Cap: capW, StaleAfter: 15 * time.Second,
			StartDelay: time.Duration(dtNs) * 3}
		fleet := model.Fleet{Kind: "autoscaling", Known: desired >= 0, Desired: desired, InService: inService, Pending: pending,
			PendingSince: []time.Time{t0}}
		var st State
		now := t0
		for i := range 2 {
			smp := model.GroupSample{Group: "g", At: now, Visible: visible, InFlight: inFlight, Delayed: delayed, Backlog: backlog,
				Queues: queues, Answered: answered,
				Sent: reading(sent, now), Deleted: reading(deleted, now), OldestAge: reading(age, now)}
			d := Decide(s, smp, fleet, &st, now)
			checkDecision(t, s, fleet, d)
			checkNoScaleInOnBadData(t, s, smp, fleet, d, now)
			now = now.Add(time.Duration(dtNs))
			visible += int64(i) * 100
		}
	})
}
