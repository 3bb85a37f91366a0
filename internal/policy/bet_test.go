package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
)

func TestLateIfMissed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                                    string
		rate, now, most, length, react, latency float64
		want                                    float64
	}{
		// The fleet keeps pace: nothing is late.
		{"keeps pace", 100, 100, 200, 60, 60, 10, 0},
		{"over capacity", 100, 150, 200, 60, 60, 10, 0},
		// No fleet, a promise of 0, workers that drain at once: the
		// messages of the reaction time are late, 100 × 30.
		{"reaction only", 100, 0, 1e12, 60, 30, 0, 3000},
		// Half the rate served: 3,000 messages wait after 60 s, drained
		// at 150 − 100 = 50 msg/s in 60 s more, to the end at 120 s; the
		// first 10 × 50 ÷ 50 = 10 s are within the promise: 100 × 110.
		{"drain to the end", 100, 50, 150, 120, 60, 10, 11000},
		// A fleet that cannot outgrow the load: late to the end.
		{"never drains", 100, 0, 100, 90, 60, 0, 9000},
		// Shorter than the reaction: late for its length.
		{"short", 100, 0, 1e12, 20, 60, 0, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := lateIfMissed(tc.rate, tc.now, tc.most, tc.length, tc.react, tc.latency); math.Abs(got-tc.want) > 1e-6*math.Max(1, tc.want) {
				t.Fatalf("lateIfMissed = %v, want %v", got, tc.want)
			}
		})
	}
}

// The bet's arithmetic against hand computations. A job at 100 msg/s for
// 60 s, one message per second a worker, needing 100 workers.
func TestBetWorkers(t *testing.T) {
	t.Parallel()
	// All or nothing: with no promise to hold early and no fleet to grow
	// into, 99 workers leave all 6,000 messages late, 100 none.
	allOrNothing := bet{rate: 100, length: 60, need: 100, mu: 1, most: 100, react: 60, lateCost: 1, wrong: 100, early: 50}
	// Part of it: with a 10 s promise and a fleet that can grow to 1,000,
	// n workers keep the first 10n ÷ (100 − n) s within the promise, all of
	// the 60 s the reaction takes from n = 85.7 on: of the sixteenths of
	// 100, 88 is the first that leaves nothing late (82 leaves
	// 100 × (60 − 820/18) = 1,444).
	part := bet{rate: 100, length: 60, need: 100, mu: 1, most: 1000, react: 60, latency: 10, lateCost: 1, wrong: 100, early: 50}
	for _, tc := range []struct {
		name string
		b    bet
		p    float64
		want int
	}{
		// p = 0.5: a worker costs 0.5 × 100 + 0.5 × 50 = 75 s, 100 of them
		// 7,500; missing costs 0.5 × 6,000 = 3,000: none.
		{"unlikely", allOrNothing, 0.5, 0},
		// p = 0.9, late messages at 2 worker-seconds: a worker costs
		// 0.1 × 100 + 0.9 × 50 = 55 s, 100 of them 5,500; missing costs
		// 0.9 × 2 × 6,000 = 10,800: all.
		{"likely", func() bet { b := allOrNothing; b.lateCost = 2; return b }(), 0.9, 100},
		// p = 0.9, late at 1: 5,500 against 5,400: none.
		{"likely but cheap to miss", allOrNothing, 0.9, 0},
		// p = 0.9: 88 workers cost 88 × 55 = 4,840; none 0.9 × 6,000 =
		// 5,400; 82 cost 4,510 + 0.9 × 1,444 = 5,810: 88 of 100.
		{"part", part, 0.9, 88},
		// A pattern that stopped: nothing.
		{"stopped", part, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.b
			b.p = tc.p
			if got := b.workers(); got != tc.want {
				t.Fatalf("workers = %d, want %d (costs: none %v, all %v)", got, tc.want, b.cost(0), b.cost(b.need))
			}
		})
	}
	// The hand figures of the partial case.
	b := part
	b.p = 0.9
	for _, tc := range []struct {
		x    int
		want float64
	}{{0, 5400}, {82, 82*55 + 0.9*100*(60-820.0/18)}, {88, 4840}, {100, 5500}} {
		if got := b.cost(tc.x); math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("cost(%d) = %v, want %v", tc.x, got, tc.want)
		}
	}
}

// A job that stops after two occurrences costs at most one partial
// pre-start: seen at :07 and :27, it is bet on once, for :47, with part of
// the workers it would need; once :47 has passed without it, never again.
func TestBetOnAJobThatStopsAfterTwo(t *testing.T) {
	t.Parallel()
	s := Settings{Policy: PolicyModel, ServiceTime: time.Second, Concurrency: 1, Latency: 30 * time.Second,
		Max: 500, StartDelay: time.Minute, StaleAfter: time.Minute}
	const job, base = 200.0, 10.0
	counts := forecasttest.Minutes(5, 4*60, func(i int) float64 {
		if i == 7 || i == 8 || i == 27 || i == 28 {
			return job
		}
		return base
	})
	fleet := model.Fleet{Kind: "autoscaling", Known: true, Desired: 13, InService: 13, Max: 500}
	// decide preloads the first m minutes into a new state and decides
	// three times over a quiet queue from m minutes 50 s on.
	decide := func(m int) model.Decision {
		var st State
		st.Preload(s, model.MinuteHistory{Start: fcStart, Counts: counts[:m]})
		var d model.Decision
		for i := range 3 {
			now := fcStart.Add(time.Duration(m)*time.Minute + 50*time.Second + time.Duration(i)*5*time.Second)
			smp := model.GroupSample{At: now, InFlight: 10, Backlog: 10, Queues: 1, Answered: 1,
				Deleted: &model.Reading{Value: base, At: now}}
			d = Decide(s, smp, fleet, &st, now)
		}
		return d
	}
	bets := map[time.Time]bool{} // the occurrences pre-started for
	for m := 30; m < 4*60-2; m++ {
		d := decide(m)
		if d.DesiredWorkers <= 20 {
			continue
		}
		if d.Forecast == nil || !d.Forecast.At.Equal(fcStart.Add(47*time.Minute)) {
			t.Fatalf("minute %d: %d workers for a job that was seen twice and stopped (forecast %+v, reasons %q)", m, d.DesiredWorkers, d.Forecast, d.Reasons)
		}
		bets[d.Forecast.At] = true
		// 200 msg/s at 1 s a message would need over 200 workers.
		if d.Floors.Wait == nil || d.DesiredWorkers >= 200 || !hasReason(d, "seen 2 of 2 times, every 20m0s") {
			t.Fatalf("minute %d: desired %d, want part of the job's 200+ (reasons %q)", m, d.DesiredWorkers, d.Reasons)
		}
	}
	if len(bets) != 1 {
		t.Fatalf("%d occurrences pre-started for, want one", len(bets))
	}
}
