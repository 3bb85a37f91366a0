// Package measure learns, online, what a worker fleet really does: the time
// one message holds one slot from receive to delete, and the messages per
// second one worker completes. The configured service time is a prior, not a
// fact; this package measures the fact from what the checker already reads.
//
// # Little's law on the in-flight set
//
// Little's law, L = λ·W, holds for any stable set of items that enter and
// leave, so it holds for the messages in flight: a message enters the set
// when a worker receives it and leaves it when the worker deletes it. Over
// one minute, the mean number in flight L is then the completion rate D
// (NumberOfMessagesDeleted ÷ 60) times the mean time from receive to delete.
// The checker samples the in-flight count every few seconds and CloudWatch
// gives D per minute, so each minute yields a measured service time
//
//	S_m = busy_m ÷ D_m
//
// where busy_m is L_m after two corrections:
//
//   - Abandoned messages. A message received and never deleted (a crash, a
//     handler that gives up) stays in flight for the visibility timeout and
//     then returns to the queue; at 30 s against 0.2 s for a handled one, 1 %
//     of them more than doubles in flight. Messages leave the in-flight set
//     by deletion or by such a return, so when NumberOfMessagesReceived R is
//     read the returns are A = R − D − ΔL/60 (ΔL: the in-flight count's
//     growth over the minute), and by Little's law again they hold
//     A × VisibilityTimeout of the in-flight count; that is taken off L (not
//     below 0). One minute's A is noisy: a message received in one minute
//     and deleted in the next counts against the first, by VisibilityTimeout
//     ÷ 60 times its weight. So A is the weighted mean over the window's
//     minutes, where those terms telescope away, and not below 0.
//   - Batching. Workers that receive ten messages and handle them one at a
//     time hold more in flight than they have slots, so in flight overstates
//     the work in progress: busy is capped at the mean slots in service C
//     (workers in service × Concurrency). A fleet with slots to spare holds
//     fewer in flight than C on average, and L ÷ D is then the time a message
//     waits in its batch, several times a slot's time per message; but its
//     batches still show, now and then, as a sample with more in flight than
//     the slots of its time. So a minute is batching when L > 1.2 C, or when
//     any of its samples held more than 1.2 times its slots and at least two
//     messages more (workers that handle what they receive never do), and
//     Estimate.Batching reports any batching minute behind the estimate: its
//     service time is then an upper bound, right only where the minutes
//     were saturated.
//
// # Minutes
//
// Each sample's values are held until the next sample, piecewise constant,
// unless the next one comes more than 20 s later: that span is a gap. As
// samples arrive they are accumulated into a ring of 16 per-minute buckets:
// the time-weighted sums of in flight and of workers in service, the seconds
// covered, and whether any sample was incomplete, invalid or showed no
// visible backlog. A minute's CloudWatch reading arrives a minute or more
// after it closes; it is matched to its bucket and judged once the samples
// have moved past the minute's end. A minute teaches something only when its
// samples cover at least 80 % of it (so a minute sampled every 20 s or more
// often qualifies, and one with a gap inside it does not), every sample in
// it was complete, and every value is finite and not negative. Partial or
// sparse minutes, and minutes whose bucket is no longer kept, are dropped.
//
// A minute that held messages in flight (L ≥ 1 and, when slots are known,
// L ≥ 20 % of them) while deleting less than half the recent rate, and too
// little to explain 5 % of what it held (D × S_ref < 0.05 busy, S_ref the
// current measurement, else the configured service time), is a stuck
// minute: a crash loop or hung workers. The received count is not used here:
// a crash loop's in-flight set is all abandoned messages. A stuck minute is
// never read as a slow service time: it teaches nothing, and two in a row
// set Estimate.Stuck until a minute with deletions at a normal rate comes.
// With no S_ref, a minute is stuck when its implied service time exceeds the
// visibility timeout (a message held that long would have been received
// again), or, with that unknown too, when it deleted nothing. The
// recent-rate test keeps a measurement that came out far too short from
// calling every later minute stuck, a mistake stuck minutes could not
// correct. Idle minutes (nothing deleted) teach nothing and change nothing.
//
// A minute with a visible backlog in every sample and L ≥ 0.9 C is
// saturated: every slot was busy, so D ÷ (mean workers in service) is what
// one worker sustains, whatever its concurrency really is.
//
// # Combining minutes
//
// The estimate is a ratio of exponentially weighted sums over the good
// minutes of the last 24, with a time constant of 6 minutes:
//
//	S = Σ w_m busy_m ÷ Σ w_m D_m,   w_m = exp(−(newest − m) / 6 min)
//
// This is Little's law over the weighted window rather than a mean of
// per-minute ratios, so each minute counts by the messages it completed: a
// quiet minute, whose ratio is mostly sampling noise, weighs little, and a
// minute whose in-flight samples all read 0 still counts its deletions. A
// mean in log space would weigh a minute of 10 messages like one of 10,000,
// cannot take a minute with S_m = 0, and estimates the geometric mean, below
// the mean that Little's law and the sizing need. The saturated per-worker
// rate is the same ratio, Σ w_m D_m ÷ Σ w_m workers_m, over the saturated
// minutes alone.
//
// The memory is set by noise. At 50 msg/s and 200 ms, 10 messages are in
// flight, and 12 samples of a Poisson count of 10 make a minute's L good to
// about ±9 %; 6 minutes of memory bring that to about ±3 %, so that from
// about ten good minutes on the estimate stays within ±10 % at every tick. A
// shorter memory would not; a longer
// one alone would take some 10 minutes to follow a deploy that doubles the
// service time, too slow for a policy that must stop late messages within 10
// minutes while the metrics arrive 1–2 minutes late. So steps are detected
// apart from the memory: when two consecutive good minutes both deviate from
// the estimate of the 3 or more minutes before them, in the same direction,
// by more than 25 % and three times those minutes' spread (in log space),
// and agree with each other within that margin, the older minutes are
// forgotten and the estimate restarts from the two. A minute whose own
// counts are few deviates that far by chance: each minute must also deviate
// by three times the noise its counts explain. Its mean in flight L from n
// samples Δ = 60 s ÷ n apart, in flight taken as a Poisson count whose
// samples are correlated as exp(−Δ ÷ S), has a relative variance of
// (1 ÷ L) × min(1, (1 + ρ) ÷ ((1 − ρ) n)), ρ = exp(−Δ ÷ S) (none in a
// saturated minute, whose slots are all busy); its deletions, D × 60
// messages, add 1 ÷ (60 D). At 10 msg/s and 200 ms, 2 in flight sampled 12
// times give ±21 %: two such minutes in a row 40 % and 30 % above the
// estimate are noise, not a deploy. A deploy is followed
// about a minute after its first minute is delivered; noise rarely errs
// that far twice in a row, and changes under 25 % are followed by the
// memory alone.
//
// Confidence grows with the good minutes behind the estimate (about 0.55
// after 3, 0.94 after 10: 1 − exp(−n/3.5); after a detected step, the two
// minutes that make it count as three), falls as they disagree (×
// exp(−(spread/0.35)²), the spread of ln S_m), and decays linearly to 0
// between 2 and 30 minutes after the last good minute was learned, so a
// stale measurement is not trusted forever.
//
// # Warm start
//
// A checker that starts (or reloads) knows nothing of its fleet, and would
// size on the configured service time until about three good minutes came.
// Preload takes the last half hour of CloudWatch's per-minute deleted count
// and average in-flight count instead, each minute judged as a live one but
// with the workers in service unknown (no slot cap, never saturated, never
// batching); minutes the samples cover are left to them.
//
// # Costs
//
// Memory is fixed (2.8 KB per Estimator: a ring of 16 minute buckets and
// one of 24 good minutes; no maps, no growing slices). Sample and Minute allocate nothing and take well under a
// microsecond. The package keeps no clock: time is the at of Sample and the
// start of Minute; Estimate is as of the latest sample. It starts no
// goroutine and an Estimator is not safe for concurrent use.
package measure

import (
	"math"
	"time"
)

// Config is what the group's settings say about its workers.
type Config struct {
	// ServiceTime is the configured time one message holds one slot. It is
	// the prior: used only to tell a stuck minute from a slow one until a
	// measurement exists. 0 (or negative): unknown.
	ServiceTime time.Duration
	// Concurrency is the messages one worker handles at once: its slots.
	// 1 when 0 or negative.
	Concurrency int
	// VisibilityTimeout is the queues' visibility timeout, for the
	// abandoned-message correction. 0 (or negative): unknown, no correction.
	VisibilityTimeout time.Duration
}

// SaturatedShare is the share of the slots in flight at or above which a
// minute with a backlog throughout is saturated: its deletions per worker
// are what a worker sustains.
const SaturatedShare = 0.9

// Estimate is what an Estimator has measured, as of its latest sample.
type Estimate struct {
	// ServiceTime is the measured mean time from receive to delete per busy
	// slot, over the minutes behind the estimate. 0 when unknown.
	ServiceTime time.Duration
	// PerWorker is the completed msg/s one worker sustains: measured over
	// the saturated minutes behind the estimate when there are any, else
	// Concurrency ÷ ServiceTime. 0 when unknown.
	PerWorker float64
	// Saturated is true when PerWorker comes from saturated minutes.
	Saturated bool
	// Confidence, 0..1, is how far to trust the estimate: 0 with no good
	// minute, about 0.55 after 3 agreeing ones and 0.94 after 10, lower when
	// they disagree, and falling to 0 by 30 minutes after the last good
	// minute. A caller can blend: prior + Confidence × (measured − prior).
	Confidence float64
	// Minutes is the number of good minutes behind the estimate, within its
	// window (the 24 minutes up to the newest good one, since the latest
	// detected step).
	Minutes int
	// SaturatedMinutes is how many of those were saturated: the minutes
	// behind a Saturated PerWorker.
	SaturatedMinutes int
	// Since and Last are the starts of the first and last minute behind the
	// estimate (zero when Minutes is 0).
	Since, Last time.Time
	// Step is the start of the first minute of the level the latest
	// detected step began (a deploy): the minutes before it are forgotten.
	// Zero when none was detected.
	Step time.Time
	// Stuck is true when the latest minutes (two or more in a row, the last
	// within 30 minutes) held messages in flight with (almost) no deletions:
	// a crash loop or hung workers. Those minutes are never read as a slow
	// service time; the estimate is what it was before them.
	Stuck bool
	// Batching is true when a minute behind the estimate held more in
	// flight than the workers' slots (on average by more than 20 %, or in
	// one of its samples; see the package documentation): workers receive in
	// batches, and in flight overstates their concurrency. ServiceTime is
	// then right only while the fleet is saturated; otherwise it is an upper
	// bound, and the measurement cannot tell the time per message.
	Batching bool
}

// overSlots reports a sample with more in flight than the slots of its
// workers could hold: batches (see Batching), or messages held and not
// deleted. Unknown slots (no worker count) never are.
func overSlots(inFlight, slots float64) bool {
	return slots > 0 && inFlight > batchingRatio*slots && inFlight >= slots+2
}

// Tunables. They are constants, not settings: each is argued in the package
// documentation.
const (
	ringMinutes = 16               // per-minute sample buckets kept
	window      = 24               // minutes of good minutes behind an estimate (records kept)
	tauMinutes  = 6.0              // time constant of the weighting, in minutes
	minuteSecs  = 60.0             // seconds in a CloudWatch period
	maxHold     = 20 * time.Second // longest a sample is held; a longer span is a gap
	minCovered  = 0.8 * minuteSecs // seconds a good minute must cover

	batchingRatio  = 1.2  // in flight above this × slots: batching
	stuckHeldShare = 0.2  // in flight at or above this × slots: messages held
	stuckRateShare = 0.05 // deletions explaining less than this share of busy: stuck
	stuckMinutes   = 2    // stuck minutes in a row that set Stuck
	normalRate     = 0.5  // deletions at this share of the recent rate are never stuck

	changeMinLog   = 0.22314355131420976 // ln 1.25: smallest step taken as a change
	changeSigmas   = 3.0                 // ... and this many spreads of the minutes before it
	changeMinutes  = 3                   // minutes needed before a step can be detected
	confMinutes    = 3.5                 // Confidence: 1 − exp(−Minutes / confMinutes)
	confSpread     = 0.35                // ... × exp(−(spread / confSpread)²)
	stepEvidence   = 1                   // ... with Minutes counted this much more after a detected step
	freshFor       = 2 * time.Minute     // ... × 1 until this after the last good minute,
	staleAfter     = 30 * time.Minute    // ... falling to 0 by this; Stuck expires then too
	resetAfter     = ringMinutes * time.Minute
	maxServiceSecs = 12 * 3600.0 // SQS holds a message invisible for at most 12 h
)

// weights[age] is exp(−age / tauMinutes) for a good minute age minutes older
// than the newest.
var weights = func() (w [window]float64) {
	for i := range w {
		w[i] = math.Exp(-float64(i) / tauMinutes)
	}
	return w
}()

// bucket accumulates one minute's samples, and holds its CloudWatch reading
// until the samples have passed the minute's end.
type bucket struct {
	minute    int64   // minutes since the Unix epoch
	covered   float64 // seconds of the minute covered by held samples
	samples   int     // samples held over some of it
	inFlight  float64 // ∫ in flight dt over the covered seconds
	workers   float64 // ∫ workers in service dt
	firstIn   float64 // in flight in force as the minute began (NaN: no sample yet)
	lastIn    float64 // ... and as it ended: the value held over its last span
	deleted   float64 // msg/s, when pending
	received  float64 // msg/s, NaN when unknown
	used      bool    // the bucket holds minute
	tainted   bool    // an incomplete or invalid sample fell in the minute
	noBacklog bool    // some covered span had no visible backlog
	overSlots bool    // some covered span held more in flight than slots (see overSlots)
	pending   bool    // a reading is waiting for the minute to be judged
}

// record is one good minute.
type record struct {
	minute    int64
	busy      float64 // corrected, capped mean in flight
	deleted   float64 // msg/s
	workers   float64 // mean workers in service
	excess    float64 // R − D − ΔL/60: the returns, msg/s; NaN when R was not read
	lnS       float64 // ln(busy / deleted); NaN when busy is 0
	noise     float64 // the standard deviation of lnS the minute's counts explain (see countNoise)
	saturated bool
	batching  bool
	// backlogged: a visible backlog in every sample of the minute.
	backlogged bool
}

// Estimator learns one worker group's service time and per-worker
// throughput. The zero value is not ready: use New.
type Estimator struct {
	cfg   Config
	conc  float64 // slots per worker
	prior float64 // configured service time, s (0: unknown)
	vt    float64 // visibility timeout, s (0: unknown)

	// Sample side.
	buckets   [ringMinutes]bucket
	hasPrev   bool
	prevAt    time.Time
	prevOff   float64 // prevAt's offset in its minute, s
	prevMin   int64   // prevAt's minute
	firstMin  int64   // the first sample's minute, when hasPrev
	prevOK    bool    // the previous sample was complete and valid
	prevVis   float64
	prevIn    float64
	prevWork  float64
	now       time.Time // the latest sample's time
	pending   int       // buckets with a pending reading
	hasNewest bool
	newest    int64 // newest minute delivered

	// Learning side.
	recs        [window]record
	nrec        int     // records pushed (bounded); the newest is recs[(nrec-1)%window]
	cut         int64   // minutes before this are forgotten (a detected step)
	suspect     int64   // first minute of a possible step
	suspectSign int     // +1 or −1 while a step is suspected, else 0
	suspectLnS  float64 // and its minute's ln S_m
	lastGoodAt  time.Time
	stuckRun    int
	lastStuckAt time.Time
}

// New returns an Estimator for a group with the given settings.
func New(cfg Config) *Estimator {
	e := &Estimator{}
	e.init(cfg)
	return e
}

func (e *Estimator) init(cfg Config) {
	*e = Estimator{cfg: cfg, conc: 1, cut: math.MinInt64}
	if cfg.Concurrency > 0 {
		e.conc = float64(cfg.Concurrency)
	}
	if cfg.ServiceTime > 0 {
		e.prior = cfg.ServiceTime.Seconds()
	}
	if cfg.VisibilityTimeout > 0 {
		e.vt = cfg.VisibilityTimeout.Seconds()
	}
}

// Sample records one SQS sample of the group at time at: visible and
// in-flight counts summed over its queues, the workers in service, and
// whether the sample is complete (every queue answered and the fleet was
// read). Each sample's values hold until the next sample, for at most 20 s.
// An incomplete or invalid sample (NaN, ±Inf, negative) spoils its minute.
// A sample not after the previous one is ignored; one more than 16 minutes
// before it means the clock was reset, and the Estimator starts over.
func (e *Estimator) Sample(at time.Time, visible, inFlight float64, inService int, complete bool) {
	at = at.Round(0) // wall clock only: CloudWatch minutes are wall-clock minutes
	if e.hasPrev && !at.After(e.prevAt) {
		if e.prevAt.Sub(at) <= resetAfter {
			return
		}
		e.init(e.cfg) // keep nothing learned on a clock that went back
	}
	k, off := minuteOf(at)
	valid := finite(visible) && visible >= 0 && finite(inFlight) && inFlight >= 0 && inService >= 0
	if e.hasPrev && e.prevOK && at.Sub(e.prevAt) <= maxHold {
		switch k {
		case e.prevMin:
			e.cover(k, e.prevOff, off)
		case e.prevMin + 1:
			e.cover(e.prevMin, e.prevOff, minuteSecs)
			e.cover(k, 0, off)
		}
	}
	if b := e.bucketFor(k); b != nil && (!valid || !complete) {
		b.tainted = true
	}
	if !e.hasPrev {
		e.firstMin = k // minutes from here on are the samples' (see Preload)
	}
	e.hasPrev, e.prevAt, e.prevOff, e.prevMin = true, at, off, k
	e.prevOK = valid && complete
	e.prevVis, e.prevIn, e.prevWork = visible, inFlight, float64(inService)
	e.now = at
	if e.pending > 0 {
		e.flush()
	}
}

// Minute records the CloudWatch readings of the minute [start, start+60s):
// NumberOfMessagesDeleted and NumberOfMessagesReceived, each as msg/s (Sum ÷
// 60); received is NaN when not read. start names its minute (it is
// truncated to the minute). The caller may repeat the newest reading on every
// sample: a minute is learned once, from its latest reading before it is
// judged. Minutes not newer than the newest delivered, minutes whose samples
// are no longer kept, and minutes the samples have not reached yet are
// ignored (the last are taken when repeated later). A deleted reading that
// is NaN, infinite or negative is no reading.
func (e *Estimator) Minute(start time.Time, deleted, received float64) {
	j, _ := minuteOf(start)
	if !finite(deleted) || deleted < 0 {
		return
	}
	if !finite(received) || received < 0 {
		received = math.NaN()
	}
	if e.hasNewest && j <= e.newest {
		if b := &e.buckets[slot(j)]; j == e.newest && b.used && b.minute == j && b.pending {
			b.deleted, b.received = deleted, received
		}
		return
	}
	if !e.hasPrev || j > e.prevMin {
		return
	}
	e.hasNewest, e.newest = true, j
	b := &e.buckets[slot(j)]
	if !b.used || b.minute != j {
		return
	}
	b.deleted, b.received = deleted, received
	if !b.pending {
		b.pending = true
		e.pending++
	}
	if j < e.prevMin {
		e.judge(b)
	}
}

// Estimate reports what has been measured, as of the latest sample.
func (e *Estimator) Estimate() Estimate {
	var est Estimate
	est.Stuck = e.stuckRun >= stuckMinutes && e.now.Sub(e.lastStuckAt) <= staleAfter
	if e.cut != math.MinInt64 {
		est.Step = minuteTime(e.cut)
	}
	if e.nrec == 0 {
		return est
	}
	s := e.summarize(e.newestRecord(), e.cut, math.MaxInt64)
	if s.n == 0 {
		return est
	}
	est.Minutes, est.SaturatedMinutes = s.n, s.satN
	est.Since, est.Last = minuteTime(s.first), minuteTime(s.last)
	est.Batching = s.batchN > 0
	sec := s.serviceTime()
	if sec > 0 {
		est.ServiceTime = time.Duration(math.Round(sec * float64(time.Second)))
		est.PerWorker = e.conc / sec
	}
	if s.satN > 0 && s.satWorkers > 0 {
		if pw := s.satDeleted / s.satWorkers; finite(pw) {
			est.PerWorker, est.Saturated = pw, true
		}
	}
	if !finite(est.PerWorker) || est.PerWorker < 0 {
		est.PerWorker, est.Saturated = 0, false
	}
	if est.ServiceTime == 0 && !est.Saturated {
		return est
	}
	n := float64(s.n)
	if s.first == e.cut {
		// The minutes since a detected step were tested against the three
		// or more before it, and the first two agree: the step is worth a
		// minute more than their count, so that the new level is used as
		// soon as it is known instead of the configured one (two minutes
		// alone are below MeasuredConfidence).
		n += stepEvidence
	}
	conf := (1 - math.Exp(-n/confMinutes)) * math.Exp(-sq(s.spread()/confSpread)) * e.freshness()
	if finite(conf) {
		est.Confidence = math.Min(1, math.Max(0, conf))
	}
	return est
}

// freshness is 1 until freshFor after the last good minute was learned,
// then falls linearly to 0 at staleAfter.
func (e *Estimator) freshness() float64 {
	age := e.now.Sub(e.lastGoodAt)
	if age <= freshFor {
		return 1
	}
	if age >= staleAfter {
		return 0
	}
	return float64(staleAfter-age) / float64(staleAfter-freshFor)
}

// minuteOf returns t's minute since the Unix epoch and its offset in it, s.
func minuteOf(t time.Time) (int64, float64) {
	u := t.Unix()
	m := u / 60
	if u%60 < 0 {
		m--
	}
	return m, float64(u-m*60) + float64(t.Nanosecond())/1e9
}

func minuteTime(m int64) time.Time { return time.Unix(m*60, 0).UTC() }

func slot(m int64) int {
	i := int(m % ringMinutes)
	if i < 0 {
		i += ringMinutes
	}
	return i
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func sq(x float64) float64 { return x * x }

// GoodMinute is one good minute as learned: what a caller that learns from
// the minutes itself (the downstream ceiling) needs.
type GoodMinute struct {
	Start     time.Time
	Workers   float64 // mean workers in service
	Deleted   float64 // completions, msg/s
	Saturated bool    // a visible backlog throughout and every slot busy
	// Capacity is what the minute's workers could complete, msg/s: the
	// completions when saturated, else workers × concurrency ÷ the minute's
	// service time; 0 when unknown.
	Capacity float64
	// Busy is the mean of the messages in service (in flight, at most the
	// slots), and Backlogged reports a visible backlog in every sample:
	// messages waited throughout the minute.
	Busy       float64
	Backlogged bool
}

// After returns the oldest good minute that starts after t, if any: a
// caller that keeps the start of the last one it took reads each once.
func (e *Estimator) After(t time.Time) (GoodMinute, bool) {
	n := min(e.nrec, window)
	for i := n; i >= 1; i-- {
		r := e.recs[(e.nrec-i)%window]
		if start := minuteTime(r.minute); start.After(t) {
			g := GoodMinute{Start: start, Workers: r.workers, Deleted: r.deleted, Saturated: r.saturated,
				Busy: r.busy, Backlogged: r.backlogged}
			switch {
			case r.saturated:
				g.Capacity = r.deleted
			case r.busy > 0:
				g.Capacity = r.workers * e.conc * r.deleted / r.busy
			}
			return g, true
		}
	}
	return GoodMinute{}, false
}
