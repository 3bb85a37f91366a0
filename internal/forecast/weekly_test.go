package forecast

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
)

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
