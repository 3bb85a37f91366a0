package policy

import (
	"fmt"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/arrivals"
	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/ceiling"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// Thresholds of the diagnosis and limits of the sizing.
const (
	// streakSamples is how many consecutive samples a backlog with nothing
	// in flight, or in-flight at capacity, must last before the diagnosis
	// says not_consuming or stuck.
	streakSamples = 3
	// atCapacityShare: in-flight at or above this share of the in-service
	// slots (workers × concurrency) reads as "at capacity".
	atCapacityShare = 0.9
	// nearZeroShare: in-flight at or below this share of the in-service
	// slots, rounded down, reads as "near zero" (0 for fleets under 20
	// slots).
	nearZeroShare = 0.05
	// idleShare: with nothing visible or delayed, in-flight at or below this
	// share of the slots reads as idle.
	idleShare = 0.1
	// stuckCompletionShare: completions below this share of what the
	// in-service workers would complete read as "near zero".
	stuckCompletionShare = 0.05
	// stuckServiceTimes and stuckMinStreak: a stuck fleet has been at
	// capacity for at least this many service times, so a quiet minute of
	// slow work is not "stuck", and for at least two CloudWatch periods, so
	// the deleted count covers a minute inside the streak whether its time
	// marks the start of its period (as CloudWatch's does) or the end.
	stuckServiceTimes = 3
	stuckMinStreak    = 2 * time.Minute
	// maxWaitServers bounds the Erlang C walk. Beyond a million busy slots
	// the square-root staffing margin Erlang C adds (a few √a) is under
	// 0.5 % of the load, far below any utilisation ceiling's margin, so the
	// utilisation floor decides and the wait floor is not computed.
	maxWaitServers = 1_000_000
	// quietMessages: an arrival estimate that expects fewer messages than
	// this over one smoothing time constant reads as 0. The EWMA of a queue
	// that has gone quiet decays towards 0 without reaching it, and any
	// positive rate asks for one worker, so without this a group with Min 0
	// would never scale to zero. A message that does arrive is still seen in
	// the backlog, and the latency floor starts a worker for it.
	quietMessages = 0.5
	// maxRecommended bounds every count the sizing produces.
	maxRecommended = math.MaxInt32
)

// Decide returns the decision for one group at now, from the group's
// settings, its aggregated sample, its fleet as last read, and its State,
// which it updates. It is pure apart from st: the time is now, never the
// clock.
//
// Current workers are the fleet's desired count when the fleet is known
// (workers still starting are capacity on the way, so one backlog is never
// scaled for twice); when the group has no fleet to read (fleet.Kind ""),
// the count the previous decision asked for, and Min before any. When the
// fleet read failed, the decision holds at the last count known.
//
// The policy recommends a count (see the model and backlog_per_worker rules
// in sizing.go), then applies its guards in this order, each one recorded in
// the reasons: hold on missing, invalid or stale data, or an unknown fleet;
// hold when the diagnosis says more workers will not help (not_consuming,
// stuck), and at the count from before messages began to be held
// (messages_held) unless arrivals they do not explain show new work; the
// backlog hold (workers added for a backlog stay until it is served) and
// scale-in stabilisation of the rate floors; no scale-in on partial data;
// the deadband; no scale-out while more is in flight than the slots hold
// and no deleted count explains it (held.go);
// the scale-out step limit; and last the clamp to [lo, hi] of
// Settings.Bounds. However wrong the inputs, the desired count is within
// those bounds and every number in the decision is finite.
//
// A held decision repeats the last count known. When none is known yet (the
// fleet could not be read on the first call), it carries the clamped
// recommendation and Held is true: callers must not act on it.
func Decide(s Settings, sample model.GroupSample, fleet model.Fleet, st *State, now time.Time) model.Decision {
	if st == nil {
		st = new(State)
	}
	s = s.WithDefaults()
	s, l := st.learn(s, sample, fleet)
	var c call
	c.init(s, sample, fleet, st, now)
	c.learn = l
	c.applyCeiling()
	c.learnReasons()
	c.observe()
	c.applySuspicion()
	c.size()
	c.diagnose()
	c.guard()
	c.safety()
	c.clamp()
	c.report()
	c.remember()
	c.finishReasons()
	return c.d
}

// box holds the values a decision points to, so that one allocation serves
// them all.
type box struct {
	drain, util, wait, bpw      int
	arrival, utilz, drainS, age float64
	ceiling                     float64 // the utilisation floor's
	bpwInService                float64
	fc                          model.Forecast
	bet                         model.Bet
	pinned                      int
	pausedSince, ageAt          time.Time

	mService, mPerWorker, mConfidence, mStart float64
	mCeiling                                  int
	reasons                                   learnValues
	catchUp                                   seconds

	bursts               model.Bursts
	holdUSD, relaunchUSD float64
	plan                 model.Plan
	planMore, planFewer  model.PlanCost
}

// call is one Decide call in progress.
type call struct {
	s      Settings
	sample model.GroupSample
	fleet  model.Fleet
	st     *State
	now    time.Time
	d      model.Decision
	b      *box
	learn  learning

	lo, hi int
	hiBy   string

	// fleet
	current      int
	currentKnown bool
	inService    int
	// stepSuspect: a scale-out that hardly moved the queue is suspected
	// (ceiling.Step): step.
	stepSuspect bool
	step        ceiling.ScaleOut
	fleetFailed bool

	// data
	at      time.Time
	usable  bool // counts are present and valid
	invalid bool // counts are present but negative
	stale   bool
	partial bool
	prev    counts
	prevOK  bool
	backlog float64 // the count the sizing uses
	visible float64

	mu, muEff   float64 // per-worker throughput, raw and effective
	perServer   float64 // μ_eff per slot
	lambda      float64
	lambdaKnown bool
	surging     bool    // lambda is a surge measured over saturated intervals
	held        bool    // messages are received and not deleted (held.go)
	suspect     bool    // more in flight than the slots, not explained yet (held.go)
	rise        float64 // what the sizing adds to lambda while arrivals climb (arrivals.Trend)
	slope       float64 // their climb, msg/s per second, when rise > 0
	lambdaEff   float64 // λ with the burst reserve
	peakEff     float64 // the arrivals the wait floor sizes for: lambdaEff, or the forecast's when higher
	fc          forecast.Result
	horizon     time.Duration
	deleted     float64
	deletedOK   bool
	age         float64
	ageOK       bool
	ageAt       time.Time // the age's datapoint

	rec      int
	rateRec  int // the rate floors' recommendation (see size)
	recKnown bool
	cannot   string // why no recommendation could be made

	diag   string
	target int
	bp     burstPlan // the bursts (warm.go)
	// noiseHold: the fleet's count is one the rate floors give within the
	// noise of the arrival estimate (noise.go).
	noiseHold        bool
	noiseLo, noiseHi int
	noiseMean        float64

	// The reasons are formatted one after another into the State's scratch
	// buffer and cut from a single string at the end.
	ends [maxReasons]int
	n    int
}

// maxReasons bounds the reasons of one decision; no path gives as many.
const maxReasons = 24

func (c *call) init(s Settings, sample model.GroupSample, fleet model.Fleet, st *State, now time.Time) {
	*c = call{s: s, sample: sample, fleet: fleet, st: st, now: now, b: new(box)}
	st.scratch = st.scratch[:0]
	c.lo, c.hi, c.hiBy = s.Bounds(fleet)
	group := s.Group
	if group == "" {
		group = sample.Group
	}
	c.d = model.Decision{
		Group:     group,
		At:        now,
		Visible:   sample.Visible,
		InFlight:  sample.InFlight,
		Delayed:   sample.Delayed,
		Backlog:   sample.Backlog,
		Partial:   sample.Partial(),
		Diagnosis: model.DiagUnknown,
	}
}

func (c *call) reason(format string, args ...any) {
	if c.n == maxReasons {
		return
	}
	c.keepReason(fmt.Appendf(c.st.scratch, format, args...))
}

// keepReason takes t, the scratch buffer with one more reason appended to
// it, as the decision's next reason; the caller checks maxReasons first.
func (c *call) keepReason(t []byte) {
	c.st.scratch = t
	c.ends[c.n] = len(t)
	c.n++
}

// finishReasons cuts the decision's reasons from one string.
func (c *call) finishReasons() {
	all := string(c.st.scratch)
	c.d.Reasons = make([]string, c.n)
	start := 0
	for i := range c.n {
		c.d.Reasons[i] = all[start:c.ends[i]]
		start = c.ends[i]
	}
}

func (c *call) hold(why string) {
	if !c.d.Held {
		c.d.Held = true
		c.d.HoldReason = why
	}
}

// fresh reports whether a CloudWatch reading is usable at now.
func (c *call) fresh(r *model.Reading) (float64, bool) {
	if r == nil || r.At.IsZero() || math.IsNaN(r.Value) || math.IsInf(r.Value, 0) || r.Value < 0 {
		return 0, false
	}
	if c.now.Sub(r.At) > c.s.MetricStaleAfter {
		return 0, false
	}
	return r.Value, true
}

// observe reads the fleet and the sample, and updates the arrival estimate.
func (c *call) observe() {
	s, st, sample, fleet := c.s, c.st, c.sample, c.fleet

	switch {
	case fleet.Known:
		c.current, c.currentKnown = max(fleet.Desired, 0), true
		c.inService = max(fleet.InService, 0)
		c.d.InServiceWorkers = c.inService
		c.d.PendingWorkers = max(fleet.Pending, 0)
		c.d.DrainingWorkers = max(fleet.Draining, 0)
	case fleet.Kind == "":
		// No fleet to read: the count the last decision asked for.
		c.current, c.currentKnown = c.lo, true
		if st.haveLastDesired {
			c.current = st.lastDesired
		}
		c.inService = c.current
		c.d.InServiceWorkers = c.current
	default:
		c.fleetFailed = true
		switch {
		case st.haveLastCurrent:
			c.current, c.currentKnown = st.lastCurrent, true
		case st.haveLastDesired:
			c.current, c.currentKnown = st.lastDesired, true
		}
		c.inService = c.current
	}
	c.d.CurrentWorkers = c.current

	c.at = sample.At
	if c.at.IsZero() {
		c.at = c.now
	}
	c.invalid = sample.Visible < 0 || sample.InFlight < 0 || sample.Delayed < 0 || sample.Backlog < 0
	c.usable = !sample.Missing() && !c.invalid
	c.partial = sample.Partial()
	c.stale = s.StaleAfter > 0 && c.now.Sub(c.at) > s.StaleAfter

	c.mu = s.PerWorker()
	c.muEff = s.EffectivePerWorker()
	c.perServer = c.muEff / float64(s.Concurrency)
	if v, ok := c.fresh(sample.OldestAge); ok {
		c.age, c.ageOK, c.ageAt = v, true, sample.OldestAge.At
	}
	c.deleted, c.deletedOK = c.fresh(sample.Deleted)
	if !c.usable {
		return
	}
	// The backlog the sizing uses is the poller's, which always includes
	// the visible messages; a caller that left it unset still gets those.
	c.visible = float64(sample.Visible)
	c.backlog = math.Max(float64(sample.Backlog), c.visible)

	sent, sentOK := c.fresh(sample.Sent)
	servers := -1.0
	now := arrivals.Counts{At: c.at, Visible: c.visible, InFlight: float64(sample.InFlight), Delayed: float64(sample.Delayed)}
	if fleet.Known {
		servers = float64(c.inService) * float64(s.Concurrency)
		c.readScaleOut(servers, now)
		if c.learn.ceilingOK && !c.partial {
			// Slots past the learned ceiling complete nothing more.
			servers = math.Min(servers, float64(c.learn.ceiling.Workers*s.Concurrency))
		}
	}
	var deletedAt time.Time
	if c.deletedOK {
		deletedAt = sample.Deleted.At
	}
	held := c.watchHeld(servers)
	prev, prevOK := st.est.Update(now, queueKey(sample), arrivals.Flow{
		Deleted: c.deleted, DeletedAt: deletedAt, DeletedOK: c.deletedOK,
		Keep: s.MetricStaleAfter + 2*time.Minute,
		Sent: sent, SentOK: sentOK,
		PerServer: c.mu / float64(s.Concurrency), Servers: servers,
		Tau:  s.ArrivalSmoothing,
		Held: held,
	})
	c.prev = counts{at: prev.At, visible: prev.Visible, inFlight: prev.InFlight, delayed: prev.Delayed}
	c.prevOK = prevOK
	if rate, ok := st.est.Rate(); ok && !math.IsNaN(rate) && !math.IsInf(rate, 0) {
		c.lambda, c.lambdaKnown = math.Max(rate, 0), true
		if surge, ok := st.est.Surge(c.at); ok && surge > c.lambda && !held && !c.suspect {
			c.lambda, c.surging = surge, true
		}
		c.setLambda(c.lambda)
		// While in flight is above the slots unexplained (held.go), the
		// interval's arrivals rest on completions nobody has seen: no
		// burst, forecast minute or climb is learned from them.
		if !c.suspect {
			c.learnBursts()
		}
		c.recordArrivals()
		c.learnNoise()
		if st.est.Updated(c.at) && !c.suspect {
			st.climb.Observe(c.at, rate, 2*s.ArrivalSmoothing)
		}
		if s.Policy == PolicyModel && !c.surging && c.lambda > 0 {
			c.rise, c.slope = st.climb.Rise(c.at, rate, s.ArrivalSmoothing, s.StartDelay, st.noise.still(s.ArrivalSmoothing.Seconds()))
			if c.rise > 0 {
				c.lambdaEff = effectiveArrival(c.lambda+c.rise, s.BurstReserve)
				c.peakEff = c.lambdaEff
			}
		}
	}
	c.forecast()
}

// setLambda sets the decision's arrival rate and what derives from it.
func (c *call) setLambda(v float64) {
	s := c.s
	c.lambda = v
	if c.lambda*s.ArrivalSmoothing.Seconds() < quietMessages {
		c.lambda = 0
	}
	c.lambdaEff = effectiveArrival(c.lambda, s.BurstReserve)
	c.peakEff = c.lambdaEff
}

// effectiveArrival is v with the burst reserve, finite.
func effectiveArrival(v, reserve float64) float64 {
	e := capacity.EffectiveArrival(v, reserve)
	if math.IsInf(e, 0) {
		return math.MaxFloat64
	}
	return e
}

// forecast feeds the interval's arrivals to the forecaster and reads the
// arrivals it expects within the horizon (see forecaster). The model policy
// sizes its wait floor for them when the forecast is on and above today's
// estimate; in report-only mode the decision only shows them.
func (c *call) forecast() {
	s, st := c.s, c.st
	if s.Forecast.Off || s.Policy != PolicyModel {
		return
	}
	st.fc.Init(s.Forecast.History)
	if obs, ok := st.est.Observation(c.at); c.prevOK && ok && !c.suspect {
		st.lastDt = c.at.Sub(c.prev.at)
		st.fc.Observe(c.prev.at, c.at, obs, st.horizon(s))
	}
	if ms, minute, ok := st.est.Minute(c.at); ok && ms.Equal(ms.Truncate(time.Minute)) {
		// The exact arrivals of a minute the deleted count covers (a
		// CloudWatch period, aligned to the minute) replace the interval
		// observations' approximation of it.
		st.fc.Correct(ms, minute)
	}
	if !c.lambdaKnown {
		return
	}
	h := st.horizon(s)
	// The interval's arrivals by Little's law over the in-flight messages
	// (m, see arrivals.Estimator) tell at once when a job is over; the
	// deleted count lags it by a minute or more.
	cur, curOK := st.est.Interval(c.at)
	chance := memoryChance(st.budget)
	st.fc.SpendOn(chance)
	r := st.fc.Forecast(c.at, h, cur, curOK)
	if st.fc.Spends() && s.forecasting() {
		c.reason("recent bursts less likely than %s within the next %s are left to the promise's allowance: the last hour spent it at %s of its rate",
			percent(chance), h.Round(time.Second), percent(st.budget.BurnRate))
	}
	if e := r.Ended; e != nil && s.forecasting() && !c.surging {
		// The job the forecast expected came and is over: the smoothed
		// estimate, which follows a deleted count a minute or more late,
		// drops at once to what arrives now, and the workers sized for the
		// job go with the backlog, not held by the scale-in window for the
		// job's own recommendations.
		st.fc.Release(e)
		if v := math.Max(cur, r.Base); curOK && st.est.Lower(v) {
			st.win.reset()
			st.climb.Reset()
			c.rise, c.slope = 0, 0
			c.setLambda(v)
			c.reason("the load expected at %s came and is over: arrivals back to %s msg/s", e.At().Format("15:04"), number(v))
		}
	}
	if !r.OK || !(r.Rate > c.lambda) {
		return
	}
	c.fc, c.horizon = r, h
	c.b.fc = model.Forecast{Rate: r.Rate, At: r.At, Pattern: "recent bursts", Confidence: chance}
	if o := r.Occurrence; o != nil {
		c.b.fc.Pattern = o.Pattern()
		c.b.fc.Confidence = o.Confidence()
		c.b.fc.Seen, c.b.fc.Of = o.Hits(), o.Lags()
	}
	c.d.Forecast = &c.b.fc
	if !s.forecasting() {
		return
	}
	c.peakEff = math.Max(c.peakEff, effectiveArrival(r.Rate, s.BurstReserve))
}

// guard turns the recommendation into a target count, applying every guard
// but the clamp, in stages: the data's holds (holdOnData), the
// recommendation recorded for the scale-in window (record), the
// diagnosis's holds (holdOnDiagnosis), the guards of a scale-in and of a
// launch (settle), the deadband, the held messages' guards and the step
// limit.
func (c *call) guard() {
	s := c.s
	c.target = c.current
	if c.holdOnData() {
		return
	}
	planned, planRec := c.record()
	if c.holdOnDiagnosis() {
		return
	}
	target := c.settle(planned, planRec)
	target = c.deadband(target)

	switch {
	case (c.held || c.suspect) && c.newWork():
		target = c.keepHeld(target)
	case c.suspect:
		target = c.holdSuspect(target)
	}

	if s.MaxStepOut > 0 && target > c.current && target-c.current > s.MaxStepOut {
		c.reason("scale-out limited to %d workers per decision (target %d)", s.MaxStepOut, target)
		target = c.current + s.MaxStepOut
	}
	c.target = target
}

// holdOnData holds the group, and reports so, when its data cannot be
// decided on: no queue answered, negative or stale counts, a fleet that
// could not be read, or no recommendation.
func (c *call) holdOnData() bool {
	s := c.s
	switch {
	case c.sample.Missing():
		c.hold("missing data")
		c.reason("holding at %d: no queue answered (%d of %d)", c.current, c.sample.Answered, c.sample.Queues)
	case c.invalid:
		c.hold("invalid data")
		c.reason("holding at %d: the sample has negative counts", c.current)
	case c.stale:
		c.hold("stale data")
		c.reason("holding at %d: the sample is %s old, older than %s", c.current, c.now.Sub(c.at).Round(time.Second), s.StaleAfter)
	case c.fleetFailed:
		c.hold("fleet unknown")
		if c.currentKnown {
			c.reason("holding at %d, the last count known: the fleet could not be read", c.current)
		} else {
			c.reason("the fleet could not be read and no earlier count is known: the decision must not be applied")
			if c.recKnown {
				c.target = c.rec
			}
		}
	case !c.recKnown:
		c.hold("cannot size")
		c.reason("holding at %d: %s", c.current, c.cannot)
	default:
		return false
	}
	return true
}

// record makes the plan over sampled futures, shown on every decision of
// the model policy (it sets the count only with PlanActs: planned, and
// planRec is then what the scale-in window holds, the rate floors'
// recommendation otherwise), pushes that recommendation into the scale-in
// window, and keeps a recommendation the backlog floors raised above the
// rate floors until that backlog is served (holdForBacklog).
func (c *call) record() (planned bool, planRec int) {
	s, st := c.s, c.st
	planRec = c.rateRec
	if s.Policy == PolicyModel && c.lambdaKnown && c.latency() > 0 {
		n := c.planFleet(max(c.planFloor(), c.lo))
		if s.PlanActs {
			planned, planRec = true, n
		}
	}

	// After a gap longer than the window and than a sample may age (the
	// first call, or a long hold) the window restarts from the current
	// count, so a restart never scales in at once. A window no longer than
	// the sampling interval is not a gap: it must still let the fleet scale
	// in.
	window := s.ScaleInStabilization
	if gap := c.now.Sub(st.lastRecAt); st.lastRecAt.IsZero() || (gap > window && gap > s.StaleAfter) {
		st.win.reset()
		st.win.push(c.now, c.current, window, stabilizationSlots)
	}
	st.win.push(c.now, planRec, window, stabilizationSlots)
	st.lastRecAt = c.now
	if c.rec > c.rateRec {
		st.backlogHold = max(st.backlogHold, c.rec)
	}
	return planned, planRec
}

// holdOnDiagnosis holds the group, and reports so, when the diagnosis says
// more workers will not help (not consuming, stuck), or messages are held
// and no new work explains the arrivals; with new work it keeps the count
// from before they were held and goes on.
func (c *call) holdOnDiagnosis() bool {
	switch c.diag {
	case model.DiagNotConsuming:
		c.hold("not consuming")
		c.reason("holding at %d: more workers will not fix a fleet that receives nothing (crash loop or permissions?)", c.current)
		return true
	case model.DiagStuck:
		c.hold("stuck")
		c.reason("holding at %d: more workers will not fix workers that hold messages without completing them", c.current)
		return true
	case model.DiagMessagesHeld:
		if !c.newWork() {
			c.holdHeld(false)
			return true
		}
		c.holdHeld(true)
	}
	return false
}

// settle is the target from the recommendation (the plan's, when it acts)
// after the guards of a scale-in and a launch: the backlog hold, the
// scale-in window, arrivals still climbing, a launch during a burst that
// does not pay and the warm fleet, the noise hold, and no scale-in on
// partial data.
func (c *call) settle(planned bool, planRec int) int {
	s, st := c.s, c.st
	window := s.ScaleInStabilization
	target := c.rec
	if planned {
		target = planRec
	}
	if st.backlogHold > 0 && !planned {
		target = c.holdForBacklog(target)
	}
	if target < c.current && window > 0 {
		if high, ok := st.win.highest(c.now, window); ok && high > target {
			target = min(high, c.current)
			c.reason("scale-in stabilised: the highest rate recommendation over the last %s is %d", window, high)
		}
	}
	// A launch during a burst goes ahead only when it pays; the warm
	// fleet stays whatever the stabilisation says.
	if target < c.current && c.climbing() {
		c.reason("not scaling in to %d: arrivals over the last %s (%s msg/s) are above the estimate (%s msg/s) by more than its noise, still climbing",
			target, c.st.texts.of(c.recentSpan(), slotWindow), number(c.recentRate()), number(c.smoothed()))
		target = c.current
	}
	if !planned {
		target = c.keepWarm(c.launchPays(target))
	}
	if c.noiseHold && target != c.current && c.rec <= c.rateRec && !planned {
		c.noiseReason()
		target = c.current
	}
	if c.partial && (target < c.current || c.rec < c.current) {
		target = max(target, c.current)
		c.hold("partial data")
		c.reason("holding at %d: only %d of %d queues answered; never scaling in on partial data", c.current, c.sample.Answered, c.sample.Queues)
	} else if c.partial {
		c.reason("only %d of %d queues answered: scaling out on the counts that are known", c.sample.Answered, c.sample.Queues)
	}
	return target
}

// deadband keeps the count when the change to target is within the
// deadband, unless the fleet cannot keep up with the arrivals or the
// oldest message is past the promise.
func (c *call) deadband(target int) int {
	s := c.s
	if target == c.current || c.current <= 0 || !(s.Deadband > 0) {
		return target
	}
	change := math.Abs(float64(target - c.current))
	if change > s.Deadband*float64(c.current) {
		return target
	}
	// Unstable: the fleet cannot keep up with the arrivals, or with
	// those the forecast sizes for (a pre-started fleet a few
	// workers short of a job that has come).
	unstable := c.lambdaKnown && float64(c.current)*c.muEff <= math.Max(c.lambdaEff, c.peakEff)
	late := c.ageOK && c.latency() > 0 && c.age > c.latency()
	switch {
	case target > c.current && unstable:
		c.reason("the change to %d is within the %s deadband, but %d workers cannot keep up with the arrivals", target, percent(s.Deadband), c.current)
	case target > c.current && late:
		c.reason("the change to %d is within the %s deadband, but the oldest message is past the promise", target, percent(s.Deadband))
	default:
		c.reason("the change from %d to %d is within the %s deadband: no action", c.current, target, percent(s.Deadband))
		target = c.current
	}
	return target
}

// holdForBacklog keeps the workers added for a backlog until it is served.
//
// The backlog floors size a scale-out for the messages waiting, counting the
// workers already on their way, so their recommendation falls as soon as
// those workers are launched, and again as they serve the backlog; scaling
// in on it would cancel workers before they start, or leave a backlog to a
// fleet too small for it. So the highest recommendation since the backlog
// floors last rose above the rate floors is held, against scale-in only,
// until keep = min(workers in service, the rate floors' recommendation) —
// the workers that stay once the hold ends, and are already there — serve
// the backlog as the backlog floors promise with no start delay to wait out
// (backlogNeed ≤ keep). Then the rate floors' recommendation, under the
// scale-in stabilisation window, takes over at once: a served backlog has
// nothing left for the extra workers to do, and holding them for the rest
// of the window paid for idle workers (a 10,000-message dump: 200 workers
// for five minutes). The hold also ends when no message is visible and
// every worker is in service: the backlog floors count the arrivals too
// (a burst's, as a backlog while it is expected to last), which would hold
// a fleet launched for a served backlog, idle, for as long as they come.
func (c *call) holdForBacklog(target int) int {
	st := c.st
	if c.backlogServed() {
		// The rate floors size for the arrivals.
		st.backlogHold = 0
		if c.rec <= c.rateRec {
			c.reason("the backlog is served: no message waits, and all %d workers are in service", c.inService)
		}
		return target
	}
	keep := min(c.inService, c.rateRec)
	if need := c.backlogNeed(); need <= keep {
		st.backlogHold = 0
		if c.rec <= c.rateRec {
			c.reason("the backlog is served: %d workers in service meet the backlog floors (%d)", keep, need)
		}
		return target
	}
	if target >= c.current || st.backlogHold <= target {
		return target
	}
	held := min(st.backlogHold, c.current)
	c.reason("keeping %d workers for the backlog until %d (the rate floors, at most those in service) serve its %s visible messages within the promise",
		held, keep, number(c.visible))
	return held
}

// backlogServed reports that no message waits and no worker is on its way:
// whatever a scale-out was for has been served, and the workers beyond what
// the arrivals keep busy are idle.
func (c *call) backlogServed() bool {
	return c.visible <= 0 && c.inService >= c.current
}

// clamp bounds the target to [lo, hi], last. The decision is capped when
// the limit keeps the fleet below what the current load needs (see
// currentNeed); a forecast above the limit is lowered to it and said so,
// and is not a cap on today's load.
func (c *call) clamp() {
	desired := c.target
	said := false // a reason names the limit already
	if c.recKnown && c.rec > c.hi && c.hiBy != "" && !c.sample.Missing() && !c.invalid {
		said = true
		limit, by := c.hi, c.hiBy
		// A group capped stays so while today's need is still at the limit:
		// a need that wobbles by one around it (an arrival estimate's
		// noise) would turn the verdict with the same numbers shown.
		if need := c.currentNeed(); need > c.hi || c.st.cappedLast && need >= c.hi {
			c.d.Capped = true
			if need < c.rec {
				c.reason("the load now needs %d (the target, with the forecast, %d), the %s allows %d", need, c.rec, by, limit)
			} else {
				c.reason("the target needs %d, the %s allows %d", c.rec, by, limit)
			}
			if b := c.s.Limits().For(c.fleet); b.Crossed {
				c.reason("the %s %d is above the %s %d: the %s wins", b.LoBy, b.Floor, b.HiBy, b.Hi, b.HiBy)
			}
		} else {
			c.reason("the forecast asks for %d, the %s allows %d; the load now needs %d", c.rec, by, limit, need)
		}
	}
	switch {
	case desired > c.hi:
		if !said {
			c.reason("lowered to the %s %d", c.hiBy, c.hi)
		}
		desired = c.hi
	case desired < c.lo:
		if b := c.s.Limits().For(c.fleet); b.Crossed {
			c.reason("raised to %d: the %s %d is above the %s %d, which wins", c.lo, b.LoBy, b.Floor, b.HiBy, b.Hi)
		} else {
			c.reason("raised to the %s %d", b.LoBy, c.lo)
		}
		desired = c.lo
	}
	c.d.DesiredWorkers = desired
	if c.diag == model.DiagUnderProvisioned && c.recKnown && c.rec > c.hi && desired == c.hi && !c.d.Capped {
		// Short at the limit with the target above it: more would be asked
		// for but for the limit. Read as under-provisioned or capped by
		// whether today's need, a moment's estimate, is above the limit,
		// the verdict would change with the same numbers shown.
		c.d.Capped = true
		c.reason("short at the %s %d, below the target %d: capped", c.hiBy, c.hi, c.rec)
	}
	if !c.sample.Missing() && !c.invalid {
		c.st.cappedLast = c.d.Capped
	}
	if c.d.Capped && c.diag != model.DiagUnknown && c.diag != model.DiagNotConsuming && c.diag != model.DiagStuck && c.diag != model.DiagMessagesHeld {
		c.diag = model.DiagCapped
		if c.hiBy == byCeiling || c.hiBy == byFIFO || c.hiBy == bySuspect {
			c.diag = model.DiagDownstreamLimited
			c.ceilingReason()
		}
	}
	c.d.Diagnosis = c.diag
}

// report fills in the decision's derived numbers.
func (c *call) report() {
	d, b := &c.d, c.b
	d.RecommendedWorkers = c.rec
	if !c.recKnown {
		d.RecommendedWorkers = c.current
	} else {
		need := c.currentNeed()
		d.NeedWithoutForecast = &need
	}
	if c.usable {
		d.BacklogPerWorker = finite(c.backlog / float64(max(c.current, 1)))
	}
	if c.fleet.Known {
		b.bpwInService = float64(d.Backlog) / float64(max(c.fleet.InService, 1))
		d.BacklogPerInServiceWorker = &b.bpwInService
	}
	d.TargetBacklogPerWorker = c.s.TargetBacklogPerWorker()
	c.reportMeasured()
	if c.ageOK {
		b.age, b.ageAt = c.age, c.ageAt
		d.OldestAgeSeconds, d.OldestAgeAt = &b.age, &b.ageAt
	}
	if !c.usable || !c.lambdaKnown {
		return
	}
	b.arrival = c.lambda
	d.ArrivalRate = &b.arrival
	capRate := float64(c.current) * c.mu
	if capRate > 0 && !math.IsInf(capRate, 0) {
		if u := c.lambda / capRate; !math.IsNaN(u) && !math.IsInf(u, 0) {
			b.utilz = u
			d.Utilization = &b.utilz
		}
	}
	if c.mu > 0 {
		if t, ok := capacity.DrainSeconds(c.backlog, capRate, c.lambda); ok && !math.IsInf(t, 0) && !math.IsNaN(t) {
			b.drainS = t
			d.DrainSeconds = &b.drainS
		}
	}
}

// remember keeps what the next call needs.
func (c *call) remember() {
	st := c.st
	if c.fleet.Known {
		st.lastCurrent, st.haveLastCurrent = c.current, true
	}
	if c.currentKnown && !c.fleetFailed {
		st.held.noteCount(c.now, c.current)
	}
	if c.currentKnown || !c.fleetFailed {
		st.lastDesired, st.haveLastDesired = c.d.DesiredWorkers, true
	}
	st.ceilHeld = c.hiBy == byCeiling && c.recKnown && c.rec > c.hi
}

func (c *call) latency() float64 { return c.s.Latency.Seconds() }

// finite returns x, or 0 when x is NaN or infinite.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
