package policy

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/arrivals"
	"github.com/queuechecker/queue-checker/internal/ceiling"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
)

// MeasuredConfidence is the confidence from which a measured per-worker
// throughput sizes the fleet (Settings.Learn LearnAct): about three good
// minutes that agree.
const MeasuredConfidence = 0.5

// MeasuredConfidenceKept is the confidence down to which a measured
// throughput in use stays in use. A confidence that hovers near
// MeasuredConfidence (minutes that disagree by about 30 %, as a fleet far
// larger than its load measures them) would otherwise switch the sizing
// between the measured and the configured value at each minute, and move
// the fleet by their ratio each time. Below 0.3 the measurement is
// dropped: minutes that disagree by about 40 %, or some 20 minutes without
// a good minute after ten that agreed (0.5 came at 15). A deploy's step
// restarts the measurement at 0.57 (its two minutes count as three), in
// use at once either way.
const MeasuredConfidenceKept = 0.3

// measuredAgrees: a measured service time within this share of the
// configured one is reported as agreeing.
const measuredAgrees = 0.1

// learning is what the fleet's measurement gave one decision.
type learning struct {
	on         bool // the group measures (Learn is not LearnOff)
	est        measure.Estimate
	known      bool    // est holds a measured service time
	use        bool    // the floors size with the measured throughput
	batching   bool    // batches hide the time per message (measure.Estimate.Batching)
	configured float64 // the settings' time a message holds a slot, seconds
	withCW     bool    // the samples carry CloudWatch's deleted count

	ceiling   ceiling.Ceiling // the learned downstream ceiling, when ceilingOK
	ceilingOK bool
	// suspect: the newest saturated minute's scale-up added far less
	// throughput than its workers promised, not yet confirmed
	// (ceiling.Detector.Suspected); suspectWorkers were its workers.
	suspect        bool
	suspectWorkers float64
	// uncontended: the sizing uses the ceiling's rate per worker, above
	// the measured one that minutes past the ceiling slowed.
	uncontended bool
	// fifoCap is the most workers a FIFO group's message groups keep busy
	// (0: none found), from fifoBusy messages in service while others
	// waited.
	fifoCap  int
	fifoBusy float64

	startDelay      time.Duration // measured start delay (startDelayQuantile)
	starts          int           // starts behind it
	startKnown      bool
	configuredStart time.Duration
}

// learn feeds the sample to the group's fleet measurement and returns the
// settings the sizing uses: s itself, or s with the measured per-worker
// throughput when Learn is LearnAct and the measurement is trusted (see
// internal/measure). The measurement learns only from complete samples of a
// known fleet; a stuck fleet's minutes never read as a slow service time.
func (st *State) learn(s Settings, sample model.GroupSample, fleet model.Fleet) (Settings, learning) {
	l := learning{on: s.Learn != LearnOff, configured: s.ServiceSeconds()}
	if !l.on {
		return s, l
	}
	st.measurer(s)
	invalid := sample.Visible < 0 || sample.InFlight < 0 || sample.Delayed < 0
	fleetOK := fleet.Known || fleet.Kind == ""
	workers := 0
	if fleet.Known {
		// Draining workers still hold the messages they finish.
		workers = max(fleet.InService, 0) + max(fleet.Draining, 0)
	}
	complete := !sample.Missing() && !sample.Partial() && !invalid && fleetOK
	at := sample.At
	if at.IsZero() {
		at = fleet.At
	}
	if !at.IsZero() {
		st.meas.Sample(at, float64(sample.Visible), float64(sample.InFlight), workers, complete)
	}
	st.starts.Observe(fleet, fleet.At)
	l.configuredStart = s.StartDelay
	l.startDelay, l.starts, l.startKnown = st.starts.Measured(fleet.At)
	if l.startKnown && s.Learn == LearnAct {
		s.StartDelay = l.startDelay
	}
	if r := sample.Deleted; r != nil && !r.At.IsZero() {
		l.withCW = true
		// CloudWatch stamps a minute's sum by the minute's start and
		// publishes it once the minute is over; a count of the last
		// minute stamped when it was read covers no whole minute.
		if r.At.Equal(r.At.Truncate(time.Minute)) && !r.At.Add(time.Minute).After(at) {
			st.meas.Minute(r.At, r.Value, math.NaN())
		}
	}
	for g, ok := st.meas.After(st.ceilFed); ok; g, ok = st.meas.After(st.ceilFed) {
		st.ceilFed = g.Start
		st.ceil.Observe(ceiling.Observation{At: g.Start, Workers: g.Workers, Throughput: g.Deleted,
			Capacity: g.Capacity, Saturated: g.Saturated})
	}
	if s.Learn == LearnAct {
		l.ceiling, l.ceilingOK = st.ceil.At(at, st.ceilHeld, s.Min)
		l.suspectWorkers, l.suspect = st.ceil.Suspected(at)
		if s.FIFO {
			l.fifoCap, l.fifoBusy = fifoLimit(st.meas, at, s.Concurrency)
		}
	}
	l.est = st.meas.Estimate()
	l.known = l.est.ServiceTime > 0 && l.est.PerWorker > 0 && !math.IsInf(l.est.PerWorker, 0)
	// Batches that no saturated minute measured leave the time per message
	// unknown: Little's law gives the time a message waits in its batch.
	l.batching = l.est.Batching && !l.est.Saturated
	trust := MeasuredConfidence
	if st.measUsed {
		trust = MeasuredConfidenceKept
	}
	l.use = l.known && s.Learn == LearnAct && !l.est.Stuck && !l.batching && l.est.Confidence >= trust
	st.measUsed = l.use
	if l.use {
		s.Throughput = l.est.PerWorker
		if l.ceilingOK && l.ceiling.PerWorker > s.Throughput && !math.IsInf(l.ceiling.PerWorker, 0) {
			// Minutes past the ceiling measured workers waiting for the
			// downstream, not slower work: below it a worker completes
			// what the least contended minutes did.
			s.Throughput, l.uncontended = l.ceiling.PerWorker, true
		}
	}
	return s, l
}

// measurer returns the group's fleet measurement, made anew for the
// settings' prior when there is none yet or the prior changed. s has its
// defaults (WithDefaults): Decide's learn and PreloadFleet must make the
// same one, or the next decision would start the measurement over.
func (st *State) measurer(s Settings) *measure.Estimator {
	cfg := measure.Config{Concurrency: s.Concurrency}
	if c := s.ServiceSeconds(); c > 0 {
		cfg.ServiceTime = time.Duration(c * float64(time.Second))
	}
	if st.meas == nil || st.measCfg != cfg {
		st.meas, st.measCfg = measure.New(cfg), cfg
	}
	return st.meas
}

// learnReasons says what the measurement found and which throughput sizes
// the fleet.
func (c *call) learnReasons() {
	l := c.learn
	if !l.on {
		return
	}
	if l.startKnown && c.s.Learn == LearnAct && l.configuredStart > 0 && math.Abs(l.startDelay.Seconds()/l.configuredStart.Seconds()-1) > measuredAgrees {
		c.reason("start delay measured %s (the 90th percentile of the last %d starts), configured %s: pre-starting for the measured delay",
			seconds(l.startDelay.Seconds()), l.starts, seconds(l.configuredStart.Seconds()))
	}
	switch {
	case !l.withCW && !l.known:
		c.reason("the fleet is not measured yet: learning the service time needs CloudWatch's NumberOfMessagesDeleted (oldest_age.cloudwatch: true), whose minutes arrive a minute or two late")
		return
	case l.est.Stuck:
		c.reason("messages are held in flight with almost no deletions: the service time is not learned from these minutes")
		return
	case !l.known:
		return
	}
	// The values are formatted from the call's box: a pointer passed to a
	// reason boxes no copy.
	r := &c.b.reasons
	r.measured, r.configured = seconds(l.est.ServiceTime.Seconds()), seconds(l.configured)
	r.span = minuteCount(math.Round(l.est.Last.Add(time.Minute).Sub(l.est.Since).Minutes()))
	r.perWorker, r.confidence = number(l.est.PerWorker), percent(l.est.Confidence)
	what := &serviceTimeText
	if max(c.s.Concurrency, 1) > 1 {
		what = &slotTimeText
	}
	switch {
	case l.batching:
		c.reason("%s cannot be told: workers held more messages than their slots (they receive in batches), so the measured %s is how long a message waits in its batch, an upper bound; sizing with the configured %s",
			what, &r.measured, &r.configured)
	case l.use && l.configured > 0 && math.Abs(float64(r.measured)/l.configured-1) <= measuredAgrees:
		c.reason("%s measured %s over the last %s agrees with the configured %s", what, &r.measured, &r.span, &r.configured)
	case l.use && l.configured > 0:
		c.reason("%s measured %s over the last %s, configured %s: sizing with %s msg/s per worker, measured", what, &r.measured, &r.span, &r.configured, &r.perWorker)
	case l.use:
		c.reason("%s measured %s over the last %s: sizing with %s msg/s per worker, measured", what, &r.measured, &r.span, &r.perWorker)
	case c.s.Learn == LearnReport:
		c.reason("%s measured %s over the last %s, configured %s: sizing with the configured value (workers.learn: report)", what, &r.measured, &r.span, &r.configured)
	default:
		c.reason("%s measured %s over the last %s, confidence %s: sizing with the configured %s until it is trusted", what, &r.measured, &r.span, &r.confidence, &r.configured)
	}
	if l.uncontended {
		c.reason("sizing with %s msg/s per worker, what the fewest workers completed before the learned ceiling of %d: the minutes past it measured workers waiting for the downstream, not slower work",
			number(c.s.Throughput), l.ceiling.Workers)
	}
	if l.use && l.est.Confidence < MeasuredConfidence {
		c.reason("the measurement's confidence is %s, below the %s it is trusted from: still in use down to %s, so that a confidence near %s does not switch the sizing back and forth",
			&r.confidence, percent(MeasuredConfidence), percent(MeasuredConfidenceKept), percent(MeasuredConfidence))
	}
}

// What a measured time is, in the reasons.
var (
	serviceTimeText = text("service time")
	slotTimeText    = text("time per message slot")
)

// learnValues are the values of the measurement's reasons, kept in the
// call's box.
type learnValues struct {
	measured, configured seconds
	span                 minuteCount
	perWorker            number
	confidence           percent
}

// reportMeasured fills in the decision's measured values.
func (c *call) reportMeasured() {
	l, b, m := c.learn, c.b, &c.d.Measured
	m.ConfiguredServiceTimeSeconds = finite(l.configured)
	m.SizingWith = "configured"
	if l.use {
		m.SizingWith = "measured"
	}
	if !l.on {
		return
	}
	m.Stuck = l.est.Stuck
	if l.ceilingOK {
		b.mCeiling = l.ceiling.Workers
		m.CeilingWorkers = &b.mCeiling
	}
	if l.startKnown {
		b.mStart = l.startDelay.Seconds()
		m.StartDelaySeconds = &b.mStart
	}
	if !l.known {
		return
	}
	b.mService, b.mPerWorker, b.mConfidence = l.est.ServiceTime.Seconds(), l.est.PerWorker, l.est.Confidence
	m.ServiceTimeSeconds, m.PerWorkerThroughput, m.Confidence = &b.mService, &b.mPerWorker, &b.mConfidence
}

// seconds formats a time given in seconds for a reason: "412 ms", "2.5 s".
type seconds float64

// Format implements fmt.Formatter for every verb.
func (x seconds) Format(f fmt.State, verb rune) {
	if x < 0.9995 { // 999.7 ms reads 1 s
		number(math.Round(float64(x)*1e4)/10).Format(f, verb)
		_, _ = io.WriteString(f, " ms")
		return
	}
	number(x).Format(f, verb)
	_, _ = io.WriteString(f, " s")
}

// byCeiling names the learned ceiling as the limit of the bounds.
const byCeiling = "learned ceiling"

// applyCeiling lowers the upper bound to the learned downstream ceiling
// when it is below it; a configured cap or max below the ceiling still
// wins, and min wins over all of them.
func (c *call) applyCeiling() {
	l := c.learn
	if l.ceilingOK && l.ceiling.Workers < c.hi {
		c.hi, c.hiBy = max(l.ceiling.Workers, c.lo), byCeiling
	}
	if l.fifoCap > 0 && l.fifoCap < c.hi {
		c.hi, c.hiBy = max(l.fifoCap, c.lo), byFIFO
	}
}

// readScaleOut feeds the sample to the reading of scale-outs at the
// poller's resolution (ceiling.Step), with every slot in service: a
// suspicion settled by the deleted counts ends, a probe the samples show
// gained is the ceiling's, and a scale-out that hardly moved the queue is
// the call's suspicion while no ceiling is known.
func (c *call) readScaleOut(servers float64, now arrivals.Counts) {
	st, s := c.st, c.s
	if s.Learn != LearnAct || c.partial {
		return
	}
	st.step.Observe(now.At, now.Total(), now.Visible, servers, c.mu/float64(s.Concurrency))
	if st.ceil.Judged(st.step.Since()) {
		st.step.Settle()
	}
	if c.learn.ceilingOK {
		if k, ok := st.step.TakeGain(); ok {
			k.Before, k.After = k.Before/float64(s.Concurrency), k.After/float64(s.Concurrency)
			st.ceil.ProbeMoved(k)
		}
		return
	}
	c.step, c.stepSuspect = st.step.Suspected(now.At)
}

// bySuspect names a suspected ceiling as the limit of the bounds.
const bySuspect = "suspected ceiling"

// applySuspicion holds the upper bound at the current count, or at the
// suspected minute's workers when more, while the newest saturated minute
// shows a scale-up that added far less throughput than it promised and the
// next minute has not said whether it was a downstream limit: buying more
// then would buy workers the downstream may not serve, and the suspicion
// is settled within a minute or two. It never lowers the count.
func (c *call) applySuspicion() {
	l := c.learn
	if !l.suspect && !c.stepSuspect || l.ceilingOK || !c.currentKnown {
		return
	}
	suspected := 0
	if l.suspect {
		suspected = int(math.Ceil(l.suspectWorkers - 1e-9))
	}
	if limit := max(c.current, suspected, c.lo); limit < c.hi {
		c.hi, c.hiBy = limit, bySuspect
	}
}

// ceilingReason explains a fleet held at the learned ceiling, a suspected
// one or the FIFO limit.
func (c *call) ceilingReason() {
	if c.hiBy == bySuspect && !c.learn.suspect {
		k := &c.step
		c.reason("going from %d to %d workers in service slowed the queue's growth by %s msg/s where they promised %s: no more workers until a minute's deleted count says whether a downstream limits them",
			int(k.Before), int(k.After), number(math.Round(math.Max(k.Fall, 0))), number(math.Round(k.Promised)))
		return
	}
	if c.hiBy == bySuspect {
		c.reason("the last saturated minute's %s workers completed far less than their scale-up promised: no more workers until the next minute says whether a downstream limits them",
			number(math.Round(c.learn.suspectWorkers)))
		return
	}
	if c.hiBy == byFIFO {
		c.reason("a FIFO queue serves each message group one batch at a time: with messages waiting, at most %s were in service at once, so workers past %d would wait",
			number(math.Round(c.learn.fifoBusy*10)/10), c.learn.fifoCap)
		return
	}
	k := c.learn.ceiling
	c.reason("adding workers from %s to %s raised completions by %s, where they promised %s: a downstream limit near %d workers; more workers add contention, not throughput",
		number(math.Round(k.Low)), number(math.Round(k.High)), percent(k.Gain), percent(k.Expected), k.Workers)
}

// minuteCount formats a whole number of minutes for a reason: "minute", "6
// minutes".
type minuteCount float64

// Format implements fmt.Formatter for every verb.
func (m minuteCount) Format(f fmt.State, verb rune) {
	if m <= 1 {
		_, _ = io.WriteString(f, "minute")
		return
	}
	number(m).Format(f, verb)
	_, _ = io.WriteString(f, " minutes")
}

// FIFO queues. A FIFO queue hands out a message group's messages one batch
// at a time: while a group has a message in flight, its others wait. So no
// more messages are in service at once than there are groups with messages,
// and workers past them wait however many messages are visible. A minute in
// which messages waited in every sample while slots stood free (in flight
// under 90 % of the slots, where a standard queue would have handed each
// free slot a message) shows that limit: the group's workers are capped at
// the most messages such minutes had in service, with fifoMargin to spare
// for groups that become active, over the last fifoWindow.
const (
	fifoWindow = 10 * time.Minute
	fifoMargin = 1.25
)

// fifoLimit is the FIFO cap from the recent good minutes, and the messages
// in service it comes from; 0 when no minute shows the limit.
func fifoLimit(e *measure.Estimator, now time.Time, concurrency int) (int, float64) {
	busy := 0.0
	for g, ok := e.After(now.Add(-fifoWindow)); ok; g, ok = e.After(g.Start) {
		if g.Backlogged && !g.Saturated && g.Workers >= 1 && g.Busy > 0 {
			busy = math.Max(busy, g.Busy)
		}
	}
	if busy <= 0 {
		return 0, 0
	}
	return max(int(math.Ceil(busy*fifoMargin/float64(max(concurrency, 1))-1e-9)), 1), busy
}

// byFIFO names the FIFO limit as the limit of the bounds.
const byFIFO = "FIFO message groups"
