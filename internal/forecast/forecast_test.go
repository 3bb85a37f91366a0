package forecast

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// fcStart is a minute-aligned start for the forecaster's tests.
var fcStart = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

const fcHorizon = time.Minute + 5*time.Second + time.Minute

// feed gives the forecaster the counts minute by minute, as a running
// checker would, and calls check after each minute closes.
func feed(f *Forecaster, start time.Time, counts []float64, check func(i int, now time.Time)) {
	for i, c := range counts {
		from := start.Add(time.Duration(i) * time.Minute)
		f.add(from, from.Add(time.Minute), c/60, fcHorizon)
		if check != nil {
			check(i, from.Add(time.Minute))
		}
	}
}

func newForecaster() *Forecaster {
	var f Forecaster
	f.init(8 * 24 * time.Hour)
	return &f
}

// Noise has no pattern and no bursts: across 8 days of Poisson arrivals at
// several rates, from busy to sparse, nothing is forecast at any minute.
func TestForecastFindsNothingInNoise(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rate float64
		seed uint64
	}{
		{"busy", 50, 1}, {"busy, another seed", 50, 2}, {"moderate", 2, 3}, {"sparse", 1.0 / 300, 4}, {"empty", 0, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newForecaster()
			counts := forecasttest.Minutes(tc.seed, 8*minutesPerDay, func(int) float64 { return tc.rate })
			feed(f, fcStart, counts, func(i int, now time.Time) {
				if f.nOcc != 0 {
					t.Fatalf("minute %d: %d occurrences forecast in noise, first %+v", i, f.nOcc, f.occ[0])
				}
				if f.memExcess != 0 {
					t.Fatalf("minute %d: recent bursts %v msg/s forecast in noise", i, f.memExcess)
				}
				if r := f.Forecast(now, fcHorizon, 0, false); r.OK && r.Rate > tc.rate*1.5+0.1 {
					t.Fatalf("minute %d: forecast %v msg/s in noise at %v", i, r.Rate, tc.rate)
				}
			})
			if hot := bitsSet(f.hot); hot > 0 {
				t.Errorf("%d hot minutes in noise", hot)
			}
		})
	}
}

// One-off spikes, at random times over three days, are bursts, and a spike
// may be a daily job seen once, two spikes a job seen twice: each is
// forecast again at most once (a day later, a period after the later), with
// a chance of at most one half; once it has failed to come, never again. Between those bets, once a spike is over nothing keeps its
// level.
func TestForecastOneOffSpikesAreBetOnOnce(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		r := rand.New(rand.NewPCG(seed, 5))
		spikes := map[int]bool{}
		var starts []int
		for range 4 {
			at := 60 + r.IntN(3*minutesPerDay-120)
			starts = append(starts, at)
			for m := at; m < at+5; m++ {
				spikes[m] = true
			}
		}
		counts := forecasttest.Minutes(seed, 3*minutesPerDay, func(i int) float64 {
			if spikes[i] {
				return 500
			}
			return 50
		})
		f := newForecaster()
		quiet := 0
		bets := map[int64]bool{} // the expected minutes forecast
		feed(f, fcStart, counts, func(i int, now time.Time) {
			for k := 0; k < f.nOcc; k++ {
				o := f.occ[k]
				if o.chance > 0.5 {
					t.Fatalf("seed %d minute %d: chance %v of an occurrence forecast from one-off spikes: %+v", seed, i, o.chance, o)
				}
				bets[o.at] = true
			}
			res := f.Forecast(now, fcHorizon, 0, false)
			if spikes[i] {
				quiet = 0
				return
			}
			quiet++
			if quiet > 2 && res.OK && res.Rate > 60 && res.Occurrence == nil {
				t.Fatalf("seed %d minute %d: %v msg/s still forecast %d minutes after a spike", seed, i, res.Rate, quiet)
			}
		})
		// What a spike can be taken for: a daily job seen once (a day
		// later), or with another spike within the longest period, a job
		// seen twice (one period after the later).
		allowed := map[int]bool{}
		for _, a := range starts {
			allowed[a+minutesPerDay] = true
			for _, b := range starts {
				if d := b - a; d >= minPeriod && d <= maxPeriod {
					allowed[b+d] = true
				}
			}
		}
		for at := range bets {
			m := int(at - minuteOf(fcStart))
			ok := false
			for a := range allowed {
				ok = ok || abs64(int64(m-a)) <= dailyJitter
			}
			if !ok {
				t.Errorf("seed %d: an occurrence forecast at minute %d, neither a day after a spike nor a period after two (spikes at %v)", seed, m, starts)
			}
		}
		if len(bets) > len(allowed) {
			t.Errorf("seed %d: %d occurrences forecast from %d one-off spikes, want at most %d", seed, len(bets), len(starts), len(allowed))
		}
	}
}

// A job every 20 minutes at :07 (×15 for two minutes over noise) is found
// after a few occurrences and forecast at its time and size before it comes;
// when it stops, the forecast fades after two missed occurrences.
func TestForecastPeriodicJob(t *testing.T) {
	t.Parallel()
	const base, job = 50.0, 750.0
	isJob := func(i int) bool { return i%20 == 7 || i%20 == 8 }
	stop := 6 * 60 // the job stops after six hours
	counts := forecasttest.Minutes(7, 8*60, func(i int) float64 {
		if i < stop && isJob(i) {
			return job
		}
		return base
	})
	f := newForecaster()
	found := -1
	feed(f, fcStart, counts, func(i int, now time.Time) {
		next := (i/20)*20 + 27 // the job after the current one
		if i%20 < 7 {
			next = (i/20)*20 + 7
		}
		lead := next - (i + 1)
		r := f.Forecast(now, fcHorizon, 0, false)
		if i < stop-20 && lead >= 0 && lead <= 2 && r.Occurrence != nil {
			if found < 0 {
				found = i
			}
			want := fcStart.Add(time.Duration(next) * time.Minute)
			if !r.At.Equal(want) || r.Rate < 0.9*job || r.Rate > 1.2*job {
				t.Fatalf("minute %d: forecast %v msg/s at %v, want about %v at %v", i, r.Rate, r.At, job, want)
			}
			if d := r.Occurrence.Describe(time.UTC); !strings.Contains(d, "every 20m0s, seen at") || !strings.Contains(d, ":07") {
				t.Fatalf("minute %d: described as %q", i, d)
			}
		}
		if i >= stop+2*20+10 && r.Occurrence != nil {
			t.Fatalf("minute %d: the job stopped at minute %d, still forecast %+v", i, stop, *r.Occurrence)
		}
	})
	if found < 0 || found > 2*60 {
		t.Fatalf("the job was first forecast at minute %d, want within the first two hours", found)
	}
}

// A nightly batch at 02:00 is forecast from two days before on, in time to
// start workers for it.
func TestForecastDailyBatch(t *testing.T) {
	t.Parallel()
	batch := func(i int) bool { m := i % minutesPerDay; return m >= 120 && m < 135 }
	counts := forecasttest.Minutes(11, 4*minutesPerDay, func(i int) float64 {
		if batch(i) {
			return 400
		}
		return 30 + 20*math.Sin(2*math.Pi*float64(i)/minutesPerDay)
	})
	f := newForecaster()
	var before []float64 // the forecast a minute before each batch, from day 3
	feed(f, fcStart, counts, func(i int, now time.Time) {
		if i%minutesPerDay == 118 && i > 2*minutesPerDay {
			r := f.Forecast(now, fcHorizon, 0, false)
			before = append(before, r.Rate)
			if r.Occurrence == nil || r.Occurrence.Kind() != KindDaily {
				t.Fatalf("minute %d: no daily forecast before the batch: %+v", i, r)
			}
			if want := fcStart.Add(time.Duration(i/minutesPerDay*minutesPerDay+120) * time.Minute); !r.At.Equal(want) {
				t.Fatalf("forecast at %v, want %v", r.At, want)
			}
		}
	})
	if len(before) != 2 {
		t.Fatalf("checked %d batches, want 2", len(before))
	}
	for _, v := range before {
		if v < 350 || v > 480 {
			t.Fatalf("batch forecast at %v msg/s, want about 400", v)
		}
	}
}

// The warm start reads the same history at once: the forecast right after
// Preload equals the one of a forecaster that lived through it.
func TestPreloadMatchesLiveHistory(t *testing.T) {
	t.Parallel()
	counts := forecasttest.Minutes(3, 4*60+6, func(i int) float64 {
		if i%20 == 7 || i%20 == 8 {
			return 600
		}
		return 40
	})
	live := newForecaster()
	feed(live, fcStart, counts, nil)
	now := fcStart.Add(time.Duration(len(counts)) * time.Minute)
	// The live forecaster has closed all but the last minute.
	warm := newForecaster()
	n := warm.preload(model.MinuteHistory{Start: fcStart, Counts: counts[:len(counts)-1]}, fcHorizon)
	if n != len(counts)-1 {
		t.Fatalf("preloaded %d minutes, want %d", n, len(counts)-1)
	}
	a, b := live.Forecast(now, fcHorizon, 0, false), warm.Forecast(now, fcHorizon, 0, false)
	if a.OK != b.OK || a.Rate != b.Rate || !a.At.Equal(b.At) || (a.Occurrence == nil) != (b.Occurrence == nil) {
		t.Fatalf("live forecast %+v, warm %+v", a, b)
	}
	if a.Occurrence == nil {
		t.Fatalf("no occurrence forecast a minute before the job: %+v", a)
	}
}

// Garbage in, no panic and no forecast from it: NaN, infinities, negative and
// huge rates, observations out of order, repeated, or after the clock jumped
// backwards or hours forwards.
func TestForecasterSurvivesGarbage(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 1))
		f := newForecaster()
		now := fcStart
		for range 3000 {
			step := time.Duration(r.IntN(20)) * time.Second
			switch r.IntN(20) {
			case 0:
				step = -time.Duration(r.IntN(7200)) * time.Second
			case 1:
				step = time.Duration(r.IntN(48)) * time.Hour
			case 2:
				step = 0
			}
			from := now
			now = now.Add(step)
			rate := r.Float64() * 100
			switch r.IntN(10) {
			case 0:
				rate = math.NaN()
			case 1:
				rate = math.Inf(1)
			case 2:
				rate = -rate
			case 3:
				rate = 1e300
			}
			f.add(from, now, rate, fcHorizon)
			res := f.Forecast(now, fcHorizon, 0, false)
			if res.OK && (math.IsNaN(res.Rate) || math.IsInf(res.Rate, 0) || res.Rate < 0) {
				t.Fatalf("seed %d: forecast %v", seed, res.Rate)
			}
		}
	}
	// Only garbage: nothing is forecast.
	f := newForecaster()
	now := fcStart
	for i := range 2000 {
		v := []float64{math.NaN(), math.Inf(1), -5, 1e300}[i%4]
		f.add(now, now.Add(5*time.Second), v, fcHorizon)
		now = now.Add(5 * time.Second)
		if r := f.Forecast(now, fcHorizon, 0, false); r.OK {
			t.Fatalf("a forecast from garbage alone: %+v", r)
		}
	}
}

// r0 is the occurrence the forecast at now comes from, if any.
func r0(f *Forecaster, now time.Time) *Occurrence {
	return f.Forecast(now, fcHorizon, 0, false).Occurrence
}

func FuzzForecaster(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 200, 7, 0, 255, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		fc := newForecaster()
		now := fcStart
		for i := 0; i+1 < len(data); i += 2 {
			step := time.Duration(int8(data[i])) * 7 * time.Second
			if data[i] == 0x7f {
				step = 30 * time.Hour
			}
			from := now
			now = now.Add(step)
			rate := float64(data[i+1]) * float64(data[i+1]) / 8
			if data[i+1] == 0xff {
				rate = math.NaN()
			}
			fc.add(from, now, rate, fcHorizon)
			if r := fc.Forecast(now, fcHorizon, 0, false); r.OK && (math.IsNaN(r.Rate) || math.IsInf(r.Rate, 0) || r.Rate < 0) {
				t.Fatalf("forecast %v", r.Rate)
			}
		}
		h := model.MinuteHistory{Start: fcStart.Add(-time.Hour)}
		for _, b := range data {
			h.Counts = append(h.Counts, float64(b)*10)
		}
		fc.preload(h, fcHorizon)
		if r := fc.Forecast(now, fcHorizon, 0, false); r.OK && (math.IsNaN(r.Rate) || r.Rate < 0) {
			t.Fatalf("forecast after preload %v", r.Rate)
		}
		// Weekly history, anywhere in time, of any values.
		w := model.MinuteHistory{Start: now.Add(-time.Duration(len(data)) * 37 * time.Minute)}
		for _, b := range data {
			v := float64(b) * float64(b)
			if b == 0xfe {
				v = math.Inf(1)
			}
			w.Counts = append(w.Counts, v)
		}
		fc.PreloadCoarse(w, fcHorizon)
		if r := fc.Forecast(now, fcHorizon, 0, false); r.OK && (math.IsNaN(r.Rate) || math.IsInf(r.Rate, 0) || r.Rate < 0) {
			t.Fatalf("forecast after weekly preload %v", r.Rate)
		}
		if o := r0(fc, now); o != nil && !(o.Chance() >= 0 && o.Chance() <= 1) {
			t.Fatalf("chance %v", o.Chance())
		}
	})
}

// Eight days of per-minute history and five weeks of five-minute buckets
// stay within 100 KB a group, counted and measured.
func TestForecasterMemoryBound(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f := newForecaster()
	runtime.GC()
	runtime.ReadMemStats(&after)
	bytes := len(f.rates)*2 + (len(f.hot)+len(f.onset)+len(f.explained))*8 + len(f.weeks.means)*2
	if f.size != 8*minutesPerDay || len(f.weeks.means) != 5*7*minutesPerDay/5 || bytes > 100_000 {
		t.Fatalf("%d minutes and %d buckets in %d bytes, want 11520 minutes and 10080 buckets within 100 KB", f.size, len(f.weeks.means), bytes)
	}
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d bytes counted, %d bytes of heap", bytes, heap)
	if heap > 100_000 {
		t.Fatalf("a forecaster holds %d bytes of heap, want at most 100 KB", heap)
	}
	runtime.KeepAlive(f)
}

// weeksRate is a weekly rhythm from a Wednesday: weekdays with a sinusoid,
// a nightly batch (01:00, 20 minutes, +8×) and a morning surge (08:50, 30
// minutes, +3×); weekends at 0.4× with neither; a Monday surge (09:00, an
// hour, +5×).
func weeksRate(i int) float64 {
	d, m := i/minutesPerDay, i%minutesPerDay
	wd := (time.Wednesday + time.Weekday(d)) % 7
	v := 1 - 0.6*math.Cos(2*math.Pi*(float64(m)+0.5-180)/minutesPerDay)
	if wd == time.Saturday || wd == time.Sunday {
		return 15 * 0.4 * v
	}
	if m >= 60 && m < 80 {
		v += 8
	}
	if m >= 530 && m < 560 {
		v += 3
	}
	if wd == time.Monday && m >= 540 && m < 600 {
		v += 5
	}
	return 15 * v
}

// weeksStart is a Wednesday.
var weeksStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// A weekday batch is forecast on weekdays and, once two Saturdays went
// without it, on Saturdays at most with a quarter's chance; Monday's batch,
// after a weekend without it, from the Mondays before; the Monday surge, on
// top of the daily morning surge, at its size on Mondays only.
func TestForecastWeeklyRhythm(t *testing.T) {
	t.Parallel()
	counts := forecasttest.Minutes(21, 4*7*minutesPerDay, weeksRate)
	f := newForecaster()
	at := func(day, hour, minute int) int { return day*minutesPerDay + hour*60 + minute }
	// occAt is the occurrence expected at minute m, if any.
	occAt := func(m int) *Occurrence {
		for k := 0; k < f.nOcc; k++ {
			if o := &f.occ[k]; abs64(o.at-minuteOf(weeksStart)-int64(m)) <= 1 {
				return o
			}
		}
		return nil
	}
	checks := map[int]func(){
		// Day 17 is a Saturday of the third week.
		at(17, 0, 58): func() {
			if o := occAt(at(17, 1, 0)); o != nil && o.Chance() > 0.25 {
				t.Errorf("Saturday: the weekday batch forecast with chance %v: %+v", o.Chance(), *o)
			}
		},
		// Day 19, a Monday of the third week, after a weekend without the
		// batch.
		at(19, 0, 58): func() {
			if o := occAt(at(19, 1, 0)); o == nil || o.Chance() < 0.4 {
				t.Errorf("Monday: batch forecast %+v, want it from the Mondays before", o)
			}
		},
		// Day 20, a Tuesday: the morning surge at 08:50, without Monday's.
		at(20, 8, 48): func() {
			if o := occAt(at(20, 8, 50)); o == nil || o.rate > 90 {
				t.Errorf("Tuesday: morning surge forecast %+v, want about 60 msg/s", o)
			}
		},
		// Day 26, the fourth Monday: the morning surge runs into the Monday
		// surge, forecast at Monday's size from the Mondays before.
		at(26, 8, 48): func() {
			o := occAt(at(26, 8, 50))
			if o == nil || o.rate < 110 || o.Chance() < 0.4 {
				t.Errorf("Monday: surge forecast %+v, want the Monday surge, over 110 msg/s", o)
				return
			}
			if d := o.Describe(time.UTC); !strings.Contains(d, "weekly at Monday 08:50") {
				t.Errorf("Monday: described as %q", d)
			}
		},
	}
	feed(f, weeksStart, counts, func(i int, now time.Time) {
		if check, ok := checks[i+1]; ok {
			check()
		}
	})
}

// The weekly history a warm start reads at five minutes gives the same
// weekday record as one the forecaster lived through.
func TestPreloadCoarseMatchesLiveHistory(t *testing.T) {
	t.Parallel()
	counts := forecasttest.Minutes(22, 3*7*minutesPerDay, weeksRate)
	live := newForecaster()
	feed(live, weeksStart, counts, nil)
	// The warm forecaster: the 5-minute sums of the whole span, then the
	// last eight days of minutes.
	warm := newForecaster()
	var buckets []float64
	for i := 0; i+5 <= len(counts)-1; i += 5 {
		buckets = append(buckets, counts[i]+counts[i+1]+counts[i+2]+counts[i+3]+counts[i+4])
	}
	if n := warm.PreloadCoarse(model.MinuteHistory{Start: weeksStart, Counts: buckets}, fcHorizon); n != len(buckets) {
		t.Fatalf("took %d buckets, want %d", n, len(buckets))
	}
	from := len(counts) - 1 - 8*minutesPerDay
	warm.preload(model.MinuteHistory{Start: weeksStart.Add(time.Duration(from) * time.Minute), Counts: counts[from : len(counts)-1]}, fcHorizon)
	now := weeksStart.Add(time.Duration(len(counts)) * time.Minute)
	for _, m := range []int{0, 7, 60} {
		a, b := live.weeks.mean(minuteOf(now)/5-int64(m)-minutesPerWeek/5), warm.weeks.mean(minuteOf(now)/5-int64(m)-minutesPerWeek/5)
		if math.Abs(a-b) > 5e-3*math.Max(1, a) {
			t.Fatalf("bucket %d before a week ago: live %v, warm %v", m, a, b)
		}
	}
	for k := range 3 {
		at := minuteOf(now) - int64(k)*minutesPerDay + 60
		lh, lm := live.weeklyRecord(at, 20, 200, 1)
		wh, wm := warm.weeklyRecord(at, 20, 200, 1)
		if lh != wh || lm != wm {
			t.Fatalf("%d days back: live record %d/%d, warm %d/%d", k, lh, lh+lm, wh, wh+wm)
		}
	}
}

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

// BenchmarkMinuteClose is what closing a minute costs (the forecast
// recomputed) with the most onsets the periodic search reads: a job every
// 5 minutes, for 8 days.
func BenchmarkMinuteClose(b *testing.B) {
	n := 8 * minutesPerDay
	counts := forecasttest.Minutes(1, n, func(i int) float64 {
		if i%5 == 0 {
			return 400
		}
		return 50
	})
	f := newForecaster()
	feed(f, fcStart, counts, nil)
	if f.nOnsets < maxOnsets/2 {
		b.Fatalf("%d onsets", f.nOnsets)
	}
	b.ReportAllocs()
	for b.Loop() {
		f.refresh(fcHorizon)
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
