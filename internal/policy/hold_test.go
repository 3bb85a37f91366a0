package policy

import (
	"math"
	"testing"
	"time"
)

// A backlog's scale-out is held, against scale-in only, while its workers
// start and serve it, and released as soon as the workers the rate floors
// keep can serve what is left within the promise: 10 workers at 1 msg/s
// under 8 msg/s, then 600 messages dumped, a 60 s start delay.
func TestBacklogHold(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = time.Minute
	h := newHarness(t, s, asg(10, 10, 0))
	h.follow = false
	h.step(0, q(0, 8))
	d := h.settle(q(0, 8)) // λ = 8
	if d.DesiredWorkers != 10 {
		t.Fatalf("steady desired %d, want 10; reasons %q", d.DesiredWorkers, d.Reasons)
	}
	d = h.step(tick, q(600, 10))
	lambda := *d.ArrivalRate
	// The latency floor: the 10 in service shrink the visible count by
	// (10 − λ')/s for the minute the new workers take to start, λ' the
	// estimate had the jump (Δtotal 602 in 5 s, 9 busy on average: 129.4
	// msg/s) not been held back as a dump, which the backlog floors use
	// until the next interval tells.
	unbounded := ewma(8, 602.0/5+9, 5, 60)
	want := int(math.Ceil(lambda + (600-(10-unbounded)*60)/30 - 1e-9))
	if d.DesiredWorkers != want || want <= 10 {
		t.Fatalf("dump desired %d, want %d; reasons %q", d.DesiredWorkers, want, d.Reasons)
	}
	pending := want - 10
	h.fleet = asg(want, 10, pending)
	for range pending {
		h.fleet.PendingSince = append(h.fleet.PendingSince, h.now)
	}
	visible := 600.0
	released := false
	for i := range 40 {
		if i == 12 { // the new workers start
			h.fleet = asg(want, want, 0)
		}
		inService := float64(h.fleet.InService)
		visible = math.Max(visible-(inService-lambda)*5, 0)
		busy := int64(min(inService, lambda+visible))
		d = h.step(tick, q(int64(math.Round(visible)), busy))
		lambda = *d.ArrivalRate
		// By hand: the workers kept once the hold ends, and what the
		// backlog floors ask of them with nothing to wait for.
		rate := max(*d.Floors.Utilization, *d.Floors.Wait)
		keep := min(h.fleet.InService, rate)
		need := max(int(math.Ceil(lambda+math.Round(visible)/30-1e-9)), int(math.Ceil(lambda+math.Round(visible)/900-1e-9)))
		switch {
		case !released && need > keep:
			if d.DesiredWorkers != want {
				t.Fatalf("sample %d (%d in service, %v visible): desired %d, want %d held; reasons %q", i, h.fleet.InService, visible, d.DesiredWorkers, want, d.Reasons)
			}
		case !released:
			released = true
			if h.fleet.InService != want {
				t.Fatalf("sample %d: released before the new workers started", i)
			}
			if d.DesiredWorkers >= want || !hasReason(d, "the backlog is served") {
				t.Fatalf("sample %d: desired %d after the backlog was served, want below %d; reasons %q", i, d.DesiredWorkers, want, d.Reasons)
			}
		}
		if released {
			h.fleet = asg(d.DesiredWorkers, d.DesiredWorkers, 0)
		}
	}
	if !released {
		t.Fatal("never released")
	}
}

// A fleet at the arrivals' pace (a utilisation ceiling of 1) releases a
// backlog's workers once the backlog is served: the messages in flight on
// its workers are being served, not a backlog the workers kept must drain.
// 50 msg/s of 8 s work keep 400 messages in flight for good; counted as a
// backlog to drain within 15 minutes they would ask for a worker or two
// above the rate floors for ever, and hold the dump's workers with them.
// A minute after nothing waits, no decision may still hold them.
func TestBacklogHoldEndsAtFullUtilisation(t *testing.T) {
	t.Parallel()
	s := base()
	s.ServiceTime = 8 * time.Second
	s.Latency = time.Minute
	s.Utilization = 1
	s.Max = 3000
	h := newHarness(t, s, asg(420, 420, 0))
	d := h.settle(q(0, 400)) // λ = 400 busy ÷ 8 s = 50 msg/s
	steady := d.DesiredWorkers
	d = h.step(tick, q(4000, 400))
	held := d.DesiredWorkers
	if held <= steady {
		t.Fatalf("a 4,000-message dump: desired %d, want above %d; reasons %q", held, steady, d.Reasons)
	}
	// The dump's workers serve it within a minute; then nothing waits and
	// 400 messages stay in flight. Each interval 250 messages come, the
	// busy workers complete their eighth, and the rest wait.
	total := 4400.0
	idle := 0 // samples since nothing has waited
	for range 200 {
		total += 50*5 - math.Min(float64(h.fleet.InService), total)/8*5
		busy := math.Min(float64(h.fleet.InService), total)
		visible := math.Round(total - busy)
		d = h.step(tick, q(int64(visible), int64(math.Round(busy))))
		if visible > 0 {
			idle = 0
			continue
		}
		idle++
		if idle > 12 && hasReason(d, "for the backlog until") {
			t.Fatalf("%d samples with nothing waiting, %.0f in flight: the dump's workers still held; reasons %q", idle, busy, d.Reasons)
		}
	}
	if idle < 100 {
		t.Fatalf("the dump was not served: %d samples with nothing waiting", idle)
	}
	// The count comes down to what the floors ask, within the deadband.
	if float64(d.DesiredWorkers) > 1.1*float64(d.RecommendedWorkers) {
		t.Fatalf("desired %d, recommended %d: want within the 10 %% deadband; reasons %q", d.DesiredWorkers, d.RecommendedWorkers, d.Reasons)
	}
}

// The backlog hold ends once nothing waits and no worker is on its way,
// even while the backlog floors, which count the arrivals, ask for more
// than the rate floors keep: a burst sized for its base rate after it (1
// worker) at 100 msg/s asks the drain floor for 100, but a fleet of 300
// with no message visible has served its backlog, and the burst's workers
// are kept by the burst (keepWarm), not by a backlog that is gone. With a
// worker still starting, the hold keeps all 300.
func TestBacklogHoldEndsWhenNothingWaits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		inService int
		want      int
	}{{"all in service", 300, 1}, {"a worker starting", 299, 300}} {
		s := base().WithDefaults()
		st := &State{backlogHold: 300}
		c := call{s: s, st: st, b: new(box), current: 300, currentKnown: true, inService: tc.inService,
			lambdaKnown: true, lambda: 100, lambdaEff: 100, mu: 1, muEff: 1, perServer: 1, hi: s.Max, rec: 1, rateRec: 1}
		if need := c.backlogNeed(); need < 100 {
			t.Fatalf("%s: the backlog floors ask %d, want at least the 100 the arrivals need", tc.name, need)
		}
		got := c.holdForBacklog(1)
		if got != tc.want {
			t.Errorf("%s: target %d, want %d; reasons %q", tc.name, got, tc.want, c.d.Reasons)
		}
		if held := st.backlogHold > 0; held != (tc.want == 300) {
			t.Errorf("%s: hold %d left, want it kept only while a worker starts", tc.name, st.backlogHold)
		}
	}
}
