package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

const tick = 5 * time.Second

// steadyThenSpike runs a minute of quiet samples (10 msg/s, 10 in flight at 1 s per
// message, on 15 workers) and then a spike of 3,000 visible messages with
// all 15 workers busy. It returns the spike decision and the arrival rate
// the estimator's documented formula gives for it.
func steadyThenSpike(h *harness) (model.Decision, float64) {
	h.step(0, q(0, 10))
	// The fleet stays at 15 while the estimate settles.
	follow := h.follow
	h.follow = false
	d := h.settle(q(0, 10))
	h.follow = follow
	// Δtotal 0, completions (10+10)/2 × 1/s each interval: λ = 10.
	if d.ArrivalRate == nil || *d.ArrivalRate != 10 {
		h.t.Fatalf("steady arrival rate %v, want 10", d.ArrivalRate)
	}
	spike := h.step(tick, q(3000, 15))
	// Δtotal 3005 over 5 s, plus completions of min((10+15)/2, 15 slots) ×
	// 1/s: 613.5 msg/s, far above the last observation and the estimate (10
	// both). Until another interval shows the same rate it is a dump, a
	// backlog: it enters the EWMA at 10 + 3σ + 2.5, σ = √((10 + 12.5)/5), 2.5 the most
	// Little's law can be wrong by while in flight moves from 10 to 15.
	return spike, ewma(10, dumpBound(10, 12.5, 5, 2.5), 5, 60)
}

func TestSpikeScalesOutInOneDecision(t *testing.T) {
	t.Parallel()
	h := newHarness(t, base(), asg(15, 15, 0))
	d, lambda := steadyThenSpike(h)
	if d.ArrivalRate == nil || math.Abs(*d.ArrivalRate-lambda) > 1e-9 {
		t.Fatalf("arrival rate %v, want %v; reasons %q", ptrValue(d.ArrivalRate), lambda, d.Reasons)
	}
	// The latency floor: λ plus 3,000 visible messages started within 30 s,
	// at 1 msg/s per worker.
	want := int(math.Ceil(lambda + 3000.0/30))
	if d.DesiredWorkers != want || d.RecommendedWorkers != want {
		t.Fatalf("desired %d, recommended %d, want %d; reasons %q", d.DesiredWorkers, d.RecommendedWorkers, want, d.Reasons)
	}
	// The other floors are below it, and say so.
	if u := intp(d.Floors.Utilization); u != int(math.Ceil(lambda/0.8)) {
		t.Errorf("utilisation floor %v, want %d", u, int(math.Ceil(lambda/0.8)))
	}
	if *d.Floors.Wait >= want || *d.Floors.Wait <= int(lambda) {
		t.Errorf("wait floor %d, want between the offered load %v and %d", *d.Floors.Wait, lambda, want)
	}
	if bpw := *d.Floors.BacklogPerWorker; bpw != int(math.Ceil(3015.0/30)) {
		t.Errorf("backlog_per_worker floor %d, want %d", bpw, int(math.Ceil(3015.0/30)))
	}
	if d.Diagnosis != model.DiagUnderProvisioned {
		t.Errorf("diagnosis %q, want under_provisioned", d.Diagnosis)
	}
	if d.Held || d.Capped {
		t.Errorf("held %v capped %v", d.Held, d.Capped)
	}
	if d.BacklogPerWorker != 3015.0/15 || d.TargetBacklogPerWorker != 30 {
		t.Errorf("backlog per worker %v target %v, want 201 and 30", d.BacklogPerWorker, d.TargetBacklogPerWorker)
	}
	// 15 workers at 1 msg/s against λ drain the 3,015 messages in
	// 3015/(15 − λ) s.
	if d.DrainSeconds == nil || math.Abs(*d.DrainSeconds-3015/(15-lambda)) > 1e-6 {
		t.Errorf("drain seconds %v, want %v", d.DrainSeconds, 3015/(15-lambda))
	}
	if u := *d.Utilization; math.Abs(u-lambda/15) > 1e-12 {
		t.Errorf("utilisation %v, want %v", u, lambda/15)
	}
}

func TestFirstDecisionScalesOutOnBacklogAlone(t *testing.T) {
	t.Parallel()
	h := newHarness(t, base(), asg(2, 2, 0))
	d := h.step(0, q(3000, 2))
	if d.ArrivalRate != nil || d.Utilization != nil || d.DrainSeconds != nil {
		t.Fatalf("first sample: arrival %v utilisation %v drain %v, want nil", d.ArrivalRate, d.Utilization, d.DrainSeconds)
	}
	if d.Floors.Utilization != nil || d.Floors.Wait != nil {
		t.Fatalf("floors %+v: utilisation and wait need an arrival rate", d.Floors)
	}
	if d.DesiredWorkers != 100 { // 3,000 visible within 30 s at 1 msg/s
		t.Fatalf("desired %d, want 100; reasons %q", d.DesiredWorkers, d.Reasons)
	}
	if !hasReason(d, "arrival rate not known yet") {
		t.Errorf("reasons %q do not say the arrival rate is unknown", d.Reasons)
	}
}

// The workers added for the spike's backlog stay until the workers the rate
// floors keep (at most those in service) can serve what is left of it within
// the promise; the fleet then falls at once to the highest rate
// recommendation of the scale-in window, not to the spike's count, which was
// for a backlog that is served.
func TestSpikeEndScalesInOnceItsBacklogIsServed(t *testing.T) {
	t.Parallel()
	s := base()
	s.ScaleInStabilization = 5 * time.Minute // a window longer than the whole test
	h := newHarness(t, s, asg(15, 15, 0))
	spike, _ := steadyThenSpike(h)
	peak, spikeAt := spike.DesiredWorkers, h.now
	// The fleet drains the spike within half a minute, then the 10 msg/s
	// stream returns.
	visible := int64(3000)
	released, held := false, 0
	for h.now.Sub(spikeAt) < 30*time.Minute {
		visible = max(visible-700, 0)
		inFlight := int64(10)
		if visible > 0 {
			inFlight = int64(peak)
		}
		d := h.step(tick, q(visible, inFlight))
		elapsed := h.now.Sub(spikeAt)
		// By hand: the rate floors' recommendation (utilisation and wait;
		// keeping pace is below the utilisation floor), the workers kept,
		// and what the backlog floors ask of them with nothing to wait for:
		// λ plus the visible messages within 30 s, or λ plus the whole
		// backlog within 15 minutes, at 1 msg/s per worker.
		lambda := *d.ArrivalRate
		rate := max(*d.Floors.Utilization, *d.Floors.Wait)
		keep := min(d.InServiceWorkers, rate)
		need := max(int(math.Ceil(lambda+float64(visible)/30-1e-9)), int(math.Ceil(lambda+float64(visible+inFlight)/900-1e-9)))
		if !released && need > keep {
			if d.DesiredWorkers != peak || !hasReason(d, "keeping", "for the backlog") {
				t.Fatalf("%s after the spike, %d visible: desired %d, want %d held for the backlog; reasons %q", elapsed, visible, d.DesiredWorkers, peak, d.Reasons)
			}
			held++
			continue
		}
		if !released {
			released = true
			if elapsed > time.Minute || !hasReason(d, "the backlog is served") {
				t.Fatalf("%s after the spike: released with reasons %q", elapsed, d.Reasons)
			}
			// The highest rate recommendation of the window: the window
			// started from the 15 workers of the first decision.
			high := 15
			for _, p := range h.log {
				if p.Floors.Utilization != nil && p.Floors.Wait != nil {
					high = max(high, *p.Floors.Utilization, *p.Floors.Wait)
				}
			}
			if d.DesiredWorkers != high || high >= 20 {
				t.Fatalf("%s after the spike: desired %d, want the window's highest rate recommendation %d (< 20); reasons %q", elapsed, d.DesiredWorkers, high, d.Reasons)
			}
		}
	}
	if !released || held < 2 {
		t.Fatalf("held for the backlog %d times, released %v", held, released)
	}
	// At the end, past the peak window too, the count is the highest
	// recommendation of the last five minutes, or within the deadband above
	// it, and the stream needs far fewer workers than the spike.
	last := h.log[len(h.log)-1]
	high := 0
	for _, d := range h.log {
		if !d.At.Before(h.now.Add(-model.DefaultScaleInStabilization)) {
			high = max(high, d.RecommendedWorkers)
		}
	}
	if last.DesiredWorkers < high || float64(last.DesiredWorkers-high) > model.DefaultDeadband*float64(last.DesiredWorkers) || high >= 20 {
		t.Fatalf("final desired %d, want the window's highest recommendation %d (< 20) or within 10 %% above it", last.DesiredWorkers, high)
	}
	if last.Diagnosis != model.DiagHealthy {
		t.Errorf("final diagnosis %q, want healthy", last.Diagnosis)
	}
}

func TestDeadband(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		utilization float64
		inFlight    int64 // steady, at 1 s per message: the arrival rate
		want        int   // desired after the stabilisation window
		reason      string
	}{
		// 16 msg/s at a 0.75 ceiling ask for 22: +2 of 20 is within 10 %.
		{"scale-out within the deadband", 0.75, 16, 20, "within the 10 % deadband: no action"},
		// 15 msg/s at 0.8 ask for 19: −1 of 20 is within 10 %.
		{"scale-in within the deadband", 0.8, 15, 20, "within the 10 % deadband: no action"},
		// 13 msg/s at 0.8 ask for 17: −3 is outside it.
		{"scale-in outside the deadband", 0.8, 13, 17, ""},
		// 20 msg/s at 0.95 ask for 22: within 10 %, but 20 workers at
		// 1 msg/s cannot keep up with 20 msg/s.
		{"unstable fleet is not held by the deadband", 0.95, 20, 22, "cannot keep up"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			s.Utilization = tc.utilization
			h := newHarness(t, s, asg(20, 20, 0))
			var d model.Decision
			for i := 0; i < 80; i++ { // 400 s: past the 5-minute window
				d = h.step(tick, q(0, tc.inFlight))
			}
			if d.DesiredWorkers != tc.want {
				t.Fatalf("desired %d, want %d; recommended %d, reasons %q", d.DesiredWorkers, tc.want, d.RecommendedWorkers, d.Reasons)
			}
			found := tc.reason == ""
			for _, d := range h.log {
				found = found || hasReason(d, tc.reason)
			}
			if !found {
				t.Fatalf("no decision gives the reason %q; last reasons %q", tc.reason, d.Reasons)
			}
			if d.Held {
				t.Fatalf("deadband is not a hold: %q", d.HoldReason)
			}
		})
	}
}

func TestHoldsOnBadData(t *testing.T) {
	t.Parallel()
	missing := q(0, 0)
	missing.Queues, missing.Answered = 2, 0
	negative := q(-5, 3)
	cases := []struct {
		name   string
		sample func(now time.Time) model.GroupSample
		fleet  model.Fleet
		hold   string
		want   int
	}{
		{"missing", func(now time.Time) model.GroupSample { s := missing; s.At = now; return s }, asg(40, 40, 0), "missing data", 40},
		{"negative counts", func(now time.Time) model.GroupSample { s := negative; s.At = now; return s }, asg(40, 40, 0), "invalid data", 40},
		{"stale", func(now time.Time) model.GroupSample { s := q(0, 0); s.At = now.Add(-time.Minute); return s }, asg(40, 40, 0), "stale data", 40},
		// The fleet read failed: hold at the count last read (40).
		{"fleet unknown", func(now time.Time) model.GroupSample { s := q(0, 0); s.At = now; return s },
			model.Fleet{Kind: "autoscaling", Name: "w", Err: errFleet{}}, "fleet unknown", 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			st := State{}
			now := t0
			// A known good decision first: 40 workers, 30 visible.
			first := q(30, 10)
			first.At = now
			d := Decide(s, first, asg(40, 40, 0), &st, now)
			if d.DesiredWorkers != 40 || d.Held {
				t.Fatalf("first decision %d held %v", d.DesiredWorkers, d.Held)
			}
			// Then bad data, for much longer than the window.
			for i := 0; i < 100; i++ {
				now = now.Add(tick)
				d = Decide(s, tc.sample(now), tc.fleet, &st, now)
				checkDecision(t, s, tc.fleet, d)
				if !d.Held || d.HoldReason != tc.hold || d.DesiredWorkers != tc.want {
					t.Fatalf("step %d: held %v %q desired %d, want held %q at %d; reasons %q",
						i, d.Held, d.HoldReason, d.DesiredWorkers, tc.hold, tc.want, d.Reasons)
				}
			}
			if tc.hold == "missing data" && (d.Diagnosis != model.DiagUnknown || d.ArrivalRate != nil) {
				t.Errorf("missing data: diagnosis %q arrival %v, want unknown and nil", d.Diagnosis, d.ArrivalRate)
			}
		})
	}
}

type errFleet struct{}

func (errFleet) Error() string { return "throttled" }

func TestPartialData(t *testing.T) {
	t.Parallel()
	partial := func(visible, inFlight int64) model.GroupSample {
		s := q(visible, inFlight)
		s.Queues, s.Answered = 2, 1
		s.Failures = []model.QueueFailure{{Queue: "b", Region: "eu-west-1", Class: model.ErrClassThrottled}}
		return s
	}
	t.Run("never scales in", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, base(), asg(40, 40, 0))
		for i := 0; i < 100; i++ { // far past the window
			d := h.step(tick, partial(0, 1))
			if d.DesiredWorkers != 40 || !d.Held || d.HoldReason != "partial data" || !d.Partial {
				t.Fatalf("step %d: desired %d held %v %q partial %v", i, d.DesiredWorkers, d.Held, d.HoldReason, d.Partial)
			}
		}
	})
	t.Run("scales out on what is known", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, base(), asg(10, 10, 0))
		d := h.step(0, partial(6000, 10))
		// The answering queue alone needs 6,000 visible within 30 s.
		if d.DesiredWorkers != 200 || d.Held || !d.Partial {
			t.Fatalf("desired %d held %v partial %v, want 200 not held; reasons %q", d.DesiredWorkers, d.Held, d.Partial, d.Reasons)
		}
		if !hasReason(d, "only 1 of 2 queues answered") {
			t.Errorf("reasons %q do not mention the partial sample", d.Reasons)
		}
	})
	t.Run("counts over different queues are not subtracted", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, base(), asg(10, 10, 0))
		full := q(5000, 10)
		h.step(0, full)
		// One queue drops out: 4,000 fewer messages is not a drain.
		d := h.step(tick, partial(1000, 10))
		if d.ArrivalRate != nil {
			t.Fatalf("arrival rate %v from counts over different queues", *d.ArrivalRate)
		}
	})
}

func TestCapped(t *testing.T) {
	t.Parallel()
	t.Run("cap below the target", func(t *testing.T) {
		t.Parallel()
		s := base()
		s.Cap = 25
		h := newHarness(t, s, asg(10, 10, 0))
		d := h.step(0, q(3000, 10))
		if d.DesiredWorkers != 25 || !d.Capped || d.Diagnosis != model.DiagCapped {
			t.Fatalf("desired %d capped %v diagnosis %q", d.DesiredWorkers, d.Capped, d.Diagnosis)
		}
		if !hasReason(d, "the target needs 100, the cap allows 25") {
			t.Fatalf("reasons %q", d.Reasons)
		}
		if d.RecommendedWorkers != 100 {
			t.Fatalf("recommended %d, want 100 before the cap", d.RecommendedWorkers)
		}
	})
	t.Run("cap below min: the cap wins", func(t *testing.T) {
		t.Parallel()
		s := base()
		s.Min, s.Cap = 5, 3
		h := newHarness(t, s, asg(5, 5, 0))
		d := h.step(0, q(3000, 5))
		if d.DesiredWorkers != 3 || !d.Capped || !hasReason(d, "the cap allows 3") || !hasReason(d, "the min 5 is above the cap 3: the cap wins") {
			t.Fatalf("desired %d capped %v reasons %q", d.DesiredWorkers, d.Capped, d.Reasons)
		}
	})
	t.Run("max below the target", func(t *testing.T) {
		t.Parallel()
		s := base()
		s.Max = 50
		h := newHarness(t, s, asg(10, 10, 0))
		d := h.step(0, q(3000, 10))
		if d.DesiredWorkers != 50 || !d.Capped || !hasReason(d, "the target needs 100, the max allows 50") {
			t.Fatalf("desired %d capped %v reasons %q", d.DesiredWorkers, d.Capped, d.Reasons)
		}
	})
}

// The planner example's second worked example: 20 msg/s with a 25 % burst reserve,
// 2 msg/s per worker less 10 % overhead, 30,000 waiting, a 20-minute target:
// the drain floor is 28, and a 14-worker cap turns it into a capped plan.
func TestPlannerCappedPlan(t *testing.T) {
	t.Parallel()
	s := Settings{Group: "g", Throughput: 2, BurstReserve: 25, OverheadReserve: 10,
		DrainTime: 20 * time.Minute, Min: 1, Max: 100, Cap: 14}
	h := newHarness(t, s, asg(14, 14, 0))
	at := func() *model.Reading { return reading(20, h.now.Add(-2*time.Minute)) }
	// 20 msg/s at 2 msg/s per worker keep 10 workers busy: by Little's
	// law, 10 messages in flight.
	smp := q(30000, 10)
	smp.Deleted = reading(20, t0)
	h.step(0, smp)
	smp.Deleted = at()
	d := h.step(tick, smp) // Δ 0, deleted 20: λ = 20
	if *d.ArrivalRate != 20 || *d.Floors.Drain != 28 || d.RecommendedWorkers != 28 {
		t.Fatalf("arrival %v drain %v recommended %d, want 20, 28, 28", *d.ArrivalRate, intp(d.Floors.Drain), d.RecommendedWorkers)
	}
	if d.DesiredWorkers != 14 || !d.Capped || !hasReason(d, "the target needs 28, the cap allows 14") {
		t.Fatalf("desired %d capped %v reasons %q", d.DesiredWorkers, d.Capped, d.Reasons)
	}
	if d.Floors.Wait != nil || d.Floors.BacklogPerWorker != nil {
		t.Fatalf("no latency promise, yet floors %+v", d.Floors)
	}
}

func TestStartingWorkersAreNotDoubled(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = 90 * time.Second
	h := newHarness(t, s, asg(15, 15, 0))
	h.follow = false
	h.step(0, q(0, 10))
	d := h.settle(q(0, 10)) // λ = 10
	// The utilisation floor, ⌈10 ÷ 0.8⌉, once the scale-in stabilisation
	// is over.
	if d.DesiredWorkers != 13 {
		t.Fatalf("steady desired %d, want 13; reasons %q", d.DesiredWorkers, d.Reasons)
	}
	spike := h.step(tick, q(3000, 15))
	// 613.5 msg/s observed, a dump: it enters the EWMA at 10 + 3σ.
	lambda := ewma(10, math.Min(3005.0/5+12.5, dumpBound(10, 12.5, 5, 2.5)), 5, 60)
	// Until the next interval tells a dump from a rate, the backlog floors
	// count the jump as the EWMA would have without the bound: while the new
	// workers start, the 15 in service shrink the visible backlog by
	// (15 − that)/s for 90 s (it grows).
	unbounded := ewma(10, 3005.0/5+12.5, 5, 60)
	vStart := 3000 - (15-unbounded)*90
	want := int(math.Ceil(lambda + vStart/30))
	if spike.DesiredWorkers != want {
		t.Fatalf("spike desired %d, want %d; reasons %q", spike.DesiredWorkers, want, spike.Reasons)
	}
	// The group starts the new workers; they are pending, not in service.
	pending := want - 15
	h.fleet = asg(want, 15, pending)
	for i := range pending {
		h.fleet.PendingSince = append(h.fleet.PendingSince, h.now.Add(time.Duration(i%3)*time.Second))
	}
	// A minute of samples while they start, arrivals going on at about the
	// estimate: 15 busy slots shrink the visible count by 20 every 5 s
	// (11 msg/s arriving).
	for i := 0; i < 12; i++ {
		d = h.step(tick, q(3000-int64(i+1)*20, 15))
		if d.DesiredWorkers != want {
			t.Fatalf("sample %d while workers start: desired %d, want %d (current %d, pending %d); reasons %q",
				i, d.DesiredWorkers, want, d.CurrentWorkers, d.PendingWorkers, d.Reasons)
		}
		if d.CurrentWorkers != want || d.PendingWorkers != pending || d.InServiceWorkers != 15 {
			t.Fatalf("current %d pending %d in service %d", d.CurrentWorkers, d.PendingWorkers, d.InServiceWorkers)
		}
	}
}

func TestOldestAgePastThePromise(t *testing.T) {
	t.Parallel()
	s := base()
	s.Utilization = 1
	h := newHarness(t, s, asg(20, 20, 0))
	// 300 visible and 10 in flight, unchanging, with 10 msg/s deleted: λ = 10.
	smp := q(300, 10)
	smp.Deleted = reading(10, t0.Add(-2*time.Minute))
	h.step(0, smp)
	d := h.step(tick, smp)
	if *d.ArrivalRate != 10 || d.DesiredWorkers != 20 {
		t.Fatalf("arrival %v desired %d, want 10 and 20 (the latency floor, 10 + 300/30)", *d.ArrivalRate, d.DesiredWorkers)
	}
	// CloudWatch says the oldest has waited 2 minutes: drain all 310 within
	// the 30 s promise, 21 workers, though +1 is within the deadband.
	smp.OldestAge = reading(120, h.now.Add(-time.Minute))
	d = h.step(tick, smp)
	want := int(math.Ceil(10 + 310.0/30))
	if *d.Floors.Drain != want || d.DesiredWorkers != want {
		t.Fatalf("drain floor %v desired %d, want %d; reasons %q", intp(d.Floors.Drain), d.DesiredWorkers, want, d.Reasons)
	}
	if d.OldestAgeSeconds == nil || *d.OldestAgeSeconds != 120 || !hasReason(d, "past the 30s promise") ||
		!hasReason(d, "oldest message is past the promise") {
		t.Fatalf("oldest %v reasons %q", d.OldestAgeSeconds, d.Reasons)
	}
	// A reading older than MetricStaleAfter is ignored.
	smp.OldestAge = reading(120, h.now.Add(-10*time.Minute))
	d = h.step(tick, smp)
	if d.OldestAgeSeconds != nil || hasReason(d, "past the") {
		t.Fatalf("stale oldest age used: %v %q", d.OldestAgeSeconds, d.Reasons)
	}
}

func TestMaxStepOut(t *testing.T) {
	t.Parallel()
	s := base()
	s.MaxStepOut = 10
	h := newHarness(t, s, asg(5, 5, 0))
	d := h.step(0, q(3000, 5))
	if d.DesiredWorkers != 15 || d.RecommendedWorkers != 100 || !hasReason(d, "limited to 10 workers per decision") {
		t.Fatalf("desired %d recommended %d reasons %q", d.DesiredWorkers, d.RecommendedWorkers, d.Reasons)
	}
}

func TestNoFleetRemembersItsDecision(t *testing.T) {
	t.Parallel()
	s := base()
	s.Min = 2
	h := newHarness(t, s, model.Fleet{})
	d := h.step(0, q(3000, 0))
	if d.CurrentWorkers != 2 || d.DesiredWorkers != 100 {
		t.Fatalf("first: current %d desired %d, want min 2 and 100", d.CurrentWorkers, d.DesiredWorkers)
	}
	d = h.step(tick, q(3000, 0))
	if d.CurrentWorkers != 100 || d.BacklogPerWorker != 30 {
		t.Fatalf("next: current %d backlog per worker %v, want 100 and 30", d.CurrentWorkers, d.BacklogPerWorker)
	}
}

func TestBacklogPerWorkerPolicy(t *testing.T) {
	t.Parallel()
	// AWS's example: 1,500 messages, 0.1 s per message, 10 s latency:
	// a target of 100 per worker, 15 workers.
	s := Settings{Group: "g", Policy: PolicyBacklogPerWorker, ServiceTime: 100 * time.Millisecond,
		Latency: 10 * time.Second, Min: 1, Max: 100}
	h := newHarness(t, s, asg(10, 10, 0))
	smp := q(1500, 0)
	d := h.step(0, smp)
	if d.DesiredWorkers != 15 || *d.Floors.BacklogPerWorker != 15 || d.TargetBacklogPerWorker != 100 || d.BacklogPerWorker != 150 {
		t.Fatalf("desired %d floor %v target %v current %v", d.DesiredWorkers, intp(d.Floors.BacklogPerWorker), d.TargetBacklogPerWorker, d.BacklogPerWorker)
	}
	if d.Floors.Drain != nil || d.Floors.Utilization != nil || d.Floors.Wait != nil {
		t.Fatalf("model floors under backlog_per_worker: %+v", d.Floors)
	}
	// Its one rule is held as a whole by the scale-in window: the backlog
	// gone, the 15 workers stay for the window, then go.
	for i := 1; i <= 61; i++ {
		d = h.step(tick, q(0, 0))
		want := 15
		if i*int(tick) > int(model.DefaultScaleInStabilization) {
			want = 1
		}
		if d.DesiredWorkers != want {
			t.Fatalf("%v after the backlog: desired %d, want %d; reasons %q", time.Duration(i)*tick, d.DesiredWorkers, want, d.Reasons)
		}
	}
}

func TestCannotSizeHolds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		s    Settings
	}{
		{"no service time", Settings{Group: "g", Latency: time.Minute, Min: 1, Max: 10}},
		{"overhead takes everything", Settings{Group: "g", ServiceTime: time.Second, OverheadReserve: 100, Min: 1, Max: 10}},
		{"backlog_per_worker without latency", Settings{Group: "g", Policy: PolicyBacklogPerWorker, ServiceTime: time.Second, Min: 1, Max: 10}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.s, asg(4, 4, 0))
			d := h.step(0, q(5000, 4))
			if !d.Held || d.HoldReason != "cannot size" || d.DesiredWorkers != 4 {
				t.Fatalf("held %v %q desired %d; reasons %q", d.Held, d.HoldReason, d.DesiredWorkers, d.Reasons)
			}
		})
	}
}

// A queue that goes quiet lets a Min 0 group scale to zero once the arrival
// estimate has decayed and the window has passed; a message arriving later
// starts a worker again.
func TestScaleToZero(t *testing.T) {
	t.Parallel()
	s := base()
	s.Min = 0
	h := newHarness(t, s, asg(3, 3, 0))
	h.step(0, q(0, 3))
	h.step(tick, q(0, 3)) // λ = 3
	var d model.Decision
	for i := 0; i < 480; i++ { // 40 minutes of silence: past the peak and stabilisation windows
		d = h.step(tick, q(0, 0))
	}
	if d.DesiredWorkers != 0 || *d.ArrivalRate != 0 || d.Diagnosis != model.DiagIdle {
		t.Fatalf("after silence: desired %d arrival %v diagnosis %q; reasons %q", d.DesiredWorkers, *d.ArrivalRate, d.Diagnosis, d.Reasons)
	}
	d = h.step(tick, q(1, 0))
	if d.DesiredWorkers != 1 {
		t.Fatalf("a message arrives: desired %d, want 1; reasons %q", d.DesiredWorkers, d.Reasons)
	}
}

// The decision names the CloudWatch minute its oldest age is from, and has
// neither once that datapoint is older than metric_stale_after.
func TestOldestAgeCarriesItsDatapointTime(t *testing.T) {
	t.Parallel()
	s := base()
	s.MetricStaleAfter = 5 * time.Minute
	now := t0.Add(time.Hour)
	minute := now.Add(-2 * time.Minute).Truncate(time.Minute)
	smp := q(40, 5)
	smp.At = now
	smp.OldestAge = reading(12, minute)
	var st State
	d := Decide(s, smp, asg(5, 5, 0), &st, now)
	checkDecision(t, s, asg(5, 5, 0), d)
	if d.OldestAgeSeconds == nil || *d.OldestAgeSeconds != 12 || d.OldestAgeAt == nil || !d.OldestAgeAt.Equal(minute) {
		t.Fatalf("oldest age %v at %v, want 12 s of the minute %s", d.OldestAgeSeconds, d.OldestAgeAt, minute.Format(time.TimeOnly))
	}
	later := now.Add(6 * time.Minute)
	smp.At = later
	d = Decide(s, smp, asg(5, 5, 0), &st, later)
	if d.OldestAgeSeconds != nil || d.OldestAgeAt != nil {
		t.Fatalf("a datapoint 8 minutes old gives the age %v at %v, want neither", ptrVal(d.OldestAgeSeconds), d.OldestAgeAt)
	}
}

// Service times that vary more than exponential ones stretch the waits of
// those that wait by (1 + cv²) ÷ 2 (Allen–Cunneen): with a cv of 2 the wait
// floor for 99 % within 3 s at 10 msg/s of 1 s work is the exponential
// floor for 3 s ÷ 2.5 = 1.2 s, more workers than for 3 s.
func TestWaitFloorStretchesWithTheServiceSpread(t *testing.T) {
	t.Parallel()
	floor := func(spread float64) int {
		s := base()
		s.Latency, s.WaitSpread = 3*time.Second, spread
		h := newHarness(t, s, asg(15, 15, 0))
		h.follow = false
		h.step(0, q(0, 10))
		d := h.settle(q(0, 10))
		if d.Floors.Wait == nil {
			t.Fatalf("spread %v: no wait floor; reasons %q", spread, d.Reasons)
		}
		return *d.Floors.Wait
	}
	lambda := 10.0
	want := func(t float64) int {
		n, _ := capacity.WaitQuantileFloor(lambda, 1, t, 0.01)
		return n
	}
	if got := floor(0); got != want(3) {
		t.Errorf("exponential service: wait floor %d, want %d", got, want(3))
	}
	if got := floor(2.5); got != want(1.2) || got <= want(3) {
		t.Errorf("cv 2: wait floor %d, want %d (above the exponential %d)", got, want(1.2), want(3))
	}
}
