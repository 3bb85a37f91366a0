package arrivals

import (
	"math"
	"time"
)

// surgeSigmas: a surge, and an observation entering the EWMA in full, must
// stand this many standard deviations of counting noise above the reference
// (see Estimator).
const surgeSigmas = 3

// Estimator estimates the arrival rate λ from consecutive samples:
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
// per-slot rate Flow.PerServer (the policy's throughput per worker ÷ its
// concurrency, measured when the fleet is). CloudWatch's count is a minute that closed a minute or more
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
// by an EWMA with time constant τ = Flow.Tau, α = 1 − exp(−Δt/τ), so
// irregular sampling weighs each observation by the time it covers. Until
// the observations cover τ, the estimate is their mean weighted by the time
// each covers (α = Δt ÷ the time covered so far, when that is larger): an
// EWMA started at its first observation would hold that one interval's
// noise, or a partial first interval, with weight e^(−t/τ) for minutes,
// while a mean gives each observation its share. Samples over different sets of
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
// last Flow.Keep (the policy's MetricStaleAfter and two minutes). A deleted count covers the minute
// that starts at its time stamp (CloudWatch stamps a period by its start and
// publishes it minutes late) when that minute is over by the sample, and
// otherwise the minute that ends at its time stamp (a count of the last
// minute stamped when it was read). The policy's forecast takes these
// measurements (Minute) in place of the interval observations' approximation
// of the minute; the EWMA still follows the faster, noisier observations.
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
// what the in-service slots complete within it (slots × per-slot rate × Δt),
// or within saturatedSpan when the interval is longer, and some are still
// visible at its end: every slot is then busy throughout (a queue that
// ran dry mid-interval would have to fill again before its end) and m is
// exact but for counting noise. The span keeps a longer interval from
// needing a deeper queue before a surge is read: at 10 s, a step's
// backlog was read a whole interval later than at 5 s.
// When the last interval is saturated, the lower of its m and the previous
// interval's m (so that a one-off dump of messages in one interval is never
// read as a rate) is a surge if it exceeds the estimate both before and
// after this update by more than surgeSigmas standard deviations of its
// noise: the larger of Poisson counting noise, σ = √((m + completions) / Δt),
// and the spread the intervals' m have shown around the estimate (see
// learnSpread), so that traffic which wanders within a minute by more than
// counting explains is read as a surge only when it stands out of its own
// wander. A surge is the
// arrival rate of the decision at that sample; the EWMA goes on unchanged,
// so the surge lasts as long as the saturated measurements keep showing it.
//
// The zero value is ready to use. An Estimator is not safe for concurrent
// use.
type Estimator struct {
	have bool // a baseline is stored
	base Counts
	key  uint64 // which queues the baseline's counts cover

	rate      float64
	known     bool
	covered   float64   // seconds of observations in the estimate, up to τ
	updatedAt time.Time // the sample that last changed rate

	lastObs   float64 // the last observation, before any dump was held back
	lastObsOK bool
	// slotArrivals is the messages that arrived over the last interval,
	// its completions by Little's law over the slots known (see Served);
	// slotArrivalsOK when the slots and the per-slot rate were known.
	slotArrivals   float64
	slotDone       float64 // the completions among them
	slotArrivalsOK bool
	dumped         float64   // messages held back as dumps at dumpAt
	dumpAt         time.Time // the sample of the last dump
	unbounded      float64   // the estimate at dumpAt had nothing been held back

	dumpedAll float64 // every message held back as a dump so far

	marks    []mark  // the samples of the last keep, at least keep/markSlots apart
	minute   float64 // arrivals over the deleted count's minute, measured at minuteAt
	minuteAt time.Time
	// minuteStart is the start of the minute that minute measures.
	minuteStart time.Time

	lastM   float64 // m of the last interval, when lastMOK
	lastMOK bool
	// spread is the measured variance of the observations around the
	// estimate, times the interval's length ((msg/s)² s; see learnSpread),
	// spreadN the intervals it has taken.
	spread  float64
	spreadN int
	// spreadPer is the per-slot rate the spread's completions were counted
	// with, and spreadAfter when the estimate has settled after the last
	// deviation the spread left out (see learnSpread).
	spreadPer   float64
	spreadAfter time.Time
	surge       float64 // the surge measured at surgeAt
	surgeAt     time.Time

	// busy is the EWMA of the busy slots whose completions Little's law
	// counted, at the per-slot rate perServer: when the rate changes (the
	// measured one replaces the configured), the estimate's completions are
	// moved to the new rate at once, not over the smoothing time.
	busy      float64
	perServer float64
}

// Rate is the smoothed arrival estimate, msg/s, and whether there is one.
func (e *Estimator) Rate() (float64, bool) { return e.rate, e.known }

// Updated reports whether the sample at at changed the estimate.
func (e *Estimator) Updated(at time.Time) bool { return e.updatedAt.Equal(at) }

// Observation is the arrival observation of the sample at at, msg/s, before
// any dump was held back; false when that sample gave none.
func (e *Estimator) Observation(at time.Time) (float64, bool) {
	return e.lastObs, e.lastObsOK && e.updatedAt.Equal(at)
}

// Served is the messages that arrived over the interval ending at the
// sample at at, its completions counted by Little's law over the slots in
// service (at most one message each) whatever the observation took: the
// deleted count lags a minute and would make a short burst's tail look hot.
// done is the completions counted among them (the in-flight messages over
// the interval times the per-slot rate): the part that scales with that
// rate, were it found wrong. False when the sample measured none, or the
// slots or the per-slot rate were not known.
func (e *Estimator) Served(at time.Time) (msgs, done float64, ok bool) {
	return e.slotArrivals, e.slotDone, e.slotArrivalsOK && e.lastObsOK && e.updatedAt.Equal(at)
}

// Surge is the surge measured at the sample at at, msg/s; false when there
// was none.
func (e *Estimator) Surge(at time.Time) (float64, bool) {
	return e.surge, e.surgeAt.Equal(at)
}

// Interval is m, the arrivals over the interval ending at the sample at at
// by Little's law over its in-flight minimum, msg/s; false when that sample
// measured none.
func (e *Estimator) Interval(at time.Time) (float64, bool) {
	return e.lastM, e.lastMOK && e.updatedAt.Equal(at)
}

// Minute is the exact arrivals, msg/s, of the minute starting at start that
// the sample at at measured from the deleted count; false when it measured
// none.
func (e *Estimator) Minute(at time.Time) (start time.Time, rate float64, ok bool) {
	return e.minuteStart, e.minute, e.minuteAt.Equal(at)
}

// Dump is what the sample at at held back as a dump: the messages, and the
// estimate had nothing been held back; false when it held nothing back.
func (e *Estimator) Dump(at time.Time) (dumped, unbounded float64, ok bool) {
	return e.dumped, e.unbounded, e.dumpAt.Equal(at) && e.updatedAt.Equal(at)
}

// Lower sets the estimate to v when it is above it, and reports whether it
// was: arrivals are known to have fallen at once (a job the forecast
// expected is over).
func (e *Estimator) Lower(v float64) bool {
	if e.rate > v {
		e.rate = v
		return true
	}
	return false
}

// Counts are one sample's queue counts, summed over the queues it covers.
type Counts struct {
	At                         time.Time
	Visible, InFlight, Delayed float64
}

// Total is every message of the queues: visible, in flight and delayed.
func (c Counts) Total() float64 { return c.Visible + c.InFlight + c.Delayed }

// mark is one sample's total and the messages held back as dumps up to it,
// for measuring a minute's arrivals. Times are Unix nanoseconds, to keep a
// group's history small.
type mark struct {
	at            int64
	total, dumped float64
}

// markSlots bounds the history: time is cut into slots of Keep/markSlots
// (5 s with the policy's default Keep, the usual sampling interval) and a
// sample in the slot of the last mark replaces it, so at most markSlots + 2
// marks are kept (2 KB a group), the newest sample always among them. Coarser
// slots cost accuracy: interpolating the minute's ends over two sampling
// intervals adds noise to the minute's measured arrivals, which the forecast
// takes as its minutes.
const markSlots = 84

// deletedPeriod is the period of the NumberOfMessagesDeleted reading, the
// one CloudWatch's SQS metrics are asked for at.
const deletedPeriod = time.Minute

// saturatedSpan is the most work, in seconds of the slots' completions,
// the visible messages at an interval's start must hold for the interval
// to count as saturated (see Estimator, Surges).
const saturatedSpan = 5 * time.Second

// Flow are the other inputs of one estimator update.
type Flow struct {
	Deleted   float64 // NumberOfMessagesDeleted, msg/s, when DeletedOK
	DeletedAt time.Time
	DeletedOK bool
	Keep      time.Duration // how far back the history of totals reaches
	Sent      float64       // NumberOfMessagesSent, msg/s, when SentOK
	SentOK    bool
	PerServer float64       // completions per second of one busy slot; 0 unknown
	Servers   float64       // slots in service; negative when unknown
	Tau       time.Duration // the EWMA's time constant
	// Held: messages are known to be held, for the bound of the sent
	// count (sentbound.go).
	Held bool
}

// Update folds one sample into the estimate; key says which queues its
// counts cover. It returns the previous
// baseline, and true when the new sample covers the same queues and is later
// than it, so that the two can be compared.
func (e *Estimator) Update(c Counts, key uint64, f Flow) (Counts, bool) {
	prev := e.base
	switch {
	case !e.have || e.key != key:
		// No baseline over these queues: start one. A direct measurement
		// of arrivals can still give a first estimate.
		e.have, e.base, e.key = true, c, key
		e.lastMOK, e.lastObsOK = false, false
		e.marks = e.marks[:0]
		e.addMark(c, f.Keep)
		if f.SentOK && !e.known {
			// A minute's count.
			e.rate, e.known, e.updatedAt, e.covered = f.Sent, true, c.At, 60
		}
		return prev, false
	case !c.At.After(prev.At):
		// A repeat of the baseline, or out of order: nothing to learn.
		return prev, false
	}
	e.base = c
	dt := c.At.Sub(prev.At).Seconds()
	// uncertain is the error bound the surge test allows the completions:
	// Little's law's when they come from it, none from a deleted count.
	var completions, uncertain float64
	// Little's law: the mean number of messages in service over the
	// interval (at most one per slot when the slots are known), each slot
	// completing perServer messages per second.
	a, b := prev.InFlight, c.InFlight
	if f.Servers >= 0 {
		a, b = math.Min(a, f.Servers), math.Min(b, f.Servers)
	}
	// littleErr bounds the error of Little's law over the interval: the
	// in-flight count is known at its ends only.
	littleErr := math.Abs(b-a) / 2 * f.PerServer
	e.slotArrivalsOK = f.PerServer > 0 && f.Servers >= 0
	if e.slotArrivalsOK {
		e.slotDone = (a + b) / 2 * f.PerServer * dt
		e.slotArrivals = c.Total() - prev.Total() + e.slotDone
	}
	switch {
	case f.DeletedOK && !deletedEnd(f.DeletedAt, c.At).Before(prev.At):
		completions = f.Deleted
	case f.PerServer > 0:
		completions = (a + b) / 2 * f.PerServer
		uncertain = littleErr
		if e.perServer > 0 && f.PerServer != e.perServer && e.known && !f.Held {
			// Never below what was sent, which every observation is
			// raised to (sentbound.go).
			floor := 0.0
			if f.SentOK {
				floor = math.Min(e.rate, f.Sent)
			}
			e.rate = math.Max(e.rate+(f.PerServer-e.perServer)*e.busy, floor)
		}
		e.perServer = f.PerServer
		e.busy += (1 - math.Exp(-dt/f.Tau.Seconds())) * ((a+b)/2 - e.busy)
	case f.DeletedOK:
		// A late count is still better than none.
		completions = f.Deleted
	}
	obs := (c.Total()-prev.Total())/dt + completions
	bound := math.Inf(1)
	if f.SentOK {
		bound = sentBound(f.Sent, (c.Total()-prev.Total())/dt, f.Held)
		obs = math.Max(math.Min(obs, bound), f.Sent)
	}
	obs = math.Max(obs, 0)
	if math.IsNaN(obs) || math.IsInf(obs, 0) {
		e.lastMOK, e.lastObsOK = false, false
		return prev, true
	}
	e.updatedAt = c.At
	before := e.rate
	if !e.known {
		e.rate, e.known, e.covered = obs, true, dt
	} else {
		use := obs
		ref := e.rate
		if e.lastObsOK {
			ref = math.Max(ref, e.lastObs)
		}
		if e.minuteAt.Equal(prev.At) {
			ref = math.Max(ref, e.minute)
		}
		if bound := ref + surgeSigmas*math.Sqrt(math.Max(ref+completions, 0)/dt) + uncertain; obs > bound {
			use = bound
			e.dumped, e.dumpAt = (obs-bound)*dt, c.At
			// Left out of the minutes as far as the total grew: a dump is
			// in the queue, a deleted count lagging completions is not.
			e.dumpedAll += math.Min(e.dumped, math.Max(c.Total()-prev.Total(), 0))
		}
		alpha := math.Max(1-math.Exp(-dt/f.Tau.Seconds()), dt/(e.covered+dt))
		e.covered = math.Min(e.covered+dt, f.Tau.Seconds())
		e.rate += alpha * (use - e.rate)
		e.unbounded = e.rate + alpha*(obs-use)
	}
	// Never above what was sent (sentbound.go), also after the move to a
	// new per-slot rate.
	e.rate = math.Min(e.rate, math.Max(bound, obs))
	e.lastObs, e.lastObsOK = obs, true
	e.addMark(c, f.Keep)
	e.measureMinute(c.At, f)
	e.measureSurge(prev, c, dt, f, before)
	if !e.surgeAt.Equal(c.At) {
		// The spread is that of the arrivals the surge test and the burst
		// learner take: by Little's law over the slots when they are known
		// (a deleted count covering a whole minute moves the observation
		// with the completions' change within it, not with the arrivals).
		x, done := obs, completions
		if e.slotArrivalsOK {
			x, done = e.slotArrivals/dt, e.slotDone/dt
		}
		e.learnSpread(c.At, x, before, done, littleErr, dt, f.Tau.Seconds())
	}
	return prev, true
}

// addMark records the sample c in the history and drops marks older than
// keep, but for the newest one before it (interpolation needs a mark on each
// side).
func (e *Estimator) addMark(c Counts, keep time.Duration) {
	m := mark{at: c.At.UnixNano(), total: c.Total(), dumped: e.dumpedAll}
	if e.marks == nil {
		e.marks = make([]mark, 0, markSlots+2)
	}
	slot := max(int64(keep/markSlots), 1)
	if n := len(e.marks); n > 0 && m.at/slot == e.marks[n-1].at/slot {
		e.marks[n-1] = m
	} else {
		e.marks = append(e.marks, m)
	}
	cut := c.At.Add(-keep).UnixNano()
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
func (e *Estimator) markAt(t time.Time) (mark, bool) {
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
// minute read at once is stamped when it was read (see Estimator).
func deletedEnd(at, now time.Time) time.Time {
	if end := at.Add(deletedPeriod); !end.After(now) {
		return end
	}
	return at
}

// measureMinute measures the arrivals of the minute the deleted count covers,
// when the history spans it (see Estimator).
func (e *Estimator) measureMinute(now time.Time, f Flow) {
	if !f.DeletedOK {
		return
	}
	start := f.DeletedAt
	if start.Add(deletedPeriod).After(now) {
		start = start.Add(-deletedPeriod)
	}
	a, okA := e.markAt(start)
	b, okB := e.markAt(start.Add(deletedPeriod))
	if !okA || !okB {
		return
	}
	v := (b.total-a.total-(b.dumped-a.dumped))/deletedPeriod.Seconds() + f.Deleted
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	e.minute, e.minuteAt, e.minuteStart = math.Max(v, 0), now, start
}

// measureSurge computes the interval's m and, when the interval is saturated
// and m and the previous interval's m both stand above the estimate, records
// a surge (see Estimator).
func (e *Estimator) measureSurge(prev, c Counts, dt float64, f Flow, before float64) {
	if f.Servers < 0 || !(f.PerServer > 0) {
		e.lastMOK = false
		return
	}
	completions := math.Min(math.Min(prev.InFlight, c.InFlight), f.Servers) * f.PerServer
	m := (c.Total()-prev.Total())/dt + completions
	if math.IsNaN(m) || math.IsInf(m, 0) {
		e.lastMOK = false
		return
	}
	saturated := f.Servers > 0 && prev.Visible >= f.Servers*f.PerServer*math.Min(dt, saturatedSpan.Seconds()) && c.Visible > 0
	if saturated && e.lastMOK {
		low := math.Min(m, e.lastM)
		v := math.Max(math.Max(low+completions, 0), e.Spread())
		if low-surgeSigmas*math.Sqrt(v/dt) > math.Max(before, e.rate) {
			e.surge, e.surgeAt = low, c.At
		}
	}
	e.lastM, e.lastMOK = m, true
}

// spreadSlow is the time constant of the spread's EWMA in smoothing times
// τ, spreadMinObs how many intervals it must have taken before it counts.
const (
	spreadSlow   = 10
	spreadMinObs = 24
	// spreadRateChange is the change of the per-slot rate from which the
	// spread is measured anew.
	spreadRateChange = 0.25
	// spreadSettle is how many smoothing times the spread takes nothing
	// after a jump (a deviation beyond twice its bound): the estimate's lag
	// behind the jump shrinks through the bound, and taking its tail would
	// widen the spread with every burst.
	spreadSettle = 2
)

// learnSpread adds the interval's observation obs to the measured spread of
// the observations around the estimate before the interval. Counting alone
// spreads them by their Poisson variance, (obs + completions) ÷ Δt; traffic
// that is noisier than Poisson (a web server's, whose rate wanders by tens
// of percent within a minute) spreads them further, and a surge or burst
// test against counting noise alone reads every such wander as a change.
// The spread is an EWMA, time constant spreadSlow × τ, of
// ((obs − estimate)² − little²) × Δt, little the most Little's law can be
// wrong by over the interval (half the change of the busy slots times the
// per-slot rate: the counts' error, not the traffic's), taking only
// deviations within surgeSigmas of the spread known so far (at least the
// Poisson one), none for spreadSettle smoothing times after one beyond
// twice that, and no interval that read a surge, so a burst or a surge, and
// the estimate's lag behind it, never widen it: it measures the traffic's
// wander, not its steps.
func (e *Estimator) learnSpread(at time.Time, obs, before, completions, little, dt, tau float64) {
	if !(tau > 0) || !(dt > 0) {
		return
	}
	if per := e.perServer; per > 0 && !(math.Abs(per-e.spreadPer) <= spreadRateChange*e.spreadPer) {
		// Completions counted with a per-slot rate that was wrong by more
		// than spreadRateChange spread the observations with the in-flight
		// count's moves: the spread is measured anew.
		e.spread, e.spreadN, e.spreadPer = 0, 0, per
	}
	d := obs - before
	v := math.Max(math.Max(before+completions, 0), e.spread)
	if d*d*dt > surgeSigmas*surgeSigmas*v {
		if d*d*dt > 4*surgeSigmas*surgeSigmas*v {
			e.spreadAfter = at.Add(time.Duration(spreadSettle * tau * float64(time.Second)))
		}
		return
	}
	if at.Before(e.spreadAfter) {
		return
	}
	// The error Little's law may make over the interval is the counts',
	// not the traffic's: it is left out.
	d = math.Copysign(math.Sqrt(math.Max(d*d-little*little, 0)), d)
	if e.spreadN == 0 {
		e.spread = d * d * dt
	} else {
		e.spread += (1 - math.Exp(-dt/(spreadSlow*tau))) * (d*d*dt - e.spread)
	}
	e.spreadN++
}

// Spread is the measured spread of the intervals' observations around the
// estimate, its variance times the interval's length, (msg/s)² s: for
// Poisson arrivals about the rate itself, more for traffic that wanders
// (see learnSpread); 0 until spreadMinObs intervals have measured it.
func (e *Estimator) Spread() float64 {
	if e.spreadN < spreadMinObs {
		return 0
	}
	return e.spread
}
