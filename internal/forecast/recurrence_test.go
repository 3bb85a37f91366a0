package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
)

func TestBinomialTail(t *testing.T) {
	t.Parallel()
	// Independent values: P(X ≥ 3) for Binomial(3, 0.15) = 0.15³; for
	// Binomial(10, 0.2), 1 − P(0) − P(1) − P(2).
	p0, p1, p2 := math.Pow(0.8, 10), 10*0.2*math.Pow(0.8, 9), 45*0.04*math.Pow(0.8, 8)
	for _, tc := range []struct {
		n, k int
		q    float64
		want float64
	}{
		{3, 3, 0.15, 0.003375}, {10, 3, 0.2, 1 - p0 - p1 - p2}, {5, 0, 0.3, 1}, {2, 3, 0.5, 0}, {4, 1, 1, 1},
	} {
		if got := binomialTail(tc.n, tc.k, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("binomialTail(%d, %d, %v) = %v, want %v", tc.n, tc.k, tc.q, got, tc.want)
		}
	}
}

// The onsets a pattern was fitted to are no evidence for it: a period's
// pair, a day's one onset. Independent values: six hits of a lattice every
// 40 minutes (q = 3/40) among 12 onsets leave four of ten, P(X ≥ 4) for
// Binomial(10, q) = 1 − P(0..3); a day seen three times among nine onsets
// (q = 11/1440) leaves two of eight. A pattern with nothing beyond its fit
// keeps the tail of its hits among all n: a pair P(X ≥ 2) for Binomial(12,
// q), a day seen once P(X ≥ 1) for Binomial(9, 11/1440).
func TestFittedTailLeavesOutTheFittedOnsets(t *testing.T) {
	t.Parallel()
	pmf := func(n, x int, q float64) float64 {
		c := 1.0
		for i := range x {
			c = c * float64(n-i) / float64(i+1)
		}
		return c * math.Pow(q, float64(x)) * math.Pow(1-q, float64(n-x))
	}
	q := 3.0 / 40
	every := 1 - pmf(10, 0, q) - pmf(10, 1, q) - pmf(10, 2, q) - pmf(10, 3, q)
	d := 11.0 / 1440
	daily := 1 - pmf(8, 0, d) - pmf(8, 1, d)
	for _, tc := range []struct {
		kind    Kind
		n, hits int
		q, want float64
	}{
		{KindEvery, 12, 6, q, every},
		{KindDaily, 9, 3, d, daily},
		{KindEvery, 12, 2, q, 1 - pmf(12, 0, q) - pmf(12, 1, q)},
		{KindDaily, 9, 1, d, 1 - pmf(9, 0, d)},
	} {
		if got := fittedTail(tc.kind, tc.n, tc.hits, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("fittedTail(%v, %d, %d, %v) = %v, want %v", tc.kind, tc.n, tc.hits, tc.q, got, tc.want)
		}
	}
	// Counting the pair would make the same six hits some 40 times rarer.
	if all := binomialTail(12, 6, q); !(all < every/30) {
		t.Errorf("six hits of 12 onsets, the pair counted: %v; want far below %v", all, every)
	}
}

// A job that came and was released is not forecast again from its last
// minutes, whatever the arrivals read then; nor is it over before its
// record says it ends.
func TestForecastReleasedJobStaysReleased(t *testing.T) {
	t.Parallel()
	const base, job = 50.0, 750.0
	counts := forecasttest.Minutes(8, 3*60, func(i int) float64 {
		if m := i % 20; m >= 7 && m <= 9 { // three minutes
			return job
		}
		return base
	})
	f := newForecaster()
	feed(f, fcStart, counts[:2*60+7], nil) // to 02:07, the job's first minute
	at := fcStart.Add(2*time.Hour + 7*time.Minute)
	// The job's first minute closes at 02:08:05; the interval's arrivals
	// read low (workers draining its backlog), but it lasts three minutes.
	f.Observe(at, at.Add(time.Minute), job, fcHorizon)
	now := at.Add(65 * time.Second)
	f.Observe(at.Add(time.Minute), now, base, fcHorizon)
	if r := f.Forecast(now, fcHorizon, base, true); r.Ended != nil || r.Occurrence == nil || !r.At.Equal(at) {
		t.Fatalf("02:08:05: %+v, want the 02:07 job going on", r)
	}
	// Its second minute closed, low arrivals end it a minute before its
	// third would.
	f.Observe(now, at.Add(2*time.Minute), job, fcHorizon)
	now = at.Add(2*time.Minute + 5*time.Second)
	f.Observe(at.Add(2*time.Minute), now, base, fcHorizon)
	r := f.Forecast(now, fcHorizon, base, true)
	if r.Ended == nil || !r.Ended.At().Equal(at) {
		t.Fatalf("02:09:05: %+v, want the 02:07 job ended", r)
	}
	f.Release(r.Ended)
	// Arrivals that read hot again do not bring it back.
	for s := 10; s <= 50; s += 10 {
		now := at.Add(2*time.Minute + time.Duration(s)*time.Second)
		f.Observe(now.Add(-10*time.Second), now, 3*base, fcHorizon)
		if r := f.Forecast(now, fcHorizon, 3*base, true); r.Occurrence != nil && r.At.Equal(at) {
			t.Fatalf("%v: the released job forecast again: %+v", now, r)
		}
	}
}

// A surge seen once is bet on by the group's own record: where six surges
// a day came and none of them came again a day later, a new one is not
// expected tomorrow (its first chance (0+1)/(6+3) = 1/9 is below
// minChance); where every earlier surge recurred a day later, a new one is
// expected with more than the default one in three.
func TestForecastFirstChanceFromTheGroupsRecord(t *testing.T) {
	t.Parallel()
	at := func(day, hour, minute int) int { return day*minutesPerDay + hour*60 + minute }
	for _, tc := range []struct {
		name           string
		day0, day1     []int // hours of the surges, at :00 on day 0 and :30 on day 1 (none: day 0's every day)
		lo, hi         float64
		wantForecasted bool
	}{
		{"nothing recurs", []int{1, 4, 8, 12, 16, 20}, []int{2, 6, 10, 14, 18, 21}, 0, 0, false},
		// Days 1 and 2 repeat day 0's surges (at :00); day 1 adds one at
		// 21:30.
		{"everything recurs", []int{1, 4, 8, 12, 16, 20}, nil, 0.6, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			surge := map[int]bool{}
			mark := func(m int) {
				for g := m; g < m+5; g++ {
					surge[g] = true
				}
			}
			for _, h := range tc.day0 {
				mark(at(0, h, 0))
				if tc.day1 == nil {
					mark(at(1, h, 0))
					mark(at(2, h, 0))
				}
			}
			for _, h := range tc.day1 {
				mark(at(1, h, 30))
			}
			if tc.day1 == nil {
				mark(at(1, 21, 30))
			}
			counts := forecasttest.Minutes(3, at(2, 21, 28), func(i int) float64 {
				if surge[i] {
					return 500
				}
				return 50
			})
			f := newForecaster()
			feed(f, fcStart, counts, nil)
			var got *Occurrence
			for k := 0; k < f.nOcc; k++ {
				if o := &f.occ[k]; o.at == minuteOf(fcStart)+int64(at(2, 21, 30)) {
					got = o
				}
			}
			if (got != nil) != tc.wantForecasted {
				t.Fatalf("occurrence at 21:30 on day 2: %+v; want forecast %v (record: %d of %d tried came)", got, tc.wantForecasted, f.dayCame, f.dayTried)
			}
			if got != nil && (got.Chance() < tc.lo || got.Chance() > tc.hi || got.Kind() != KindDaily || got.Hits() != 1) {
				t.Fatalf("chance %v, want %v to %v: %+v", got.Chance(), tc.lo, tc.hi, *got)
			}
		})
	}
}

// With the default first chance of one in three, the chance of a pattern
// seen n times is n ÷ (n + misses + 2) (daily: n = hits); a better first
// chance counts for one observation and fades as the pattern recurs, and a
// pattern that has recurred gets no more than the default from it.
func TestOccurrenceChanceFirst(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for misses := 0; misses <= 2; misses++ {
			want := float64(n) / float64(n+misses+2)
			if got := occurrenceChance(KindDaily, n, misses, 0, 1.0/3); math.Abs(got-want) > 1e-12 {
				t.Errorf("daily, %d hits, %d misses: %v, want %v", n, misses, got, want)
			}
			if got := occurrenceChance(KindEvery, n+1, misses, 0, 1.0/3); math.Abs(got-want) > 1e-12 {
				t.Errorf("every, %d hits, %d misses: %v, want %v", n+1, misses, got, want)
			}
		}
	}
	if got := occurrenceChance(KindDaily, 1, 0, 0, 0.9); math.Abs(got-0.9) > 1e-12 {
		t.Errorf("seen once, first chance 0.9: %v", got)
	}
	if got, want := occurrenceChance(KindDaily, 2, 0, 0, 0.9), 2.0/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("seen twice, first chance 0.9: %v, want the default's %v", got, want)
	}
	if got, want := occurrenceChance(KindDaily, 2, 0, 0, 0.1), (1+0.3)/4; math.Abs(got-want) > 1e-12 {
		t.Errorf("seen twice, first chance 0.1: %v, want %v", got, want)
	}
}

// The record of recurrence reads only the minutes the ring holds: with two
// days of history, five days in, it counts the onsets of the last day that
// could have recurred, not older ones the ring has overwritten.
func TestRecurrenceRecordWithinTheRing(t *testing.T) {
	t.Parallel()
	surge := func(i int) bool { m := i % minutesPerDay; return (m/60)%5 == i/minutesPerDay%5 && m%60 < 5 }
	counts := forecasttest.Minutes(4, 5*minutesPerDay, func(i int) float64 {
		if surge(i) {
			return 500
		}
		return 50
	})
	var f Forecaster
	f.init(2 * 24 * time.Hour)
	feed(&f, fcStart, counts, nil)
	tried, came := 0, 0
	for g := f.last - minutesPerDay - dailyJitter; g > f.last-f.size; g-- {
		if !f.isOnset(g) {
			continue
		}
		tried++
		if _, ok := f.onsetNear(g+minutesPerDay, dailyJitter); ok {
			came++
		}
	}
	if tried == 0 || f.dayTried != tried || f.dayCame != came {
		t.Fatalf("record %d of %d tried came, want %d of %d (the ring holds %d minutes)", f.dayCame, f.dayTried, came, tried, f.size)
	}
}

// Rhythm names the pattern that explains an onset: after an hour of a job
// at :07 every 20 minutes, its onsets at 00:07, 00:27 and 00:47 are
// explained by "every 20m0s" with the phase 7 minutes, matched within a
// minute either side (a window of 3), each by the pattern with the best
// chance that matches it. The three hits: the pair that placed the lattice
// proves nothing, and the third onset would land on its 3-minute windows
// of 20 by chance with probability 0.15 (fittedTail; one lattice tried), so
// (1 − 0.15) × (2 − 1 + 3 × ⅓) ÷ (2 + 0 + 2) = 0.425 (see
// occurrenceChance). The pair that matches only 00:07 and 00:27 has nothing
// beyond its fit to test: it keeps the tail of its two hits among the
// hour's three onsets, 3 × 0.15² × 0.85 + 0.15³, and the group's record for
// its chance: of the pairs whose period came round again, one was tried
// and it came, (1 + 1) ÷ (1 + 3) = 0.5 (firstChance), which explains those
// two better. A minute with no onset is explained by nothing.
func TestRhythmExplainsTheOnsetsOfAJob(t *testing.T) {
	t.Parallel()
	counts := forecasttest.Minutes(3, 60, func(i int) float64 {
		if i%20 == 7 || i%20 == 8 {
			return 500
		}
		return 50
	})
	f := newForecaster()
	feed(f, fcStart, counts, nil)
	if f.pairTried != 1 || f.pairCame != 1 {
		t.Fatalf("the group's record: %d of %d pairs tried came, want 1 of 1", f.pairCame, f.pairTried)
	}
	three := (1 - 0.15) * 2 / 4
	pair := (1 - (3*0.15*0.15*0.85 + 0.15*0.15*0.15)) * 0.5
	for _, tc := range []struct {
		m    int
		want float64
	}{{7, pair}, {27, pair}, {47, three}} {
		got := f.Rhythm(fcStart.Add(time.Duration(tc.m) * time.Minute))
		if got.Period != 20*time.Minute || got.Phase != 7*time.Minute || got.Window != 3*time.Minute || !(got.Chance > 0) {
			t.Errorf("onset 00:%02d: %+v, want every 20m0s at phase 7m0s within 3m0s", tc.m, got)
		}
		if math.Abs(got.Chance-tc.want) > 1e-12 {
			t.Errorf("onset 00:%02d: chance %v, want %v", tc.m, got.Chance, tc.want)
		}
	}
	if got := f.Rhythm(fcStart.Add(17 * time.Minute)); got.Chance != 0 {
		t.Errorf("00:17, no onset: %+v, want none", got)
	}
}

func TestLookElsewhere(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ tail, tests, want float64 }{
		{0.0115, 1, 0.0115},
		{0.0115, 0.5, 0.0115},
		{0.0115, 66, 1 - math.Pow(1-0.0115, 66)},
		{1e-7, 100, 1 - math.Pow(1-1e-7, 100)},
		{1, 10, 1},
		{0, 10, 0},
	} {
		if got := lookElsewhere(tc.tail, tc.tests); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("lookElsewhere(%v, %v) = %v, want %v", tc.tail, tc.tests, got, tc.want)
		}
	}
}

// Surges at random times, one every ten minutes or so, give dozens of
// onsets an afternoon, and some of the hundreds of periods their pairs give
// fit four to seven of them by chance: the best of many fits is no rhythm
// (lookElsewhere). Over four such days, periodic occurrences are forecast
// no more than one and a half times an hour, counting each occurrence once
// a minute (without the correction, some 80 times an hour). A job every 30
// minutes among the same surges is forecast at least twice an hour.
func TestRandomSurgesHaveFewRhythms(t *testing.T) {
	t.Parallel()
	const hours, scored = 12, 6
	bets := 0
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 11))
		surge := map[int]bool{}
		for range hours * 6 {
			at := r.IntN(hours * 60)
			for m := at; m < at+1+r.IntN(2); m++ {
				surge[m] = true
			}
		}
		for _, job := range []bool{false, true} {
			counts := forecasttest.Minutes(seed, hours*60, func(i int) float64 {
				switch {
				case job && i%30 < 3:
					return 500
				case surge[i]:
					return 150
				}
				return 50
			})
			f := newForecaster()
			jobBets := 0
			feed(f, fcStart, counts, func(i int, now time.Time) {
				if i < (hours-scored)*60 {
					return
				}
				for k := 0; k < f.nOcc; k++ {
					o := f.occ[k]
					switch {
					case o.kind != KindEvery || o.at <= f.last:
					case job && o.period == 30:
						jobBets++
					case !job:
						bets++
					}
				}
			})
			if job && jobBets < 2*scored {
				t.Errorf("seed %d: the job every 30 minutes forecast %d times (once a minute) over %d hours, want at least two an hour", seed, jobBets, scored)
			}
		}
	}
	if want := 4 * scored * 3 / 2; bets > want {
		t.Errorf("periodic occurrences forecast from random surges %d times (each once a minute) over %d hours, want at most %d", bets, 4*scored, want)
	}
}

// A web server's days, as the simulator's web scenario makes them: a
// level that wanders (lognormal, σ 0.2 a minute) and a dozen bumps a day
// at random times, 1 to 5 minutes at 1.5× to 3×. Its onsets come at
// random, some tens a day, so some lattice of the hundreds their pairs
// fit always meets four to six of them; none is a rhythm, and over the
// second day, seeds 1–4, periodic occurrences are forecast (each once a
// minute) at most 20 times: 5 over these seeds, where counting the onsets
// that placed each lattice as evidence forecast 105.
func TestWebBumpsHaveNoRhythm(t *testing.T) {
	t.Parallel()
	const days, base, most = 2, 50.0, 20
	bets := 0
	for seed := uint64(1); seed <= 4; seed++ {
		r := rand.New(rand.NewPCG(seed, 12))
		bump := make([]float64, days*minutesPerDay)
		for i := range bump {
			bump[i] = 1
		}
		for range days * 12 {
			at, n, k := r.IntN(days*minutesPerDay), 1+r.IntN(5), 1.5+1.5*r.Float64()
			for m := at; m < min(at+n, len(bump)); m++ {
				bump[m] = k
			}
		}
		counts := forecasttest.Minutes(seed, days*minutesPerDay, func(i int) float64 {
			return base * math.Exp(0.2*r.NormFloat64()-0.02) * bump[i]
		})
		f := newForecaster()
		feed(f, fcStart, counts, func(i int, _ time.Time) {
			if i < minutesPerDay {
				return
			}
			for k := 0; k < f.nOcc; k++ {
				if o := f.occ[k]; o.kind == KindEvery && o.at > f.last {
					bets++
				}
			}
		})
	}
	if bets > most {
		t.Errorf("periodic occurrences forecast from a web server's bumps %d times (each once a minute) over 4 days, want at most %d", bets, most)
	}
}
