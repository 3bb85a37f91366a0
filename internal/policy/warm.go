package policy

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// burstPlan is what the model policy does about the group's bursts in one
// decision (see planBursts).
type burstPlan struct {
	f     burstFacts
	known bool // enough bursts are known to size for them
	// short: a burst is on and is expected to end, remaining seconds from
	// now, before workers launched now could start; the floors then size
	// for the arrivals after it (startLam, the base rate), not the burst's.
	short     bool
	remaining float64
	// within: how much of the next start delay the burst on is expected
	// to last (each recent burst's rest at most a start delay).
	within float64
	// after: how long the burst on is expected to last once workers
	// launched now start (each recent longer burst's rest beyond the start
	// delay, on average); 0 when short. The floors size for the base rate
	// and count its arrivals until then as a backlog (see sizeModel).
	after    float64
	startLam float64
	// warm is the fleet kept warm for the next burst (0: none); need the
	// fleet the recent bursts needed.
	warm, need int
	// timed: every recent burst was announced by the forecast, or one
	// rhythm it found times them all (see times) and has proven itself
	// (served one of them announced, or matched rhythmProven in its
	// history); it pre-starts their workers when they are due (see bet):
	// nothing is kept warm.
	timed bool
	// byChance: the occurrence the forecast expects is no likelier than
	// a learned burst in its window; the warm capacity serves it.
	byChance bool
	// found: the warm fleet is the one a warm start found (see keepFound).
	found bool
	// ends: fewer bursts are known than size anything, but the one on
	// makes enough once it ends; only the warm fleet is sized (warmPays).
	ends bool
	// spends: need is the fleet that would have held the last hour within
	// the promise's allowance (heldBy), below the recent bursts' need.
	spends bool
	// unseen: the burst on is unlike the recent ones (burstFacts.unseen):
	// nothing learned of them sizes or holds the fleet for it.
	unseen bool
}

// unseenNeed is how many times the recent bursts' need a burst on must
// need, besides outlasting them all, to be unlike them; unseenBig how many
// times, to be unlike them however long it has lasted.
const (
	unseenNeed = 2
	unseenBig  = 4
)

// unseen reports a burst on that needs (need, msg/s) more than unseenNeed
// times the recent bursts' need and has lasted longer than every one of
// them, or needs more than unseenBig times theirs: a surge the learned
// bursts say nothing of. Expecting it to end as they did held
// a fleet still for a start delay in a flash crowd.
func (f *burstFacts) unseen(need float64) bool {
	return f.on && f.n > 0 && f.need > 0 && (f.age > f.lengths[f.n-1] || need > unseenBig*f.need) && need > unseenNeed*f.need
}

// ending reports whether a burst is on that is expected to end, before
// workers launched now start (short) or after (after > 0): the floors then
// size for the arrivals after it, and the workers serving it stay until it
// ends.
func (bp *burstPlan) ending() bool { return bp.short || bp.after > 0 }

// learnBursts feeds the interval's arrivals to the burst learner.
func (c *call) learnBursts() {
	st, s := c.st, c.s
	obs, obsOK := st.est.Observation(c.at)
	if !c.prevOK || !obsOK {
		return
	}
	dt := c.at.Sub(c.prev.at).Seconds()
	// The interval's arrivals, with its completions by Little's law when
	// the fleet is known (Estimator.Served).
	st.bursts.measuredWith(c.mu/float64(s.Concurrency), c.learn.est.Step)
	msgs, done := obs*dt, 0.0
	if served, counted, ok := st.est.Served(c.at); ok {
		msgs, done = served, counted
	}
	st.bursts.spread = st.est.Spread()
	st.bursts.observeServed(c.at, dt, msgs, done, (s.StartDelay + s.Latency).Seconds(), c.latency())
}

// planBursts reads what the learner knows of the bursts and plans for them
// (the model policy only; see docs/deciding.md, "Bursts"):
//
//   - A launch pays its start delay before it serves. While a burst is on,
//     the backlog floors project its rate for as much of the start delay as
//     the recent bursts longer than it lasted beyond its age (each at most a
//     start delay), the base rate after (projected); when those bursts ended,
//     on average, before workers launched now could start, the rate floors
//     size for the base rate and the workers serving the burst stay until it
//     ends.
//   - Warm capacity for the bursts it cannot react to: the fleet that,
//     never moving, would have served burstQuantile of the recent bursts
//     within the promise (burstLearner's need) is kept while relaunching it
//     would cost more than holding it (see warmPays).
func (c *call) planBursts() {
	s, st := c.s, c.st
	if s.Policy != PolicyModel || !c.lambdaKnown || c.muEff <= 0 {
		return
	}
	bp := &c.bp
	bp.f = st.bursts.facts(c.now)
	f := &bp.f
	bp.known = f.n >= burstMinKnown
	o := c.fc.Occurrence
	if o != nil && bp.known {
		// An occurrence that comes no more often than one of the learned
		// bursts begins within its window anyway is no rhythm: onsets a
		// few minutes apart fit some period by chance.
		bp.byChance = o.Chance() <= burstWithin(f.perHour, o.Early()+o.Overdue())
	}
	if s.forecasting() && o != nil && !bp.byChance && o.Confidence() >= burstAnnounced {
		st.bursts.recurAt = c.now.UnixNano()
	}
	// The burst on is one of them once it ends: the workers serving it
	// are not released before it is learned, only to be launched again a
	// start delay late for the next.
	bp.ends = !bp.known && f.on && f.n+1 >= burstMinKnown
	if !bp.known && !bp.ends {
		return
	}
	d := s.StartDelay.Seconds()
	baseEff := effectiveArrival(f.base, s.BurstReserve)
	bp.startLam = baseEff
	if bp.ends {
		bp.need = c.burstNeed()
		return
	}
	bp.unseen = f.unseen(st.bursts.cur.need)
	if bp.unseen {
		c.reason("a burst is on unlike the recent ones (%s so far, needing %s msg/s where they needed %s): sized as a surge, not expected to end as they did",
			span(f.age), number(st.bursts.cur.need), number(f.need))
	}
	rem, within, ok := f.remaining(f.age, d)
	if !ok && f.on {
		// Longer than every recent burst, lulls and all: its latest run
		// of hot intervals is measured against them instead.
		rem, within, ok = f.remaining(f.runAge, d)
	}
	if f.on && ok && baseEff < c.lambdaEff && !bp.unseen {
		bp.remaining, bp.within = rem, within
		bp.short = rem < d
		if !bp.short {
			bp.after = rem - within
		}
	}
	bp.need = c.burstNeed()
	// A rhythm fitted to the bursts after they came times them once it has
	// proven itself: it announced one that the workers pre-started for it
	// served, or the forecast's history matched it rhythmProven times (a
	// warm start's, which announced none). Three onsets a few minutes apart
	// fit some period by chance, and a burst that comes off it meets no
	// warm workers.
	bp.timed = f.announced == f.n || s.forecasting() && st.bursts.onRhythm(c.now, func(start time.Time) (forecast.Rhythm, bool) {
		r := st.fc.Rhythm(start)
		return r, times(r, f.perHour) && (f.announced > 0 || r.Hits >= rhythmProven)
	})
}

// burstNeed is the fleet the recent bursts needed (the one on among them
// when it makes them enough to know): the learner's need, or
// the fleet that would have held the last hour within the promise's
// allowance when that is less (heldBy).
func (c *call) burstNeed() int {
	bp := &c.bp
	rate := bp.f.need
	if bp.ends {
		rate = math.Max(rate, c.st.bursts.cur.need)
	}
	need := capacity.CeilWorkers(effectiveArrival(rate, c.s.BurstReserve) / c.muEff)
	if n, allowance, ok := c.heldBy(); ok && n < need {
		// The promise may miss a share of the messages: spent on the
		// rarest bursts, it buys a smaller warm fleet than one that serves
		// every burst within it.
		c.reason("a fleet of %d that never moved would have kept all but %s of the last hour's messages within the promise: the warm fleet is sized to it, not to the %d every recent burst needed",
			n, percent(allowance), need)
		bp.spends = true
		return n
	}
	return need
}

// times reports whether the recurring pattern r times bursts that come
// perHour an hour well enough that the forecast, which pre-starts them when
// they are due, replaces the warm capacity: it expects its occurrences
// within at most half its period (a wider window says little about when),
// and its next one at least twice as likely as that one of the bursts
// begins in that window at random.
func times(r forecast.Rhythm, perHour float64) bool {
	return r.Period > 0 && 2*r.Window <= r.Period && r.Chance >= 2*burstWithin(perHour, r.Window)
}

// burstWithin is the chance that one of bursts coming perHour an hour at
// random begins within a window w long: 1 − e^(−perHour × w).
func burstWithin(perHour float64, w time.Duration) float64 {
	return 1 - math.Exp(-perHour*w.Hours())
}

// projected is the mean arrival rate over the next start delay d that the
// backlog floors project while a burst is on: lam for as much of d as it is
// expected to last (each recent longer burst's rest counted at most d, so
// that one long burst does not stretch the rest), the base rate after.
func (bp *burstPlan) projected(lam, d float64) float64 {
	if !(bp.within > 0) || d <= 0 {
		return lam
	}
	return (lam*bp.within + bp.startLam*(d-bp.within)) / d
}

// warmPays decides whether the warm fleet is kept beyond rate workers (the
// rate floors' count), and fills in the decision's Bursts.
//
// The promise comes first: where relaunching would leave more messages past
// the promise an hour than the share of all arrivals it may miss
// (1 − LatencyQuantile), the fleet is kept warm whatever it costs; a burst
// shorter than a start delay is over before a relaunch could serve it, and
// a longer one breaks the promise as well when its first start delay does.
// Otherwise it is a cost decision:
//
// Per burst, relaunching the extra workers costs their start delay (a
// worker launched when a burst begins is paid from then), plus the messages
// the base fleet leaves past the promise until they start (lateIfMissed,
// averaged over the recent bursts, at Forecast.LateCost worker times each); holding
// them costs the idle time between bursts. Keeping them warm pays when,
// an hour, relaunching costs more than holding. Then they are held while the
// chance that the next burst begins before a worker launched now could
// start (burstFacts.chance) is at least the share of messages the promise
// may miss (1 − LatencyQuantile): a burst they miss breaks the promise for
// most of its messages. Once the bursts have stopped (burstFacts.stopped)
// the warm workers go. Load the forecast finds to recur on a
// rhythm is pre-started when it is due (see bet), not kept warm.
func (c *call) warmPays(rate int) int {
	bp, s := &c.bp, c.s
	if !bp.known && !bp.ends {
		return 0
	}
	f := &bp.f
	dt := c.st.lastDt.Seconds()
	if dt <= 0 || dt > forecast5m {
		dt = 0
	}
	react := s.StartDelay.Seconds() + 2*dt
	// The workers the arrivals between bursts need stay anyway.
	base := min(rate, c.rateFloorAt(bp.startLam))
	extra := max(bp.need-base, 0)
	// Every recent burst, met by the base fleet and relaunched workers.
	late := c.st.bursts.late(c.now, float64(base)*c.muEff, float64(max(c.hi, bp.need))*c.muEff, react, c.latency()/2) / float64(f.n)
	lateCost := s.Forecast.LateCost / c.muEff
	relaunch := float64(extra)*react + lateCost*late // worker-seconds a burst
	holdHour := float64(extra)                       // worker-hours an hour
	relaunchHour := f.perHour * relaunch / 3600
	chance := f.chance(react, 1-s.LatencyQuantile)
	// When relaunching would leave more messages past the (whole) promise
	// an hour than the share of all arrivals the promise may miss, the
	// promise decides, not the cost, and the fleet is kept warm.
	lateHour := f.perHour * c.st.bursts.late(c.now, float64(base)*c.muEff, float64(max(c.hi, bp.need))*c.muEff, react, c.latency()) / float64(f.n)
	arrivedHour := 3600*f.base + f.perHour*f.msgs
	breaks := arrivedHour > 0 && lateHour > (1-s.LatencyQuantile)*arrivedHour
	pays := extra > 0 && (relaunchHour > holdHour || breaks) && !bp.timed
	warm := 0
	if pays && chance >= 1-s.LatencyQuantile {
		warm = bp.need
	}
	warm = c.keepFound(warm)
	bp.warm = warm
	b := &c.b.bursts
	*b = model.Bursts{
		Count: f.n, Messages: math.Round(f.msgs), LengthSeconds: f.length, GapSeconds: f.gap,
		BaseRate: f.base, NeedWorkers: bp.need, NeedHours: f.needHours, WarmWorkers: warm,
		HoldWorkerHours: holdHour, RelaunchWorkerHours: relaunchHour, Chance: chance,
		InBurst: f.on, RemainingSeconds: bp.remaining,
		LateIfRelaunchedPerHour: math.Round(lateHour), ForThePromise: warm > 0 && relaunchHour <= holdHour,
	}
	if p := s.WorkerCostPerHour; p > 0 {
		c.b.holdUSD, c.b.relaunchUSD = holdHour*p, relaunchHour*p
		b.HoldDollars, b.RelaunchDollars = &c.b.holdUSD, &c.b.relaunchUSD
	}
	c.d.Bursts = b
	c.burstReason(extra, pays, chance)
	if bp.found {
		c.reason("keeping the %d workers the warm start found: the history's minutes blur bursts shorter than a minute, so the %d they show is a lower bound until a burst is measured live", warm, bp.need)
	}
	return warm
}

// keepFound keeps warm, beyond warm workers, the fleet a warm start found,
// while its bursts are known only from the history's minutes: that fleet is
// what the checker before the restart kept with the bursts it had measured
// live, which a minute blurs (see burstLearner.preload). It is held while
// any warm capacity is, and until a burst has been measured live, never
// above the most workers.
func (c *call) keepFound(warm int) int {
	bl := &c.st.bursts
	switch {
	case bl.foundState == foundRead && c.currentKnown:
		bl.found, bl.foundState = c.current, foundHeld
	case bl.foundState != foundHeld:
		return warm
	}
	if warm > 0 && bl.found > warm {
		c.bp.found = true
		return min(bl.found, c.hi)
	}
	return warm
}

// burstAnnounced is the chance from which an occurrence the forecast
// expects announces the burst that begins near its time.
const burstAnnounced = 0.75

// rhythmProven is how many occurrences the forecast's history must have
// matched of a rhythm fitted to the bursts, none of them announced, for it
// to time them: two fix the period, and each further onset of bursts a few
// minutes apart falls in its window by chance about one time in three, so
// three more make a fit by chance about one in thirty.
const rhythmProven = 5

// forecast5m bounds the sampling interval the plan trusts, as the
// forecast's horizon does.
const forecast5m = 300.0

// burstReason says what was learned of the bursts and what it does.
func (c *call) burstReason(extra int, pays bool, chance float64) {
	bp, b := &c.bp, &c.b.bursts
	f := &bp.f
	if bp.timed {
		c.reason("bursts of ~%s messages over ~%s every ~%s lately (%d in the last hour, %s msg/s between), all on a rhythm the forecast times: their workers are pre-started when they are due, none kept warm",
			number(b.Messages), span(f.length), span(f.gap), f.n, number(f.base))
	} else {
		c.burstWarmReason(extra, pays, chance)
	}
	if bp.short {
		c.reason("a burst is on (%s so far): bursts this long lately lasted %s more on average, so it is expected to end, before workers launched now start; sizing for the %s msg/s after it",
			span(f.age), span(bp.remaining), number(bp.startLam))
	}
	if bp.after > 0 {
		c.reason("a burst is on (%s so far): bursts this long lately lasted %s more on average, %s of it after workers launched now start; sizing for the %s msg/s after it, with its arrivals until it ends as a backlog",
			span(f.age), span(bp.remaining), span(bp.after), number(bp.startLam))
	}
}

// burstWarmReason says what the bursts need and whether it is kept warm.
func (c *call) burstWarmReason(extra int, pays bool, chance float64) {
	bp, b := &c.bp, &c.b.bursts
	f := &bp.f
	hold, relaunch := c.cost(b.HoldWorkerHours), c.cost(b.RelaunchWorkerHours)
	c.reason("bursts of ~%s messages over ~%s every ~%s lately (%d in the last hour, %s msg/s between): a fleet of %d serves %s within the promise",
		number(b.Messages), span(f.length), span(f.gap), f.n, number(f.base), bp.need, servedOf(f.needHours))
	switch {
	case extra == 0:
	case !pays:
		c.reason("keeping %d warm beyond the rate floors would cost %s an hour, relaunching for each burst %s: not kept warm", extra, hold, relaunch)
	case bp.warm > 0 && b.ForThePromise:
		c.reason("keeping %d warm costs more than relaunching them for each burst (%s against %s), but a relaunch comes too late for these bursts: relaunching would leave ~%s messages an hour past the promise, more than the %s it may miss; the next burst may come before a worker launched now starts (chance %s)",
			extra, hold, relaunch, number(b.LateIfRelaunchedPerHour), percent(1-c.s.LatencyQuantile), percent(chance))
	case bp.warm > 0:
		c.reason("keeping %d warm costs %s an hour less than relaunching them for each burst (%s against %s); the next burst may come before a worker launched now starts (chance %s)",
			extra, c.cost(b.RelaunchWorkerHours-b.HoldWorkerHours), hold, relaunch, percent(chance))
	default:
		c.reason("the %d warm workers go: %s without a burst, longer than a gap would last once in %s were the bursts going on",
			extra, span(f.quiet), number(1/(1-c.s.LatencyQuantile)))
	}
}

// servedOf formats which bursts the warm fleet's need serves: them (the
// last hour's), or all but the largest k − 1 of the last k hours' (see
// burstLearner.longNeed).
type servedOf int

// Format implements fmt.Formatter.
func (k servedOf) Format(f fmt.State, _ rune) {
	if k <= 1 {
		_, _ = f.Write([]byte("them"))
		return
	}
	_, _ = fmt.Fprintf(f, "all but the largest %d of the last %d hours'", int(k)-1, int(k))
}

// cost formats worker-hours an hour in dollars when a price is set.
func (c *call) cost(workerHours float64) costText {
	return costText{v: workerHours, price: c.s.WorkerCostPerHour}
}

// span formats a duration given in seconds, rounded to the second.
type span float64

// Format implements fmt.Formatter.
func (x span) Format(f fmt.State, _ rune) {
	d := time.Duration(math.Round(math.Min(math.Max(float64(x), 0), 1e9))) * time.Second
	_, _ = io.WriteString(f, d.String())
}

// costText is worker-hours an hour, formatted in dollars an hour when a
// price is set, else in worker-hours.
type costText struct{ v, price float64 }

// Format implements fmt.Formatter.
func (c costText) Format(f fmt.State, _ rune) {
	if c.price > 0 {
		_, _ = f.Write([]byte(capacity.FormatDollars(c.v * c.price)))
		return
	}
	_, _ = f.Write(strconv.AppendFloat(nil, math.Round(c.v*10)/10, 'f', -1, 64))
	_, _ = f.Write([]byte(" worker-hours"))
}

// keepWarm raises the target to the warm fleet (see warmPays), after the
// scale-in stabilisation, which does not hold it: warm workers go as soon
// as they do not pay.
func (c *call) keepWarm(target int) int {
	if c.bp.ending() && target < c.current {
		// The floors size for the arrivals after the burst, counting on the
		// workers already serving it: they stay until it ends. Those idle
		// with nothing waiting (a fleet launched for a backlog now served)
		// do not serve it.
		keep := c.current
		if c.backlogServed() {
			keep = min(c.current, max(target, c.servingBurst()))
		}
		if keep > target {
			c.reason("a burst is on: the %d workers serving it stay until it ends", keep)
			target = keep
		}
	}
	if w := c.bp.warm; w > target {
		if target < c.current || w > c.current {
			c.reason("keeping %d workers warm for the next burst", w)
		}
		target = w
	}
	return target
}

// servingBurst is the workers the burst on keeps busy: those serving its
// messages now, or what its arrival rate needs when that is more.
func (c *call) servingBurst() int {
	busy := capacity.CeilWorkers(float64(c.sample.InFlight) / float64(c.s.Concurrency))
	return max(busy, capacity.CeilWorkers(c.lambdaEff/c.muEff))
}

// launchPays decides whether a scale-out to target while a burst is on pays
// for itself, and returns target if so, else the fleet that stays without
// it: the workers there, the warm fleet and what the base rate needs, and,
// while a warm fleet is kept, what the burst on has needed so far (the warm
// fleet keeps that after it).
//
// A worker launched now serves only what still waits when it starts, a
// start delay D from now. The value of the launch is the messages it keeps
// within the promise (late, with and without it), at Forecast.LateCost
// worker times each; its cost is the extra workers from now until the queue
// is empty. A burst whose length is not known (longer than every recent one)
// is expected to last as long again as its latest run.
func (c *call) launchPays(target int) int {
	bp, s := &c.bp, c.s
	f := &bp.f
	if !bp.known || bp.timed || !f.on || !c.lambdaKnown || c.rise > 0 || bp.unseen {
		return target
	}
	alt := max(c.current, bp.warm, c.rateFloorAt(bp.startLam))
	if target <= alt {
		return target
	}
	if bp.warm > 0 {
		// The warm fleet serves the recent bursts' need, this one's once it
		// ends: workers up to what it has needed so far are kept after it
		// anyway, and launched now they start sooner. Only those beyond
		// them are a cost decision.
		alt = max(alt, min(target, capacity.CeilWorkers(effectiveArrival(c.st.bursts.cur.need, s.BurstReserve)/c.muEff)))
		if target <= alt {
			return target
		}
	}
	rem := bp.remaining
	if !(rem > 0) {
		rem = f.runAge
	}
	q := burstQueue{
		backlog: float64(c.visible), rate: c.lambda, base: f.base, rem: rem,
		d: s.StartDelay.Seconds(), latency: c.latency(), now: c.startNetDrain(s.StartDelay.Seconds()),
	}
	with := float64(target) * c.muEff
	lateWith, lateWithout := q.late(with), q.late(float64(alt)*c.muEff)
	value := (lateWithout - lateWith) * s.Forecast.LateCost / c.muEff
	cost := float64(target-alt) * q.clear(with)
	if value >= cost {
		return target
	}
	kept := math.Round(lateWithout - lateWith)
	if b := c.d.Bursts; b != nil {
		b.NotLaunchedWorkers, b.LaunchKeepsMessages = target-alt, kept
	}
	c.reason("a burst is on: launching %d more would keep ~%s more messages within the promise, worth %s worker-seconds at the late cost, for %s worker-seconds until they have served the queue: not launched",
		target-alt, number(kept), number(math.Round(value)), number(math.Round(cost)))
	return alt
}

// burstQueue is the fluid FIFO picture of a burst on: backlog messages
// waiting now, which arrived at rate (they are the newest), arrivals at
// rate for rem seconds more and at base after; the fleet serves now msg/s
// until d seconds from now. Times are seconds from now.
type burstQueue struct {
	backlog, rate, base, rem, d, latency, now float64
}

// burstHorizon bounds, seconds, how long late follows a fleet that does
// not keep pace with the base rate.
const burstHorizon = 900.0

// spread is how long the messages waiting took to arrive, seconds.
func (q *burstQueue) spread() float64 {
	if q.rate > 0 {
		return q.backlog / q.rate
	}
	return 0
}

// arrived is the messages, counted from the oldest waiting now, that have
// arrived by u.
func (q *burstQueue) arrived(u float64) float64 {
	if u < 0 {
		if spread := q.spread(); spread > 0 {
			return q.backlog * math.Max(u+spread, 0) / spread
		}
		return 0
	}
	return q.backlog + q.rate*math.Min(u, q.rem) + q.base*math.Max(u-q.rem, 0)
}

// served is the messages served from now by t when the fleet serves after
// msg/s from d on.
func (q *burstQueue) served(t, after float64) float64 {
	return q.now*math.Min(math.Max(t, 0), q.d) + after*math.Max(t-q.d, 0)
}

// late is how many of the messages waiting now or arriving from now on
// start past the promise when the fleet serves after msg/s from d on. The
// message that arrives at u is late when the messages up to it are more
// than those served by u + latency. Both counts are linear between the
// breakpoints (the backlog's start, now, the burst's end, and the promise
// before now and before d), so the late arrivals are found exactly, piece
// by piece.
func (q *burstQueue) late(after float64) (late float64) {
	gap := func(u float64) float64 { return q.arrived(u) - q.served(u+q.latency, after) }
	rem := math.Max(q.rem, 0)
	last := math.Max(rem, q.d-q.latency)
	end := last + burstHorizon
	if g := gap(last); after > q.base && g > 0 {
		// After last the gap shrinks at after − base msg/s.
		end = last + math.Min(g/(after-q.base), burstHorizon)
	}
	cuts := [...]float64{-q.spread(), -q.latency, 0, rem, q.d - q.latency, end}
	slices.Sort(cuts[:])
	for i := 1; i < len(cuts); i++ {
		a, b := cuts[i-1], cuts[i]
		if !(b > a) {
			continue
		}
		ga, gb := gap(a), gap(b)
		switch {
		case ga > 0 && gb > 0:
			late += q.arrived(b) - q.arrived(a)
		case ga > 0:
			late += q.arrived(a+(b-a)*ga/(ga-gb)) - q.arrived(a)
		case gb > 0:
			late += q.arrived(b) - q.arrived(b-(b-a)*gb/(gb-ga))
		}
	}
	return late
}

// clear is when, from d on, the fleet serving after msg/s from d has served
// every message that arrived (the queue is empty); d + burstHorizon when it
// does not within that.
func (q *burstQueue) clear(after float64) float64 {
	left := func(t float64) float64 { return q.arrived(t) - q.served(t, after) }
	t := q.d
	for _, until := range [...]float64{math.Max(q.rem, q.d), q.d + burstHorizon} {
		l0, l1 := left(t), left(until)
		if l0 <= 0 {
			return t
		}
		if l1 <= 0 {
			return t + (until-t)*l0/(l0-l1)
		}
		t = until
	}
	return q.d + burstHorizon
}
