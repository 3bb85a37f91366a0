// Package forecast learns a queue group's per-minute arrivals and forecasts
// the load it will face over the next start delay: recurring jobs, daily
// rhythms and recent bursts. It is pure: time is an argument.
package forecast

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Forecaster learns a group's per-minute arrivals and forecasts the highest
// arrival rate the fleet will face over the next start delay, so that the
// workers that load needs are launched before it arrives, and capacity that
// no forecast needs is released.
//
// History. Each closed minute keeps its measured arrival rate (the upper 16
// bits of a float32, rounded: 0.4 % precision, far finer than the 50 % that
// makes a minute hot; NaN where nothing is known), for up to the history
// Init is given (8 days: 11,520 minutes, 23 KB), in a ring indexed by the
// minute's number since the Unix epoch. Beside it, two bitsets mark the hot
// minutes (arrivals well above the baseline) and the onsets (the first hot
// minute of a run).
//
// Hot minutes. A minute is hot when its rate x stands above its baseline b,
// the median of up to baselineMinutes known, not hot minutes within the
// baselineReach before it, by both a share (x ≥ hotRatio × b) and Poisson
// counting noise (60·(x − b) ≥ max(hotSigmas·√(60·b), hotMessages)), so that
// noise, slow diurnal change and sparse traffic are never hot. Hot minutes
// are left out of later baselines, so a surge is measured against the level
// before it; one that lasts longer than the reach has no baseline left and
// ends, so a lasting step becomes the new level.
//
// Recurrence. Load that recurs is forecast from its onsets, each expected
// occurrence with the chance that it comes (see occurrenceChance), so that
// the caller can bet on it by expected cost:
//   - periodic jobs (every P minutes, 3 ≤ P ≤ 240, at fixed offsets): each
//     pair of recent onsets P apart expects the next occurrence T one or
//     two periods after the later one, its record the onsets within
//     ±jitter of T − kP over the last 8 periods. Two onsets are enough (a
//     job seen twice comes with chance 1/3 when no other onset could have
//     paired with the later one and the group has no record yet, see
//     firstChance); noise has no onsets, and a one-off surge one, so
//     neither forecasts anything.
//   - daily: an onset within ±dailyJitter of this time of day one or two
//     days ago expects one at T = that onset + a day, its record the days
//     history covers, up to a week (a surge seen once comes with chance
//     1/3 in a group with no record yet, less in one whose earlier surges
//     did not come again a day later, more in one whose did).
//
// A job that misses more than a quarter of its periods since it was first
// seen is no job. A pattern whose latest expected occurrence did not come
// stops being forecast unless its record outlives the miss (a job: 3 hits;
// a day: 2 hits and at least half the days): a job seen twice that stops is forecast once, a day seen once
// that does not recur once. A period is not taken for a multiple of a
// shorter one the same onsets follow. Weekly rhythms, which need more weeks
// than the minutes keep, come from five-minute buckets (see weekly.go): a
// daily occurrence is weighed by its weekday's record, and an onset a week
// ago expects one now.
//
// An occurrence is expected at the highest peak rate of its matched
// occurrences (an upper estimate; a rising series is extrapolated by its last
// step), from jitter before T to its longest run plus jitter after it, and
// not once it is overdue: no onset jitter plus a minute after T.
//
// Recent bursts. Load that comes and goes without a pattern is forecast as
// the 95th percentile, over the last memoryMinutes, of the highest minute
// rate in a span as long as the horizon (minutes not known count as 0):
// bursts that came often enough lately to be expected within the horizon
// more than one time in twenty keep their capacity; a one-off surge does not.
// Hot minutes a pattern explains are left out, so the pattern's timing, not
// this memory, sizes for them.
//
// The forecast is recomputed when a minute closes; a decision takes the
// highest rate of the occurrences overlapping [now, now + horizon] and of the
// recent bursts.
type Forecaster struct {
	rates     []uint16 // msg/s per minute, cut to 16 bits (see half); NaN unknown
	hot       []uint64 // bitset: minute hot
	onset     []uint64 // bitset: a hot run starts in this minute
	explained []uint64 // bitset: hot minute a pattern explains
	size      int64    // minutes the ring holds
	first     int64    // the oldest minute that may hold data
	last      int64    // the newest closed minute, when have
	have      bool

	cur    int64   // the minute being filled
	curSum float64 // messages credited to it
	curCov float64 // seconds of it covered by observations
	curOK  bool
	// exact is a measurement of the whole minute being filled, which
	// replaces the observations credited to it when it closes.
	exact   float64
	exactOK bool
	// baselined: some minute has had a baseline since the history began.
	baselined bool
	// released is the expected onset of the last occurrence whose end
	// released the workers sized for it.
	released int64

	// computed when a minute closes
	occ       [maxOccurrences]Occurrence
	nOcc      int
	memExcess float64 // the recent bursts' level above the baseline
	// base is the baseline after the newest closed minute (the level
	// today's arrivals are measured against), when baseOK; it changes only
	// with the minutes, so it is kept rather than found at every decision.
	base     float64
	baseOK   bool
	horizonM int64 // the horizon, in minutes, the memory was computed for

	onsets  [maxOnsets]int64 // the recent onsets, newest first
	nOnsets int

	// The group's own record of recurrence, recomputed when a minute
	// closes (see firstChance): of the onsets old enough to have recurred a
	// day later, how many did (day); of the pairs of recent onsets whose
	// period has since come round once more, how many had an onset then
	// (pair).
	dayTried, dayCame   int
	pairTried, pairCame int

	weeks coarse // five-minute buckets of the last weeks (weekly.go)
}

// Occurrence is one expected occurrence of a recurring pattern.
type Occurrence struct {
	at         int64 // expected onset, minute number
	jitter     int64 // minutes either side an onset is matched within
	spread     int64 // the farthest a matched onset was from its expected minute
	length     int64 // minutes
	rate       float64
	period     int64 // minutes
	hits, lags int
	// misses are the lags that had no onset, newer than the oldest hit;
	// newest: the newest lag had one.
	misses int
	newest bool
	// chance is how likely the occurrence comes (see Chance).
	chance float64
	// weekHits of the last weekLags weeks held it (daily: its weekday).
	weekHits, weekLags int
	kind               Kind
	seen               [4]int64 // the matched onsets, newest first (0 = none)
}

// Kind is the kind of pattern an occurrence follows.
type Kind uint8

// The kinds of pattern.
const (
	// KindEvery is a job every N minutes at a fixed offset.
	KindEvery Kind = iota + 1
	// KindDaily is load at the same time each day.
	KindDaily
	// KindWeekly is load at the same time each week.
	KindWeekly
)

// String names the kind: "every", "daily".
func (k Kind) String() string {
	switch k {
	case KindEvery:
		return "every"
	case KindDaily:
		return "daily"
	case KindWeekly:
		return "weekly"
	}
	return "unknown"
}

// MemoryChance is how likely a recent burst must be to come again within the
// horizon for its capacity to be kept (see Forecaster).
const MemoryChance = 0.05

// MaxObservation is the longest observation spread over the minutes it
// spans; a longer one is a gap.
const MaxObservation = 5 * time.Minute

// Tuning of the forecaster (see Forecaster).
const (
	baselineMinutes = 15
	baselineReach   = 60 // minutes
	minBaseline     = 5  // known minutes a baseline needs
	hotRatio        = 1.5
	hotSigmas       = 5
	hotMessages     = 5
	maxRun          = 120 // minutes a hot run is measured over

	minPeriod  = 3   // minutes
	maxPeriod  = 240 // minutes
	periodLags = 8
	periodHits = 3
	// minChance: an occurrence less likely than this is not forecast.
	minChance     = 0.2
	dailyJitter   = 5 // minutes
	minutesPerDay = 1440
	daysPerWeek   = 7

	memoryMinutes = 240
	memoryPrior   = 30 // minutes
	memoryChance  = MemoryChance
	maxBursts     = 64

	maxOccurrences = 16
	// maxRate: a rate above this many messages a second is garbage, not
	// kept (a float32 minute would hold it as +Inf).
	maxRate   = 1e12
	maxOnsets = 128
)

func minuteOf(t time.Time) int64 {
	s := t.Unix()
	if s < 0 {
		return (s - 59) / 60
	}
	return s / 60
}

func (f *Forecaster) idx(m int64) int64 {
	i := m % f.size
	if i < 0 {
		i += f.size
	}
	return i
}

// init sizes the ring for history, once; a different history resets it.
func (f *Forecaster) init(history time.Duration) {
	n := int64(history / time.Minute)
	if n < 2*minutesPerDay {
		n = max(n, maxPeriod*(periodLags+1)+60)
	}
	if f.size == n {
		return
	}
	*f = Forecaster{size: n}
	f.rates = make([]uint16, n)
	f.weeks.init()
	words := (n + 63) / 64
	bitsAll := make([]uint64, 3*words)
	f.hot, f.onset, f.explained = bitsAll[:words:words], bitsAll[words:2*words:2*words], bitsAll[2*words:]
	for i := range f.rates {
		f.rates[i] = halfNaN
	}
}

func getBit(b []uint64, i int64) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func setBit(b []uint64, i int64, v bool) {
	if v {
		b[i>>6] |= 1 << (uint(i) & 63)
	} else {
		b[i>>6] &^= 1 << (uint(i) & 63)
	}
}

// known reports whether minute m is inside the ring's span.
func (f *Forecaster) known(m int64) bool {
	return f.have && m <= f.last && m > f.last-f.size && m >= f.first
}

func (f *Forecaster) rate(m int64) float64 {
	if !f.known(m) {
		return math.NaN()
	}
	return whole(f.rates[f.idx(m)])
}

func (f *Forecaster) isHot(m int64) bool     { return f.known(m) && getBit(f.hot, f.idx(m)) }
func (f *Forecaster) isOnset(m int64) bool   { return f.known(m) && getBit(f.onset, f.idx(m)) }
func (f *Forecaster) isExplain(m int64) bool { return f.known(m) && getBit(f.explained, f.idx(m)) }

// add credits an observation of rate msg/s over [from, to) to the minutes it
// covers, closing the minutes it passes.
func (f *Forecaster) add(from, to time.Time, rate float64, horizon time.Duration) {
	if !(rate >= 0) || rate > maxRate || !to.After(from) {
		return
	}
	if to.Sub(from) > MaxObservation {
		f.advance(minuteOf(to), horizon)
		return
	}
	a, b := from.UnixNano(), to.UnixNano()
	for a < b {
		m := floorDiv(a, int64(time.Minute))
		end := min(b, (m+1)*int64(time.Minute))
		if f.curOK && m < f.cur {
			a = end // older than the minute being filled: too late
			continue
		}
		f.advance(m, horizon)
		secs := float64(end-a) / 1e9
		f.curSum += rate * secs
		f.curCov += secs
		a = end
	}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// advance makes m the minute being filled, closing the ones before it.
func (f *Forecaster) advance(m int64, horizon time.Duration) {
	switch {
	case !f.curOK && f.have && m > f.last && m-f.last <= f.size:
		// The first observation after a warm start: the minutes between
		// the history and it are unknown.
		for g := f.last + 1; g < m; g++ {
			f.close(g, math.NaN())
		}
		f.cur, f.curOK = m, true
		f.refresh(horizon)
		return
	case !f.curOK:
		f.cur, f.curOK = m, true
		return
	case m <= f.cur:
		return
	}
	v := math.NaN()
	switch {
	case f.exactOK:
		v = f.exact
	case f.curCov >= 20:
		v = f.curSum / f.curCov
	}
	f.exactOK = false
	if m-f.cur > f.size {
		// A jump past the whole history: nothing of it is left.
		f.reset()
		f.cur, f.curOK = m, true
		return
	}
	f.close(f.cur, v)
	for g := f.cur + 1; g < m; g++ {
		f.close(g, math.NaN())
	}
	f.cur, f.curSum, f.curCov = m, 0, 0
	f.refresh(horizon)
}

func (f *Forecaster) reset() {
	for i := range f.rates {
		f.rates[i] = halfNaN
	}
	clear(f.hot)
	clear(f.onset)
	clear(f.explained)
	f.have, f.curOK, f.curSum, f.curCov, f.nOcc, f.memExcess, f.baselined, f.baseOK = false, false, 0, 0, 0, 0, false, false
}

// close stores minute m's rate and marks it hot and onset.
func (f *Forecaster) close(m int64, v float64) {
	if f.have && m <= f.last {
		return
	}
	if !f.have {
		f.first = m
	}
	f.have, f.last = true, m
	i := f.idx(m)
	f.rates[i] = half(v)
	setBit(f.explained, i, false)
	f.mark(m)
	f.weeks.minute(m, v)
}

// set replaces the rate of a closed minute m with a better measurement of
// it, and marks it and the minute after it hot again.
func (f *Forecaster) set(m int64, v float64) {
	if !(v >= 0) || v > maxRate {
		return
	}
	if f.curOK && m == f.cur {
		f.exact, f.exactOK = v, true
		return
	}
	if !f.known(m) {
		return
	}
	f.rates[f.idx(m)] = half(v)
	for g := m; g <= min(m+1, f.last); g++ {
		f.mark(g)
	}
	f.base, f.baseOK = f.baseline(f.last + 1)
}

// mark sets minute m's hot and onset bits from its rate. The first minute
// with a baseline also marks the minutes before it, which had none, against
// that baseline: load that starts high (a burst at start) is a burst too.
func (f *Forecaster) mark(m int64) {
	b, ok := f.baseline(m)
	if ok && !f.baselined {
		f.baselined = true
		for g := max(f.first, m-baselineReach); g < m; g++ {
			if f.known(g) {
				f.markWith(g, b, true)
			}
		}
	}
	f.markWith(m, b, ok)
}

// markWith marks minute m against the baseline b, when ok.
func (f *Forecaster) markWith(m int64, b float64, ok bool) {
	i := f.idx(m)
	v := whole(f.rates[i])
	hot := !math.IsNaN(v) && ok && hotOver(v, b, f.isHot(m-1))
	setBit(f.hot, i, hot)
	setBit(f.onset, i, hot && !f.isHot(m-1))
	if m < f.last {
		n := f.idx(m + 1)
		setBit(f.onset, n, getBit(f.hot, n) && !hot)
	}
}

// recentMean is the mean arrival rate, msg/s, of the known minutes among
// the last n closed ones; false when fewer than half of them are known.
func (f *Forecaster) recentMean(n int64) (float64, bool) {
	if !f.have {
		return 0, false
	}
	sum, known := 0.0, int64(0)
	for g := f.last - n + 1; g <= f.last; g++ {
		if v := f.rate(g); !math.IsNaN(v) {
			sum += v
			known++
		}
	}
	if 2*known < n {
		return 0, false
	}
	return sum / float64(known), true
}

// stillHot reports whether arrivals of v msg/s now would carry on a hot run:
// whether they stand above the baseline by the share and noise a run goes on
// at (see mark).
func (f *Forecaster) stillHot(v float64) bool {
	if !f.baseOK || math.IsNaN(v) {
		return true
	}
	return hotOver(v, f.base, true)
}

// hotOver reports whether a rate v stands hot above the baseline b: by
// hotRatio and by hotSigmas of Poisson counting noise (at least
// hotMessages) over a minute; a run already going on (continuing) needs
// half that excess, so that noise within a surge does not cut it in pieces.
func hotOver(v, b float64, continuing bool) bool {
	ratio, excess := hotRatio, math.Max(hotSigmas*math.Sqrt(60*b), hotMessages)
	if continuing {
		ratio, excess = 1+(hotRatio-1)/2, excess/2
	}
	return v >= ratio*b && 60*(v-b) >= excess
}

// baseline is the median of the known, not hot minutes shortly before m.
func (f *Forecaster) baseline(m int64) (float64, bool) {
	var buf [baselineMinutes]float32
	n := 0
	for g := m - 1; g >= m-baselineReach && n < baselineMinutes; g-- {
		if !f.known(g) {
			if g < f.first {
				break
			}
			continue
		}
		i := f.idx(g)
		v := float32(whole(f.rates[i]))
		if v != v || getBit(f.hot, i) {
			continue
		}
		// insertion sort
		j := n
		for j > 0 && buf[j-1] > v {
			buf[j] = buf[j-1]
			j--
		}
		buf[j] = v
		n++
	}
	if n < minBaseline {
		return 0, false
	}
	if n%2 == 1 {
		return float64(buf[n/2]), true
	}
	return (float64(buf[n/2-1]) + float64(buf[n/2])) / 2, true
}

// run is the length and the peak rate of the hot run starting at onset o.
func (f *Forecaster) run(o int64) (length int64, peak float64) {
	for g := o; g < o+maxRun && f.isHot(g); g++ {
		length++
		if v := f.rate(g); v > peak {
			peak = v
		}
	}
	return length, peak
}

// onsetNear returns the onset within ±j of m closest to it.
func (f *Forecaster) onsetNear(m, j int64) (int64, bool) {
	for d := int64(0); d <= j; d++ {
		if f.isOnset(m - d) {
			return m - d, true
		}
		if d > 0 && f.isOnset(m+d) {
			return m + d, true
		}
	}
	return 0, false
}

// refresh recomputes the expected occurrences and the recent-bursts memory
// after a minute closed.
func (f *Forecaster) refresh(horizon time.Duration) {
	f.base, f.baseOK = f.baseline(f.last + 1)
	f.nOcc = 0
	hm := max(int64((horizon+time.Minute-1)/time.Minute), 1)
	f.horizonM = hm
	ahead := hm + 2 // how far ahead occurrences matter, in minutes
	f.recurrence()
	f.periodic(ahead)
	f.daily(ahead)
	f.weekly(ahead)
	f.memory(hm)
}

func periodJitter(p int64) int64 {
	if p > 60 {
		return 2
	}
	return 1
}

// recurrence collects the recent onsets and counts the group's record of
// recurrence (see firstChance).
func (f *Forecaster) recurrence() {
	n := 0
	f.eachOnsetDown(max(f.first, f.last-maxPeriod*(periodLags+1)), f.last, func(g int64) bool {
		f.onsets[n] = g
		n++
		return n < maxOnsets
	})
	f.nOnsets = n
	f.pairTried, f.pairCame = 0, 0
	f.eachPair(func(later, p int64) {
		t, j := later+p, periodJitter(p)
		if t+j > f.last {
			return
		}
		f.pairTried++
		if _, ok := f.onsetNear(t, j); ok {
			f.pairCame++
		}
	})
	f.dayTried, f.dayCame = 0, 0
	lo := max(f.first, f.last-daysPerWeek*minutesPerDay, f.last-f.size+1)
	f.eachOnsetDown(lo, f.last-minutesPerDay-dailyJitter, func(g int64) bool {
		f.dayTried++
		if _, ok := f.onsetNear(g+minutesPerDay, dailyJitter); ok {
			f.dayCame++
		}
		return true
	})
}

// eachOnsetDown calls fn with each onset in minutes [lo, hi] (within the
// ring), newest first, skipping the bitset's empty words, until fn returns
// false.
func (f *Forecaster) eachOnsetDown(lo, hi int64, fn func(g int64) bool) {
	for g := hi; g >= lo; g-- {
		i := f.idx(g)
		if f.onset[i>>6] == 0 && i&63 == 63 && g-63 >= lo {
			g -= 63 // skip an empty word
			continue
		}
		if getBit(f.onset, i) && !fn(g) {
			return
		}
	}
}

// eachPair calls fn with each pair of recent onsets (see recurrence) a
// period p apart, minPeriod ≤ p ≤ maxPeriod: the later onset and p.
func (f *Forecaster) eachPair(fn func(later, p int64)) {
	on := f.onsets[:f.nOnsets] // newest first
	for a := range on {
		for b := a + 1; b < len(on); b++ {
			p := on[a] - on[b]
			if p < minPeriod {
				continue
			}
			if p > maxPeriod {
				break
			}
			fn(on[a], p)
		}
	}
}

// firstChance is how likely a pattern's first recurrence is before any has
// been seen, from the group's own record: of tried recurrences (onsets old
// enough to have recurred a day later, or pairs of onsets whose period has
// come round once more), came did. It is the rule of succession over that
// record with one success and two failures assumed, so that a group with no
// record expects one in three: a group whose surges come once and never
// again bets less on the next one, a group whose earlier surges recurred
// bets more (see occurrenceChance).
func firstChance(tried, came int) float64 {
	return float64(came+1) / float64(tried+3)
}

// periodic finds the periodic jobs expected from one hour ago to ahead
// minutes from now (see forecaster).
func (f *Forecaster) periodic(ahead int64) {
	f.eachPair(func(later, p int64) {
		for step := int64(1); step <= 2; step++ {
			t := later + step*p
			if t < f.last-baselineReach {
				continue
			}
			// Checked even when far ahead: a pattern it bears out
			// explains its past occurrences to the memory.
			f.consider(t, p, periodJitter(p), KindEvery, t <= f.last+ahead)
		}
	})
}

// daily finds the daily occurrences expected soon.
func (f *Forecaster) daily(ahead int64) {
	j, period := int64(dailyJitter), int64(minutesPerDay)
	for back := int64(1); back <= 2; back++ {
		lo, hi := f.last-baselineReach-back*period, f.last+ahead-back*period
		for g := lo; g <= hi; g++ {
			if f.isOnset(g) {
				f.consider(g+back*period, period, j, KindDaily, true)
			}
		}
	}
}

// consider checks an occurrence expected at t for a pattern of period p and
// keeps it when its past occurrences bear it out.
func (f *Forecaster) consider(t, p, j int64, kind Kind, keep bool) {
	var o Occurrence
	o.at, o.period, o.jitter, o.kind = t, p, j, kind
	lags := periodLags
	if kind == KindDaily {
		lags = int(min(int64(daysPerWeek), (f.last-f.first)/p))
	}
	var peaks [daysPerWeek]float64
	np := 0
	var hit [periodLags]int64
	nh := 0
	recent := false
	deepest := t
	missed := 0 // misses since the last hit, older ones first
	for k := int64(1); k <= int64(lags); k++ {
		m := t - k*p
		if m-j < f.first {
			break
		}
		deepest = m - j
		if m+j > f.last {
			// Not yet observable (a period shorter than the jitter window
			// ahead): not a lag.
			continue
		}
		o.lags++
		g, ok := f.onsetNear(m, j)
		if !ok {
			missed++
			continue
		}
		if o.lags == 1 {
			o.newest = true
		}
		o.misses += missed
		missed = 0
		o.hits++
		if k <= 2 {
			recent = true
		}
		if int(k) <= len(o.seen) {
			o.seen[k-1] = g
		}
		if nh < len(hit) {
			hit[nh] = g
			nh++
		}
		o.spread = max(o.spread, abs64(g-m))
		length, peak := f.run(g)
		o.length = max(o.length, length)
		if np < len(peaks) {
			peaks[np] = peak
			np++
		}
	}
	// A pattern whose latest occurrence failed to come is kept only on a
	// record that survives the miss.
	switch {
	case kind == KindEvery && (o.hits < 2 || o.misses > max(1, o.lags/4) || !o.newest && o.hits < periodHits):
		return
	case kind == KindDaily && (o.hits < 1 || !recent || !o.newest && (o.hits < 2 || 2*o.hits < o.lags)):
		return
	}
	if kind == KindEvery && f.multiple(o, deepest) {
		return
	}
	q := math.Min(1, float64(2*j+1)/float64(p))
	rivals := 1
	if kind == KindEvery && o.hits == 2 {
		// Two onsets fit a period to each other: any onset before the
		// later one within the longest period would have fitted one too.
		latest := o.seen[0]
		if latest == 0 {
			latest = o.seen[1]
		}
		rivals = max(1, f.countOnsets(latest-maxPeriod, latest-1))
	}
	first := firstChance(f.dayTried, f.dayCame)
	if kind == KindEvery {
		first = firstChance(f.pairTried, f.pairCame)
	}
	o.chance = occurrenceChance(kind, o.hits, o.misses, binomialTail(f.countOnsets(deepest, f.last), o.hits, q), first) / float64(rivals)
	if o.chance < minChance {
		return
	}
	// peaks[0] is the latest occurrence.
	for i := 0; i < np; i++ {
		o.rate = math.Max(o.rate, peaks[i])
	}
	if np >= 3 && peaks[0] > peaks[1] && peaks[1] > peaks[2] {
		o.rate = math.Max(o.rate, peaks[0]+(peaks[0]-peaks[1]))
	}
	if !(o.rate > 0) || math.IsInf(o.rate, 0) {
		return
	}
	if kind == KindDaily {
		f.weekday(&o)
		if o.chance < minChance {
			return
		}
	}
	// The matched occurrences are explained: the pattern sizes for them,
	// not the recent-bursts memory.
	for _, g := range hit[:nh] {
		for h := g; h < g+maxRun && f.isHot(h); h++ {
			setBit(f.explained, f.idx(h), true)
		}
	}
	if keep {
		f.keep(o)
	}
}

// keep adds an expected occurrence to the forecast: one per expected time,
// the larger rate, described by the pattern with the better chance.
func (f *Forecaster) keep(o Occurrence) {
	for i := 0; i < f.nOcc; i++ {
		e := &f.occ[i]
		if abs64(e.at-o.at) <= max(e.jitter, o.jitter) {
			// The same occurrence: the higher rate, described by the
			// pattern with the better record (then the shorter period).
			rate := math.Max(e.rate, o.rate)
			if o.chance > e.chance || o.chance == e.chance && o.period < e.period {
				*e = o
			}
			e.rate = rate
			return
		}
	}
	if f.nOcc < maxOccurrences {
		f.occ[f.nOcc] = o
		f.nOcc++
	}
}

// occurrenceChance is how likely an occurrence of a pattern comes, from its
// record: hits of its expected times had an onset, misses (newer than the
// oldest hit) had none, and one in chance onsets scattered at random would
// land on them as often (the binomial tail). The record is counted by the
// rule of succession, its first hit weighed by first, the group's own
// record of first recurrences (see firstChance): a pattern is doubted until
// it has recurred a few times. A period is fitted to the onsets, so its
// first hit only fixes the phase and counts for nothing; a day is known
// beforehand.
//
//	chance = (1 − tail) × (n − 1 + 3 × first) ÷ (n + misses + 2),
//	n = hits − 1 (every) or hits (daily, weekly)
//
// With a first chance of one in three, the default: a job seen twice, with
// no other onset within the longest period before it, comes with chance
// 1/3; three times, 1/2; five times, 2/3; nine times, 4/5; a daily surge
// seen once, 1/3. Once a pattern has recurred, the group's record holds its
// own recurrences, which its hits already count: first is then at most one
// in three. Two onsets fit a period to each other, so a pair's chance is
// shared among the rival periods the onsets before the later one would give
// (see consider). Noise, whose onsets land on any lattice as often as
// chance has them, has a tail near 1 and no chance.
func occurrenceChance(kind Kind, hits, misses int, tail, first float64) float64 {
	n := hits
	if kind == KindEvery {
		n--
	}
	if n <= 0 || !(tail < 1) {
		return 0
	}
	if n > 1 {
		first = math.Min(first, 1.0/3)
	}
	return math.Max(0, 1-tail) * (float64(n-1) + 3*first) / float64(n+misses+2)
}

// multiple reports whether o's period is a multiple of a shorter one that
// the same onsets follow (a job every 20 minutes is also "every 80"): the
// shorter period, which misses sooner when the job stops, speaks for it.
func (f *Forecaster) multiple(o Occurrence, deepest int64) bool {
	latest := o.at - o.period
	for k := range o.seen {
		if o.seen[k] != 0 {
			latest = o.seen[k]
			break
		}
	}
	for m := int64(2); m <= 8; m++ {
		sub := o.period / m
		if o.period%m != 0 || sub < minPeriod {
			continue
		}
		n, hits := 0, 0
		for g := latest - sub; g >= deepest; g -= sub {
			n++
			if _, ok := f.onsetNear(g, o.jitter); ok {
				hits++
			}
		}
		if n >= periodHits && 4*hits >= 3*n {
			return true
		}
	}
	return false
}

// countOnsets counts the onsets in minutes [from, to].
func (f *Forecaster) countOnsets(from, to int64) int {
	n := 0
	for g := max(from, f.first, f.last-f.size+1); g <= to; g++ {
		i := f.idx(g)
		if i&63 == 0 && g+63 <= to && i+63 < f.size {
			n += bits.OnesCount64(f.onset[i>>6])
			g += 63
			continue
		}
		if getBit(f.onset, i) {
			n++
		}
	}
	return n
}

// binomialTail is P(X ≥ k) for X ~ Binomial(n, q): how likely n onsets
// scattered at random, each landing on a pattern's expected minutes with
// probability q, would land there k times or more.
func binomialTail(n, k int, q float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n || q <= 0 {
		return 0
	}
	if q >= 1 {
		return 1
	}
	// P(X = x) by the ratio of consecutive terms, from x = k.
	lq, lp := math.Log(q), math.Log1p(-q)
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	term := math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*lq + float64(n-k)*lp)
	sum := 0.0
	for x := k; x <= n && term > 0; x++ {
		sum += term
		term *= float64(n-x) / float64(x+1) * q / (1 - q)
	}
	return math.Min(sum, 1)
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// memory computes the recent-bursts rate (see forecaster): bursts are the
// onsets of hot runs no pattern explains within the last memoryMinutes, each
// with its excess, its run's peak over the baseline before it. Counting them
// as a Poisson process over the history seen (plus memoryPrior minutes
// without bursts, so that a short history does not make one burst look
// frequent), the level kept is the highest excess e for which bursts at
// least e above the baseline come within the horizon with probability
// memoryChance or more: 1 − exp(−(bursts ≥ e) ÷ span × horizon).
func (f *Forecaster) memory(hm int64) {
	f.memExcess = 0
	var ex [maxBursts]float64
	n := 0
	from := max(f.first, f.last-memoryMinutes+1)
	for g := f.last; g >= from && n < maxBursts; g-- {
		if !f.isOnset(g) || f.isExplain(g) {
			continue
		}
		b, ok := f.baseline(g)
		if !ok {
			// A burst before the first baseline: against today's.
			if b, ok = f.base, f.baseOK; !ok {
				continue
			}
		}
		_, peak := f.run(g)
		if e := peak - b; e > 0 {
			ex[n] = e
			n++
		}
	}
	if n == 0 {
		return
	}
	xs := ex[:n]
	slices.Sort(xs)
	span := float64(f.last-from+1) + memoryPrior
	for i := n - 1; i >= 0; i-- {
		count := float64(n - i) // bursts at least xs[i] above the baseline
		if 1-math.Exp(-count/span*float64(hm)) >= memoryChance {
			f.memExcess = xs[i]
			return
		}
	}
}

// Result is the forecast of one decision.
type Result struct {
	// Rate is the highest arrival rate expected over the span, msg/s, and
	// At when it is expected (now for recent bursts), when OK.
	Rate float64
	At   time.Time
	OK   bool
	// Occurrence is the recurring occurrence that rate comes from; nil for
	// recent bursts. Came: it has come, or is arriving (the current
	// arrivals are hot within its window), and is not over.
	Occurrence *Occurrence
	Came       bool
	// Ended is an expected occurrence that came and is over, within the
	// span, not yet released (see Release); Base is the baseline arrivals
	// now, msg/s.
	Ended *Occurrence
	Base  float64
}

// Forecast is the highest arrival rate expected over [now, now+horizon].
// current is the latest interval's measured arrivals, when currentOK: an
// occurrence that came is over once its minutes, or these, are no longer
// hot.
func (f *Forecaster) Forecast(now time.Time, horizon time.Duration, current float64, currentOK bool) Result {
	var r Result
	if !f.have {
		return r
	}
	if f.memExcess > 0 {
		if f.baseOK {
			r = Result{Rate: f.base + f.memExcess, At: now, OK: true}
		}
	}
	nowM := minuteOf(now)
	// An occurrence starts at the start of its onset minute at the earliest:
	// workers launched the start delay and an interval before it are in
	// time, so its minute of margin is not needed here.
	endM := minuteOf(now.Add(max(horizon-time.Minute, 0)))
	for i := 0; i < f.nOcc; i++ {
		o := &f.occ[i]
		start, end := o.at-o.spread, o.at+max(o.length, 1)+o.spread
		if end < nowM || start > endM || o.at == f.released {
			// Out of the span, or came and was released: its workers
			// are gone and stay gone, whatever its last minutes show.
			continue
		}
		g, came := f.onsetNear(o.at, o.jitter)
		switch {
		case came && g <= f.last && nowM >= g+max(o.length, 1)-1 && (!f.isHot(f.last) || currentOK && !f.stillHot(current)):
			// It came and is over: no sooner than a minute before the
			// longest of its matched runs would end (an interval's
			// arrivals read low while starting workers drain its
			// backlog), once its minutes or the current arrivals are no
			// longer hot.
			if f.baseOK {
				r.Ended, r.Base = o, f.base
			}
			continue
		case !came && nowM > o.at+o.jitter+1:
			continue // overdue
		}
		if o.rate > r.Rate {
			// It came when its onset minute closed, or arrives now: the
			// latest arrivals, within its window, stand hot above the
			// baseline and at least halfway to its rate (an interval's
			// count is noisier than a minute's).
			arriving := currentOK && f.baseOK && nowM >= start && nowM <= o.at+o.jitter &&
				hotOver(current, f.base, false) && current >= f.base+(o.rate-f.base)/2
			r = Result{Rate: o.rate, At: o.At(), Occurrence: o, Came: came && g <= f.last || arriving, OK: true}
		}
	}
	return r
}

// Release records that the workers sized for the ended occurrence o were
// released: a later Forecast no longer forecasts it, nor reports it as
// ended.
func (f *Forecaster) Release(o *Occurrence) {
	if o != nil {
		f.released = o.at
	}
}

// At is when the occurrence is expected to start.
func (o *Occurrence) At() time.Time { return time.Unix(o.at*60, 0).UTC() }

// Kind is the pattern the occurrence follows.
func (o *Occurrence) Kind() Kind { return o.kind }

// Confidence is the share of the pattern's recent occurrences that came as
// expected, 0..1.
func (o *Occurrence) Confidence() float64 { return float64(o.hits) / float64(max(o.lags, 1)) }

// Chance is how likely the occurrence comes, 0..1, from how many times and
// how regularly its pattern came and how many times it failed to (see
// occurrenceChance).
func (o *Occurrence) Chance() float64 { return o.chance }

// Hits and Lags are the pattern's record: of its last lags expected times,
// hits had an onset.
func (o *Occurrence) Hits() int { return o.hits }

// Lags is the count of the pattern's recent periods without an
// occurrence (see Hits).
func (o *Occurrence) Lags() int { return o.lags }

// Length is how long the occurrence is expected to last: its longest
// matched run.
func (o *Occurrence) Length() time.Duration { return time.Duration(max(o.length, 1)) * time.Minute }

// Period is the pattern's period.
func (o *Occurrence) Period() time.Duration { return time.Duration(o.period) * time.Minute }

// Overdue is how long after At an occurrence that has not come stops being
// expected, and Early how long before At it may come.
func (o *Occurrence) Overdue() time.Duration { return time.Duration(o.jitter+1) * time.Minute }

// Early is how long before At the occurrence may come (see Overdue).
func (o *Occurrence) Early() time.Duration { return time.Duration(o.spread) * time.Minute }

// Describe says where an occurrence's forecast comes from, for the reasons.
func (o *Occurrence) Describe(loc *time.Location) string {
	if o.kind == KindEvery {
		var b []byte
		b = fmt.Appendf(b, "every %s, seen at", time.Duration(o.period)*time.Minute)
		first := true
		for k := len(o.seen) - 1; k >= 0; k-- {
			if o.seen[k] == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = fmt.Appendf(b, " :%02d", time.Unix(o.seen[k]*60, 0).In(loc).Minute())
		}
		b = fmt.Appendf(b, ", %d of the last %d times", o.hits, o.lags)
		return string(b)
	}
	at := time.Unix(o.at*60, 0).In(loc)
	if o.kind == KindWeekly {
		return fmt.Sprintf("weekly at %s %s, %d of the last %d weeks", at.Weekday(), at.Format("15:04"), o.hits, o.lags)
	}
	if o.weekLags > 0 {
		return fmt.Sprintf("daily at %s, %d of the last %d days, %d of the last %d %ss", at.Format("15:04"),
			o.hits, o.lags, o.weekHits, o.weekLags, at.Weekday())
	}
	return fmt.Sprintf("daily at %s, %d of the last %d days", at.Format("15:04"), o.hits, o.lags)
}

// Pattern names an occurrence's pattern for the decision's JSON: "every
// 20m0s", "daily".
func (o *Occurrence) Pattern() string {
	if o.kind == KindEvery {
		return "every " + (time.Duration(o.period) * time.Minute).String()
	}
	return o.kind.String()
}

// Recurring reports whether the forecaster expects an occurrence of a
// recurring pattern (a job, a day, a week) as of the last closed minute:
// the group's load comes on a rhythm it times.
func (f *Forecaster) Recurring() bool { return f.nOcc > 0 }

// Init sizes the history for history, once; a different history resets
// it. Every other method needs it first.
func (f *Forecaster) Init(history time.Duration) { f.init(history) }

// Observe credits an observation of rate msg/s over [from, to) to the
// minutes it covers, closing the minutes it passes and recomputing the
// forecast for the horizon when one closes.
func (f *Forecaster) Observe(from, to time.Time, rate float64, horizon time.Duration) {
	f.add(from, to, rate, horizon)
}

// Correct replaces the rate of the minute starting at minute (closed, or
// being filled) with an exact measurement of it, msg/s.
func (f *Forecaster) Correct(minute time.Time, rate float64) { f.set(minuteOf(minute), rate) }

// Preload fills the minutes the forecaster does not know from h (a warm
// start), and recomputes the forecast. Minutes it measured are kept. It
// returns the minutes taken from h.
func (f *Forecaster) Preload(h model.MinuteHistory, horizon time.Duration) int {
	return f.preload(h, horizon)
}

// RecentMean is the mean arrival rate, msg/s, of the known minutes among
// the last n closed ones; false when fewer than half of them are known.
func (f *Forecaster) RecentMean(n int) (float64, bool) { return f.recentMean(int64(n)) }

// preload fills minutes the forecaster does not know from h (warm start),
// and recomputes the hot minutes and the forecast.
func (f *Forecaster) preload(h model.MinuteHistory, horizon time.Duration) int {
	if len(h.Counts) == 0 || h.Start.IsZero() {
		return 0
	}
	start := minuteOf(h.Start)
	end := start + int64(len(h.Counts)) - 1
	if f.have {
		// Only what is older than the live minutes, and within the ring.
		end = min(end, f.first-1)
	}
	if f.curOK {
		end = min(end, f.cur-1)
	}
	top := end
	if f.have {
		top = f.last
	}
	lo := max(start, top-f.size+1)
	if lo > end {
		return 0
	}
	// Rebuild from lo: stored values, then the preloaded ones under them.
	vals := make([]float32, top-lo+1)
	for g := lo; g <= top; g++ {
		v := float32(math.NaN())
		if f.known(g) {
			v = float32(whole(f.rates[f.idx(g)]))
		}
		if g <= end && g-start < int64(len(h.Counts)) {
			if c := h.Counts[g-start]; c >= 0 && c/60 <= maxRate {
				v = float32(c / 60)
			}
		}
		vals[g-lo] = v
	}
	cur, curSum, curCov, curOK := f.cur, f.curSum, f.curCov, f.curOK
	f.reset()
	loaded := 0
	for g := lo; g <= top; g++ {
		if !math.IsNaN(float64(vals[g-lo])) && g <= end {
			loaded++
		}
		f.close(g, float64(vals[g-lo]))
	}
	f.cur, f.curSum, f.curCov, f.curOK = cur, curSum, curCov, curOK
	f.refresh(horizon)
	return loaded
}

// bitsSet counts the set bits of a bitset, for tests and memory accounting.
func bitsSet(b []uint64) int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}
