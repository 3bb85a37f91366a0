package arrivals

import (
	"math"
	"testing"
	"time"
)

// The arrivals of the minute a deleted count covers are exact whatever the
// completions do within it: a queue fed at 20 msg/s throughout, drained at
// 15 msg/s for a minute, at 45 msg/s for 20 s (workers started), then at
// 20 msg/s (the backlog gone). The per-interval observation, Δtotal/Δt plus a
// deleted count of a different minute, swings from 0 to above 25 msg/s; the
// minute's measurement stays at 20, for a count of the last minute stamped
// at the sample, for CloudWatch's count stamped at its period's start
// minutes late, and for one stamped between two samples.
func TestMinuteArrivals(t *testing.T) {
	t.Parallel()
	const arrivals = 20.0
	// Completions: 15/s before 60 s (and before the first sample), 45/s
	// until 80 s, 20/s after.
	completedBy := func(t float64) float64 { // since time 0; negative before it
		switch {
		case t < 60:
			return 15 * t
		case t < 80:
			return 900 + 45*(t-60)
		}
		return 1800 + 20*(t-80)
	}
	completed := func(a, b float64) float64 { return completedBy(b) - completedBy(a) }
	total := func(t float64) float64 { return 220 + arrivals*t - completed(0, t) }
	busy := func(t float64) float64 { // in flight at t: every worker busy until the backlog is gone
		switch {
		case t < 60:
			return 15
		case t < 80:
			return 45
		}
		return 20
	}
	cases := []struct {
		name  string
		stamp func(now float64) float64 // the deleted count's time stamp
		start func(stamp float64) float64
	}{
		{"the last minute, stamped at the sample", func(now float64) float64 { return now }, func(s float64) float64 { return s - 60 }},
		{"CloudWatch's minute, stamped at its start, 3 min late", func(now float64) float64 { return now - 180 }, func(s float64) float64 { return s }},
		{"stamped between two samples", func(now float64) float64 { return now - 182 }, func(s float64) float64 { return s }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var e Estimator
			measured := 0
			// 6 minutes of samples 10 s apart: each in a slot of its own, so
			// the history holds them all and the interpolation between them
			// is exact for these piecewise linear totals.
			for k := 0; k <= 36; k++ {
				now := float64(10 * k)
				tot := total(now)
				c := Counts{At: t0.Add(time.Duration(now * float64(time.Second))), InFlight: busy(now), Visible: tot - busy(now)}
				stamp := tc.stamp(now)
				start := tc.start(stamp)
				f := Flow{
					Deleted:   completed(start, start+60) / 60,
					DeletedAt: t0.Add(time.Duration(stamp * float64(time.Second))),
					DeletedOK: true,
					Keep:      5*time.Minute + 2*time.Minute, // the policy's default
					PerServer: 1, Servers: busy(now), Tau: time.Minute,
				}
				e.Update(c, 1, f)
				_, minute, ok := e.Minute(c.At)
				if !ok {
					continue
				}
				measured++
				if math.Abs(minute-arrivals) > 1e-6 {
					t.Fatalf("at %v s: minute %v, want %v", now, minute, arrivals)
				}
			}
			if measured < 15 {
				t.Fatalf("only %d measurements", measured)
			}
		})
	}
}

// Messages held back as a dump are not arrivals of the minute: 3,000 land
// in one 10 s interval of a queue steady at 20 msg/s in and out. The
// interval's observation, 320 msg/s, enters the EWMA at 20 + 3·√((20 +
// 20)/10); the rest, (320 − that) × 10 s, is held back, and the minutes that
// cover the interval count only what entered.
func TestMinuteArrivalsLeaveDumpsOut(t *testing.T) {
	t.Parallel()
	var e Estimator
	bound := dumpBound(20, 20, 10, 0)
	held := (3000.0/10 + 20 - bound) * 10
	tot := 40.0
	for k := 0; k <= 20; k++ {
		now := t0.Add(time.Duration(k) * 10 * time.Second)
		if k == 10 {
			tot += 3000
		}
		f := Flow{Deleted: 20, DeletedAt: now, DeletedOK: true, Keep: 7 * time.Minute, PerServer: 1, Servers: 20, Tau: time.Minute}
		e.Update(Counts{At: now, Visible: tot - 20, InFlight: 20}, 1, f)
		_, minute, ok := e.Minute(now)
		if k < 6 || !ok {
			continue
		}
		want := 20.0 // the change of the total over a minute is 0
		if k >= 10 && k < 16 {
			want += (3000 - held) / 60
		}
		if math.Abs(minute-want) > 1e-9 {
			t.Fatalf("sample %d: minute %v, want %v", k, minute, want)
		}
	}
}
