package policy

import (
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/ceiling"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
)

// State is what the policy keeps about one group between decisions: the
// arrival-rate estimate and the sample it was last updated from, its recent
// per-minute arrivals and their forecast, the recent recommendations for scale-in stabilisation, the last
// known and the last
// desired worker counts, and the streaks the diagnosis counts. The caller
// owns it, one per group, and passes the same one to every Decide call for
// that group; the zero value is ready to use. It is not safe for concurrent
// use.
type State struct {
	est arrivalEstimator
	// climb keeps the estimate's recent course, for sizing while arrivals
	// climb (trend.go).
	climb trend
	win   slidingMax[int]     // recommendations, for scale-in stabilisation
	fc    forecast.Forecaster // per-minute arrivals and what they forecast
	// lastDt is the last sampling interval seen, for the forecast's horizon.
	lastDt time.Duration

	// lastRecAt is when a recommendation was last recorded; a gap longer
	// than the stabilisation window starts the window again from the
	// current count.
	lastRecAt time.Time
	// backlogHold is the recommendation held for a backlog until it is
	// served (see holdForBacklog); 0 when none is.
	backlogHold int

	lastCurrent     int // fleet's desired count when it was last read
	haveLastCurrent bool
	lastDesired     int // the last decision's desired count
	haveLastDesired bool

	notConsuming      int       // consecutive samples with a backlog and nothing in flight
	notConsumingSince time.Time // first sample of that streak
	atCapacity        int       // consecutive samples with in-flight at the fleet's capacity
	atCapSince        time.Time // first sample of the current at-capacity streak
	growingAtCap      int       // consecutive samples at capacity whose visible count rose
	cappedLast        bool      // the last decision with data was capped
	shrinking         int       // consecutive samples whose total fell
	lastDiagAt        time.Time // the last sample the streaks counted

	scratch []byte        // reused for formatting reasons
	texts   durationTexts // the durations the reasons name, formatted once

	zero zeroState // scale to zero (activation.go)

	// meas measures the fleet (learn.go), made for the settings' prior
	// measCfg.
	meas    *measure.Estimator
	measCfg measure.Config
	starts  startDelays // measured start delays (startdelay.go)
	// ceil finds the downstream ceiling from the saturated minutes fed up
	// to ceilFed; ceilHeld: the last decision was held at it.
	ceil     ceiling.Detector
	ceilFed  time.Time
	ceilHeld bool

	// bursts learns the group's recent bursts (bursts.go).
	bursts burstLearner
	// noise measures the arrival estimate's noise (noise.go).
	noise rateNoise
	held  heldWatch // messages received and not deleted (held.go)
}

// arrivalEstimator estimates the arrival rate λ from consecutive samples:
//
//	observation = Δ(visible + in-flight + delayed) / Δt + completions
//
// The total is taken over all three counts whatever the group's backlog
// counting, because a message moving from visible to in flight (or from
// delayed to visible) is not an arrival. Completions are
// NumberOfMessagesDeleted when its minute reaches into the interval;
// otherwise Little's law, the mean in-flight count over the interval (at
// most one message per in-service slot when the fleet is known, since
// messages left in flight by a dead worker complete nothing) times the
// per-slot rate PerWorker ÷ Concurrency, measured when the fleet is (see
// learn.go). CloudWatch's count is a minute that closed a minute or more
// ago: while completions move it is wrong by their change since, and while a
// scale-out's backlog drains it reads high for minutes, so it is used for
// what it measures exactly (the minute it covers, below, and the service
// time) and as the interval's completions only when nothing else is known.
// When the service time is a high percentile, Little's law undercounts
// completions, but the offered load the sizing uses, λ × S, is then the
// in-flight count itself, so the bias cancels where it matters.
//
// NumberOfMessagesSent, when fresh, is a direct measurement of arrivals, but
// a one-minute aggregate that arrives a minute or more late; the observation
// is the larger of the two, because underestimating arrivals breaks the
// promise while overestimating costs a few workers for a while, and scale-in
// is stabilised anyway. Sent alone gives the first estimate, before two
// samples exist.
//
// Observations are clamped at 0 and non-finite ones skipped, then smoothed
// by an EWMA with time constant τ = ArrivalSmoothing, α = 1 − exp(−Δt/τ), so
// irregular sampling weighs each observation by the time it covers. The
// first observation sets the estimate. Samples over different sets of
// queues (a partial sample, then a complete one) are never subtracted: the
// baseline restarts and the estimate is kept.
//
// Dumps. A one-off dump of messages (a batch job, a replay) lands within one
// interval and would raise the EWMA for minutes, and with it every floor
// sized on the arrival rate, while the dump itself is a backlog that the
// drain and latency floors size for already. So an observation more than
// surgeSigmas standard deviations above the reference, the largest of the
// estimate, the last observation and the arrivals measured over the minute
// before the last sample (see Minutes: a deleted count lagging a drained
// backlog is no dump), σ = √((reference + completions) / Δt), plus the most
// Little's law can be wrong by over the interval (half the change of the
// busy slots times the per-slot rate, when it gave the completions), enters
// the EWMA at that bound; the messages above it are counted as dumped. A real
// rise shows again in the next interval, which is then within the bound of
// the last observation and enters in full: a rise costs the EWMA one
// interval. Until then the backlog floors, whose workers go once the backlog
// is served, project the backlog with the estimate the observation would
// have given without the bound (unbounded).
//
// Minutes. The observation above adds a deleted count that covers a whole
// minute to a change of counts over one interval, so while completions move
// (workers starting, a backlog draining) it is wrong by their change within
// the minute, both ways. The arrivals of the very minute a deleted count
// covers are exact:
//
//	minute = (total at its end − total at its start − dumps within it) / 60 s + deleted
//
// where a dump counts as far as the queue's total grew in its interval (a
// deleted count lagging the completions can push an observation over the
// dump bound too, but adds nothing to the queue)
// with the totals read, by linear interpolation, from the samples of the
// last MetricStaleAfter and two minutes. A deleted count covers the minute
// that starts at its time stamp (CloudWatch stamps a period by its start and
// publishes it minutes late) when that minute is over by the sample, and
// otherwise the minute that ends at its time stamp (a count of the last
// minute stamped when it was read). The peak window keeps these
// measurements; the EWMA still follows the faster, noisier observations.
//
// Surges. The EWMA takes minutes to follow a jump in arrivals, and the
// deleted count, a one-minute aggregate, lags the completions of workers
// that have just started; while the queue is saturated neither is needed.
// Each interval measures
//
//	m = Δ(visible + in-flight + delayed) / Δt + min(in-flight at its start, at its end, slots) × per-slot rate
//
// (Little's law, the in-flight minimum never overstating completions). An
// interval is saturated when the visible messages at its start are at least
// what the in-service slots complete within it (slots × per-slot rate × Δt):
// every slot is then busy throughout and m is exact but for counting noise.
// When the last interval is saturated, the lower of its m and the previous
// interval's m (so that a one-off dump of messages in one interval is never
// read as a rate) is a surge if it exceeds the estimate both before and
// after this update by more than surgeSigmas standard deviations of its
// Poisson counting noise, σ = √((m + completions) / Δt). A surge is the
// arrival rate of the decision at that sample; the EWMA goes on unchanged,
// so the surge lasts as long as the saturated measurements keep showing it.
type arrivalEstimator struct {
	have bool // a baseline is stored
	base counts
	key  uint64 // which queues the baseline's counts cover

	rate      float64
	known     bool
	updatedAt time.Time // the sample that last changed rate

	lastObs   float64 // the last observation, before any dump was held back
	lastObsOK bool
	dumped    float64   // messages held back as dumps at dumpAt
	dumpAt    time.Time // the sample of the last dump
	unbounded float64   // the estimate at dumpAt had nothing been held back

	dumpedAll float64 // every message held back as a dump so far

	marks    []mark  // the samples of the last keep, at least keep/markSlots apart
	minute   float64 // arrivals over the deleted count's minute, measured at minuteAt
	minuteAt time.Time
	// minuteStart is the start of the minute that minute measures.
	minuteStart time.Time

	lastM   float64 // m of the last interval, when lastMOK
	lastMOK bool
	surge   float64 // the surge measured at surgeAt
	surgeAt time.Time

	// busy is the EWMA of the busy slots whose completions Little's law
	// counted, at the per-slot rate perServer: when the rate changes (the
	// measured one replaces the configured), the estimate's completions are
	// moved to the new rate at once, not over the smoothing time.
	busy      float64
	perServer float64
}

// counts are one sample's numbers as the estimator and the diagnosis use
// them.
type counts struct {
	at                         time.Time
	visible, inFlight, delayed float64
}

func (c counts) total() float64 { return c.visible + c.inFlight + c.delayed }

// mark is one sample's total and the messages held back as dumps up to it,
// for measuring a minute's arrivals. Times are Unix nanoseconds, to keep a
// group's history small.
type mark struct {
	at            int64
	total, dumped float64
}

// markSlots bounds the history: time is cut into slots of keep/markSlots
// (5 s with the default MetricStaleAfter, the usual sampling interval) and a
// sample in the slot of the last mark replaces it, so at most markSlots + 2
// marks are kept (2 KB a group), the newest sample always among them. Coarser
// slots cost accuracy: interpolating the minute's ends over two sampling
// intervals adds noise that the peak window, a maximum, turns into workers
// (3 % more on the simulator's bursty scenario at 48 slots).
const markSlots = 84

// deletedPeriod is the period of the NumberOfMessagesDeleted reading, the
// one CloudWatch's SQS metrics are asked for at.
const deletedPeriod = time.Minute

// flow are the other inputs of one estimator update.
type flow struct {
	deleted   float64 // NumberOfMessagesDeleted, msg/s, when deletedOK
	deletedAt time.Time
	deletedOK bool
	keep      time.Duration // how far back the marks reach
	sent      float64       // NumberOfMessagesSent, msg/s, when sentOK
	sentOK    bool
	perServer float64 // completions per second of one busy slot; 0 unknown
	servers   float64 // slots in service; negative when unknown
	tau       time.Duration
	// held: messages are known to be held, for the bound of the sent
	// count (sentbound.go).
	held bool
}

// update folds one sample into the estimate. It returns the previous
// baseline, and true when the new sample covers the same queues and is later
// than it, so that the two can be compared.
func (e *arrivalEstimator) update(c counts, key uint64, f flow) (counts, bool) {
	prev := e.base
	switch {
	case !e.have || e.key != key:
		// No baseline over these queues: start one. A direct measurement
		// of arrivals can still give a first estimate.
		e.have, e.base, e.key = true, c, key
		e.lastMOK, e.lastObsOK = false, false
		e.marks = e.marks[:0]
		e.addMark(c, f.keep)
		if f.sentOK && !e.known {
			e.rate, e.known, e.updatedAt = f.sent, true, c.at
		}
		return prev, false
	case !c.at.After(prev.at):
		// A repeat of the baseline, or out of order: nothing to learn.
		return prev, false
	}
	e.base = c
	dt := c.at.Sub(prev.at).Seconds()
	// uncertain bounds the error of Little's law over the interval: the
	// in-flight count is known at its ends only.
	var completions, uncertain float64
	switch {
	case f.deletedOK && !deletedEnd(f.deletedAt, c.at).Before(prev.at):
		completions = f.deleted
	case f.perServer > 0:
		// Little's law: the mean number of messages in service over the
		// interval (at most one per slot when the slots are known), each
		// slot completing perServer messages per second.
		a, b := prev.inFlight, c.inFlight
		if f.servers >= 0 {
			a, b = math.Min(a, f.servers), math.Min(b, f.servers)
		}
		completions = (a + b) / 2 * f.perServer
		uncertain = math.Abs(b-a) / 2 * f.perServer
		if e.perServer > 0 && f.perServer != e.perServer && e.known && !f.held {
			e.rate = math.Max(e.rate+(f.perServer-e.perServer)*e.busy, 0)
		}
		e.perServer = f.perServer
		e.busy += (1 - math.Exp(-dt/f.tau.Seconds())) * ((a+b)/2 - e.busy)
	case f.deletedOK:
		// A late count is still better than none.
		completions = f.deleted
	}
	obs := (c.total()-prev.total())/dt + completions
	bound := math.Inf(1)
	if f.sentOK {
		bound = sentBound(f.sent, (c.total()-prev.total())/dt, f.held)
		obs = math.Max(math.Min(obs, bound), f.sent)
	}
	obs = math.Max(obs, 0)
	if math.IsNaN(obs) || math.IsInf(obs, 0) {
		e.lastMOK, e.lastObsOK = false, false
		return prev, true
	}
	e.updatedAt = c.at
	before := e.rate
	if !e.known {
		e.rate, e.known = obs, true
	} else {
		use := obs
		ref := e.rate
		if e.lastObsOK {
			ref = math.Max(ref, e.lastObs)
		}
		if e.minuteAt.Equal(prev.at) {
			ref = math.Max(ref, e.minute)
		}
		if bound := ref + surgeSigmas*math.Sqrt(math.Max(ref+completions, 0)/dt) + uncertain; obs > bound {
			use = bound
			e.dumped, e.dumpAt = (obs-bound)*dt, c.at
			// Left out of the minutes as far as the total grew: a dump is
			// in the queue, a deleted count lagging completions is not.
			e.dumpedAll += math.Min(e.dumped, math.Max(c.total()-prev.total(), 0))
		}
		alpha := 1 - math.Exp(-dt/f.tau.Seconds())
		e.rate += alpha * (use - e.rate)
		e.unbounded = e.rate + alpha*(obs-use)
	}
	// Never above what was sent (sentbound.go), also after the move to a
	// new per-slot rate.
	e.rate = math.Min(e.rate, math.Max(bound, obs))
	e.lastObs, e.lastObsOK = obs, true
	e.addMark(c, f.keep)
	e.measureMinute(c.at, f)
	e.measureSurge(prev, c, dt, f, before)
	return prev, true
}

// addMark records the sample c in the history and drops marks older than
// keep, but for the newest one before it (interpolation needs a mark on each
// side).
func (e *arrivalEstimator) addMark(c counts, keep time.Duration) {
	m := mark{at: c.at.UnixNano(), total: c.total(), dumped: e.dumpedAll}
	if e.marks == nil {
		e.marks = make([]mark, 0, markSlots+2)
	}
	slot := max(int64(keep/markSlots), 1)
	if n := len(e.marks); n > 0 && m.at/slot == e.marks[n-1].at/slot {
		e.marks[n-1] = m
	} else {
		e.marks = append(e.marks, m)
	}
	cut := c.at.Add(-keep).UnixNano()
	i := 0
	for i+1 < len(e.marks) && e.marks[i+1].at <= cut {
		i++
	}
	if i > 0 {
		n := copy(e.marks, e.marks[i:])
		e.marks = e.marks[:n]
	}
}

// markAt interpolates the history at t; false when t is outside it.
func (e *arrivalEstimator) markAt(t time.Time) (mark, bool) {
	ns := t.UnixNano()
	n := len(e.marks)
	if n == 0 || ns < e.marks[0].at || ns > e.marks[n-1].at {
		return mark{}, false
	}
	i := 1
	for i < n && e.marks[i].at < ns {
		i++
	}
	if i == n || e.marks[i].at == ns {
		return e.marks[min(i, n-1)], true
	}
	a, b := e.marks[i-1], e.marks[i]
	w := float64(ns-a.at) / float64(b.at-a.at)
	return mark{at: ns, total: a.total + w*(b.total-a.total), dumped: a.dumped + w*(b.dumped-a.dumped)}, true
}

// deletedEnd is the end of the minute a deleted count stamped at covers, as
// read at now: CloudWatch stamps a period by its start, a count of the last
// minute read at once is stamped when it was read (see arrivalEstimator).
func deletedEnd(at, now time.Time) time.Time {
	if end := at.Add(deletedPeriod); !end.After(now) {
		return end
	}
	return at
}

// measureMinute measures the arrivals of the minute the deleted count covers,
// when the history spans it (see arrivalEstimator).
func (e *arrivalEstimator) measureMinute(now time.Time, f flow) {
	if !f.deletedOK {
		return
	}
	start := f.deletedAt
	if start.Add(deletedPeriod).After(now) {
		start = start.Add(-deletedPeriod)
	}
	a, okA := e.markAt(start)
	b, okB := e.markAt(start.Add(deletedPeriod))
	if !okA || !okB {
		return
	}
	v := (b.total-a.total-(b.dumped-a.dumped))/deletedPeriod.Seconds() + f.deleted
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	e.minute, e.minuteAt, e.minuteStart = math.Max(v, 0), now, start
}

// measureSurge computes the interval's m and, when the interval is saturated
// and m and the previous interval's m both stand above the estimate, records
// a surge (see arrivalEstimator).
func (e *arrivalEstimator) measureSurge(prev, c counts, dt float64, f flow, before float64) {
	if f.servers < 0 || !(f.perServer > 0) {
		e.lastMOK = false
		return
	}
	completions := math.Min(math.Min(prev.inFlight, c.inFlight), f.servers) * f.perServer
	m := (c.total()-prev.total())/dt + completions
	if math.IsNaN(m) || math.IsInf(m, 0) {
		e.lastMOK = false
		return
	}
	saturated := f.servers > 0 && prev.visible >= f.servers*f.perServer*dt && c.visible > 0
	if saturated && e.lastMOK {
		low := math.Min(m, e.lastM)
		sigma := math.Sqrt(math.Max(low+completions, 0) / dt)
		if low-surgeSigmas*sigma > math.Max(before, e.rate) {
			e.surge, e.surgeAt = low, c.at
		}
	}
	e.lastM, e.lastMOK = m, true
}

// slidingMax keeps the recent values of a series as a monotone queue:
// strictly decreasing values from front to back, so the front is the highest
// one still inside the window. Push and expiry are amortised O(1); the
// scale-in stabilisation keeps its recommendations in one.
type slidingMax[T int | float64] struct {
	e []timed[T]
}

// timed is one value and when it was seen.
type timed[T int | float64] struct {
	at time.Time
	v  T
}

// Slots per window of the two sliding maxima. Time is cut into slots of
// window ÷ slots; a value pushed in the slot of the last entry (which, after
// the pops, is larger) is merged into it, and the merged entry takes the
// later time. So a queue holds at most about slots + 1 entries however often
// it is pushed, and the window's maximum can only be higher and longer-lived
// than the exact one, by less than one slot, never lower. Against the
// default window a slot is 5 s (the usual sampling interval: nothing is
// merged).
const stabilizationSlots = 60

// reset empties the queue, keeping its storage.
func (r *slidingMax[T]) reset() { r.e = r.e[:0] }

// expire drops entries older than the window ending at now.
func (r *slidingMax[T]) expire(now time.Time, window time.Duration) {
	cut := now.Add(-window)
	i := 0
	for i < len(r.e) && r.e[i].at.Before(cut) {
		i++
	}
	if i > 0 {
		n := copy(r.e, r.e[i:])
		r.e = r.e[:n]
	}
}

// push records v at now, in a window cut into slots.
func (r *slidingMax[T]) push(now time.Time, v T, window time.Duration, slots int) {
	r.expire(now, window)
	for len(r.e) > 0 && r.e[len(r.e)-1].v <= v {
		r.e = r.e[:len(r.e)-1]
	}
	if n, slot := len(r.e), window/time.Duration(slots); n > 0 && slot > 0 && now.Truncate(slot).Equal(r.e[n-1].at.Truncate(slot)) {
		r.e[n-1].at = now
		return
	}
	r.e = append(r.e, timed[T]{at: now, v: v})
}

// highest is the highest value inside the window ending at now.
func (r *slidingMax[T]) highest(now time.Time, window time.Duration) (T, bool) {
	r.expire(now, window)
	if len(r.e) == 0 {
		return 0, false
	}
	return r.e[0].v, true
}

// queueKey identifies which of a group's queues a sample's counts cover, so
// that counts over different sets of queues are never subtracted. It is an
// FNV-1a hash of the answered count and the failed queues' names and regions.
func queueKey(s model.GroupSample) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	mix := func(v uint64) {
		for range 8 {
			h ^= v & 0xff
			h *= prime
			v >>= 8
		}
	}
	mix(uint64(s.Queues))
	mix(uint64(s.Answered))
	for _, f := range s.Failures {
		for i := 0; i < len(f.Queue); i++ {
			h ^= uint64(f.Queue[i])
			h *= prime
		}
		mix(0xff)
		for i := 0; i < len(f.Region); i++ {
			h ^= uint64(f.Region[i])
			h *= prime
		}
		mix(0xfe)
	}
	return h
}

// Preload warms the forecast with a group's per-minute arrival history (for
// example NumberOfMessagesSent read from CloudWatch at start), and its
// five-minute history of the weeks before (h.Weekly), so that the rhythm of
// its load is known from the first decision. Minutes and buckets the state
// already measured are kept; history older than s's forecast history (the
// minutes) or five weeks (the buckets) is dropped. It returns the minutes
// taken from h.
func (st *State) Preload(s Settings, h model.MinuteHistory) int {
	s = s.WithDefaults()
	st.fc.Init(s.Forecast.History)
	if len(h.Weekly) > 0 {
		st.fc.PreloadCoarse(model.MinuteHistory{Start: h.WeeklyStart, Counts: h.Weekly}, st.horizon(s))
	}
	return st.fc.Preload(h, st.horizon(s))
}

// horizon is how far ahead the forecast looks: the start delay, one
// sampling interval and a minute (the history's resolution).
func (st *State) horizon(s Settings) time.Duration {
	dt := st.lastDt
	if dt <= 0 || dt > forecast.MaxObservation {
		dt = 0
	}
	return s.StartDelay + dt + time.Minute
}
