package policy

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// The burst learner: what a group's bursts have been like lately (their
// sizes, lengths and the quiet gaps between them), learned online from the
// arrivals the estimator measures each interval, in bounded memory.
//
// An interval is hot when its arrival rate r stands above the base rate b
// (the rate between bursts, an EWMA of the intervals that are not hot, time
// constant burstBaseSmoothing) by
// both a share (r ≥ burstRatio × b) and noise ((r − b)·Δt ≥
// burstSigmas·√(v·Δt), v the larger of b, counting noise, and the arrivals'
// measured spread, which is larger for traffic that wanders within a minute
// (arrivals.Estimator.Spread), and at least burstMessages). A burst is a run of hot
// intervals; it ends after burstEndQuiet, the promise or half a start delay,
// whichever is longest, with none (a lull shorter than the promise does not
// part two bursts: their messages wait together; nor one much shorter than
// a start delay: no worker could go and come back within it). One that lasts longer
// than burstMaxLength is no burst but a new level: it is dropped, the
// base rate set to it, and the quiet since the last burst counted from
// then (arrivals that high were no quiet).
//
// While a burst lasts, its need is the arrival rate a fleet that never
// moves must serve for the burst's messages to start within the promise L:
// a window [t1, t2] of the burst whose messages all start within L needs
// work(t1, t2) ÷ (w + L), w = t2 − t1 (the fluid FIFO condition), and only
// workers already running can help in windows shorter than a start delay D,
// so
//
//	need = max over windows of length w ≤ D + L of work(t1, t2) ÷ (w + L).
//
// The windows end at each interval and start at the earlier ones the ring
// holds (at most burstIntervals, enough for D + L at the usual intervals).
//
// Each burst ended is kept (start, length, messages, need, and the quiet gap
// before it). What the bursts are like (their sizes, lengths, gaps, rate)
// is the last burstKeep of them within burstMemory; older ones are
// forgotten, so the warm capacity they asked for goes when the bursts stop.
// The warm fleet's need is estimated from up to burstNeedHours of them (see
// longNeed).
type burstLearner struct {
	ring    [burstIntervals]burstInterval
	n, next int

	base   float64 // msg/s between bursts
	baseOK bool
	// spread is the arrivals' measured spread beyond counting noise, the
	// variance of an interval's rate times its length, (msg/s)² s
	// (arrivals.Estimator.Spread); 0 while unknown.
	spread float64
	// baseDone is the completions counted in base (burstInterval.done), msg/s.
	baseDone float64

	on      bool  // a burst is on
	cur     burst // the burst on
	lastHot int64 // end of its last hot interval, Unix ns
	// runStart is the start of the run of hot intervals that ends at
	// lastHot, Unix ns: a burst's lulls shorter than its end part runs.
	runStart int64
	lastEnd  int64 // end of the last burst recorded, Unix ns; 0 none
	// levelAt is when the last run was taken for a new level, Unix ns; 0
	// none: the quiet since the last burst counts from no earlier.
	levelAt  int64
	lastSeen int64 // end of the last interval observed

	past      [burstRing]burst
	np, nextP int

	// recurAt is the last time the forecast expected an occurrence of a
	// recurring pattern, Unix ns; 0 never. A burst that begins within a
	// window (D + L) of it was announced: the forecast pre-starts its
	// workers (see bet), and the warm capacity leaves it out, unless the
	// workers the floors had asked for as it began fell short of its need
	// (a bet on part of them): then it counts like any other.
	recurAt int64
	// serving is what the workers the rate floors (with the forecast's
	// pre-start) last asked for serve, msg/s (see sizeModel).
	serving float64
	// perServer is the per-slot completion rate the arrivals were measured
	// with (see learnBursts), and step the level change the fleet's
	// measurement last detected (Unix ns; 0 none).
	perServer float64
	step      int64

	// The wall-clock minutes the intervals fall in, for each burst's need
	// at a minute's resolution (burst.coarse): the minute being filled
	// (its start, Unix ns; 0 none yet) and the last closed ones, newest at
	// mins[(nextMin−1) mod burstMinutes].
	minute     int64
	minuteMsgs float64
	minuteDone float64
	mins       [burstMinutes]float64
	minsDone   [burstMinutes]float64 // the completions counted among mins
	nMin       int
	nextMin    int
	// replaying: the intervals observed are a warm start's minutes (see
	// preload); the bursts they show are marked burst.fromMinutes.
	replaying bool
	// found is the fleet the first decision after a warm start found,
	// kept warm (when any is) until a burst has been measured live (see
	// warmPays); foundState says whether it is to be read, held or done.
	found      int
	foundState foundFleet
}

// foundFleet is what a warm start does with the fleet it finds.
type foundFleet uint8

const (
	foundNone foundFleet = iota // no warm start, or a live burst has ended since
	foundRead                   // replayed: the next decision reads the fleet
	foundHeld                   // read: kept warm until a live burst ends
)

// burstInterval is one interval's arrivals.
type burstInterval struct {
	end  int64   // Unix ns
	secs float64 // its length
	msgs float64
	// done is the completions counted among msgs by Little's law, at the
	// per-slot rate (see measuredWith).
	done float64
}

// burst is one burst's facts.
type burst struct {
	start, end int64   // Unix ns
	msgs       float64 // messages that arrived during it
	done       float64 // the completions counted among them (burstInterval.done)
	need       float64 // msg/s (see burstLearner)
	gap        float64 // seconds of quiet before it; 0 for the first
	announced  bool    // the forecast expected it (see recurAt)
	// ready is what the workers the rate floors asked for as it began
	// served, msg/s: without the warm capacity, it would have been met by
	// them.
	ready float64
	// coarse is its need as whole wall-clock minutes show it (see
	// calibrate), msg/s; fromMinutes: it was learned from a warm start's
	// minutes, whose need is coarse × the recent live bursts' need ÷ coarse.
	coarse      float64
	fromMinutes bool
}

func (b burst) length() float64 { return float64(b.end-b.start) / 1e9 }

// remembered reports whether the burst is within the memory at ns (Unix ns):
// it ended no more than burstMemory before, and not after.
func (b burst) remembered(ns int64) bool {
	return b.end >= ns-int64(burstMemory) && b.end <= ns
}

// recent calls fn with each burst within the memory at ns (Unix ns), the
// newest first, at most burstKeep of them: the recent bursts every
// statistic of the learner is made of, but the warm fleet's need (see
// longNeed).
func (bl *burstLearner) recent(ns int64, fn func(b *burst)) {
	for j, n := 0, 0; j < bl.np && n < burstKeep; j++ {
		b := &bl.past[(bl.nextP-1-j+2*burstRing)%burstRing]
		if b.remembered(ns) {
			fn(b)
			n++
		}
	}
}

// longNeed is the need the warm fleet sizes for, msg/s, once bursts have
// been learned for more than an hour: the k-th largest need of the bursts
// not announced over the last k hours (k at most burstNeedHours, and at
// least two needs an hour), the same high quantile as the largest of one
// hour's, estimated from more bursts, so that the warm fleet neither stays
// high for an hour after a large burst nor drops an hour later, as a
// stationary burst process goes on. ok is false within the first hour:
// the largest of the hour's needs serves then.
func (bl *burstLearner) longNeed(ns int64) (need float64, k int, ok bool) {
	var top [burstNeedHours]float64 // the largest needs, the largest first
	n := 0
	oldest := ns
	for i := range bl.np {
		b := &bl.past[i]
		if b.announced || b.end > ns || b.end < ns-int64(burstNeedHours)*int64(time.Hour) {
			continue
		}
		x := b.need
		for j := range top {
			if x > top[j] {
				x, top[j] = top[j], x
			}
		}
		n++
		oldest = min(oldest, b.start)
	}
	k = min(int(math.Ceil(float64(ns-oldest)/3600e9)), burstNeedHours)
	if k < 2 || n < 2*k {
		return 0, 0, false
	}
	return top[k-1], k, true
}

// uniform is the burst at an even rate with its messages and its need
// (for a promise of latency seconds): its rate, msg/s, and length, seconds.
// An even burst of length l ≤ D + L needs rate × l ÷ (l + L), so the length
// is messages ÷ need − L, at most the burst's own: a burst whose messages
// crowd into part of it is as short and steep as that part.
func (b burst) uniform(latency float64) (rate, length float64) {
	length = b.length()
	if b.need > 0 {
		length = math.Min(length, math.Max(b.msgs/b.need-latency, burstMinUniform))
	}
	return b.msgs / length, length
}

// Tuning of the burst learner (see burstLearner).
const (
	burstIntervals = 64
	burstKeep      = 32
	burstMemory    = time.Hour
	// burstNeedHours is how many hours of bursts the warm fleet's need is
	// estimated from (see longNeed), and burstRing how many bursts the
	// learner keeps for it.
	burstNeedHours     = 3
	burstRing          = 96
	burstBaseSmoothing = 5 * time.Minute
	burstRatio         = 2
	burstSigmas        = 4
	burstMessages      = 5
	burstEndQuiet      = 20 * time.Second
	burstMaxLength     = 5 * time.Minute
	// burstMinKnown is how many bursts must be known before what they were
	// like sizes anything.
	burstMinKnown = 3
	// burstMinGaps is how many gaps must be known before a quiet stretch
	// shorter than all of them is taken to make a burst unlikely.
	burstMinGaps = 4
	// burstQuantile is the share of recent bursts the warm capacity serves
	// and the burst lengths the sizing expects.
	burstQuantile = 1
	// burstRateChange is the change of the per-slot rate from which the
	// bursts measured with the old one are measured anew (measuredWith).
	burstRateChange = 0.25
	// burstMinUniform is the shortest length, seconds, a burst is taken
	// to arrive over (see burst.uniform).
	burstMinUniform = 1.0
	// burstMinutes is how many closed wall-clock minutes the learner keeps
	// for the bursts' needs at a minute's resolution: windows up to D + L
	// of 16 minutes.
	burstMinutes = 16
)

// observe records the arrivals of the interval ending at at, secs long,
// counted exactly. window is D + L, latency L, both in seconds.
func (bl *burstLearner) observe(at time.Time, secs, msgs, window, latency float64) {
	bl.observeServed(at, secs, msgs, 0, window, latency)
}

// observeServed records the arrivals of the interval ending at at, secs
// long, done of them counted as completions at the per-slot rate (see
// measuredWith).
func (bl *burstLearner) observeServed(at time.Time, secs, msgs, done, window, latency float64) {
	ns := at.UnixNano()
	if !(secs > 0) || !finiteOK(msgs) || !finiteOK(done) || ns <= bl.lastSeen {
		return
	}
	msgs, done = math.Max(msgs, 0), math.Max(done, 0)
	bl.lastSeen = ns
	bl.addMinutes(ns-int64(secs*1e9), ns, msgs, done, window, latency)
	bl.ring[bl.next] = burstInterval{end: ns, secs: secs, msgs: msgs, done: done}
	bl.next = (bl.next + 1) % burstIntervals
	bl.n = min(bl.n+1, burstIntervals)

	r, rd := msgs/secs, done/secs
	if !bl.baseOK {
		bl.base, bl.baseDone, bl.baseOK = r, rd, true
		return
	}
	excess := (r - bl.base) * secs
	hot := r >= burstRatio*bl.base && excess >= math.Max(burstSigmas*math.Sqrt(math.Max(bl.base, bl.spread)*secs), burstMessages)
	switch {
	case hot && !bl.on:
		bl.on = true
		bl.cur = burst{start: ns - int64(secs*1e9), ready: bl.serving, fromMinutes: bl.replaying}
		bl.cur.announced = bl.recurAt > 0 && float64(bl.cur.start-bl.recurAt) <= window*1e9
		if bl.lastEnd > 0 {
			bl.cur.gap = float64(bl.cur.start-bl.lastEnd) / 1e9
		}
		fallthrough
	case hot:
		if bl.lastHot < ns-int64(secs*1e9) {
			bl.runStart = ns - int64(secs*1e9)
		}
		bl.lastHot = ns
		bl.cur.msgs += msgs
		bl.cur.done += done
		bl.cur.need = math.Max(bl.cur.need, bl.windowNeed(window, latency))
		if float64(ns-bl.cur.start) > float64(burstMaxLength) {
			// A new level, not a burst: the rate most of its intervals
			// show, not its last one, which may be a burst on the level.
			// Arrivals that high were no quiet: the quiet since the last
			// burst (see burstFacts.chance) starts again from here.
			bl.on = false
			bl.base, bl.baseDone = bl.levelRate(ns - int64(burstMaxLength))
			bl.levelAt = ns
		}
	default:
		a := 1 - math.Exp(-secs/burstBaseSmoothing.Seconds())
		bl.base += a * (r - bl.base)
		bl.baseDone += a * (rd - bl.baseDone)
		if bl.on && float64(ns-bl.lastHot) >= math.Max(float64(burstEndQuiet), math.Max(latency, (window-latency)/2)*1e9) {
			bl.on = false
			bl.cur.end = bl.lastHot
			// Announced, but the workers the floors had asked for (the
			// forecast's pre-start among them) fell short of its need: the
			// forecast did not serve it.
			bl.cur.announced = bl.cur.announced && bl.cur.ready >= bl.cur.need
			bl.lastEnd = bl.lastHot
			bl.past[bl.nextP] = bl.cur
			bl.nextP = (bl.nextP + 1) % burstRing
			bl.np = min(bl.np+1, burstRing)
		}
	}
}

// preload replays the last burstMemory of a per-minute arrival history
// (NumberOfMessagesSent at a warm start), one minute an interval, into a
// learner that has observed nothing yet, so that a restarted checker knows
// the group's recent bursts from its first decisions instead of meeting the
// next few with none kept warm. Minutes CloudWatch had no datapoint for are
// skipped. A minute blurs what happened within it: a burst shorter than a
// minute is seen as a minute long, and its need (its messages ÷ (60 s + L))
// is a lower bound, by as much as (60 s + L) ÷ (its length + L). The live
// intervals measure the bursts that come at their own resolution, and how
// much a minute hides of this group's bursts (see calibrate). It returns
// the minutes replayed.
func (bl *burstLearner) preload(h model.MinuteHistory, window, latency float64) int {
	if bl.lastSeen != 0 || h.Start.IsZero() {
		return 0
	}
	from := max(0, len(h.Counts)-int(burstMemory/time.Minute))
	n := 0
	bl.replaying = true
	defer func() {
		bl.replaying = false
		if bl.np > 0 {
			bl.foundState = foundRead
		}
	}()
	for i := from; i < len(h.Counts); i++ {
		if c := h.Counts[i]; c >= 0 && !math.IsInf(c, 0) {
			bl.observe(h.Start.Add(time.Duration(i+1)*time.Minute), 60, c, window, latency)
			n++
		}
	}
	return n
}

// addMinutes credits msgs arriving evenly over [from, to) (Unix ns), done
// of them completions, to the wall-clock minutes they fall in, closing each
// minute it passes.
func (bl *burstLearner) addMinutes(from, to int64, msgs, done, window, latency float64) {
	const minute = int64(time.Minute)
	span := float64(to - from)
	for t := from; t < to; {
		m := t - ((t%minute)+minute)%minute
		if m != bl.minute {
			bl.closeMinutes(m, window, latency)
		}
		end := min(to, m+minute)
		bl.minuteMsgs += msgs * float64(end-t) / span
		bl.minuteDone += done * float64(end-t) / span
		t = end
	}
}

// closeMinutes closes the minute being filled, and the empty ones up to
// next (the start of the minute to fill), each as calibrate needs it.
func (bl *burstLearner) closeMinutes(next int64, window, latency float64) {
	const minute = int64(time.Minute)
	for k := 0; bl.minute != 0 && bl.minute < next && k < burstMinutes; k++ {
		bl.mins[bl.nextMin], bl.minsDone[bl.nextMin] = bl.minuteMsgs, bl.minuteDone
		bl.nextMin = (bl.nextMin + 1) % burstMinutes
		bl.nMin = min(bl.nMin+1, burstMinutes)
		bl.calibrate(bl.minute, window, latency)
		bl.minute, bl.minuteMsgs, bl.minuteDone = bl.minute+minute, 0, 0
	}
	bl.minute, bl.minuteMsgs, bl.minuteDone = next, 0, 0
}

// calibrate takes the minute that began at start, just closed, as a
// warm start's history would show it. Its heaviest window of whole minutes
// no longer than D + L (at least the minute), work ÷ (w + L), is the need of
// the burst it saw (the one on, else the last, if it ended within the
// minute or later) at a minute's resolution: its coarse need. A minute
// blurs a burst shorter than itself, so a warm start's bursts needed more
// than their minutes show: as much more as the live bursts of the memory
// do, their most need ÷ their most coarse need (at least 1; of the largest,
// since a small burst's need counts the work of a larger one just before it
// that its own minute does not hold), and until one is known, what the
// minutes show.
func (bl *burstLearner) calibrate(start int64, window, latency float64) {
	need := heaviest(bl.nMin, window, latency, func(i int) (secs, msgs float64) {
		return 60, bl.mins[(bl.nextMin-1-i+2*burstMinutes)%burstMinutes]
	})
	switch last := &bl.past[(bl.nextP-1+burstRing)%burstRing]; {
	case bl.on:
		bl.cur.coarse = math.Max(bl.cur.coarse, need)
	case bl.np > 0 && last.end > start:
		last.coarse = math.Max(last.coarse, need)
	}
	var most, mostCoarse float64
	for i := range bl.np {
		if p := &bl.past[i]; !p.fromMinutes && p.coarse > 0 && p.remembered(bl.lastSeen) {
			most, mostCoarse = math.Max(most, p.need), math.Max(mostCoarse, p.coarse)
		}
	}
	ratio := 1.0
	if mostCoarse > 0 {
		ratio = math.Max(ratio, most/mostCoarse)
	}
	for i := range bl.np {
		if p := &bl.past[i]; p.fromMinutes && p.coarse > 0 {
			p.need = p.coarse * ratio
		}
	}
	if mostCoarse > 0 {
		bl.foundState = foundNone
	}
}

// levelRate is the median arrival rate of the intervals the ring holds
// that end after since, and the rate of the completions counted in that
// interval, msg/s.
func (bl *burstLearner) levelRate(since int64) (rate, done float64) {
	var ivs [burstIntervals]burstInterval
	k := 0
	for i := range bl.n {
		if iv := bl.ring[i]; iv.end > since && iv.secs > 0 {
			ivs[k] = iv
			k++
		}
	}
	slices.SortFunc(ivs[:k], func(a, b burstInterval) int { return cmp.Compare(a.msgs/a.secs, b.msgs/b.secs) })
	m := ivs[k/2]
	if !(m.secs > 0) {
		return 0, 0
	}
	return m.msgs / m.secs, m.done / m.secs
}

// onRhythm reports whether one recurring pattern explains every burst
// within the memory at now: rhythm gives, for a burst's start, the pattern
// that explains it and whether it does.
func (bl *burstLearner) onRhythm(now time.Time, rhythm func(start time.Time) (forecast.Rhythm, bool)) bool {
	n := 0
	var first forecast.Rhythm
	fits := true
	bl.recent(now.UnixNano(), func(b *burst) {
		r, ok := rhythm(time.Unix(0, b.start))
		if !ok || n > 0 && (r.Period != first.Period || r.Phase != first.Phase) {
			fits = false
		}
		first = r
		n++
	})
	return fits && n > 0
}

// measuredWith tells the learner the per-slot completion rate the arrivals
// it is about to observe are measured with, and the latest level change the
// fleet's measurement detected (zero: none). When the rate moves by more
// than burstRateChange:
//
//   - after a detected change (a deploy: the workers now take a different
//     time), the arrivals measured before it were measured right for their
//     time, and the bursts keep their messages: they need more workers, or
//     fewer, at the new rate;
//   - else the rate was wrong (the configured service time, until the
//     measured one was trusted, or a measurement since corrected): the
//     completions counted among the arrivals are counted anew at the new
//     rate (see rescale).
func (bl *burstLearner) measuredWith(perServer float64, step time.Time) {
	var stepNs int64
	if !step.IsZero() {
		stepNs = step.UnixNano()
	}
	if old := bl.perServer; old > 0 && perServer > 0 && math.Abs(perServer/old-1) > burstRateChange && stepNs == bl.step {
		bl.rescale(perServer / old)
	}
	bl.perServer, bl.step = perServer, stepNs
}

// rescale counts the completions among the arrivals observed k times over:
// they were counted at a per-slot rate 1/k of the right one. A burst's
// messages, need and coarse need scale as its messages do, the base rate as
// its own count does; what workers served (a burst's ready, the floors'
// serving) scales by k. The workers a burst needs stay what its
// measurement showed where its arrivals were mostly completions, and its
// messages counted exactly (the growth of the queue) stay.
func (bl *burstLearner) rescale(k float64) {
	counted := func(msgs, done float64) float64 { return math.Max(msgs+(k-1)*done, 0) }
	for i := range bl.ring {
		iv := &bl.ring[i]
		iv.msgs, iv.done = counted(iv.msgs, iv.done), iv.done*k
	}
	for i := range bl.mins {
		bl.mins[i], bl.minsDone[i] = counted(bl.mins[i], bl.minsDone[i]), bl.minsDone[i]*k
	}
	bl.minuteMsgs, bl.minuteDone = counted(bl.minuteMsgs, bl.minuteDone), bl.minuteDone*k
	scale := func(b *burst) {
		f := k
		if b.msgs > 0 {
			f = counted(b.msgs, b.done) / b.msgs
		}
		b.msgs, b.done = b.msgs*f, b.done*k
		b.need, b.coarse, b.ready = b.need*f, b.coarse*f, b.ready*k
	}
	for i := range bl.np {
		scale(&bl.past[i])
	}
	scale(&bl.cur)
	bl.base, bl.baseDone = counted(bl.base, bl.baseDone), bl.baseDone*k
	bl.serving *= k
}

// windowNeed is the most work ÷ (w + latency) over the windows ending at
// the newest interval no longer than window seconds.
func (bl *burstLearner) windowNeed(window, latency float64) float64 {
	return heaviest(bl.n, window, latency, func(i int) (secs, msgs float64) {
		iv := bl.ring[(bl.next-1-i+2*burstIntervals)%burstIntervals]
		return iv.secs, iv.msgs
	})
}

// heaviest is the most work ÷ (w + latency) over the windows of the newest
// n intervals (at(0) the newest, at(i) the i-th before it: its length and
// messages) that end at the newest and are no longer than window seconds,
// the newest alone whatever its length.
func heaviest(n int, window, latency float64, at func(i int) (secs, msgs float64)) float64 {
	need, work, w := 0.0, 0.0, 0.0
	for i := range n {
		secs, msgs := at(i)
		if w+secs > window+1e-9 && i > 0 {
			break
		}
		work += msgs
		w += secs
		need = math.Max(need, work/(w+latency))
	}
	return need
}

// burstFacts is what the learner knows of the recent bursts at a time.
type burstFacts struct {
	n         int     // bursts within the memory
	announced int     // of which the forecast expected (left out of need)
	msgs      float64 // their median size, messages
	length    float64 // their median length, seconds
	lengthHi  float64 // the burstQuantile of their lengths, seconds
	gap       float64 // the median gap between them, seconds
	need      float64 // the burstQuantile of the needs of those not announced, msg/s
	// needHours is how many hours of needs need is the needHours-th
	// largest of (1: the largest of the last hour's; see longNeed).
	needHours  int
	rate       float64 // the median burst's mean rate, msg/s
	perHour    float64 // bursts an hour lately
	base       float64 // the rate between bursts, msg/s
	on         bool    // a burst is on
	age        float64 // seconds since the burst on began
	runAge     float64 // seconds since its latest run of hot intervals began
	quiet      float64 // seconds since the last burst ended (when none is on)
	gaps       int     // gaps known
	sortedGaps [burstKeep]float64
	lengths    [burstKeep]float64 // sorted, n of them
}

// facts summarises the bursts within the memory at now.
func (bl *burstLearner) facts(now time.Time) burstFacts {
	var f burstFacts
	f.base = bl.base
	ns := now.UnixNano()
	var sizes, needs [burstKeep]float64
	nn := 0
	lengths := &f.lengths
	oldest := ns
	bl.recent(ns, func(b *burst) {
		sizes[f.n], lengths[f.n] = b.msgs, b.length()
		if b.announced {
			f.announced++
		} else {
			needs[nn] = b.need
			nn++
		}
		oldest = min(oldest, b.start)
		if b.gap > 0 {
			f.sortedGaps[f.gaps] = b.gap
			f.gaps++
		}
		f.n++
	})
	if bl.on {
		f.on, f.age = true, float64(ns-bl.cur.start)/1e9
		f.runAge = float64(ns-max(bl.runStart, bl.cur.start)) / 1e9
	} else if bl.lastEnd > 0 {
		f.quiet = float64(ns-max(bl.lastEnd, bl.levelAt)) / 1e9
	}
	if f.n == 0 {
		return f
	}
	s, l, nd := sizes[:f.n], f.lengths[:f.n], needs[:nn]
	slices.Sort(s)
	slices.Sort(l)
	slices.Sort(nd)
	g := f.sortedGaps[:f.gaps]
	slices.Sort(g)
	f.msgs, f.length = s[f.n/2], l[f.n/2]
	f.lengthHi, f.need = quantile(l, burstQuantile), quantile(nd, burstQuantile)
	if f.length > 0 {
		f.rate = f.msgs / f.length
	}
	if f.gaps > 0 {
		f.gap = g[f.gaps/2]
	}
	if span := float64(ns-oldest) / 3600e9; span > 0 && f.n > 1 {
		f.perHour = float64(f.n) / math.Max(span, float64(burstMemory)/float64(time.Hour)*float64(f.n)/burstKeep)
	}
	f.needHours = 1
	if need, k, ok := bl.longNeed(ns); ok {
		f.need, f.needHours = need, k
	}
	return f
}

// quantile is the q quantile of sorted values, nearest rank, rounding up:
// with few values, the highest.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// chance is how likely the next burst is to begin within the next h
// seconds, given f.quiet seconds of quiet since the last: the share of the
// recent gaps longer than the quiet so far that end within h more, counting
// one more such gap that does (so that few gaps never rule a burst out). With
// fewer than burstMinGaps gaps known, or a quiet longer than every gap, 1
// (the bursts may not have stopped), until the bursts have stopped (0): the
// quiet has lasted so long that, were they going on as before, a gap that
// long would come less often than the share miss of them (gaps taken as
// exponential with the recent gaps' mean, past mean × ln(1 ÷ miss)), and at
// least twice the longest recent gap.
func (f *burstFacts) chance(h, miss float64) float64 {
	if f.on {
		return 1
	}
	g := f.sortedGaps[:f.gaps]
	if f.gaps < burstMinGaps {
		return 1
	}
	if f.quiet > f.stopped(miss) {
		return 0
	}
	longer, within := 0, 0
	for _, x := range g {
		if x > f.quiet {
			longer++
			if x <= f.quiet+h {
				within++
			}
		}
	}
	if longer == 0 {
		return 1
	}
	// One more gap, of unknown length, among those longer than the quiet
	// so far: the next gap is shorter than all k seen with chance 1/(k+1).
	return float64(within+1) / float64(longer+1)
}

// stopped is the quiet, in seconds, after which the bursts have stopped
// (see chance).
func (f *burstFacts) stopped(miss float64) float64 {
	g := f.sortedGaps[:f.gaps]
	if len(g) == 0 {
		return math.Inf(1)
	}
	mean := 0.0
	for _, x := range g {
		mean += x / float64(len(g))
	}
	after := 2 * g[len(g)-1]
	if miss > 0 && miss < 1 {
		after = math.Max(after, mean*math.Log(1/miss))
	}
	return after
}

// remaining is how much longer the burst on, age seconds old, is expected
// to last: the mean, over the recent bursts that lasted longer than age, of
// what they lasted beyond that (mean), and the same with each at most h
// (within: how much of the next h seconds it is expected to last; a burst
// that lasts beyond h adds h, not its whole length); ok is false when none
// did (it is longer than every recent burst: no length is known for it).
func (f *burstFacts) remaining(age, h float64) (mean, within float64, ok bool) {
	k := 0
	for _, l := range f.lengths[:f.n] {
		if l > age {
			mean += l - age
			within += math.Min(l-age, h)
			k++
		}
	}
	if k == 0 {
		return 0, 0, false
	}
	return mean / float64(k), within / float64(k), true
}

// late is the messages the recent bursts not announced (within the memory at now) would
// have left past the promise, all told, met by a fleet serving now msg/s
// that grows to most msg/s react seconds after each began (lateIfMissed).
func (bl *burstLearner) late(now time.Time, cur, most, react, latency float64) float64 {
	sum := 0.0
	bl.recent(now.UnixNano(), func(b *burst) {
		if !(b.length() > 0) || b.announced {
			return
		}
		rate, length := b.uniform(latency)
		sum += lateIfMissed(rate, math.Max(cur, b.ready), most, length, react, latency)
	})
	return sum
}
