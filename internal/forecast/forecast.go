// Package forecast learns a queue group's per-minute arrivals and forecasts
// the load it will face over the next start delay: recurring jobs, daily
// rhythms and recent bursts. It is pure: time is an argument.
package forecast

import (
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
//     ±jitter of T − kP over the last 16 periods (as many as the history
//     holds). Two onsets are enough (a job seen twice comes with chance
//     1/3 when no other onset could have paired with the later one and
//     the group has no record yet, see firstChance); noise has no onsets,
//     and a one-off surge one, so neither forecasts anything.
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
	// The recent bursts' excesses, sorted, and the span and horizon they
	// were counted over, minutes: the level for another chance than
	// memoryChance (see memLevel).
	memEx               [maxBursts]float64
	memN                int
	memSpan, memHorizon float64
	// memChance, when above 0, is the chance the recent bursts must have of
	// coming within the horizon for Forecast to keep their level, in place
	// of MemoryChance (see SpendOn).
	memChance float64
	// base is the baseline after the newest closed minute (the level
	// today's arrivals are measured against), when baseOK; it changes only
	// with the minutes, so it is kept rather than found at every decision.
	base     float64
	baseOK   bool
	horizonM int64 // the horizon, in minutes, the memory was computed for

	onsets  [maxOnsets]int64 // the recent onsets, newest first
	nOnsets int
	// rhythm is, for each recent onset, the recurring pattern (every
	// period, daily) with the best chance among those that explain it
	// (see Rhythm).
	rhythm [maxOnsets]rhythm

	// The group's own record of recurrence, recomputed when a minute
	// closes (see firstChance): of the onsets old enough to have recurred a
	// day later, how many did (day); of the pairs of recent onsets whose
	// period has since come round once more, how many had an onset then
	// (pair).
	dayTried, dayCame   int
	pairTried, pairCame int
	// periods is how many lattices (a period and a phase) the pairs of
	// recent onsets put to the test, those a jitter apart counted as one
	// (see lookElsewhere).
	periods float64

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

	minPeriod = 3   // minutes
	maxPeriod = 240 // minutes
	// periodLags is how many periods back a job's record reaches: the
	// pair a period is fitted to proves nothing (see fittedTail), so a
	// job among random surges several an hour is told from them only by
	// the periods after it (TestRandomSurgesHaveFewRhythms: a job every
	// 30 minutes among six surges an hour is not found with 8).
	periodLags = 16
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

// SpendOn sets the chance within the horizon below which Forecast leaves
// the recent bursts to the promise's allowance instead of keeping workers
// for them: MemoryChance when chance is 0 or less, never below it.
func (f *Forecaster) SpendOn(chance float64) {
	f.memChance = 0
	if chance > MemoryChance {
		f.memChance = min(chance, 1)
	}
}

// Spends reports whether the chance SpendOn set lowers the recent bursts'
// level below the one MemoryChance keeps.
func (f *Forecaster) Spends() bool {
	return f.recentLevel() < f.memExcess
}

// recentLevel is the recent bursts' level above the baseline that Forecast
// keeps: the one MemoryChance keeps, or the one for the chance SpendOn set
// (no higher, as that chance is higher).
func (f *Forecaster) recentLevel() float64 {
	if f.memChance > 0 && f.memExcess > 0 {
		return f.memLevel(f.memChance)
	}
	return f.memExcess
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
	if e := f.recentLevel(); e > 0 && f.baseOK {
		r = Result{Rate: f.base + e, At: now, OK: true}
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

// Rhythm is the recurring pattern (every period, daily) with the best
// chance among those the forecast found, as of the last minute closed, that
// explain an onset within a minute of at; its Chance is 0 when none does.
func (f *Forecaster) Rhythm(at time.Time) Rhythm {
	m := minuteOf(at)
	var r rhythm
	for i := range f.nOnsets {
		if g := f.onsets[i]; abs64(g-m) <= 1 && f.rhythm[i].chance > r.chance {
			r = f.rhythm[i]
		}
	}
	return Rhythm{Chance: r.chance, Window: time.Duration(r.window) * time.Minute, Period: time.Duration(r.period) * time.Minute, Phase: time.Duration(r.phase) * time.Minute, Hits: r.hits}
}

// Rhythm is a recurring pattern that explains an onset: the chance its
// next occurrence comes, the window it expects its occurrences in, its
// period and phase (the minutes past a multiple of the period, counted from
// the Unix epoch, its occurrences are expected at), which tell one pattern
// from another, and how many of its occurrences the history matched.
type Rhythm struct {
	Chance                float64
	Window, Period, Phase time.Duration
	Hits                  int
}

// rhythm is a Rhythm in minutes.
type rhythm struct {
	chance                float64
	window, period, phase int64
	hits                  int
}

// Release records that the workers sized for the ended occurrence o were
// released: a later Forecast no longer forecasts it, nor reports it as
// ended.
func (f *Forecaster) Release(o *Occurrence) {
	if o != nil {
		f.released = o.at
	}
}

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
