package policy

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// size computes the floors and the recommendation, before any guard.
//
// backlog_per_worker (AWS's recipe): ceil(backlog ÷ (latency × per-worker
// throughput)), nothing else.
//
// model (default): the largest of
//   - the drain floor (docs/model.md, sections 3 and 6), c = ceil((λ_eff + Q_start/T) ÷ μ_eff), where
//     Q_start is the backlog left when workers added now start taking
//     messages, StartDelay later, after the in-service workers (and the
//     pending ones as they start) have worked on it while messages arrive
//     at λ_eff (at the sample of a jump held back as a dump, at the estimate
//     the jump would have given without the bound: a dump and the first
//     interval of a surge look alike, and workers added for a backlog go
//     once it is served); and two stricter forms
//     of it for the latency promise: the visible messages started within the
//     latency (c ≥ (λ_eff + V_start/latency) ÷ μ_eff), because a message
//     waiting behind V others starts after about V ÷ (c·μ) seconds; and, when
//     the oldest message is known to be older than the promise, the whole
//     backlog drained within the latency;
//   - the utilisation floor, ceil(λ_eff ÷ (μ_eff × u)): the steady
//     utilisation at or under the ceiling for the arrivals now;
//   - the Erlang C wait floor for λ_peak: the fewest workers, at Concurrency
//     slots each completing μ_eff/Concurrency msg/s, for which a share
//     LatencyQuantile (default 99 %) of messages starts within the latency. A
//     quantile, not the mean: the promise is made to every message, and a
//     pool whose mean wait is within the promise can still keep a third of
//     its messages waiting longer. λ_peak is λ_eff, or the forecast's rate
//     when it is higher (see forecaster): the highest arrivals expected
//     before workers launched now could start (the start delay, an interval
//     and a minute), from a recurring job or day, or from recent bursts, so
//     that those workers are running when the load comes and go once no
//     forecast needs them. Without a wait floor (no latency promise) the
//     utilisation floor sizes for λ_peak instead;
//
// plus SafetyWorkers. The drain floor and its latency and oldest-age forms
// are the backlog floors, sized for the messages waiting; the keep-pace part
// of the drain floor, ceil(λ_eff ÷ μ_eff), the utilisation and the wait
// floors are the rate floors, sized for the arrivals (guard holds the two
// differently against scale-in: see holdForBacklog). λ_eff is the arrival
// estimate (the smoothed one, or a surge measured over saturated intervals:
// see arrivals.Estimator) with the burst reserve added; μ_eff is the
// per-worker throughput with the overhead reserve taken off. Until the arrival rate is known (the first sample), λ = 0 in the
// drain floors and no start-delay draining is assumed; the utilisation and
// wait floors wait for an estimate.
func (c *call) size() {
	if !c.usable {
		return
	}
	s := c.s
	if c.muEff <= 0 {
		if c.mu > 0 {
			c.cannot = "the overhead reserve leaves no per-worker throughput"
		} else {
			c.cannot = "no per-worker throughput: set a service time or a throughput"
		}
		return
	}
	if tb := s.TargetBacklogPerWorker(); tb > 0 {
		c.b.bpw = capacity.BacklogPerWorkerWorkers(c.backlog, tb)
		c.d.Floors.BacklogPerWorker = &c.b.bpw
	}
	if s.Policy == PolicyBacklogPerWorker {
		if c.d.Floors.BacklogPerWorker == nil {
			c.cannot = "backlog_per_worker needs a latency"
			return
		}
		// One rule, held as a whole by the scale-in window, as AWS's
		// target tracking holds it: no backlog hold.
		c.rec, c.rateRec, c.recKnown = c.b.bpw, c.b.bpw, true
		c.reason("backlog_per_worker: %s messages at %s per worker need %d", number(c.backlog), number(s.TargetBacklogPerWorker()), c.rec)
		return
	}
	if s.Policy != PolicyModel {
		c.reason("unknown policy %q: using %s", s.Policy, PolicyModel)
	}
	c.sizeModel()
}

// sizeModel makes the model policy's recommendation in stages, each
// recording its reasons in turn: what the arrivals read (readArrivals), the
// rate the floors size for (floorRate), the backlog floors (backlogFloor),
// the rate floors (rateFloors), and last the safety workers. The rate
// floors alone are the recommendation the scale-in window holds (rateRec).
func (c *call) sizeModel() {
	s := c.s
	c.planBursts()
	projLam := c.readArrivals()
	lam := c.floorRate()
	rec := c.backlogFloor(lam, projLam)
	// The rate floors: keeping pace with arrivals, then utilisation and wait.
	rate := capacity.DrainFloor(lam, c.muEff, 0, 0)
	if c.lambdaKnown {
		n := c.rateFloors(lam)
		rec, rate = max(rec, n), max(rate, n)
	}
	if s.SafetyWorkers > 0 {
		rec += min(s.SafetyWorkers, maxRecommended)
		rate += min(s.SafetyWorkers, maxRecommended)
		c.reason("%d safety workers added", s.SafetyWorkers)
	}
	if c.lambdaKnown {
		c.warmPays(rate)
		c.st.bursts.serving = float64(rate) * c.muEff
	}
	c.rec, c.recKnown = min(rec, maxRecommended), true
	c.rateRec = min(rate, maxRecommended)
}

// readArrivals says what the arrivals read this interval (a jump held back
// as a dump, a surge, the rate, a climb) and returns the rate the backlog
// floors project the backlog with while new workers start: at a jump held
// back as a dump, the estimate the jump would have given without the bound.
func (c *call) readArrivals() (projLam float64) {
	s := c.s
	lam := c.lambdaEff
	projLam = lam
	if dumped, unbounded, ok := c.st.est.Dump(c.at); ok {
		projLam = math.Max(lam, capacity.EffectiveArrival(unbounded, s.BurstReserve))
		if math.Round(dumped) >= 1 {
			c.reason("%s messages arrived in the last interval beyond what the previous one and the estimate explain: sized as a backlog, not a rate, unless the next interval shows the same rate (until then the backlog floors count %s msg/s while new workers start)",
				number(math.Round(dumped)), number(projLam))
		}
	}
	if c.surging {
		smoothed, _ := c.st.est.Rate()
		c.reason("arrivals surging: %s msg/s measured over the last two intervals, with every slot busy (the smoothed estimate is %s)",
			number(c.lambda), number(smoothed))
	}
	switch {
	case c.lambdaKnown && (s.BurstReserve > 0 || s.OverheadReserve > 0):
		c.reason("arrivals %s msg/s, %s with the burst reserve; %s msg/s per worker, %s after the overhead reserve",
			number(c.lambda), number(lam), number(c.mu), number(c.muEff))
	case c.lambdaKnown:
		c.reason("arrivals %s msg/s; %s msg/s per worker", number(c.lambda), number(c.muEff))
	default:
		c.reason("arrival rate not known yet: sizing on the backlog alone at %s msg/s per worker", number(c.muEff))
	}
	if c.rise > 0 {
		c.reason("arrivals climbing %s msg/s a minute: sized for %s msg/s, what they reach when workers launched now are in service (the %s average's lag and the %s start delay)",
			number(c.slope*60), number(c.lambda+c.rise), c.st.texts.of(s.ArrivalSmoothing, slotWindow), c.st.texts.of(s.StartDelay, slotStartDelay))
	}
	return projLam
}

// floorRate is the rate the floors size for: the arrivals, or the rate
// after a burst expected to end (warm.go); the bursts the forecast's
// memory would keep workers for are left to the warm capacity, and the
// noise check is made on it.
func (c *call) floorRate() float64 {
	lam := c.lambdaEff
	if c.bp.ending() {
		// A burst that ends before new workers start, or soon after: they
		// serve what it leaves and the arrivals after it (warm.go).
		lam = c.bp.startLam
		if c.peakEff <= c.lambdaEff {
			c.peakEff = lam
		}
	}
	if c.bp.known && c.d.Forecast != nil && (c.fc.Occurrence == nil || c.bp.byChance) {
		// The bursts the forecast's memory would keep workers for, or an
		// occurrence no likelier than any of them, are the learned bursts
		// the warm capacity serves (warm.go).
		c.peakEff, c.d.Forecast = lam, nil
	}
	if c.lambdaKnown {
		c.noiseCheck(lam)
	}
	return lam
}

// backlogFloor is the drain floor, or the latency floor when that is
// higher: the backlog new workers meet when they start (projected with
// projLam over the start delay, a burst expected to go on after they start
// joining it), served at lam besides, within the drain time, and its
// visible messages within the promise; within the promise at once when
// the oldest message is past it.
func (c *call) backlogFloor(lam, projLam float64) int {
	s := c.s
	latency := c.latency()
	qStart, vStart := c.backlog, c.visible
	if d := s.StartDelay.Seconds(); c.lambdaKnown && d > 0 {
		net := c.startNetDrain(d) - c.bp.projected(projLam, d)
		qStart = capacity.BacklogAtStart(c.backlog, net, d)
		vStart = capacity.BacklogAtStart(c.visible, net, d)
	}

	drain := capacity.DrainFloor(lam, c.muEff, qStart, s.DrainTime.Seconds())
	c.reason("drain floor %d: %s messages when new workers start, cleared within %s", drain, number(qStart), c.st.texts.of(s.DrainTime, slotWindow))
	if latency > 0 {
		if n := capacity.DrainFloor(lam, c.muEff, vStart, latency); n > drain {
			drain = n
			c.reason("latency floor %d: %s visible messages started within the %s promise", n, number(vStart), c.st.texts.of(s.Latency, slotLatency))
		}
		if a := c.bp.after; a > 0 {
			// The burst's arrivals above the base rate until it ends, a
			// seconds after new workers start, join the backlog they meet:
			// the last of them must start within the promise too.
			v := vStart + math.Max(c.lambdaEff-lam, 0)*a
			if n := capacity.DrainFloor(lam, c.muEff, v, latency+a); n > drain {
				drain = n
				c.reason("latency floor %d: a burst is on and expected to last %s after new workers start; %s messages by then, the last started within the %s promise",
					n, span(a), number(v), c.st.texts.of(s.Latency, slotLatency))
			}
		}
		if c.ageOK && c.age > latency {
			n := capacity.DrainFloor(lam, c.muEff, qStart, latency)
			c.reason("the oldest message is %s old, past the %s promise: %d workers drain the backlog within it",
				time.Duration(math.Min(c.age, 1e9)*float64(time.Second)).Round(time.Second), s.Latency, n)
			drain = max(drain, n)
		}
	}
	c.b.drain = drain
	c.d.Floors.Drain = &c.b.drain
	return drain
}

// rateFloors is the higher of the utilisation floor and the Erlang C wait
// floor (when the group has a promise) for lam, or for the peak a forecast
// sizes for, pre-starting only the share of a recurring occurrence's
// workers that pays (bet.go); each floor is recorded on the decision.
func (c *call) rateFloors(lam float64) int {
	s := c.s
	latency := c.latency()
	peak := c.peakEff
	wait, waitOK := 0, false
	if latency > 0 {
		wait, waitOK = c.waitFloor(peak, latency)
	}
	// The wait floor holds the promise for the peak; without one, the
	// utilisation floor sizes for the peak itself.
	utilFor := lam
	if peak > lam && !waitOK {
		utilFor = peak
	}
	c.b.util = capacity.UtilizationFloor(utilFor, c.muEff, c.ceiling())
	if peak > lam {
		if o := c.fc.Occurrence; o != nil && !c.fc.Came {
			// A recurring occurrence not yet come: pre-start the share of
			// its workers that pays (see bet).
			full, base := c.b.util, capacity.UtilizationFloor(lam, c.muEff, c.ceiling())
			if waitOK {
				full = wait
				if w, ok := c.waitFloor(lam, latency); ok {
					base = max(base, w)
				}
			}
			b := c.occurrenceBet(o, peak, base, full-base)
			n := base + b.workers()
			if n < full {
				if waitOK {
					wait = n
				} else {
					c.b.util = n
				}
			}
			c.betReason(o, b, min(n, full), full, peak, waitOK)
		} else {
			c.forecastReason(peak, waitOK)
		}
	}
	c.d.Floors.Utilization = &c.b.util
	c.b.ceiling = c.ceiling()
	c.d.Floors.UtilizationCeiling = &c.b.ceiling
	c.utilReason()
	n := c.b.util
	if waitOK {
		c.b.wait = wait
		c.d.Floors.Wait = &c.b.wait
		n = max(n, wait)
		c.reason("wait floor %d: %s of messages start within %s (Erlang C)", wait, percent(s.LatencyQuantile), c.st.texts.of(s.Latency, slotLatency))
	}
	return n
}

// sizedFor records on the decision's forecast the floor that sizes for it
// and the rate it sizes for.
func (c *call) sizedFor(peak float64, wait bool) {
	c.b.fc.Floor, c.b.fc.SizedFor = model.FloorUtilization, peak
	if wait {
		c.b.fc.Floor = model.FloorWait
	}
}

// forecastReason says what the forecast the fleet is sized for comes from.
func (c *call) forecastReason(peak float64, wait bool) {
	c.sizedFor(peak, wait)
	floor := "the utilisation floor"
	if wait {
		floor = "the wait floor"
	}
	r := c.fc
	if r.Occurrence == nil {
		c.reason("%s sizes for %s msg/s: bursts that high came often enough lately to be expected within the next %s",
			floor, number(peak), c.horizon.Round(time.Second))
		return
	}
	verb := "pre-starting for the load expected at"
	if !r.At.After(c.now) {
		verb = "keeping workers for the load due since" // a time past is not expected
	}
	c.reason("%s %s (%s): %s sizes for %s msg/s",
		verb, r.At.Format("15:04:05"), r.Occurrence.Describe(time.UTC), floor, number(peak))
}

// betReason says what the bet on an occurrence pre-starts.
// The decision's forecast carries the bet as typed fields; the reason is
// rendered from them.
func (c *call) betReason(o *forecast.Occurrence, b bet, n, full int, peak float64, wait bool) {
	c.sizedFor(peak, wait)
	c.b.bet = model.Bet{Workers: n, Need: full, Chance: o.Chance(), LateIfMissed: math.Round(b.late(b.base))}
	c.b.fc.Bet = &c.b.bet
	f := &c.b.fc
	floor := "the utilisation floor"
	if wait {
		floor = "the wait floor"
	}
	when := " expected at "
	if !f.At.After(c.now) {
		when = " due since " // a time past is not expected
	}
	// Appended piece by piece: through fmt, its nine values would each be
	// boxed, most of the allocations of a decision that bets.
	if c.n == maxReasons {
		return
	}
	t := append(c.st.scratch, "seen "...)
	t = strconv.AppendInt(t, int64(f.Seen), 10)
	t = append(t, " of "...)
	t = strconv.AppendInt(t, int64(f.Of), 10)
	t = append(t, " times, "...)
	t = append(t, f.Pattern...)
	t = append(t, ", chance "...)
	t = appendPercent(t, f.Bet.Chance)
	t = append(t, ": pre-starting "...)
	t = strconv.AppendInt(t, int64(f.Bet.Workers), 10)
	t = append(t, " of "...)
	t = strconv.AppendInt(t, int64(f.Bet.Need), 10)
	t = append(t, " workers for the load"...)
	t = append(t, when...)
	t = f.At.AppendFormat(t, "15:04:05")
	t = append(t, " ("...)
	t = appendNumber(t, f.SizedFor)
	t = append(t, " msg/s; missed, about "...)
	t = appendNumber(t, f.Bet.LateIfMissed)
	t = append(t, " messages past the promise): "...)
	c.keepReason(append(t, floor...))
}

// waiting is the backlog less the messages in flight on the workers in
// service (at most their slots), when the backlog counts them (it is the
// visible messages plus those in flight, and the delayed ones or not):
// those are being served, not waiting for a worker.
func (c *call) waiting() float64 {
	smp := c.sample
	if more := smp.Backlog - smp.Visible; smp.InFlight <= 0 || more != smp.InFlight && more != smp.InFlight+smp.Delayed {
		return c.backlog
	}
	return math.Max(c.backlog-math.Min(float64(smp.InFlight), float64(c.inService)*float64(c.s.Concurrency)), c.visible)
}

// backlogNeed is the most the backlog floors (drain, latency, oldest age)
// ask for on the counts as they are, with no start delay to wait out: the
// workers that, all in service now, would serve the backlog as those floors
// promise. Messages in flight on the workers in service (at most their
// slots) are being served, not waiting to be: counted in the drain time's
// backlog, a fleet at the arrivals' pace (a utilisation ceiling of 1)
// would need a few workers more than the rate floors for ever, and a
// backlog's workers would never be released.
func (c *call) backlogNeed() int {
	s, lam := c.s, c.lambdaEff
	n := capacity.DrainFloor(lam, c.muEff, c.waiting(), s.DrainTime.Seconds())
	if latency := c.latency(); latency > 0 {
		n = max(n, capacity.DrainFloor(lam, c.muEff, c.visible, latency))
		if c.ageOK && c.age > latency {
			n = max(n, capacity.DrainFloor(lam, c.muEff, c.backlog, latency))
		}
	}
	return n
}

// waitFloor is the Erlang C floor in workers, or false when it is not
// computed (too large a load, or no answer).
func (c *call) waitFloor(lam, latency float64) (int, bool) {
	if lam/c.perServer > maxWaitServers {
		c.reason("wait floor not computed: over %d busy slots, the utilisation floor governs", maxWaitServers)
		return 0, false
	}
	w, ok := capacity.WaitFloorWorkers(lam, c.perServer, latency, c.s.LatencyQuantile, c.s.WaitSpread, c.s.Concurrency, maxWaitServers)
	if !ok {
		c.reason("wait floor has no answer for these inputs")
	}
	return w, ok
}

// startNetDrain is the mean service rate, over the next d seconds, of the
// workers already there: the in-service ones throughout, and each pending one
// from when it starts (its launch time plus d; one of unknown launch time is
// counted from d, the latest it could start).
func (c *call) startNetDrain(d float64) float64 {
	work := float64(c.inService) * d
	since := c.fleet.PendingSince
	if c.fleet.Known {
		for i := 0; i < min(c.fleet.Pending, len(since)); i++ {
			if since[i].IsZero() {
				continue
			}
			ran := c.now.Sub(since[i]).Seconds()
			work += math.Min(d, math.Max(0, ran))
		}
	}
	return work / d * c.muEff
}

// number formats a count or a rate compactly: whole numbers as such, others
// with three significant digits. It formats itself, so a reason costs no
// intermediate string.
type number float64

// Format implements fmt.Formatter for every verb.
func (x number) Format(f fmt.State, _ rune) {
	buf := fmtBufs.Get().(*[32]byte)
	defer fmtBufs.Put(buf)
	_, _ = f.Write(appendNumber(buf[:0], float64(x)))
}

// appendNumber appends v to b as number formats it.
func appendNumber(b []byte, v float64) []byte {
	switch {
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.AppendInt(b, int64(v), 10)
	case math.Abs(v) >= 999.5 && math.Abs(v) < 1e15: // three figures of 999.7 are 1000, not 1e+03
		return strconv.AppendFloat(b, v, 'f', 0, 64)
	default:
		return strconv.AppendFloat(b, v, 'g', 3, 64)
	}
}

// durationTexts keeps the text of the durations the reasons name on every
// decision (the drain time, the latency), made once per value: a
// time.Duration formats into a new string each time. A reason that names
// two durations takes them from two slots: the text is read when the reason
// is formatted, after both are made.
type durationTexts struct {
	d [durationSlots]time.Duration
	t [durationSlots]text
}

// The slots of durationTexts.
const (
	slotWindow = iota // the drain time, the smoothing and its noise windows
	slotLatency
	slotStartDelay
	durationSlots
)

// of is the text of d in slot i, as a pointer, which formats without an
// allocation. It is rounded as people read it: to the second from 10 s,
// to a tenth of a second from 1 s, else to the millisecond (a measured
// start delay of 47.498897552 s reads 47s).
func (dt *durationTexts) of(d time.Duration, i int) *text {
	if dt.d[i] != d || dt.t[i] == "" {
		r := d.Round(time.Millisecond)
		switch {
		case d >= 10*time.Second:
			r = d.Round(time.Second)
		case d >= time.Second:
			r = d.Round(100 * time.Millisecond)
		}
		dt.d[i], dt.t[i] = d, text(r.String())
	}
	return &dt.t[i]
}

// text is a string that formats from a pointer, so that passing it to a
// reason boxes no copy.
type text string

// Format implements fmt.Formatter.
func (t *text) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, string(*t)) }

// fmtBufs holds the digit buffers of number and percent: a buffer on the
// stack escapes through fmt.State.Write, one allocation a number.
var fmtBufs = sync.Pool{New: func() any { return new([32]byte) }}

// percent formats a ratio as a percentage, to a tenth of a percent.
type percent float64

// Format implements fmt.Formatter for every verb.
func (r percent) Format(f fmt.State, _ rune) {
	buf := fmtBufs.Get().(*[32]byte)
	defer fmtBufs.Put(buf)
	_, _ = f.Write(appendPercent(buf[:0], float64(r)))
}

// appendPercent appends the ratio r to b as percent formats it.
func appendPercent(b []byte, r float64) []byte {
	b = strconv.AppendFloat(b, math.Round(r*1000)/10, 'g', -1, 64)
	return append(b, " %"...)
}

// rateFloorAt is the rate floors' count (keeping pace, utilisation, wait,
// safety workers) for arrivals lam: the fleet today's load needs without
// a backlog (currentNeed) or that the bursts' base rate keeps (warmPays).
func (c *call) rateFloorAt(lam float64) int {
	s := c.s
	return capacity.SteadyFleet(capacity.Steady{
		Rate: lam, PerWorker: c.muEff, PerServer: c.perServer, Concurrency: s.Concurrency,
		Utilization: c.ceiling(), Latency: c.latency(), Quantile: s.LatencyQuantile, Spread: s.WaitSpread,
		Safety: min(max(s.SafetyWorkers, 0), maxRecommended), MaxBusy: maxWaitServers,
	}).Workers
}
