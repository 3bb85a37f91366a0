package policy

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A burst unlike the learned ones is a surge: nothing learned of them
// expects it to end or holds its launch. Bursts of 30 s at 100 msg/s every
// 10 minutes on 5 msg/s need 50 msg/s (3,000 messages over 30 s + the 30 s
// promise); 20 s into one at 1,000 msg/s, its 20,000 messages need 400
// msg/s (over 20 s + 30 s), more than four times theirs. Its rate is not
// expected to end within the start delay, so the latency floor counts it
// for all of it, and the workers are launched: the same burst at 300 msg/s
// (TestLaunchDuringABurstIsACostDecision) is like the learned ones and its
// launch is weighed.
func TestLaunchForABurstUnlikeTheRecentOnes(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	at := feedBursts(&st.bursts, 11*600+300, 600, 300, 30, 5, 100)
	for range 4 {
		at = at.Add(5 * time.Second)
		st.bursts.observe(at, 5, 1000*5, 90, 30)
	}
	c := burstCall(st, at, 60, DefaultLateCost)
	c.lambda, c.lambdaEff, c.peakEff = 1000, 1000, 1000
	c.inService, c.visible, c.backlog = 60, 20000, 20000
	c.sizeModel()
	if !c.bp.unseen || c.bp.short || c.bp.after != 0 {
		t.Fatalf("unseen %v, short %v, after %v: want a surge unlike the learned bursts, not expected to end", c.bp.unseen, c.bp.short, c.bp.after)
	}
	if c.st.bursts.cur.need != 400 {
		t.Fatalf("the burst's need so far %v msg/s, want 400", c.st.bursts.cur.need)
	}
	// 20,000 waiting, 60 workers serve 3,600 of them over the start delay
	// while 1,000 msg/s arrive all of it: 76,400 when new workers start,
	// (1,000 + 76,400 ÷ 30) ÷ 1 msg/s a worker = 3,547 workers.
	want := int(math.Ceil(1000 + (20000-60*60+1000*60)/30.0))
	if c.rec != want {
		t.Fatalf("recommendation %d, want %d; reasons %q", c.rec, want, c.d.Reasons)
	}
	if got := c.keepWarm(c.launchPays(c.rec)); got != c.rec {
		t.Errorf("target %d, want the recommendation %d launched", got, c.rec)
	}
	c.finishReasons()
	if !slices.ContainsFunc(c.d.Reasons, func(r string) bool { return strings.HasPrefix(r, "a burst is on unlike the recent ones") }) ||
		slices.ContainsFunc(c.d.Reasons, func(r string) bool { return strings.HasSuffix(r, "not launched") }) {
		t.Errorf("reasons %q", c.d.Reasons)
	}
}

// A fleet that grew during its streak at capacity is not stuck for the
// deleted count of a minute when few of its workers served: 15 workers at
// 1 s a message complete 14.9 msg/s, under 5 % of the 439 in service a
// minute later, but all of the 15 that served that minute.
func TestAFleetThatGrewIsNotStuckOnAnOldMinute(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = time.Minute
	// run drives 40 samples of a growing backlog with every slot busy; the
	// fleet has 15 in service, then 439 from grewAt on; CloudWatch's minute
	// from t0 + 30 s reads 14.9 msg/s deleted from step 20.
	run := func(grewAt int) []model.Decision {
		h := newHarness(t, s, asg(439, 15, 424))
		h.follow = false
		for i := range 40 {
			busy := int64(15)
			if i >= grewAt {
				h.fleet, busy = asg(439, 439, 0), 439
			}
			smp := q(1000+int64(i)*400, busy)
			if i >= 20 {
				smp.Deleted = reading(14.9, t0.Add(30*time.Second))
			}
			dt := tick
			if i == 0 {
				dt = 0
			}
			h.step(dt, smp)
		}
		return h.log
	}
	for i, d := range run(24) {
		if d.Diagnosis == model.DiagStuck {
			t.Fatalf("step %d: stuck; reasons %q", i, d.Reasons)
		}
	}
	// The same minute's count with 439 serving through all of it is stuck.
	if log := run(0); log[len(log)-1].Diagnosis != model.DiagStuck {
		t.Fatalf("439 serving, 14.9 msg/s deleted: diagnosis %q, want stuck", log[len(log)-1].Diagnosis)
	}
}

// A release sized on an estimate that lags a load still climbing waits: a
// fleet of 446 with arrivals at 148 msg/s (148 in flight at 1 s a message,
// nothing waiting) is scaled in; when arrivals step up to 252 msg/s the
// estimate takes minutes to follow, and no release is made while the last
// steps' arrivals stand above it by more than its noise; once it has
// caught up the fleet is scaled in again, to the rate floors of 252 msg/s.
func TestNoReleaseWhileArrivalsStillClimb(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = time.Minute
	s.ScaleInStabilization = -1
	s.Deadband = -1
	s.Policy = PolicyModel
	s.Forecast.Off = true
	h := newHarness(t, s, asg(446, 446, 0))
	h.follow = false
	var d model.Decision
	for i := range 48 { // 4 minutes at 148 msg/s
		dt := tick
		if i == 0 {
			dt = 0
		}
		d = h.step(dt, q(0, 148))
	}
	if d.DesiredWorkers >= 446 || hasReason(d, "still climbing") {
		t.Fatalf("at 148 msg/s: desired %d, reasons %q; want a release", d.DesiredWorkers, d.Reasons)
	}
	held := 0
	for i := range 12 { // the first minute at 252 msg/s
		d = h.step(tick, q(0, 252))
		if i < 6 && (d.DesiredWorkers != 446 || !hasReason(d, "still climbing")) {
			t.Fatalf("%v s after the step: desired %d, reasons %q; want 446 held", (i+1)*5, d.DesiredWorkers, d.Reasons)
		}
		if hasReason(d, "still climbing") {
			held++
		}
	}
	for range 60 { // five minutes more: the estimate has caught up
		d = h.step(tick, q(0, 252))
	}
	if d.DesiredWorkers >= 446 || hasReason(d, "still climbing") {
		t.Fatalf("arrivals level at 252 msg/s: desired %d, reasons %q; want a release", d.DesiredWorkers, d.Reasons)
	}
	if want := int(math.Ceil(252 / 0.8)); d.DesiredWorkers < want {
		t.Errorf("released to %d, below the utilisation floor of 252 msg/s, %d", d.DesiredWorkers, want)
	}
}
