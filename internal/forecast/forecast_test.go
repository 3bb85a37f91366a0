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
