package sim

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

var long = flag.Bool("sim.long", false, "run the long simulation checks (minutes)")

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// pooled is the waits of several fixed-fleet runs of a steady queue.
type pooled struct {
	n, waited int64
	sum       float64
	all       waitStats // every run's waits together
}

func (p pooled) mean() float64      { return p.sum / float64(p.n) }
func (p pooled) waitShare() float64 { return float64(p.waited) / float64(p.n) }

// merge adds o's waits to s.
func (s *waitStats) merge(o *waitStats) {
	s.n += o.n
	s.within += o.within
	s.sum += o.sum
	s.max = math.Max(s.max, o.max)
	if len(o.counts) > len(s.counts) {
		s.counts = append(s.counts, make([]int64, len(o.counts)-len(s.counts))...)
	}
	for i, c := range o.counts {
		s.counts[i] += c
	}
}

// fixedRuns simulates a fixed fleet of c workers on a steady rate for d,
// once per seed, and pools the waits.
func fixedRuns(t testing.TB, rate float64, svc Service, c int, d time.Duration, seeds int) pooled {
	t.Helper()
	sc, err := Builtin(ScenarioSteady, rate, d)
	if err != nil {
		t.Fatal(err)
	}
	var p pooled
	for seed := 1; seed <= seeds; seed++ {
		w, err := NewWorld(Config{Start: t0, Scenario: sc, Service: svc, Min: c, Max: c, Workers: c,
			LatencyTarget: 10 * time.Second, Seed: uint64(seed)})
		if err != nil {
			t.Fatal(err)
		}
		w.Snapshot(t0.Add(d))
		p.n += w.waits.n
		p.sum += w.waits.sum
		p.waited += w.waits.n - w.waits.counts[0] // bucket 0 holds the waits under 1 µs
		p.all.merge(&w.waits)
	}
	return p
}

// Seed 002's table, λ = 50 msg/s, S = 200 ms: the Erlang C reference
// (capacity.ErlangC) must reproduce it before the simulator is held to it.
func TestErlangCReferenceMatchesSeedTable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c        int
		pWait    float64 // "jobs that wait"
		wqMillis float64 // "queue wait"
	}{
		{11, 0.682, 136.4}, {12, 0.449, 44.9}, {13, 0.285, 19.0}, {14, 0.174, 8.7}, {16, 0.057, 1.9},
	}
	for _, tt := range tests {
		q := capacity.ErlangC(tt.c, 50, 5)
		if math.Abs(q.WaitProbability-tt.pWait) > 0.0006 || math.Abs(q.MeanWait*1000-tt.wqMillis) > 0.06 {
			t.Errorf("c=%d: P(wait) %.4f, Wq %.2f ms; Erlang C example says %.3f, %.1f ms", tt.c, q.WaitProbability, q.MeanWait*1000, tt.pWait, tt.wqMillis)
		}
	}
}

// The simulator against Erlang C on the Erlang C example's M/M/c queue (λ = 50 msg/s,
// S = 200 ms exponential, c = 11..16 fixed workers): mean queue wait, the
// share of messages that wait, and the median and 99th percentile of the
// wait, whose M/M/c distribution is P(Wq > t) = C·e^−(cμ−λ)t.
//
// The default run pools 4 seeds × 1 simulated hour per pool size (the
// spread of the mean wait between such runs is about 3 %, so 10 % is over
// three standard deviations; under the race detector 2 seeds and 15 %);
// -sim.long pools 8 seeds × 8 hours (11.5
// million messages per pool size) and holds the mean to 3 %.
func TestSimulatorAgreesWithErlangC(t *testing.T) {
	t.Parallel()
	seeds, d, tolMean, tolShare, tolQ := 4, time.Hour, 0.10, 0.03, 0.10
	if raceEnabled {
		seeds, tolMean, tolShare, tolQ = 2, 0.15, 0.05, 0.15
	}
	if *long {
		seeds, d, tolMean, tolShare, tolQ = 8, 8*time.Hour, 0.03, 0.01, 0.03
	}
	const lambda, mu = 50.0, 5.0
	for c := 11; c <= 16; c++ {
		t.Run(fmt.Sprintf("c=%d", c), func(t *testing.T) {
			t.Parallel()
			q := capacity.ErlangC(c, lambda, mu)
			p := fixedRuns(t, lambda, Service{Dist: DistExponential, Mean: 200 * time.Millisecond}, c, d, seeds)
			t.Logf("c=%d: mean wait %.2f ms (Erlang C %.2f ms, %+.1f %%), waited %.3f (C %.3f), %d messages",
				c, p.mean()*1000, q.MeanWait*1000, 100*(p.mean()/q.MeanWait-1), p.waitShare(), q.WaitProbability, p.n)
			if rel := math.Abs(p.mean()/q.MeanWait - 1); rel > tolMean {
				t.Errorf("mean wait %.3f ms, Erlang C %.3f ms: off by %.1f %% (tolerance %.0f %%)",
					p.mean()*1000, q.MeanWait*1000, 100*rel, 100*tolMean)
			}
			if rel := math.Abs(p.waitShare()/q.WaitProbability - 1); rel > tolShare {
				t.Errorf("share that waited %.4f, Erlang C %.4f", p.waitShare(), q.WaitProbability)
			}
			for _, qt := range []struct{ q float64 }{{0.5}, {0.99}} {
				miss := 1 - qt.q
				if q.WaitProbability <= miss {
					continue // the quantile is 0: too few waits to compare
				}
				want := math.Log(q.WaitProbability/miss) / (float64(c)*mu - lambda)
				got := p.all.quantile(qt.q)
				// A small quantile has an absolute floor of noise of 1 ms.
				t.Logf("p%.0f wait %.4f s, M/M/c %.4f s", qt.q*100, got, want)
				if math.Abs(got-want) > tolQ*want+0.001 {
					t.Errorf("p%.0f wait %.4f s, M/M/c %.4f s", qt.q*100, got, want)
				}
			}
		})
	}
}

// One worker, where the Pollaczek–Khinchine formula gives the mean wait for
// any service distribution: Wq = ρ·S·(1 + cv²) / (2(1 − ρ)).
func TestSimulatorAgreesWithPollaczekKhinchine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		svc  Service
		rate float64
		cv   float64
		tol  float64
	}{
		{"M/M/1", Service{Dist: DistExponential, Mean: 200 * time.Millisecond}, 3, 1, 0.06},
		{"M/D/1", Service{Dist: DistConstant, Mean: 200 * time.Millisecond}, 3, 0, 0.05},
		{"M/G/1 lognormal cv 0.5", Service{Dist: DistLognormal, Mean: 200 * time.Millisecond, CV: 0.5}, 3, 0.5, 0.05},
		{"M/G/1 lognormal cv 2", Service{Dist: DistLognormal, Mean: 200 * time.Millisecond, CV: 2}, 2, 2, 0.12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.svc.Mean.Seconds()
			rho := tt.rate * s
			want := rho * s * (1 + tt.cv*tt.cv) / (2 * (1 - rho))
			p := fixedRuns(t, tt.rate, tt.svc, 1, 4*time.Hour, 4)
			tol := tt.tol
			if raceEnabled {
				p = fixedRuns(t, tt.rate, tt.svc, 1, 4*time.Hour, 2)
				tol *= 1.5
			}
			t.Logf("%s: mean wait %.4f s, P-K %.4f s (%+.1f %%)", tt.name, p.mean(), want, 100*(p.mean()/want-1))
			if rel := math.Abs(p.mean()/want - 1); rel > tol {
				t.Errorf("mean wait %.4f s, Pollaczek–Khinchine %.4f s: off by %.1f %%", p.mean(), want, 100*rel)
			}
		})
	}
}

func TestServiceTimeMoments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		svc    Service
		wantCV float64
	}{
		{"exponential", Service{Dist: DistExponential, Mean: 200 * time.Millisecond}, 1},
		{"default is exponential", Service{Mean: 200 * time.Millisecond}, 1},
		{"constant", Service{Dist: DistConstant, Mean: 200 * time.Millisecond}, 0},
		{"lognormal cv 0.5", Service{Dist: DistLognormal, Mean: 3 * time.Second, CV: 0.5}, 0.5},
		{"lognormal cv 1.5", Service{Dist: DistLognormal, Mean: 50 * time.Millisecond, CV: 1.5}, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sp := newSampler(tt.svc)
			r := rand.New(rand.NewPCG(1, 2))
			const n = 400_000
			var sum, sum2 float64
			for range n {
				x := sp.draw(r)
				sum += x
				sum2 += x * x
			}
			mean := sum / n
			cv := math.Sqrt(math.Max(0, sum2/n-mean*mean)) / mean
			if m := tt.svc.Mean.Seconds(); math.Abs(mean/m-1) > 0.01 {
				t.Errorf("mean %v, want %v", mean, m)
			}
			if math.Abs(cv-tt.wantCV) > 0.04*math.Max(tt.wantCV, 0.1) {
				t.Errorf("coefficient of variation %v, want %v", cv, tt.wantCV)
			}
		})
	}
}

// Service times that vary more than exponential ones (lognormal, cv 2)
// make the waits of those that wait longer, by about (1 + cv²) ÷ 2 = 2.5
// (Allen–Cunneen): at 50 msg/s of 200 ms work, the Erlang C floor for 99 %
// within 200 ms, sized for exponential service, lets more than 1 % wait
// longer in the simulator; the floor sized with the spread keeps 99 %.
func TestWaitFloorWithTheServiceSpreadHoldsTheQuantile(t *testing.T) {
	t.Parallel()
	const lambda, perServer, wait, quantile = 50.0, 5.0, 0.2, 0.99
	svc := Service{Dist: DistLognormal, Mean: 200 * time.Millisecond, CV: 2}
	mmc, _ := capacity.WaitFloorWorkers(lambda, perServer, wait, quantile, 0, 1, 0)
	mgc, _ := capacity.WaitFloorWorkers(lambda, perServer, wait, quantile, capacity.ServiceSpread(svc.CV), 1, 0)
	if mgc <= mmc {
		t.Fatalf("the floor with the spread (%d) is not above the exponential one (%d)", mgc, mmc)
	}
	seeds := 4
	if raceEnabled {
		seeds = 2
	}
	p99 := func(c int) float64 {
		p := fixedRuns(t, lambda, svc, c, time.Hour, seeds)
		return p.all.quantile(quantile)
	}
	atMMc, atMGc := p99(mmc), p99(mgc)
	t.Logf("p99 wait: %.3f s with %d servers (exponential floor), %.3f s with %d (with the spread)", atMMc, mmc, atMGc, mgc)
	if atMMc <= wait {
		t.Errorf("p99 wait %.3f s with the exponential floor's %d servers: within %v s, the spread would not matter", atMMc, mmc, wait)
	}
	if atMGc > wait {
		t.Errorf("p99 wait %.3f s with the spread's floor of %d servers, want within %v s", atMGc, mgc, wait)
	}
}
