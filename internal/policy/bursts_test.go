package policy

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// A burst of 3,000 messages over 30 s (100 msg/s) every 3 minutes on 5 msg/s:
// the learner counts the bursts, their size, length and gaps, and their
// need: the heaviest window no longer than D + L = 90 s, by work ÷ (w + 30 s).
func TestBurstLearnerLearnsBursts(t *testing.T) {
	t.Parallel()
	var bl burstLearner
	at := feedBursts(&bl, 30*60, 180, 120, 30, 5, 100)
	f := bl.facts(at)
	if f.n < 8 || f.n > 10 {
		t.Fatalf("%d bursts learned in 30 minutes, want 9 or 10 ends seen", f.n)
	}
	if math.Abs(f.msgs-3000) > 1 || math.Abs(f.length-30) > 0.1 || math.Abs(f.gap-150) > 0.1 {
		t.Errorf("median burst %v messages over %v s, gap %v s; want 3000, 30, 150", f.msgs, f.length, f.gap)
	}
	// The heaviest window is the burst alone: 3000 ÷ (30 + 30) = 50 msg/s;
	// with 60 s of base, (3000 + 300) ÷ 120 = 27.5; a part of the burst,
	// 100·w ÷ (w + 30) < 50.
	if want := 50.0; math.Abs(f.need-want) > 0.01 {
		t.Errorf("need %v msg/s, want %v", f.need, want)
	}
	if math.Abs(f.base-5) > 0.5 {
		t.Errorf("base %v msg/s, want 5", f.base)
	}
	// Regular gaps: within the next 10 s right after a burst no burst is
	// likely but for the one unseen gap; 150 s on, one is due.
	f.quiet = 0
	if got := f.chance(10, 0.01); got > 0.2 {
		t.Errorf("chance right after a burst %v, want at most 1/(gaps+1)", got)
	}
	f.quiet = 145
	if got := f.chance(10, 0.01); got < 0.9 {
		t.Errorf("chance when the next burst is due %v, want about 1", got)
	}
	// The bursts stop: past the mean gap × ln(1 ÷ 0.01) = 150 × 4.61 =
	// 691 s (more than twice the longest, 300 s) none is expected, and after
	// the memory they are forgotten. Before, a quiet longer than every gap
	// may still end in a burst.
	f.quiet = 600
	if got := f.chance(10, 0.01); got != 1 {
		t.Errorf("chance after 600 s of quiet, gaps of 150 s: %v, want 1", got)
	}
	f.quiet = 692
	if got := f.chance(10, 0.01); got != 0 {
		t.Errorf("chance after 692 s of quiet, gaps of 150 s: %v, want 0", got)
	}
	if got := f.stopped(0.01); math.Abs(got-150*math.Log(100)) > 1e-6 {
		t.Errorf("stopped after %v s, want 150 × ln 100 = %v", got, 150*math.Log(100))
	}
	if got := f.stopped(0.5); got != 300 {
		t.Errorf("stopped after %v s with a miss of a half, want twice the longest gap, 300", got)
	}
	if g := bl.facts(at.Add(burstMemory + time.Minute)); g.n != 0 {
		t.Errorf("%d bursts remembered after the memory, want 0", g.n)
	}
}

// Steady Poisson-like counts make no bursts.
func TestBurstLearnerSteadyHasNoBursts(t *testing.T) {
	t.Parallel()
	var bl burstLearner
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	for i := range 2000 {
		at = t0.Add(time.Duration(5*(i+1)) * time.Second)
		// 50 msg/s ± 3σ of its counting noise, alternating.
		msgs := 250 + 3*math.Sqrt(250)*float64(i%3-1)
		bl.observe(at, 5, msgs, 90, 30)
	}
	if f := bl.facts(at); f.n != 0 || f.on {
		t.Errorf("%d bursts (on: %v) in steady arrivals, want none", f.n, f.on)
	}
}

// Arrivals that wander beyond counting noise make no bursts of their
// wander, only of what stands out of it: on 20 msg/s whose 5 s intervals
// spread by 6 msg/s (σ 0.3 of the rate, a spread of 36 × 5 = 180 (msg/s)²
// s), an interval at 2.1 times the base (110 messages above it) is within
// 4 standard deviations of the interval's count (4 × √(180 × 5) = 120)
// and starts none, where counting noise alone (4 × √(20 × 5) = 40) would
// start one; an interval at 3 times the base (200 above) starts one.
func TestBurstLearnerWanderIsNoBurst(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	run := func(spread, peak float64) bool {
		var bl burstLearner
		bl.spread = spread
		at := t0
		for i := range 100 {
			at = t0.Add(time.Duration(5*(i+1)) * time.Second)
			bl.observe(at, 5, 100, 90, 30)
		}
		bl.observe(at.Add(5*time.Second), 5, peak*5, 90, 30)
		return bl.on
	}
	if !run(0, 42) {
		t.Error("2.1 times the base read as no burst on counting noise alone")
	}
	if run(180, 42) {
		t.Error("2.1 times the base read as a burst within the measured spread")
	}
	if !run(180, 60) {
		t.Error("3 times the base read as no burst with the measured spread")
	}
}

// A burst the forecast announced is left to it, out of the warm need, only
// when the workers the floors had asked for as it began (its pre-start
// among them) served its need: 30 s at 100 msg/s on 5 msg/s needs 50 msg/s
// within a 30 s promise. Met by 60 msg/s of workers, the bursts are
// announced and no need is left; met by 20 (a bet on part of them), they
// count towards the warm need like any other.
func TestBurstAnnouncedOnlyWhenThePreStartMetIt(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		serving   float64
		announced bool
	}{{60, true}, {20, false}} {
		var bl burstLearner
		bl.serving = tt.serving
		at := t0
		for s := 0; s < 3600; s += 5 {
			at = t0.Add(time.Duration(s+5) * time.Second)
			if s%180 == 100 { // the forecast expects the burst due at 120 s
				bl.recurAt = at.UnixNano()
			}
			msgs := 25.0
			if s%180 >= 120 && s%180 < 150 {
				msgs = 500
			}
			bl.observe(at, 5, msgs, 90, 30)
		}
		f := bl.facts(at)
		if f.n < 10 {
			t.Fatalf("serving %v msg/s: %d bursts learned, want at least 10", tt.serving, f.n)
		}
		if tt.announced && (f.announced != f.n || f.need != 0) {
			t.Errorf("met by %v msg/s: %d of %d announced, need %v; want all announced, none left", tt.serving, f.announced, f.n, f.need)
		}
		if !tt.announced && (f.announced != 0 || math.Abs(f.need-50) > 1e-9) {
			t.Errorf("met by %v msg/s: %d of %d announced, need %v; want none announced, need 50", tt.serving, f.announced, f.n, f.need)
		}
	}
}

// A run of hot intervals longer than burstMaxLength is a new level, not a
// burst: the base becomes the rate most of its last five minutes showed
// (20 msg/s), not the interval that ended it, here a spike of 400 msg/s.
func TestBurstLearnerNewLevelIsItsMedianRate(t *testing.T) {
	t.Parallel()
	var bl burstLearner
	at := t0
	for i := range 120 { // 10 minutes at 5 msg/s
		at = t0.Add(time.Duration(5*(i+1)) * time.Second)
		bl.observe(at, 5, 25, 90, 30)
	}
	start := at
	for i := 0; !at.After(start.Add(burstMaxLength)); i++ {
		at = at.Add(5 * time.Second)
		msgs := 100.0 // 20 msg/s
		if at.After(start.Add(burstMaxLength)) {
			msgs = 2000 // the interval that ends the run
		}
		bl.observe(at, 5, msgs, 90, 30)
	}
	if bl.on || bl.base != 20 {
		t.Errorf("after a level of 20 msg/s for 5 minutes: on %v, base %v msg/s; want off, 20", bl.on, bl.base)
	}
	if f := bl.facts(at); f.n != 0 {
		t.Errorf("%d bursts recorded for a new level, want 0", f.n)
	}
}

// A run taken for a new level was no quiet. Bursts of 40 s at 100 msg/s
// every 2 minutes on 5 msg/s, then 7 minutes at 60 msg/s: the run is taken
// for a level at its interval that ends 305 s in, so 115 s later the quiet
// is 115 s, not the 500 s since the last burst ended. The bursts have not
// stopped then: the gaps are 80 s, and they stop after a quiet of 80 s ×
// ln 100 ≈ 368 s (burstFacts.stopped), which the 500 s would be past.
func TestBurstLearnerQuietAfterANewLevel(t *testing.T) {
	t.Parallel()
	var bl burstLearner
	at := t0
	step := func(n int, msgs float64) {
		for range n {
			at = at.Add(5 * time.Second)
			bl.observe(at, 5, msgs, 90, 30)
		}
	}
	step(24, 25) // two minutes at 5 msg/s
	for range 6 {
		step(8, 500) // 40 s at 100 msg/s
		step(16, 25) // 80 s at 5 msg/s
	}
	lastBurst := bl.lastEnd
	step(84, 300) // seven minutes at 60 msg/s: a new level
	f := bl.facts(at)
	if f.n != 6 || f.gaps != 5 || f.on {
		t.Fatalf("%d bursts, %d gaps, on %v; want 6 bursts, 5 gaps, none on", f.n, f.gaps, f.on)
	}
	if since := at.Sub(time.Unix(0, lastBurst)).Seconds(); since != 500 || f.quiet != 115 {
		t.Errorf("%.0f s since the last burst, quiet %.0f s: want 500 and 115, the quiet counted from the level", since, f.quiet)
	}
	if stopped := f.stopped(0.01); f.quiet >= stopped || f.chance(60, 0.01) == 0 {
		t.Errorf("quiet %.0f s against stopped at %.0f s, chance %v: the bursts are taken to have stopped", f.quiet, stopped, f.chance(60, 0.01))
	}
}

// The warm fleet's need, once bursts have been learned for more than an
// hour, is the k-th largest need over the last k hours (k at most 3): the
// same quantile as the largest of one hour's, from more bursts. Bursts of
// 30 s every 10 minutes for 2 h 30 min, with needs 50 msg/s but 100 (2 h
// 20 min before now), 90 (1 h 30 min before), 80 (1 h 10 min before): over
// 3 hours, the third largest, 80, where the last hour's largest is 50. An
// announced burst needing 500, and one ended more than 3 hours before, are
// left out. Within the first hour, or with fewer than two needs an hour,
// the hour's largest need serves.
func TestBurstLongNeedIsTheHourlyLargestFromMoreBursts(t *testing.T) {
	t.Parallel()
	now := t0.Add(10 * time.Hour)
	at := func(ago time.Duration) int64 { return now.Add(-ago).UnixNano() }
	burstAt := func(ago time.Duration, need float64) burst {
		return burst{start: at(ago + 30*time.Second), end: at(ago), need: need, msgs: need * 60}
	}
	learner := func(bursts ...burst) *burstLearner {
		var bl burstLearner
		for _, b := range bursts {
			bl.past[bl.nextP] = b
			bl.nextP = (bl.nextP + 1) % burstRing
			bl.np = min(bl.np+1, burstRing)
		}
		return &bl
	}
	big := map[time.Duration]float64{140 * time.Minute: 100, 90 * time.Minute: 90, 70 * time.Minute: 80}
	var bursts []burst
	bursts = append(bursts, burstAt(4*time.Hour, 400)) // forgotten
	for ago := 150 * time.Minute; ago > 0; ago -= 10 * time.Minute {
		need := 50.0
		if n, ok := big[ago]; ok {
			need = n
		}
		bursts = append(bursts, burstAt(ago, need))
	}
	announced := burstAt(5*time.Minute, 500)
	announced.announced = true
	bursts = append(bursts, announced)
	bl := learner(bursts...)
	if need, k, ok := bl.longNeed(now.UnixNano()); !ok || need != 80 || k != 3 {
		t.Errorf("long need %v, rank %d (ok %v), want 80: the third largest over three hours", need, k, ok)
	}
	if f := bl.facts(now); f.need != 80 || f.needHours != 3 {
		t.Errorf("the warm fleet's need %v msg/s, of %d hours, want 80, the third largest of 3", f.need, f.needHours)
	}
	// Within the first hour: the hour's largest.
	first := learner(burstAt(50*time.Minute, 60), burstAt(30*time.Minute, 90), burstAt(10*time.Minute, 70))
	if need, _, ok := first.longNeed(now.UnixNano()); ok {
		t.Errorf("long need %v within the first hour, want none", need)
	}
	if f := first.facts(now); f.need != 90 || f.needHours != 1 {
		t.Errorf("the warm fleet's need %v msg/s, of %d hours, within the first hour, want 90, the largest", f.need, f.needHours)
	}
	// Two hours of three bursts: fewer than two an hour.
	sparse := learner(burstAt(110*time.Minute, 100), burstAt(60*time.Minute, 70), burstAt(10*time.Minute, 60))
	if need, _, ok := sparse.longNeed(now.UnixNano()); ok {
		t.Errorf("long need %v from three bursts over two hours, want none", need)
	}
}

// A decision says which need the warm fleet serves: after two and a half
// hours of bursts of 30 s at 100 msg/s every 10 minutes on 5 msg/s, the
// third largest of the last three hours' needs, in the decision's Bursts
// (rank 3, 3 hours) and its reasons. The bursts are alike, so it is as many
// workers as the largest of the last hour's needs.
func TestBurstDecisionSaysWhichNeedItServes(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	at := feedBursts(&st.bursts, 15*600+300, 600, 300, 30, 5, 100)
	c := burstCall(st, at, 60, DefaultLateCost)
	c.sizeModel()
	c.finishReasons()
	b := c.d.Bursts
	if b == nil || b.NeedHours != 3 {
		t.Fatalf("the decision's bursts %+v; want the need of rank 3 over 3 hours", b)
	}
	hour := 0.0
	for i := range st.bursts.np {
		if p := st.bursts.past[i]; p.remembered(at.UnixNano()) {
			hour = math.Max(hour, p.need)
		}
	}
	if want := int(math.Ceil(hour - 1e-9)); b.NeedWorkers != want {
		t.Errorf("need %d workers, want %d, the last hour's largest need of these alike bursts", b.NeedWorkers, want)
	}
	said := fmt.Sprintf("a fleet of %d serves all but the largest 2 of the last 3 hours' within the promise", b.NeedWorkers)
	if !slices.ContainsFunc(c.d.Reasons, func(r string) bool { return strings.HasSuffix(r, said) }) {
		t.Errorf("reasons %q; want one ending %q", c.d.Reasons, said)
	}
}

// An even burst is its own even form; one whose messages crowd into part
// of it is as short and steep as that part: 3,000 messages needing 75
// msg/s within a 30 s promise arrive as over 3,000 ÷ 75 − 30 = 10 s, at
// 300 msg/s. Its length is never below burstMinUniform.
func TestBurstUniform(t *testing.T) {
	t.Parallel()
	const s = int64(time.Second)
	for _, tt := range []struct {
		b            burst
		rate, length float64
	}{
		{burst{start: 0, end: 90 * s, msgs: 9000, need: 9000 / 120.0}, 100, 90},
		{burst{start: 0, end: 90 * s, msgs: 3000, need: 75}, 300, 10},
		{burst{start: 0, end: 90 * s, msgs: 3000, need: 100}, 3000, burstMinUniform},
		{burst{start: 0, end: 90 * s, msgs: 900}, 10, 90},
	} {
		rate, length := tt.b.uniform(30)
		if math.Abs(rate-tt.rate) > 1e-9 || math.Abs(length-tt.length) > 1e-9 {
			t.Errorf("%+v: %v msg/s over %v s, want %v over %v", tt.b, rate, length, tt.rate, tt.length)
		}
	}
}

// When the per-slot rate the arrivals were counted with moves by more than
// a quarter, the completions counted among them are counted anew: bursts of
// 100 msg/s for 30 s every 3 minutes on 5 msg/s, half of every interval's
// count completions at 10 msg/s a slot, then the rate found to be 20 (the
// configured service time was twice the real one). The learner must know
// what one fed the right counts from the start knows: every interval 1.5
// times its count. A deploy (a level change the measurement detected) keeps
// the counts: they were right for their time. Moves within a quarter keep
// them too.
func TestBurstLearnerCountsCompletionsAnewWithACorrectedRate(t *testing.T) {
	t.Parallel()
	feed := func(bl *burstLearner, scale, doneScale float64) time.Time {
		const dt = 5
		at := t0
		for s := 0; s < 20*60; s += dt {
			at = t0.Add(time.Duration(s+dt) * time.Second)
			msgs := 5.0 * dt
			if s%180 >= 120 && s%180 < 150 {
				msgs = 100 * dt
			}
			bl.observeServed(at, dt, msgs*scale, msgs/2*doneScale, 90, 30)
		}
		return at
	}
	step := t0.Add(10 * time.Minute)
	for _, tt := range []struct {
		name  string
		after float64
		step  time.Time
		want  float64 // each interval's count ÷ the one fed
	}{
		{"corrected ×2", 20, time.Time{}, 1.5},
		{"corrected ×0.5", 5, time.Time{}, 0.75},
		{"a deploy", 20, step, 1},
		{"within a quarter", 12, time.Time{}, 1},
		{"within a quarter, down", 8.5, time.Time{}, 1},
	} {
		var bl burstLearner
		bl.measuredWith(10, time.Time{})
		at := feed(&bl, 1, 1)
		if n := bl.facts(at).n; n < 5 {
			t.Fatalf("%d bursts learned, want at least 5", n)
		}
		bl.measuredWith(tt.after, tt.step)
		// The right counts from the start: completions k times the ones
		// counted, the rest as counted.
		var right burstLearner
		doneScale := 2*tt.want - 1
		right.measuredWith(tt.after, tt.step)
		feed(&right, tt.want, doneScale)
		got, want := bl.facts(at), right.facts(at)
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
		if got.n != want.n || !near(got.msgs, want.msgs) || !near(got.need, want.need) || !near(got.base, want.base) ||
			!near(bl.windowNeed(90, 30), right.windowNeed(90, 30)) {
			t.Errorf("%s: %d bursts of %v messages, need %v msg/s, base %v; want %d of %v, %v, %v",
				tt.name, got.n, got.msgs, got.need, got.base, want.n, want.msgs, want.need, want.base)
		}
		if tt.want == 1.5 && !near(got.msgs, 1.5*3000) {
			t.Errorf("%s: bursts of %v messages, want 4,500 (3,000 counted, half completions at half the rate)", tt.name, got.msgs)
		}
	}
}

// The worked example of docs/model.md (10.13): bursts of 3,000 messages
// over 30 s every 3 minutes on 5 msg/s, 1 s a message, promise 30 s, start
// delay 60 s, sampled every 5 s. The bursts need 50 workers, the base rate
// 7; relaunching the other 43 for each burst leaves 2,887 messages late and
// costs 43 × 70 + 2,887 × 10 worker-seconds (8.86 worker-hours), about 20
// times an hour, against 43 worker-hours an hour to hold them: they are kept
// warm.
func TestBurstWorkedExample(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	at := feedBursts(&st.bursts, 2*3600, 180, 120, 30, 5, 100)
	c := burstCall(st, at, 50, DefaultLateCost)
	c.planBursts()
	if base := c.rateFloorAt(5); base != 7 {
		t.Fatalf("rate floors at 5 msg/s: %d workers, want ⌈5 ÷ 0.8⌉ = 7", base)
	}
	warm := c.warmPays(7)
	b := c.d.Bursts
	if b == nil || b.NeedWorkers != 50 || warm != 50 || b.WarmWorkers != 50 {
		t.Fatalf("need %v, warm %d: want 50 and 50 kept warm; %+v", b, warm, c.bp)
	}
	if b.HoldWorkerHours != 43 {
		t.Errorf("holding %v worker-hours an hour, want 43", b.HoldWorkerHours)
	}
	// 15 × 7 ÷ 93 s of the burst start in time, the rest of its 30 s not.
	late := 100 * (30 - 15*7.0/93)
	if got := lateIfMissed(100, 7, 50, 30, 70, 15); math.Abs(got-2887.1) > 0.05 || math.Abs(got-late) > 1e-9 {
		t.Errorf("late if relaunched %v messages, want 2,887.1", got)
	}
	perBurst := (43*70 + late*10) / 3600 // 8.86 worker-hours
	if math.Abs(perBurst-8.856) > 0.001 {
		t.Fatalf("relaunch a burst %v worker-hours, want 8.856", perBurst)
	}
	t.Logf("relaunching %.1f worker-hours an hour", b.RelaunchWorkerHours)
	if perHour := b.RelaunchWorkerHours / perBurst; perHour < 19.5 || perHour > 21 {
		t.Errorf("relaunching %v worker-hours an hour: %v bursts of %v, want about 20 (177 worker-hours)", b.RelaunchWorkerHours, perHour, perBurst)
	}
}

// The promise comes first for bursts a relaunch cannot serve: at 3,000
// messages over 30 s every 20 minutes on 5 msg/s, with late messages
// priced low (forecast.late_cost 1), relaunching the 43 workers beyond the
// base costs (43 × 70 + 2,887) ÷ 3,600 = 1.6 worker-hours a burst, about
// 3 bursts an hour, less than holding them (43); but it leaves about 3 ×
// 100 × (30 − 30 × 7 ÷ 93) = 8,322 messages an hour past the promise of
// about 27,000 arriving, far more than 1 %: they are kept warm for the
// promise. A burst longer than the start delay is no different while its
// first start delay alone breaks the promise: 90 s at 100 msg/s needs 75
// workers, and relaunched ones (70 s after it begins, the most 500) clear
// its backlog of 93 × 70 messages 6,510 ÷ 400 s later, so 100 × (86.3 −
// 30 × 7 ÷ 93) = 8,402 of its 9,000 messages wait past the promise. Where
// relaunching leaves few late, it is a cost decision: 90 s at 10.5 msg/s
// (8 workers) on a promise for 90 % of messages leaves 10.5 × (70 + 245 ÷
// 489.5 − 30 × 7 ÷ 3.5) = 110 late a burst, within the 10 %, and one
// relaunch (70 + 110 worker-seconds, 3.6 times an hour) costs less than
// holding it: not kept.
func TestBurstsARelaunchCannotServeAreKeptWarmForThePromise(t *testing.T) {
	t.Parallel()
	decide := func(length int, peak, quantile float64) (*model.Bursts, int) {
		st := &State{lastDt: 5 * time.Second}
		at := feedBursts(&st.bursts, 2*3600, 1200, 600, length, 5, peak)
		c := burstCall(st, at, 7, 1)
		c.s.LatencyQuantile = quantile
		c.planBursts()
		if base := c.rateFloorAt(5); base != 7 {
			t.Fatalf("rate floors at 5 msg/s: %d workers, want 7", base)
		}
		warm := c.warmPays(c.rateFloorAt(5))
		c.finishReasons()
		if c.d.Bursts == nil {
			t.Fatalf("%d s bursts at %v msg/s: nothing learned", length, peak)
		}
		return c.d.Bursts, warm
	}
	// The three bursts of the last hour began 50 minutes ago: 3.6 an hour.
	const perHour = 3 / (50.0 / 60)
	b, warm := decide(30, 100, 0.99)
	if warm != 50 || !b.ForThePromise || b.RelaunchWorkerHours >= b.HoldWorkerHours {
		t.Errorf("30 s bursts: warm %d for the promise %v (relaunch %.1f, hold %.1f worker-hours an hour); want 50 kept for the promise though relaunching costs less",
			warm, b.ForThePromise, b.RelaunchWorkerHours, b.HoldWorkerHours)
	}
	if want := perHour * 100 * (30 - 30*7.0/93); math.Abs(b.LateIfRelaunchedPerHour-want) > 1 {
		t.Errorf("late if relaunched %v messages an hour, want 3.6 × %.0f = %.0f", b.LateIfRelaunchedPerHour, want/perHour, want)
	}
	b, warm = decide(90, 100, 0.99)
	if want := perHour * 100 * (70 + 93*70/400.0 - 30*7.0/93); warm != 75 || !b.ForThePromise || math.Abs(b.LateIfRelaunchedPerHour-want) > 1 {
		t.Errorf("90 s bursts: warm %d, for the promise %v, late if relaunched %v an hour; want 75 kept for the promise, 3.6 × %.0f = %.0f late",
			warm, b.ForThePromise, b.LateIfRelaunchedPerHour, want/perHour, want)
	}
	// Bursts the workers the rate floors asked for already met (a forecast
	// that pre-starts them) leave none late: relaunching costs 43 × 70
	// worker-seconds 3.6 times an hour, less than holding 43: none kept.
	st := &State{lastDt: 5 * time.Second}
	st.bursts.serving = 100
	at := feedBursts(&st.bursts, 2*3600, 1200, 600, 30, 5, 100)
	c := burstCall(st, at, 7, 1)
	c.planBursts()
	if warm := c.warmPays(c.rateFloorAt(5)); warm != 0 || c.d.Bursts.LateIfRelaunchedPerHour != 0 || math.Abs(c.d.Bursts.RelaunchWorkerHours-perHour*43*70/3600) > 0.01 {
		t.Errorf("bursts met by the rate floors' workers: warm %d, late if relaunched %v an hour, relaunching %v worker-hours an hour; want none kept, 0 late, 3.6 × 43 × 70 s = %.2f",
			warm, c.d.Bursts.LateIfRelaunchedPerHour, c.d.Bursts.RelaunchWorkerHours, perHour*43*70/3600)
	}
	b, warm = decide(90, 10.5, 0.9)
	if want := perHour * 10.5 * (70 + 245/489.5 - 30*7/3.5); warm != 0 || b.ForThePromise || b.NeedWorkers != 8 || math.Abs(b.LateIfRelaunchedPerHour-want) > 1 {
		t.Errorf("gentle 90 s bursts: need %d, warm %d, for the promise %v, late if relaunched %v an hour; want 8, none kept (relaunch %.2f < hold %.0f), 3.6 × %.0f = %.0f late",
			b.NeedWorkers, warm, b.ForThePromise, b.LateIfRelaunchedPerHour, b.RelaunchWorkerHours, b.HoldWorkerHours, want/perHour, want)
	}
}

// feedBursts feeds bl a sample every 5 s for secs seconds from t0: base
// msg/s, and peak msg/s for length seconds from offset within every period
// (D + L = 90 s, L = 30 s). It returns the last sample's time.
func feedBursts(bl *burstLearner, secs, period, offset, length int, base, peak float64) time.Time {
	const dt = 5
	at := t0
	for s := 0; s < secs; s += dt {
		at = t0.Add(time.Duration(s+dt) * time.Second)
		msgs := base * dt
		if s%period >= offset && s%period < offset+length {
			msgs = peak * dt
		}
		bl.observe(at, dt, msgs, 90, 30)
	}
	return at
}

// burstCall is a model-policy decision at at on the bursts st learned,
// with 1 s a message (1 msg/s per worker), a 30 s promise, a 60 s start
// delay, the forecast off, 5 msg/s of arrivals and current workers.
func burstCall(st *State, at time.Time, current int, lateCost float64) call {
	s := base()
	s.StartDelay = time.Minute
	s.Policy = PolicyModel
	s.Forecast.Off = true
	s = s.WithDefaults()
	s.Forecast.LateCost = lateCost
	return call{s: s, st: st, now: at, at: at, b: new(box), usable: true, current: current, currentKnown: true,
		lambdaKnown: true, lambda: 5, lambdaEff: 5, peakEff: 5, mu: 1, muEff: 1, perServer: 1, hi: s.Max}
}

// A learned burst that outlasts the start delay is sized for what is left of
// it when new workers start, not for its rate held for good. Bursts of 120 s
// at 100 msg/s every 10 minutes on 5 msg/s; 20 s into one, each recent burst
// lasts 100 s more: 60 s within the start delay, 40 s after it. With 90
// workers in service (1 msg/s each) and 600 visible, the backlog when new
// workers start is 600 + (100 − 90) × 60 = 1,200; the 95 msg/s above the
// base over the next 40 s add 3,800, and the last of those 5,000 must start
// within the promise (30 s) of its arrival: ⌈5 + 5,000 ÷ 70⌉ = 77 workers,
// more than the ⌈5 + 1,200 ÷ 30⌉ = 45 that clear the start's backlog alone.
// The rate floors size for the base rate. The workers serving the burst
// stay until it ends. Held at 100 msg/s for good, the latency floor would
// ask for 100 + 1,200 ÷ 30 = 140.
func TestBurstLongerThanAStartDelayIsSizedForWhatIsLeftOfIt(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	at := feedBursts(&st.bursts, 11*600+320, 600, 300, 120, 5, 100)
	c := burstCall(st, at, 90, DefaultLateCost)
	c.lambda, c.lambdaEff, c.peakEff = 100, 100, 100
	c.inService, c.visible, c.backlog = 90, 600, 600
	c.sizeModel()
	if c.bp.short || math.Abs(c.bp.remaining-100) > 1e-9 || math.Abs(c.bp.after-40) > 1e-9 {
		t.Fatalf("short %v, remaining %v s, after the start delay %v s; want not short, 100 and 40", c.bp.short, c.bp.remaining, c.bp.after)
	}
	if c.b.drain != 77 {
		t.Errorf("latency floor %d, want 77; reasons %q", c.b.drain, c.d.Reasons)
	}
	if c.rateRec != c.rateFloorAt(5) || c.rateRec >= 77 {
		t.Errorf("rate floors %d, want those of the 5 msg/s base, %d", c.rateRec, c.rateFloorAt(5))
	}
	if c.rec != 77 {
		t.Errorf("recommendation %d, want 77", c.rec)
	}
	if got := c.keepWarm(c.rec); got != 90 {
		t.Errorf("target %d while the burst is on, want the 90 serving it", got)
	}
}

// The workers that stay while a burst is on are those serving it: a fleet
// launched for a backlog that it has served, all in service with nothing
// waiting, keeps what the burst keeps busy, not its idle rest. The bursts
// above, 20 s into one at 100 msg/s, with 300 workers in service, none
// visible and 90 in flight: the burst's rate keeps ⌈100 ÷ 1⌉ = 100 busy,
// more than the 90 in flight and than the floors, which size for the base
// rate and what is left of the burst. While a worker is still starting, or
// a message waits, all 300 stay.
func TestBurstOnKeepsTheWorkersServingItNotAServedBacklogs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		inService, visible int
		want               int
	}{
		{"served", 300, 0, 100},
		{"a worker starting", 299, 0, 300},
		{"a message waiting", 300, 1, 300},
	} {
		st := &State{lastDt: 5 * time.Second}
		at := feedBursts(&st.bursts, 11*600+320, 600, 300, 120, 5, 100)
		c := burstCall(st, at, 300, DefaultLateCost)
		c.lambda, c.lambdaEff, c.peakEff = 100, 100, 100
		c.inService, c.visible = tc.inService, float64(tc.visible)
		c.backlog = c.visible + 90
		c.sample.InFlight = 90
		c.sizeModel()
		if !c.bp.ending() || c.rec >= 100 || c.bp.warm >= 100 {
			t.Fatalf("%s: ending %v, recommendation %d, warm %d; want a burst expected to end, both below 100", tc.name, c.bp.ending(), c.rec, c.bp.warm)
		}
		if got := c.keepWarm(c.rec); got != tc.want {
			t.Errorf("%s: target %d while the burst is on, want %d; reasons %q", tc.name, got, tc.want, c.d.Reasons)
		}
	}
}

// Bursts 20 an hour at random begin within a 2-minute window with chance
// 1 − e^(−20 × 2 ÷ 60) = 0.487: an occurrence the forecast gives half a
// chance there is no rhythm. Three an hour (a job every 20 minutes): 0.095.
func TestBurstWithin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		perHour float64
		w       time.Duration
		want    float64
	}{{20, 2 * time.Minute, 0.4866}, {3, 2 * time.Minute, 0.0952}, {0, time.Minute, 0}} {
		if got := burstWithin(tc.perHour, tc.w); math.Abs(got-tc.want) > 1e-4 {
			t.Errorf("%v an hour within %v: %v, want %v", tc.perHour, tc.w, got, tc.want)
		}
	}
}

// A burst whose lull is shorter than the end of a burst is one burst, lulls
// and all; once it is older than every recent burst, its latest run of hot
// intervals is measured against them. Bursts of 30 s at 100 msg/s every 10
// minutes on 5 msg/s; then one of 30 s, a 20 s lull, and 10 s of a second
// run: 60 s old, longer than every 30 s burst, but its run is 10 s old, so
// it is expected to last 20 s more, within the start delay: short.
func TestBurstLongerThanEveryRecentOneIsMeasuredByItsLatestRun(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	at := feedBursts(&st.bursts, 11*600+300, 600, 300, 30, 5, 100)
	for _, r := range []float64{100, 100, 100, 100, 100, 100, 5, 5, 5, 5, 100, 100} {
		at = at.Add(5 * time.Second)
		st.bursts.observe(at, 5, r*5, 90, 30)
	}
	c := burstCall(st, at, 50, DefaultLateCost)
	c.lambda, c.lambdaEff, c.peakEff = 100, 100, 100
	c.planBursts()
	if f := c.bp.f; !f.on || f.age != 60 || f.runAge != 10 {
		t.Fatalf("on %v, age %v s, latest run %v s; want on, 60 and 10", f.on, f.age, f.runAge)
	}
	if !c.bp.short || c.bp.remaining != 20 || c.bp.after != 0 {
		t.Errorf("short %v, remaining %v s, after the start delay %v s; want short, 20 and 0", c.bp.short, c.bp.remaining, c.bp.after)
	}
}

// A rhythm times bursts when it expects its occurrences within at most half
// its period and its next one at least twice as likely as one of the bursts
// begins in its window at random. A job every 20 minutes, matched within 3,
// with chance 0.5, among 3.6 bursts an hour (1 − e^(−3.6 × 3 ÷ 60) = 0.165
// at random): it times them. The same chance among 15 an hour (0.528 at
// random) does not, nor does a 5-minute period matched within 3 (more than
// half of it), whatever its chance.
func TestRhythmTimesBursts(t *testing.T) {
	t.Parallel()
	job := forecast.Rhythm{Chance: 0.5, Window: 3 * time.Minute, Period: 20 * time.Minute}
	if !times(job, 3.6) {
		t.Errorf("a job every 20m at chance 0.5 among 3.6 bursts an hour: not timed")
	}
	if times(job, 15) {
		t.Errorf("chance 0.5 among 15 bursts an hour (0.528 at random): timed")
	}
	if times(forecast.Rhythm{Chance: 0.99, Window: 3 * time.Minute, Period: 5 * time.Minute}, 1) {
		t.Errorf("a 5-minute period matched within 3: timed")
	}
	if times(forecast.Rhythm{}, 1) {
		t.Errorf("no rhythm: timed")
	}
}

// Bursts are on a rhythm when one pattern (the same period and phase)
// explains every one within the memory: three bursts of the last hour, all
// explained by "every 20m0s" at phase 7m0s, are; one explained by another
// phase, or by none, breaks it.
func TestBurstsOnOneRhythm(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	at := feedBursts(&st.bursts, 3600, 1200, 420, 90, 5, 100)
	job := forecast.Rhythm{Chance: 0.5, Window: 3 * time.Minute, Period: 20 * time.Minute, Phase: 7 * time.Minute}
	seen := 0
	if !st.bursts.onRhythm(at, func(time.Time) (forecast.Rhythm, bool) { seen++; return job, true }) || seen != 3 {
		t.Fatalf("three bursts on one rhythm: not on it (%d seen, want 3)", seen)
	}
	k := 0
	other := func(time.Time) (forecast.Rhythm, bool) {
		k++
		if k == 2 {
			r := job
			r.Phase = 8 * time.Minute
			return r, true
		}
		return job, true
	}
	if st.bursts.onRhythm(at, other) {
		t.Errorf("one burst explained by another phase: on one rhythm")
	}
	k = 0
	none := func(time.Time) (forecast.Rhythm, bool) { k++; return job, k != 3 }
	if st.bursts.onRhythm(at, none) {
		t.Errorf("one burst explained by none: on one rhythm")
	}
}

// The fluid FIFO picture of a burst, by hand. 150 msg/s for 30 s more, then
// 10 msg/s; 50 msg/s served until the start delay (60 s) ends; a 30 s
// promise. The message arriving at u is late when the arrivals up to it
// exceed what is served by u + 30:
//
//   - serving 50 after too: 150u > 50u + 1,500 for u in (15, 30], 2,250
//     messages, and 4,200 + 10u > 50u + 1,500 for u in (30, 67.5), 375: 2,625;
//   - serving 150 after 60 s: the same 2,250, then 4,200 + 10u > 150u − 1,500
//     for u in (30, 40.71), 107.1: 2,357.1. The queue is empty at 72.86 s,
//     when 3,000 + 150(t − 60) = 4,200 + 10t.
//
// With 1,500 messages waiting, the newest 10 s of the burst (u in [−10, 0]),
// the arrivals up to u are 1,500 + 150u: late for u in (0, 30], 4,500, then
// (30, 105) at 50 (750) or (30, 51.43) at 150 (214.3); empty at 83.57 s.
func TestBurstQueueLate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backlog, after, late, clear float64
	}{
		{0, 50, 2625, math.NaN()},
		{0, 150, 2357.14, 72.857},
		{1500, 50, 5250, math.NaN()},
		{1500, 150, 4714.29, 83.571},
	} {
		q := burstQueue{backlog: tc.backlog, rate: 150, base: 10, rem: 30, d: 60, latency: 30, now: 50}
		late, clear := q.late(tc.after), q.clear(tc.after)
		if math.Abs(late-tc.late) > 0.01 {
			t.Errorf("backlog %v, %v msg/s after the start delay: %v late, want %v", tc.backlog, tc.after, late, tc.late)
		}
		if !math.IsNaN(tc.clear) && math.Abs(clear-tc.clear) > 0.001 {
			t.Errorf("backlog %v, %v msg/s after the start delay: empty at %v s, want %v", tc.backlog, tc.after, clear, tc.clear)
		}
	}
	// A fleet that never keeps pace with the base rate is followed for the
	// horizon only: finite.
	q := burstQueue{rate: 150, base: 10, rem: 30, d: 60, latency: 30, now: 5}
	if late, clear := q.late(5), q.clear(5); math.IsInf(late, 0) || math.IsNaN(late) || clear != 60+burstHorizon {
		t.Errorf("a fleet short of the base rate: %v late, empty at %v; want finite and %v", late, clear, 60+burstHorizon)
	}
}

// A launch during a burst is a cost decision: the workers start after the
// burst and serve only what is left. Bursts of 30 s at 100 msg/s every 10
// minutes on 5 msg/s; 20 s into one at 300 msg/s, with 60 workers in service
// and 4,000 visible (the newest 13.3 s of it): bursts this long lasted 10 s
// more. The latency floor asks for 127 (5 + 3,650 ÷ 30: the 4,000, less
// the 60 × 60 served, plus 300 × 10 + 5 × 50 arriving before new workers
// start). In the fluid picture the 60 leave the arrivals in (−9.17, 93.6)
// past the promise, 6,168.2 messages; 127 from 60 s on leave (−9.17,
// 58.69), 5,993.4: 174.7 kept within it, worth 1,747 worker-seconds at 10
// service times each. The 67 more cost 67 × 89.9 s until the queue is
// empty, 6,025: not launched. At 100 service times a late message they are.
//
// With the bursts' fleet of 50 kept warm, the 120 workers this burst has
// needed so far (its 6,000 messages ÷ (20 s + the 30 s promise)) are
// launched whatever the cost: the warm fleet keeps them once it ends. The
// 7 more leave (−9.17, 60.43) past the promise with 120: 8.7 messages, 87
// worker-seconds, against 7 × 89.9 s, 629: not launched at 10 service
// times a late message.
func TestLaunchDuringABurstIsACostDecision(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lateCost float64
		noWarm   bool
		want     int
	}{{DefaultLateCost, true, 60}, {100, true, 127}, {DefaultLateCost, false, 120}, {100, false, 127}} {
		st := &State{lastDt: 5 * time.Second}
		at := feedBursts(&st.bursts, 11*600+300, 600, 300, 30, 5, 100)
		for range 4 {
			at = at.Add(5 * time.Second)
			st.bursts.observe(at, 5, 300*5, 90, 30)
		}
		c := burstCall(st, at, 60, tc.lateCost)
		c.lambda, c.lambdaEff, c.peakEff = 300, 300, 300
		c.inService, c.visible, c.backlog = 60, 4000, 4000
		c.sizeModel()
		if !c.bp.short || math.Abs(c.bp.remaining-10) > 1e-9 {
			t.Fatalf("short %v, remaining %v s; want a burst expected to end in 10 s", c.bp.short, c.bp.remaining)
		}
		if c.rec != 127 || c.bp.warm != 50 || c.st.bursts.cur.need != 120 {
			t.Fatalf("recommendation %d, warm %d, the burst's need so far %v msg/s; want 127, 50 and 120", c.rec, c.bp.warm, c.st.bursts.cur.need)
		}
		if tc.noWarm {
			c.bp.warm = 0
		}
		got := c.keepWarm(c.launchPays(c.rec))
		c.finishReasons()
		if got != tc.want {
			t.Errorf("late cost %v, warm %d: target %d, want %d; reasons %q", tc.lateCost, c.bp.warm, got, tc.want, c.d.Reasons)
		}
		said := map[int]string{
			60:  "a burst is on: launching 67 more would keep ~175 more messages within the promise, worth 1747 worker-seconds at the late cost, for 6025 worker-seconds until they have served the queue: not launched",
			120: "a burst is on: launching 7 more would keep ~9 more messages within the promise, worth 87 worker-seconds at the late cost, for 629 worker-seconds until they have served the queue: not launched",
		}[tc.want]
		refused := 127 - tc.want
		if said != "" && !slices.Contains(c.d.Reasons, said) || said == "" && slices.ContainsFunc(c.d.Reasons, func(r string) bool { return strings.HasSuffix(r, "not launched") }) {
			t.Errorf("late cost %v, warm %d: reasons %q; want %q among them", tc.lateCost, c.bp.warm, c.d.Reasons, said)
		}
		if b := c.d.Bursts; b == nil || b.NotLaunchedWorkers != refused {
			t.Errorf("late cost %v, warm %d: the decision's bursts %+v; want %d workers not launched", tc.lateCost, c.bp.warm, b, refused)
		}
	}
}

// A warm start teaches the burst learner the last hour of the arrival
// history, a minute an interval: 90 minutes at 300 messages a minute (5
// msg/s), with 3,000 more in minutes 10, 40, 55, 70 and 85, and the newest
// minute not yet published. The burst of minute 10 is more than an hour old
// and left out: four bursts of 3,300 messages a minute long, each needing
// 3,300 ÷ (60 s + 30 s) = 36.7 msg/s (the heaviest window no longer than
// D + L = 90 s is its minute), so the first decision keeps 37 workers warm
// for them. A learner that has observed live intervals is left as it is.
func TestPreloadTeachesTheBursts(t *testing.T) {
	t.Parallel()
	h := model.MinuteHistory{Start: t0, Counts: make([]float64, 91)}
	for i := range h.Counts {
		h.Counts[i] = 300
	}
	for _, m := range []int{10, 40, 55, 70, 85} {
		h.Counts[m] += 3000
	}
	h.Counts[90] = math.NaN()
	end := t0.Add(90 * time.Minute)
	st := &State{lastDt: 5 * time.Second}
	c := burstCall(st, end, 7, 1)
	st.Preload(c.s, h)
	f := st.bursts.facts(end)
	if f.n != 4 || f.msgs != 3300 || f.length != 60 || math.Abs(f.base-5) > 0.01 {
		t.Fatalf("preloaded: %d bursts of %v messages over %v s on %v msg/s, want 4 of 3300 over 60 s on 5", f.n, f.msgs, f.length, f.base)
	}
	if want := 3300.0 / 90; math.Abs(f.need-want) > 1e-9 {
		t.Errorf("need %v msg/s, want 3300 ÷ 90 = %v", f.need, want)
	}
	c.planBursts()
	if !c.bp.known || c.bp.need != 37 {
		t.Errorf("first decision: bursts known %v, need %d workers; want known, 37", c.bp.known, c.bp.need)
	}

	live := &State{lastDt: 5 * time.Second}
	live.bursts.observe(end, 5, 25, 90, 30)
	live.Preload(c.s, h)
	if g := live.bursts.facts(end); g.n != 0 || live.bursts.n != 1 {
		t.Errorf("a learner with a live interval: %d bursts and %d intervals after the preload, want 0 and 1", g.n, live.bursts.n)
	}
}

// The warm start's bursts of TestPreloadTeachesTheBursts (3,300 messages a
// minute: 36.7 msg/s at a minute's resolution), then live intervals of 5 s
// at 5 msg/s with one burst of 100 msg/s for 30 s, 10 s into a minute. Live,
// it needs 3,000 ÷ (30 s + 30 s) = 50 msg/s; its minute holds 3,000 + 30 ×
// 5 = 3,150 messages, 35 msg/s at a minute's resolution: a minute hides
// 50 ÷ 35 of this group's bursts, and the warm start's bursts are taken to
// need 3,300 ÷ 90 × 50 ÷ 35 = 52.4 msg/s. Until that live burst, the first
// decision after the warm start keeps the 120 workers it found warm (more
// than the 37 the minutes show); after it, the 53 the bursts need.
func TestPreloadedBurstsAreCalibratedByLiveOnes(t *testing.T) {
	t.Parallel()
	h := model.MinuteHistory{Start: t0, Counts: make([]float64, 90)}
	for i := range h.Counts {
		h.Counts[i] = 300
	}
	for _, m := range []int{40, 55, 70, 85} {
		h.Counts[m] += 3000
	}
	end := t0.Add(90 * time.Minute)
	st := &State{lastDt: 5 * time.Second}
	c := burstCall(st, end, 120, 1)
	st.Preload(c.s, h)
	c.planBursts()
	warm := c.warmPays(c.rateFloorAt(5))
	c.finishReasons()
	if c.bp.need != 37 || warm != 120 || !c.bp.found || !hasReason(c.d, "keeping the 120 workers the warm start found", "the 37 they show is a lower bound") {
		t.Fatalf("first decision after the warm start: need %d, warm %d (found %v), reasons %q; want 37, the 120 found, said", c.bp.need, warm, c.bp.found, c.d.Reasons)
	}
	at := end
	for s := 5; s <= 180; s += 5 {
		at = end.Add(time.Duration(s) * time.Second)
		msgs := 25.0
		if s > 10 && s <= 40 {
			msgs = 500
		}
		st.bursts.observe(at, 5, msgs, 90, 30)
	}
	for i := range st.bursts.np {
		b := st.bursts.past[i]
		want := 3300.0 / 90 * 50 / 35
		if !b.fromMinutes {
			want = 50
		}
		if math.Abs(b.need-want) > 1e-9 {
			t.Errorf("burst at %v (from the minutes %v): need %v msg/s, want %v", time.Unix(0, b.start).Sub(t0), b.fromMinutes, b.need, want)
		}
	}
	c = burstCall(st, at, 120, 1)
	c.planBursts()
	if warm := c.warmPays(c.rateFloorAt(5)); c.bp.need != 53 || warm != 53 || c.bp.found {
		t.Errorf("after a live burst: need %d, warm %d (found %v); want 53 and 53", c.bp.need, warm, c.bp.found)
	}
}

// The workers serving a burst are not released before it ends when it is
// the burst that makes the recent ones enough to size for (burstMinKnown):
// two 30 s bursts at 100 msg/s on 5 msg/s are known and a third has just
// arrived. Each needs 100 × 30 ÷ (30 + 30) = 50 workers in the worked
// example's terms (TestBurstsARelaunchCannotServeAreKeptWarmForThePromise),
// and a relaunch a start delay late cannot serve the next, so the 50 are
// kept warm. With one burst known before it, the one on makes two: nothing
// is sized yet.
func TestBurstOnThatMakesThemKnownKeepsItsWorkers(t *testing.T) {
	t.Parallel()
	decide := func(secs int) (burstPlan, int) {
		st := &State{lastDt: 5 * time.Second}
		at := feedBursts(&st.bursts, secs, 1200, 600, 30, 5, 100)
		c := burstCall(st, at, 50, 1)
		c.planBursts()
		warm := c.warmPays(c.rateFloorAt(5))
		return c.bp, warm
	}
	bp, warm := decide(3030)
	if bp.known || !bp.ends || bp.f.n != 2 || !bp.f.on {
		t.Fatalf("third burst on: known %v, ends %v, %d bursts, on %v; want 2 learned, the third on and making them enough", bp.known, bp.ends, bp.f.n, bp.f.on)
	}
	if bp.need != 50 || warm != 50 {
		t.Errorf("third burst on: need %d, warm %d; want 50 kept warm", bp.need, warm)
	}
	bp, warm = decide(1830)
	if bp.known || bp.ends || warm != 0 {
		t.Errorf("second burst on: known %v, ends %v, warm %d; want nothing sized with two bursts", bp.known, bp.ends, warm)
	}
}

// The promise may miss 1 % of the messages, and the warm fleet spends half
// of that (planAim) on the rarest bursts. An hour of 5 msg/s with a 30 s
// burst at 60 msg/s every 10 minutes, each needing 60 × 30 ÷ (30 + 30) = 30
// workers at 1 msg/s, but one of them 10 s at 200 msg/s, needing
// 200 × 10 ÷ (10 + 30) = 50. A fleet that never moves keeps all but 0.5 %
// of the hour's 18,000 + 5 × 1,650 + 2,000 − 50 = 28,200 messages within the
// promise at m msg/s when the short burst loses at most 141 of its 2,000:
// 200 × (10 − 30m ÷ (200 − m)) ≤ 141, from m = 47.3 (the book's steps of 5
// s blur the rest). The warm fleet is 48, not 50.
func TestWarmFleetSpendsTheAllowanceOnTheRarestBurst(t *testing.T) {
	t.Parallel()
	st := &State{lastDt: 5 * time.Second}
	s := burstCall(st, t0, 1, 1).s
	book := st.planBook(s)
	const dt = 5
	at := t0
	for sec := 0; sec < 3600+120; sec += dt {
		at = t0.Add(time.Duration(sec+dt) * time.Second)
		rate := 5.0
		rare := sec >= 3000 && sec < 3600 // the burst at 50 minutes
		switch k := sec % 600; {
		case rare && k >= 300 && k < 310:
			rate = 200
		case !rare && k >= 300 && k < 330:
			rate = 60
		}
		st.bursts.observe(at, dt, rate*dt, 90, 30)
		book.Observe(secondsOf(at)-dt, secondsOf(at), rate*dt)
	}
	c := burstCall(st, at, 48, 1)
	c.planBursts()
	if !c.bp.known || !c.bp.spends || c.bp.need != 48 {
		t.Fatalf("need %d (known %v, from the allowance %v); want 48 from the allowance", c.bp.need, c.bp.known, c.bp.spends)
	}
	if learned := capacity.CeilWorkers(c.bp.f.need); learned != 50 {
		t.Errorf("the learner's need %d, want 50", learned)
	}
}
