package forecast

import (
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Weekly rhythms. Eight days of minutes cannot tell a weekly surge from a
// one-off, nor a weekday's batch from a daily one, so the forecaster also
// keeps the mean arrival rate of every five minutes over the last five
// weeks (coarseWeeks), 10,080 buckets in 20 KB (each a float32 cut to its
// upper 16 bits: 3 significant digits), filled as minutes close and
// from CloudWatch's 5-minute history at a warm start (PreloadCoarse). They
// outlive a reload of the minutes: a warm start only fills the buckets it
// does not know.
//
// The buckets hold an occurrence's surge at an expected time when the
// highest of them from one before that time to one after its first ten
// minutes stands above the median of the hour of buckets before it by half
// the excess the occurrence would give a bucket (its rate above that
// median, over at most the five minutes of a bucket its length fills), and
// hot (see hotOver): noise that a bucket's mean smooths, or the slow change
// of a day, is no surge. So:
//   - a daily occurrence's chance is weighed by the same weekday's record:
//     with hw of the last weeks the coarse history covers holding it and
//     mw not, chance' = (hw + chance) ÷ (hw + mw + 1), so a weekday batch is
//     not forecast on Saturdays once two Saturdays went without it, and
//     keeps its chance on weekdays;
//   - an onset a week ago, within the minutes, expects one now (KindWeekly),
//     its record the weeks before it in the buckets: a Monday-morning surge
//     seen once comes with chance 1/3, twice 1/2, and one that stopped
//     fades as a daily one does.
const (
	coarseMinutes  = 5
	coarseWeeks    = 5
	minutesPerWeek = 7 * minutesPerDay
	coarseBuckets  = coarseWeeks * minutesPerWeek / coarseMinutes
	coarseBase     = 12 // buckets the baseline of a surge is the median of
	weeklyJitter   = dailyJitter
)

// CoarsePeriod is the resolution of the weekly history PreloadCoarse takes.
const CoarsePeriod = coarseMinutes * time.Minute

// CoarseSpan is how far back the weekly history reaches.
const CoarseSpan = coarseWeeks * 7 * 24 * time.Hour

// coarse is the five-minute history (see Weekly rhythms above).
type coarse struct {
	means []uint16 // msg/s per bucket, the upper half of a float32; NaN unknown
	last  int64    // the newest bucket written, when have
	first int64    // the oldest bucket that may hold data
	have  bool
	// the bucket being filled from closing minutes
	cur      int64
	sum      float64
	n        int
	curKnown bool
}

func (c *coarse) init() {
	if c.means != nil {
		return
	}
	c.means = make([]uint16, coarseBuckets)
	for i := range c.means {
		c.means[i] = halfNaN
	}
}

func (c *coarse) idx(b int64) int64 {
	i := b % coarseBuckets
	if i < 0 {
		i += coarseBuckets
	}
	return i
}

func (c *coarse) known(b int64) bool {
	return c.have && b <= c.last && b > c.last-coarseBuckets && b >= c.first
}

// mean is bucket b's mean rate, NaN when unknown.
func (c *coarse) mean(b int64) float64 {
	if !c.known(b) {
		return math.NaN()
	}
	return whole(c.means[c.idx(b)])
}

// extend makes b the newest bucket, clearing those skipped.
func (c *coarse) extend(b int64) {
	if c.have && b <= c.last {
		return
	}
	if !c.have {
		c.have, c.first, c.last = true, b, b
		c.means[c.idx(b)] = halfNaN
		return
	}
	from := max(c.last+1, b-coarseBuckets+1)
	for g := from; g <= b; g++ {
		c.means[c.idx(g)] = halfNaN
	}
	c.last = b
}

// minute adds a closed minute's rate (NaN unknown) to its bucket.
func (c *coarse) minute(m int64, v float64) {
	b := floorDiv(m, coarseMinutes)
	if !c.curKnown || b != c.cur {
		if c.have && b < c.last {
			return // older than the buckets: a warm start's, kept
		}
		c.cur, c.sum, c.n, c.curKnown = b, 0, 0, true
		c.extend(b)
	}
	if math.IsNaN(v) {
		return
	}
	c.sum += v
	c.n++
	c.means[c.idx(b)] = half(c.sum / float64(c.n))
}

// surge reports whether the buckets around minute t hold the surge of an
// occurrence at rate msg/s lasting length minutes, and whether they are
// known at all (see Weekly rhythms above).
func (c *coarse) surge(t, length int64, rate float64) (hit, known bool) {
	lo := floorDiv(t, coarseMinutes) - 1
	hi := floorDiv(t+min(max(length, 1), 10), coarseMinutes) + 1
	peak, any := math.Inf(-1), false
	for b := lo; b <= hi; b++ {
		if v := c.mean(b); !math.IsNaN(v) {
			peak, any = math.Max(peak, v), true
		}
	}
	if !any {
		return false, false
	}
	var buf [coarseBase]float64
	n := 0
	for b := lo - 1; b >= lo-coarseBase && n < coarseBase; b-- {
		if v := c.mean(b); !math.IsNaN(v) {
			buf[n] = v
			n++
		}
	}
	if n < coarseBase/2 {
		return false, false
	}
	base := median(buf[:n])
	excess := (rate - base) * float64(min(max(length, 1), coarseMinutes)) / coarseMinutes
	return excess > 0 && peak >= base+excess/2 && hotOver(peak, base, false), true
}

func median(xs []float64) float64 {
	// insertion sort: a dozen values
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j-1] > xs[j]; j-- {
			xs[j-1], xs[j] = xs[j], xs[j-1]
		}
	}
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// weeklyRecord counts, over the weeks before the one-week lag the minutes
// hold (from two weeks back), the weeks whose buckets held a surge at
// t − k weeks and those that did not, as far as the buckets know them.
func (f *Forecaster) weeklyRecord(t, length int64, rate float64, from int) (hits, misses int) {
	for k := int64(from); k <= coarseWeeks; k++ {
		hit, known := f.weeks.surge(t-k*minutesPerWeek, length, rate)
		if !known {
			continue
		}
		if hit {
			hits++
		} else {
			misses++
		}
	}
	return hits, misses
}

// weekday weighs a daily occurrence's chance by its weekday's record (see
// Weekly rhythms above).
func (f *Forecaster) weekday(o *Occurrence) {
	hits, misses := f.weeklyRecord(o.at, o.length, o.rate, 1)
	if hits+misses == 0 {
		return
	}
	o.chance = (float64(hits) + o.chance) / float64(hits+misses+1)
	o.weekHits, o.weekLags = hits, hits+misses
}

// weekly finds the weekly occurrences expected soon: an onset a week ago,
// within the minutes, expects one a week later.
func (f *Forecaster) weekly(ahead int64) {
	if f.size <= minutesPerWeek+baselineReach {
		return
	}
	lo, hi := f.last-baselineReach-minutesPerWeek, f.last+ahead-minutesPerWeek
	for g := max(lo, f.first); g <= hi; g++ {
		if !f.isOnset(g) {
			continue
		}
		t := g + minutesPerWeek
		var o Occurrence
		o.at, o.period, o.jitter, o.kind = t, minutesPerWeek, weeklyJitter, KindWeekly
		o.length, o.rate = f.run(g)
		o.seen[0] = g
		o.hits, o.lags, o.newest = 1, 1, true
		hits, misses := f.weeklyRecord(t, o.length, o.rate, 2)
		o.hits += hits
		o.lags += hits + misses
		o.misses = misses
		q := math.Min(1, float64(2*o.jitter+1)/float64(minutesPerWeek))
		o.chance = occurrenceChance(KindWeekly, o.hits, o.misses, binomialTail(f.countOnsets(f.first, f.last), 1, q), firstChance(f.dayTried, f.dayCame))
		if o.chance < minChance || !(o.rate > 0) || math.IsInf(o.rate, 0) {
			continue
		}
		for h := g; h < g+maxRun && f.isHot(h); h++ {
			setBit(f.explained, f.idx(h), true)
		}
		f.keep(o)
	}
}

// PreloadCoarse fills the five-minute buckets the forecaster does not
// know from h, whose Counts are messages per CoarsePeriod from Start (a
// warm start's weekly history; Start is taken to its five minutes), and
// recomputes the forecast. It returns the buckets taken.
func (f *Forecaster) PreloadCoarse(h model.MinuteHistory, horizon time.Duration) int {
	if len(h.Counts) == 0 || h.Start.IsZero() {
		return 0
	}
	c := &f.weeks
	c.init()
	start := floorDiv(minuteOf(h.Start), coarseMinutes)
	end := start + int64(len(h.Counts)) - 1
	if c.curKnown {
		end = min(end, c.cur-1) // the bucket being filled is the minutes'
	}
	if end < start {
		return 0
	}
	if !c.have || end > c.last {
		c.extend(end)
	}
	if start < c.first {
		c.first = max(start, c.last-coarseBuckets+1)
	}
	n := 0
	for b := max(start, c.last-coarseBuckets+1); b <= end; b++ {
		v := h.Counts[b-start]
		if !(v >= 0) || v/(60*coarseMinutes) > maxRate || !math.IsNaN(c.mean(b)) {
			continue
		}
		c.means[c.idx(b)] = half(v / (60 * coarseMinutes))
		n++
	}
	if f.have {
		f.refresh(horizon)
	}
	return n
}
