package measure

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// This file drives the Estimator with a small discrete-event simulation of
// an SQS queue and a fleet of c workers (M/M/c and M/G/c), sampled the way
// the checker samples, with CloudWatch's per-minute counts delivered late.
// The expectations are the simulation's own parameters (the mean service
// time it draws from), never what the Estimator printed.

// fleetSim is the queue and its workers.
type fleetSim struct {
	rate    float64                               // Poisson arrivals, msg/s
	service func(r *rand.Rand, t float64) float64 // time one message holds a slot, s, for a start at t
	workers int                                   // slots: each handles one message at a time
	perHost int                                   // slots per worker in service (1 when 0)
	batch   int                                   // messages per receive (1: no batching)
	abandon func(t float64) float64               // share of messages finished at t never deleted (nil: none)
	vt      float64                               // visibility timeout, s

	rng      *rand.Rand
	now      float64
	events   eventHeap
	visible  int
	inFlight int
	idle     []int
	buffer   [][]float64 // per worker: receive times of messages received, not started
	current  []float64   // per worker: receive time of the message in hand
	deleted  []int       // per minute
	received []int       // per minute
}

type event struct {
	at     float64
	kind   int // arrival, done, back
	worker int
}

const (
	evArrival = iota
	evDone
	evBack // an abandoned message is visible again
)

type eventHeap []event

func (h eventHeap) Len() int           { return len(h) }
func (h eventHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h eventHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)        { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (s *fleetSim) start(seed uint64, minutes, backlog int) {
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s.batch = max(s.batch, 1)
	s.perHost = max(s.perHost, 1)
	s.buffer = make([][]float64, s.workers)
	s.current = make([]float64, s.workers)
	for w := s.workers - 1; w >= 0; w-- {
		s.idle = append(s.idle, w)
	}
	s.deleted = make([]int, minutes+1)
	s.received = make([]int, minutes+1)
	s.visible = backlog
	s.now = -warmUp
	if s.rate > 0 {
		heap.Push(&s.events, event{at: s.now + s.rng.ExpFloat64()/s.rate, kind: evArrival})
	}
	s.dispatch()
}

// warmUp is how long the simulation runs before minute 0, so that the
// estimator, like a daemon started on a running fleet, never sees it empty.
const warmUp = 120.0

// count adds n to minute m's counter; nothing is counted during the warm-up.
func (s *fleetSim) count(counts []int, n int) {
	if s.now >= 0 {
		counts[min(int(s.now/60), len(counts)-1)] += n
	}
}

// advance runs every event up to time t.
func (s *fleetSim) advance(t float64) {
	for len(s.events) > 0 && s.events[0].at <= t {
		ev := heap.Pop(&s.events).(event)
		s.now = ev.at
		switch ev.kind {
		case evArrival:
			s.visible++
			heap.Push(&s.events, event{at: s.now + s.rng.ExpFloat64()/s.rate, kind: evArrival})
			s.dispatch()
		case evBack:
			s.inFlight--
			s.visible++
			s.dispatch()
		case evDone:
			s.finish(ev.worker)
		}
	}
	s.now = t
}

// dispatch gives visible messages to idle workers.
func (s *fleetSim) dispatch() {
	for s.visible > 0 && len(s.idle) > 0 {
		w := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		s.receive(w)
		s.begin(w)
	}
}

// receive hands worker w up to batch visible messages.
func (s *fleetSim) receive(w int) {
	n := min(s.batch, s.visible)
	s.visible -= n
	s.inFlight += n
	s.count(s.received, n)
	for range n {
		s.buffer[w] = append(s.buffer[w], s.now)
	}
}

// begin starts worker w on the next message of its buffer.
func (s *fleetSim) begin(w int) {
	s.current[w] = s.buffer[w][0]
	s.buffer[w] = s.buffer[w][1:]
	heap.Push(&s.events, event{at: s.now + s.service(s.rng, s.now), kind: evDone, worker: w})
}

// finish ends worker w's message: deleted, or abandoned to come back when
// its visibility timeout runs out; then the worker takes the next one.
func (s *fleetSim) finish(w int) {
	if s.abandon != nil && s.rng.Float64() < s.abandon(s.now) {
		heap.Push(&s.events, event{at: math.Max(s.now, s.current[w]+s.vt), kind: evBack})
	} else {
		s.inFlight--
		s.count(s.deleted, 1)
	}
	switch {
	case len(s.buffer[w]) > 0:
		s.begin(w)
	case s.visible > 0:
		s.receive(w)
		s.begin(w)
	default:
		s.idle = append(s.idle, w)
	}
}

// drive runs the simulation for the given minutes, samples it every 5 s
// (with up to ±0.5 s of jitter), publishes each minute's counts 60–120 s
// after it closes, and delivers the newest published minute on every
// sample, as the poller does. check is called after each sample.
func drive(s *fleetSim, e *Estimator, seed uint64, minutes int, withReceived bool, check func(t float64, est Estimate)) {
	rng := rand.New(rand.NewPCG(seed+1, seed))
	published := make([]float64, minutes)
	for m := range published {
		published[m] = float64(m+1)*60 + 60 + 60*rng.Float64()
	}
	newest := -1
	for t := 5.0; t < float64(minutes)*60; t += 5 {
		ts := t + rng.Float64() - 0.5
		s.advance(ts)
		e.Sample(t0.Add(time.Duration(ts*float64(time.Second))), float64(s.visible), float64(s.inFlight), s.workers/s.perHost, true)
		for m := newest + 1; m < minutes; m++ {
			if published[m] <= ts {
				newest = m // a later minute published first hides an earlier one
			}
		}
		if newest >= 0 {
			received := math.NaN()
			if withReceived {
				received = float64(s.received[newest]) / 60
			}
			e.Minute(at(newest, 0), float64(s.deleted[newest])/60, received)
		}
		if check != nil {
			check(ts, e.Estimate())
		}
	}
}

func exponential(mean float64) func(*rand.Rand, float64) float64 {
	return func(r *rand.Rand, _ float64) float64 { return mean * r.ExpFloat64() }
}

var seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// TestSimAccuracy: M/M/c and M/G/c fleets at moderate load; after a few
// minutes the estimate stays within ±10 % of the mean service time drawn.
func TestSimAccuracy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rate    float64
		workers int
		conc    int
		mean    float64
		service func(*rand.Rand, float64) float64
	}{
		{"M/M/20, 50 msg/s, 200 ms", 50, 20, 1, 0.2, exponential(0.2)},
		{"M/M/40, 100 msg/s, 300 ms", 100, 40, 1, 0.3, exponential(0.3)},
		// Uniform 1–3 s: mean 2 s, 40 in service of 60.
		{"M/G/60, 20 msg/s, uniform 1–3 s", 20, 60, 1, 2, func(r *rand.Rand, _ float64) float64 { return 1 + 2*r.Float64() }},
		// 10 workers of 4 slots: the slots, not the workers, bound busy.
		{"M/M/10×4, 50 msg/s, 500 ms", 50, 40, 4, 0.5, exponential(0.5)},
	}
	for _, tt := range tests {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed %d", tt.name, seed), func(t *testing.T) {
				t.Parallel()
				s := &fleetSim{rate: tt.rate, service: tt.service, workers: tt.workers, perHost: tt.conc}
				s.start(seed, 40, 0)
				e := New(Config{ServiceTime: time.Duration(tt.mean * float64(time.Second)), Concurrency: tt.conc})
				var worst float64
				drive(s, e, seed, 40, false, func(ts float64, est Estimate) {
					if ts < 5*60 {
						return
					}
					// From 5 minutes (3 or more minutes learned) within ±20 %,
					// from 12 minutes (10 or more) within ±10 %.
					err := secs(est.ServiceTime)/tt.mean - 1
					if ts >= 12*60 && math.Abs(err) > math.Abs(worst) {
						worst = err
					}
					if math.Abs(err) > 0.2 || est.Confidence < 0.5 || est.Stuck || est.Saturated || est.Batching {
						t.Fatalf("at %.0fs: %+v, want %vs", ts, est, tt.mean)
					}
				})
				if math.Abs(worst) > 0.10 {
					t.Errorf("worst error after 12 minutes %+.1f%%, want within ±10%%", 100*worst)
				}
				t.Logf("worst error after 12 minutes %+.1f%%", 100*worst)
			})
		}
	}
}

// TestSimBatching: workers receive 10 messages at a time and handle them one
// by one, with a backlog: in flight overstates their slots several times,
// and busy capped at the slots still gives the per-message service time.
func TestSimBatching(t *testing.T) {
	t.Parallel()
	for _, seed := range seeds[:4] {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			// 20 workers × 1/0.2 s = 100 msg/s of capacity against 120 arriving.
			s := &fleetSim{rate: 120, service: exponential(0.2), workers: 20, batch: 10}
			s.start(seed, 30, 500)
			e := New(Config{ServiceTime: 200 * time.Millisecond})
			drive(s, e, seed, 30, false, func(ts float64, est Estimate) {
				if ts < 12*60 {
					return
				}
				if !near(secs(est.ServiceTime), 0.2, 0.10) || !est.Batching || !est.Saturated || !near(est.PerWorker, 5, 0.10) {
					t.Fatalf("at %.0fs: %+v, want 0.2 s, 5 msg/s per worker, Batching, Saturated", ts, est)
				}
			})
		})
	}
}

// TestSimSaturated: a fleet with a standing backlog completes what its
// workers can; PerWorker is that, completions ÷ workers.
func TestSimSaturated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		workers int
		perHost int
		mean    float64
		want    float64 // msg/s per worker: slots per worker ÷ mean service time
	}{
		{"10 workers at 200 ms", 10, 1, 0.2, 5},
		// The settings say 1 slot, the workers run 4: in flight is 4 per
		// worker, the service time is read as 1/4 of the truth, and PerWorker
		// from completions is still right.
		{"5 workers of 4 slots at 400 ms", 20, 4, 0.4, 10},
	}
	for _, tt := range tests {
		for _, seed := range seeds[:3] {
			t.Run(fmt.Sprintf("%s/seed %d", tt.name, seed), func(t *testing.T) {
				t.Parallel()
				capacity := float64(tt.workers) / tt.mean
				s := &fleetSim{rate: 1.3 * capacity, service: exponential(tt.mean), workers: tt.workers, perHost: tt.perHost}
				s.start(seed, 25, 200)
				e := New(Config{ServiceTime: time.Duration(tt.mean * float64(time.Second))})
				var last Estimate
				drive(s, e, seed, 25, false, func(ts float64, est Estimate) {
					last = est
					if ts >= 8*60 && (!est.Saturated || !near(est.PerWorker, tt.want, 0.05)) {
						t.Fatalf("at %.0fs: %+v, want PerWorker %v from saturated minutes", ts, est, tt.want)
					}
				})
				if last.SaturatedMinutes < 10 || last.SaturatedMinutes != last.Minutes {
					t.Errorf("SaturatedMinutes %d of %d, want all of 10 or more", last.SaturatedMinutes, last.Minutes)
				}
			})
		}
	}
}

// TestSimAbandoned: a share of messages is received and never deleted; they
// come back after the 30 s visibility timeout. By Little's law each holds 30 s
// of in flight against 0.2 s for a handled one, so 1 % abandoned already
// adds 15 in flight to the 10 busy, and in flight on 20 slots reads as 20
// busy slots, twice the truth. With the received count the excess is taken
// off and the estimate is not raised. The abandoned set's own fluctuation
// (Poisson, 15 or 79 messages) is noise the estimate cannot remove, hence
// the wide per-tick bounds at 5 %.
func TestSimAbandoned(t *testing.T) {
	t.Parallel()
	const vt = 30.0
	tests := []struct {
		name       string
		share      float64
		received   bool
		lo, hi     float64 // every estimate ÷ the true mean, after 12 minutes
		meanTol    float64 // the mean of those, around 1
		wantRaised bool
	}{
		{"1 % abandoned, received known", 0.01, true, 0.5, 1.4, 0.15, false},
		{"5 % abandoned, received known", 0.05, true, 0, 1.6, 0.3, false},
		{"1 % abandoned, received unknown", 0.01, false, 1.8, 2.2, 0, true},
		{"5 % abandoned, received unknown", 0.05, false, 1.8, 2.2, 0, true},
	}
	for _, tt := range tests {
		for _, seed := range seeds[:4] {
			t.Run(fmt.Sprintf("%s/seed %d", tt.name, seed), func(t *testing.T) {
				t.Parallel()
				s := &fleetSim{rate: 50, service: exponential(0.2), workers: 20, vt: vt,
					abandon: func(float64) float64 { return tt.share }}
				s.start(seed, 30, 0)
				e := New(Config{ServiceTime: 200 * time.Millisecond, VisibilityTimeout: vt * time.Second})
				var sum float64
				var n int
				drive(s, e, seed, 30, tt.received, func(ts float64, est Estimate) {
					if ts < 12*60 {
						return
					}
					r := secs(est.ServiceTime) / 0.2
					if r < tt.lo || r > tt.hi || est.Stuck {
						t.Fatalf("at %.0fs: %+v, want %.2f–%.2f × 0.2 s", ts, est, tt.lo, tt.hi)
					}
					sum += r
					n++
				})
				if mean := sum / float64(n); !tt.wantRaised && math.Abs(mean-1) > tt.meanTol {
					t.Errorf("mean estimate %.3f × the truth, want 1 ± %.2f", mean, tt.meanTol)
				}
			})
		}
	}
}

// TestSimCrashLoop: after 10 healthy minutes every worker takes a message,
// crashes and restarts, holding its slot for the 30 s visibility timeout:
// in flight sits at the slots and nothing is deleted. The estimator says
// Stuck and keeps the healthy service time.
func TestSimCrashLoop(t *testing.T) {
	t.Parallel()
	const crash = 600.0
	for _, received := range []bool{true, false} {
		for _, seed := range seeds[:3] {
			t.Run(fmt.Sprintf("received %v/seed %d", received, seed), func(t *testing.T) {
				t.Parallel()
				s := &fleetSim{rate: 50, workers: 20, vt: 30,
					service: func(r *rand.Rand, t float64) float64 {
						if t >= crash {
							return 30
						}
						return 0.2 * r.ExpFloat64()
					},
					abandon: func(t float64) float64 {
						if t >= crash+1 { // a message started before the crash may finish
							return 1
						}
						return 0
					}}
				s.start(seed, 25, 0)
				e := New(Config{ServiceTime: 200 * time.Millisecond, VisibilityTimeout: 30 * time.Second})
				var stuckAt float64
				drive(s, e, seed, 25, received, func(ts float64, est Estimate) {
					if ts >= 5*60 && !near(secs(est.ServiceTime), 0.2, 0.2) {
						t.Fatalf("at %.0fs: %+v, want 0.2 s ± 20 %%, never raised", ts, est)
					}
					if est.Stuck && stuckAt == 0 {
						stuckAt = ts
					}
					if stuckAt > 0 && !est.Stuck {
						t.Fatalf("at %.0fs: Stuck cleared in a crash loop: %+v", ts, est)
					}
				})
				// Minutes 10 and 11 are the first two stuck ones; minute 11 is
				// published by 14:00 at the latest.
				if stuckAt == 0 || stuckAt < crash+120 || stuckAt > 14*60+5 {
					t.Errorf("Stuck from %.0fs, want between %.0fs and %.0fs", stuckAt, crash+120, 14*60+5.0)
				}
			})
		}
	}
}

// TestSimDeploy: at minute 20 a deploy doubles the mean service time. A
// busy fleet (50 msg/s, 40 workers) follows it within a few minutes of the
// first affected minute being delivered. A quiet one (10 msg/s at 200 ms: 2
// in flight, each minute good to about ±21 %) follows it within two time
// constants (12 minutes), noise margin and all: its minutes are too noisy
// for a step to be sure, and the memory follows it (seeds 1–6: within 1–10
// minutes, with or without the noise margin).
func TestSimDeploy(t *testing.T) {
	t.Parallel()
	const deploy = 1200.0
	for _, tc := range []struct {
		name          string
		rate          float64
		workers       int
		within, tol   float64 // seconds after the first affected minute, and the share off 0.4 s allowed
		checkedBefore bool    // the estimate is within 10 % of 0.2 s before
	}{
		{"busy", 50, 40, 3 * 60, 0.10, true},
		{"quiet", 10, 20, 12 * 60, 0.15, false},
	} {
		for _, seed := range seeds[:6] {
			t.Run(fmt.Sprintf("%s seed %d", tc.name, seed), func(t *testing.T) {
				t.Parallel()
				s := &fleetSim{rate: tc.rate, workers: tc.workers, service: func(r *rand.Rand, t float64) float64 {
					if t >= deploy {
						return 0.4 * r.ExpFloat64()
					}
					return 0.2 * r.ExpFloat64()
				}}
				s.start(seed, 40, 0)
				e := New(Config{ServiceTime: 200 * time.Millisecond})
				var delivered float64 // when the first affected minute was learned
				drive(s, e, seed, 40, false, func(ts float64, est Estimate) {
					if delivered == 0 && !est.Last.Before(at(20, 0)) {
						delivered = ts
					}
					switch {
					case delivered == 0:
						if tc.checkedBefore && ts > 12*60 && !near(secs(est.ServiceTime), 0.2, 0.10) {
							t.Fatalf("at %.0fs, before: %+v, want 0.2 s", ts, est)
						}
					case ts >= delivered+tc.within:
						if !near(secs(est.ServiceTime), 0.4, tc.tol) {
							t.Fatalf("at %.0fs, %.0fs after the first affected minute: %+v, want 0.4 s", ts, ts-delivered, est)
						}
					}
				})
				if delivered == 0 {
					t.Fatalf("no affected minute delivered")
				}
			})
		}
	}
}

// TestSimQuietMinutesAreNoStep: a quiet fleet (10 msg/s at 200 ms: 2 in
// flight, sampled 12 times a minute, so each minute's service time is good
// to about ±21 %) runs four hours at one service time. No two minutes in a
// row are a step: the estimate never restarts from two minutes (its good
// minutes never fall back from the full window).
func TestSimQuietMinutesAreNoStep(t *testing.T) {
	t.Parallel()
	const minutes = 240
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			s := &fleetSim{rate: 10, workers: 20, service: exponential(0.2)}
			s.start(seed, minutes, 0)
			e := New(Config{ServiceTime: 200 * time.Millisecond})
			most := 0
			drive(s, e, seed, minutes, false, func(ts float64, est Estimate) {
				if most >= docWindow-1 && est.Minutes < most-2 {
					t.Fatalf("at %.0fs the estimate restarted: %d good minutes behind it, %d before (%+v)", ts, est.Minutes, most, est)
				}
				most = max(most, est.Minutes)
			})
			if most < docWindow-1 {
				t.Fatalf("at most %d good minutes behind the estimate, want the window's %d", most, docWindow)
			}
		})
	}
}
