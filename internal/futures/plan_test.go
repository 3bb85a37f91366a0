package futures

import (
	"math"
	"testing"
)

// flatBook is a book of an hour of steps of 5 s at rate msg/s, with a
// burst of burst msg/s for one step in every every steps (none when 0).
func flatBook(rate, burst float64, every int) *Book {
	b := NewBook(5, 3600, 300)
	for i := range 720 {
		r := rate
		if every > 0 && i%every == every/2 {
			r = burst
		}
		b.Observe(float64(i*5), float64(i*5+5), r*5)
	}
	return b
}

func TestBookSpreadsIntervalsOverSteps(t *testing.T) {
	t.Parallel()
	b := NewBook(5, 60, 5)
	b.Observe(0, 10, 10) // 1 msg/s over two steps
	b.Observe(10, 13, 6) // 2 msg/s, step 2 still open
	b.Observe(13, 18, 5) // 1 msg/s: step 2 gets 6 + 2 = 8 msgs
	if b.Len() != 3 {
		t.Fatalf("steps kept = %d, want 3", b.Len())
	}
	for i, want := range []float64{1, 1, 8.0 / 5} {
		if r, _ := b.at(i); math.Abs(r-want) > 1e-6 { // kept as float32
			t.Errorf("step %d rate = %v, want %v", i, r, want)
		}
	}
	// The level is an EWMA over tau = 5 s of the steps, from the first
	// interval's rate: 1, then 1, then 1 + (1.6-1)(1-e^-1).
	if want := 1 + 0.6*(1-math.Exp(-1)); math.Abs(b.Level()-want) > 1e-9 {
		t.Errorf("level = %v, want %v", b.Level(), want)
	}
	if r, ok := b.Recent(2); !ok || math.Abs(r-1.3) > 1e-6 {
		t.Errorf("recent(2) = %v %v, want 1.3", r, ok)
	}
	b.Observe(5000, 5005, 5) // a gap longer than the span starts again
	if b.Len() != 1 {
		t.Errorf("after a gap, steps kept = %d, want 1", b.Len())
	}
}

func steady(current int) Input {
	return Input{Level: 50, Now: 50, InService: current, Current: current, PerWorker: 1,
		StartDelay: 60, Promise: 30, Horizon: 150, Lo: 50, Hi: 3000, Allowance: 0.005, Waited: -1}
}

func TestPlanReleasesWhatNoFutureNeeds(t *testing.T) {
	t.Parallel()
	r, ok := NewPlanner().Plan(flatBook(50, 0, 0), steady(100))
	if !ok {
		t.Fatal("no plan")
	}
	// Flat arrivals at the floor's rate: nothing is late at the floor, and
	// 50 workers for the 150 s horizon cost 7,500 worker-seconds.
	if r.Workers != 50 || r.Chosen.Late != 0 || math.Abs(r.Chosen.WorkerSeconds-7500) > 1e-6 {
		t.Errorf("plan = %d workers, %v late, %v worker-seconds; want 50, 0, 7500", r.Workers, r.Chosen.Late, r.Chosen.WorkerSeconds)
	}
	if !r.HasMore || r.HasFewer || r.More.Total <= r.Chosen.Total {
		t.Errorf("one more should be weighed and cost more, one fewer is below Lo: %+v", r)
	}
	if r.P50 != 50 || r.P99 != 50 || !r.Blocks || r.Futures != Futures {
		t.Errorf("spread %v/%v, blocks %v, futures %d", r.P50, r.P99, r.Blocks, r.Futures)
	}
}

func TestPlanKeepsCapacityForBurstsSeen(t *testing.T) {
	t.Parallel()
	in := steady(60)
	flat, _ := NewPlanner().Plan(flatBook(50, 0, 0), in)
	bursty, _ := NewPlanner().Plan(flatBook(50, 800, 20), in)
	if bursty.Workers <= flat.Workers {
		t.Errorf("bursts every 100 s: %d workers, flat: %d; want more for the bursts", bursty.Workers, flat.Workers)
	}
	// Every message may be late: the bursts' messages are let wait.
	in.Allowance = 1
	cheap, _ := NewPlanner().Plan(flatBook(50, 800, 20), in)
	if cheap.Workers != in.Lo {
		t.Errorf("late messages free: %d workers, want the floor %d", cheap.Workers, in.Lo)
	}
}

func TestPlanCountsLateMessages(t *testing.T) {
	t.Parallel()
	short := NewBook(1, 3600, 300) // too little seen: one future at today's rate
	for _, tc := range []struct {
		name     string
		waited   float64
		want, by float64
	}{
		// 100 messages, 10 workers at 1 msg/s: served within 10 s.
		{"fresh backlog", 0, 0, 0},
		// The oldest 40 s old, the rest spread evenly after it: message x
		// (0..100) came 40(1-x/100) s ago and starts at x/10 s, late while
		// 40 - 0.3x > 30, so 33.3 of them. The fluid steps of 1 s count a
		// step's starts as late when its last start is: within one step's
		// service (10 messages) above.
		{"backlog past the promise", 40, 100.0 / 3, 10},
		// The oldest 25 s old: 25 - 0.15x never passes 30.
		{"backlog inside the promise", 25, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := Input{Backlog: 100, Waited: tc.waited, InService: 10, Current: 10, PerWorker: 1,
				StartDelay: 60, Promise: 30, Horizon: 60, Lo: 10, Hi: 10, Allowance: 1}
			r, ok := NewPlanner().Plan(short, in)
			if !ok || r.Blocks || r.Futures != 1 {
				t.Fatalf("plan %v: %+v", ok, r)
			}
			if got := r.Chosen.Late; got < tc.want-1e-6 || got > tc.want+tc.by+1e-6 {
				t.Errorf("late = %v, want %v (up to %v more)", got, tc.want, tc.by)
			}
		})
	}
}

func TestPlanLaunchesForABacklogWorthIt(t *testing.T) {
	t.Parallel()
	in := steady(50)
	in.Backlog, in.Waited = 3000, 0
	// 50 workers keep pace with 50 msg/s and never touch 3,000 waiting.
	// A launch now serves after 60 s, a step sooner than the next
	// decision's: more than the allowance of messages is late for it.
	r, _ := NewPlanner().Plan(flatBook(50, 0, 0), in)
	if r.Workers <= 50 || r.Avoidable(r.Chosen) > in.Allowance {
		t.Errorf("a 3,000 backlog: %d workers, %v of the messages late that more would save", r.Workers, r.Avoidable(r.Chosen))
	}
	if r.HasFewer && r.Avoidable(r.Fewer) <= in.Allowance {
		t.Errorf("one fewer than %d, %d, also keeps the allowance: not the fewest", r.Workers, r.Fewer.Workers)
	}
	in.Allowance = 1
	if r, _ := NewPlanner().Plan(flatBook(50, 0, 0), in); r.Workers != 50 {
		t.Errorf("late messages free: %d workers, want 50", r.Workers)
	}
}

func TestPlanNeverBuysPastTheCeiling(t *testing.T) {
	t.Parallel()
	in := steady(50)
	in.Backlog, in.Waited, in.Ceiling = 20000, 0, 80
	r, _ := NewPlanner().Plan(flatBook(50, 0, 0), in)
	if r.Workers > 80 {
		t.Errorf("a ceiling of 80 workers: the plan buys %d", r.Workers)
	}
	in.Ceiling = 0
	if r, _ := NewPlanner().Plan(flatBook(50, 0, 0), in); r.Workers <= 80 {
		t.Errorf("without the ceiling the same backlog should buy more than 80, got %d", r.Workers)
	}
}

func TestPlanRefusesWhatItCannotPlanOn(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(*Input){
		func(in *Input) { in.Level = math.Inf(1) },
		func(in *Input) { in.PerWorker = 0 },
		func(in *Input) { in.Backlog = math.NaN() },
		func(in *Input) { in.Allowance = -1 },
		func(in *Input) { in.Current = math.MaxInt },
		func(in *Input) { in.Waited = math.Inf(-1) },
	} {
		in := steady(10)
		mut(&in)
		if _, ok := NewPlanner().Plan(flatBook(50, 0, 0), in); ok {
			t.Errorf("planned on %+v", in)
		}
	}
	// Sums that overflow are not planned on either.
	b := NewBook(5, 3600, 300)
	for i := range 100 {
		b.Observe(float64(i*5), float64(i*5+5), 1e307)
	}
	if _, ok := NewPlanner().Plan(b, steady(10)); ok {
		t.Error("planned on arrivals whose sums overflow")
	}
}

func BenchmarkPlan(b *testing.B) {
	book := flatBook(50, 800, 20)
	p := NewPlanner()
	in := steady(60)
	b.ReportAllocs()
	for b.Loop() {
		p.Plan(book, in)
	}
}

// The allowance is spent on the rarest futures, not capacity kept for
// them: one burst half an hour ago weighs under RareShare of the futures,
// and the plan holds the floor; the same bursts every 100 s are in every
// future, and it does not.
func TestPlanSpendsTheAllowanceOnARareBurst(t *testing.T) {
	t.Parallel()
	in := steady(60)
	once, _ := NewPlanner().Plan(flatBook(50, 800, 720), in)
	if once.Workers != in.Lo {
		t.Errorf("one burst in the hour: %d workers, want the floor %d", once.Workers, in.Lo)
	}
	often, _ := NewPlanner().Plan(flatBook(50, 800, 20), in)
	if often.Workers <= in.Lo {
		t.Errorf("a burst every 100 s: %d workers, want more than the floor %d", often.Workers, in.Lo)
	}
}
