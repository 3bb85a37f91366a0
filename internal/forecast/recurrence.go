package forecast

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"time"
)

// Recurrence: onsets that repeat every period or every day, and the binomial
// chance that one comes again.

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
	clear(f.rhythm[:])
	f.pairTried, f.pairCame = 0, 0
	f.periods = 0
	f.eachPair(func(later, p int64) {
		t, j := later+p, periodJitter(p)
		f.periods += 1 / float64(2*j+1)
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
			if step == 2 && f.isOnset(later+p) {
				// The pair of that onset and later, found before this
				// one, expected the same occurrence a period on.
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
	tail := fittedTail(kind, f.countOnsets(deepest, f.last), o.hits, q)
	if kind == KindEvery && o.hits > 2 {
		tail = lookElsewhere(tail, f.periods)
	}
	o.chance = occurrenceChance(kind, o.hits, o.misses, tail, first) / float64(rivals)
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
		f.noteRhythm(g, rhythm{chance: o.chance, window: 2*o.jitter + 1, period: o.period, phase: (o.at%o.period + o.period) % o.period, hits: o.hits})
	}
	if keep {
		f.keep(o)
	}
}

// noteRhythm records that the pattern r explains the onset g, when it has
// the best chance of those that do (see Rhythm).
func (f *Forecaster) noteRhythm(g int64, r rhythm) {
	on := f.onsets[:f.nOnsets] // newest first
	i, found := slices.BinarySearchFunc(on, g, func(a, b int64) int { return cmp.Compare(b, a) })
	if found && r.chance > f.rhythm[i].chance {
		f.rhythm[i] = r
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
// land on them as often (fittedTail). The record is counted by the
// rule of succession, its first hit weighed by first, the group's own
// record of first recurrences (see firstChance): a pattern is doubted until
// it has recurred a few times. A period is fitted to the onsets, so its
// first hit only fixes the phase and counts for nothing; a day is known
// beforehand.
//
//	chance = (1 − tail) × (n − 1 + 3 × first) ÷ (n + misses + 2),
//	n = hits − 1 (every) or hits (daily, weekly)
//
// With a first chance of one in three, the default, and before the tail: a
// job seen twice, with no other onset within the longest period before it,
// comes with chance 1/3; three times, 1/2; five times, 2/3; nine times, 4/5;
// a daily surge seen once, 1/3. Once a pattern has recurred, the group's
// record holds its own recurrences, which its hits already count: first is
// then at most one in three. Two onsets fit a period to each other, so a
// pair's chance is shared among the rival periods the onsets before the
// later one would give (see consider). Noise, whose onsets land on any
// lattice as often as chance has them, has a tail near 1 and no chance.
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

// lookElsewhere is how likely the best fit of tests lattices, each as
// likely as tail to be met by onsets scattered at random, is met so: 1 −
// (1 − tail)^tests. A period and its phase are fitted to the onsets from
// all their pairs, so on a noisy group some of the hundreds tried fit four
// to seven onsets of the last hours by chance (tail 0.01 each) and bet
// workers on the next one every few minutes; a job every 20 minutes that
// came eight times alone has a tail of 0.15⁶ ≈ 10⁻⁵ (the first two placed
// it), which the tests lift little, and of 0.15¹⁴ after sixteen. Pairs
// that fit a period to each other (two hits) are shared among their rivals
// instead (see consider).
func lookElsewhere(tail, tests float64) float64 {
	if tests <= 1 {
		return tail
	}
	return -math.Expm1(tests * math.Log1p(-math.Min(tail, 1)))
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

// fittedTail is how likely onsets scattered at random would bear out a
// pattern fitted to n onsets as well as its hits do: the binomial tail of the
// hits it was not fitted to. A period and its phase are fitted to a pair of
// onsets and a day's phase to one, so those land on the pattern's expected
// minutes by construction and say nothing; of the other n − fitted onsets,
// each lands there with probability q, and hits − fitted did. Counted as
// evidence, the fitted onsets make a fit to noise look tens of times rarer
// than it is: on a simulated day of web traffic, whose dozen bumps come at
// random, lattices of every 3h46m and 3h7m fitted to them were bet on with
// chances of 57 % and 43 %. A pattern with no hit beyond its fit has
// nothing to test; it keeps the doubt of its onsets among n, the tail of
// them all, which grows with how many onsets there are to fit (a pair's
// chance is also shared among its rivals, see consider).
func fittedTail(kind Kind, n, hits int, q float64) float64 {
	fitted := 1
	if kind == KindEvery {
		fitted = 2
	}
	if hits <= fitted {
		return binomialTail(n, hits, q)
	}
	return binomialTail(n-fitted, hits-fitted, q)
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
