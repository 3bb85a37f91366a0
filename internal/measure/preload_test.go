package measure

import (
	"math"
	"testing"
	"time"
)

// history is n minutes from t0 of deleted msg/s and mean in flight, both
// the same every minute.
func history(n int, deleted, inFlight float64) (d, l []float64) {
	d, l = make([]float64, n), make([]float64, n)
	for i := range n {
		d[i], l[i] = deleted, inFlight
	}
	return d, l
}

// docConfidence is the documented confidence of n agreeing, fresh minutes.
func docConfidence(n int) float64 { return 1 - math.Exp(-float64(n)/3.5) }

// 20 minutes of 30 msg/s with 12 in flight: 0.4 s by Little's law. Unknown
// minutes (NaN, negative, infinite, in either series) are skipped; the rest
// are good minutes at their own times, fresh while the latest sample is
// within two minutes of the newest one's end and fading to 0 by 30.
func TestPreload(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	d, l := history(20, 30, 12)
	d[3], l[7], d[11], l[12] = nan, nan, -1, math.Inf(1)
	e := New(Config{ServiceTime: 200 * time.Millisecond})
	if n := e.Preload(t0.Add(20*time.Second), d, l); n != 16 {
		t.Fatalf("Preload took %d minutes, want 16 (20 less 4 unknown)", n)
	}
	est := e.Estimate()
	if est.Minutes != 16 || est.ServiceTime != 400*time.Millisecond || !near(est.PerWorker, 2.5, 1e-9) {
		t.Fatalf("estimate %+v, want 16 minutes of 400 ms, 2.5 msg/s per worker", est)
	}
	if !est.Since.Equal(t0) || !est.Last.Equal(at(19, 0)) {
		t.Errorf("minutes from %v to %v, want %v to %v (start truncated to its minute)", est.Since, est.Last, t0, at(19, 0))
	}
	if est.Saturated || est.Batching || est.Stuck || est.SaturatedMinutes != 0 {
		t.Errorf("estimate %+v: a preloaded minute knows no workers, so it is never saturated or batching", est)
	}
	if !near(est.Confidence, docConfidence(16), 1e-9) {
		t.Errorf("Confidence %v before any sample, want %v", est.Confidence, docConfidence(16))
	}

	// The first sample, 90 s after the newest minute ended: still fresh.
	e.Sample(at(21, 30), 0, 12, 10, true)
	if c := e.Estimate().Confidence; !near(c, docConfidence(16), 1e-9) {
		t.Errorf("Confidence %v at the first sample, want %v", c, docConfidence(16))
	}
	// 16 minutes after it ended: halfway from fresh (2 min) to stale (30).
	e.Sample(at(36, 0), 0, 12, 10, true)
	if c := e.Estimate().Confidence; !near(c, docConfidence(16)*0.5, 1e-9) {
		t.Errorf("Confidence %v 16 minutes on, want %v", c, docConfidence(16)*0.5)
	}
	if ok := e.Preload(t0, nil, nil); ok != 0 {
		t.Errorf("an empty history took %d minutes", ok)
	}
}

// The window: of 30 minutes, the estimate rests on the newest 24.
func TestPreloadWindow(t *testing.T) {
	t.Parallel()
	d, l := history(30, 30, 12)
	e := New(Config{})
	if n := e.Preload(t0, d, l); n != docWindow {
		t.Fatalf("Preload kept %d minutes, want %d", n, docWindow)
	}
	if est := e.Estimate(); est.Minutes != docWindow || !est.Since.Equal(at(6, 0)) {
		t.Fatalf("estimate %+v, want the %d minutes from minute 6", est, docWindow)
	}
}

// Minutes measured live are kept. The history's minutes from the first
// sample's minute on are the samples' and are not taken; older ones go
// before the live minutes, and the step detection runs over them all: a
// history that disagrees with the live minutes is cut off, one that agrees
// fills the window.
func TestPreloadKeepsLiveMinutes(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name        string
		lv          level
		deleted     float64
		wantS       float64
		wantMinutes int
	}{
		// Live: 10 in flight at 50 msg/s, 0.2 s; the history says 0.4 s.
		{"history disagrees", level{0, 10, 20}, 50, 0.2, 6},
		// Live: 12 in flight at 30 msg/s, as the history.
		{"history agrees", level{0, 12, 20}, 30, 0.4, docWindow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(Config{})
			steady(e, 30, 36, tt.lv, tt.deleted, nan) // live minutes 30..35
			d, l := history(46, 30, 12)               // minutes 0..45, at 0.4 s
			if n := e.Preload(t0, d, l); n != docWindow-6 {
				t.Fatalf("Preload kept %d minutes, want %d (the window less the 6 live ones)", n, docWindow-6)
			}
			est := e.Estimate()
			if !near(secs(est.ServiceTime), tt.wantS, 1e-6) || est.Minutes != tt.wantMinutes {
				t.Fatalf("estimate %+v, want %v s over %d minutes", est, tt.wantS, tt.wantMinutes)
			}
			// The live minutes' own records, workers and all, are there;
			// no preloaded minute is at or after the first sample's.
			prev := time.Time{}
			for g, ok := e.After(prev); ok; g, ok = e.After(prev) {
				live := !g.Start.Before(at(30, 0))
				if live && g.Workers != 20 || !live && g.Workers != 0 {
					t.Errorf("minute %v: workers %v, want 20 live and 0 preloaded", g.Start, g.Workers)
				}
				if !g.Start.After(prev) {
					t.Errorf("minute %v after %v: out of order", g.Start, prev)
				}
				prev = g.Start
			}
			if !prev.Equal(at(35, 0)) {
				t.Errorf("newest minute %v, want the live minute 35", prev)
			}
		})
	}
}

// Preloading the same history twice takes it once.
func TestPreloadTwice(t *testing.T) {
	t.Parallel()
	d, l := history(30, 30, 12)
	for i := range d {
		d[i] += float64(i % 5) // minutes that differ, so that order matters
	}
	e := New(Config{})
	e.Preload(t0, d, l)
	first := e.Estimate()
	if n := e.Preload(t0, d, l); n != 0 {
		t.Errorf("the second preload kept %d more minutes", n)
	}
	if second := e.Estimate(); second != first {
		t.Errorf("after a second preload %+v, want %+v", second, first)
	}
}

// Workers in service are unknown: in flight is never capped at slots and
// no minute is saturated or batching, however many are in flight.
func TestPreloadWithoutWorkers(t *testing.T) {
	t.Parallel()
	d, l := history(10, 100, 500)
	e := New(Config{Concurrency: 2})
	e.Preload(t0, d, l)
	est := e.Estimate()
	if est.ServiceTime != 5*time.Second || !near(est.PerWorker, 0.4, 1e-9) || est.Saturated || est.Batching {
		t.Fatalf("estimate %+v, want 5 s, 2 slots ÷ 5 s = 0.4 msg/s per worker, neither saturated nor batching", est)
	}
}

// Stuck and idle minutes are judged as live ones: a stuck minute teaches
// nothing, and stuck minutes at the end of the history report Stuck when
// nothing has been learned live; idle minutes change nothing.
func TestPreloadStuckAndIdle(t *testing.T) {
	t.Parallel()
	cfg := Config{ServiceTime: 400 * time.Millisecond}
	stuckTail := func(n int) (d, l []float64) {
		d, l = history(n, 30, 12)
		for i := n - 3; i < n; i++ {
			d[i] = 0 // 12 held, nothing deleted
		}
		return d, l
	}

	e := New(cfg)
	d, l := stuckTail(13)
	if n := e.Preload(t0, d, l); n != 10 {
		t.Errorf("took %d minutes, want the 10 good ones", n)
	}
	if est := e.Estimate(); !est.Stuck || est.Minutes != 10 || est.ServiceTime != 400*time.Millisecond {
		t.Errorf("estimate %+v, want stuck, the 10 good minutes at 400 ms", est)
	}

	idle := New(cfg)
	d, l = history(10, 30, 12)
	for i := 5; i < 10; i++ {
		d[i], l[i] = 0, 0
	}
	idle.Preload(t0, d, l)
	if est := idle.Estimate(); est.Stuck || est.Minutes != 5 {
		t.Errorf("estimate %+v, want the 5 good minutes, not stuck", est)
	}

	// Live minutes are newer than any preloaded one: a stuck tail of the
	// history does not outvote them.
	live := New(cfg)
	steady(live, 30, 34, level{0, 12, 20}, 30, math.NaN())
	d, l = stuckTail(30)
	live.Preload(t0, d, l)
	if est := live.Estimate(); est.Stuck {
		t.Errorf("estimate %+v: stuck from history older than the live minutes", est)
	}
}

// After a preload the live minutes go on from it: CloudWatch repeating the
// last preloaded minute teaches nothing twice, and the window fills with
// live minutes.
func TestPreloadThenLive(t *testing.T) {
	t.Parallel()
	d, l := history(20, 30, 12) // minutes 0..19
	e := New(Config{})
	e.Preload(t0, d, l)
	for s := 0.0; s < 60; s += 5 {
		e.Sample(at(20, s), 0, 12, 20, true)
		e.Minute(at(19, 0), 30, math.NaN()) // the newest minute, again
	}
	if est := e.Estimate(); est.Minutes != 20 {
		t.Fatalf("%d minutes after CloudWatch repeated the last preloaded one, want 20", est.Minutes)
	}
	steady(e, 21, 26, level{0, 12, 20}, 30, math.NaN()) // minute 20's reading never comes
	est := e.Estimate()
	if est.Minutes != docWindow-1 || est.ServiceTime != 400*time.Millisecond || !est.Since.Equal(at(2, 0)) || !est.Last.Equal(at(25, 0)) {
		t.Fatalf("estimate %+v, want minutes 2 to 25 but 20 at 400 ms", est)
	}
	if g, ok := e.After(at(20, 0)); !ok || !g.Start.Equal(at(21, 0)) || g.Workers != 20 {
		t.Errorf("first live minute %+v (%v), want minute 21 with 20 workers", g, ok)
	}
}

// FuzzPreload preloads arbitrary histories, before, between and after
// samples, and checks every Estimate as FuzzEstimator does.
func FuzzPreload(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 20, 30, 12, 30, 12, 30, 12, 0, 3, 40})
	f.Add(plausibleRun())
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &fuzzInput{data}
		e := New(Config{ServiceTime: time.Duration(in.i16()) * 10 * time.Millisecond, Concurrency: int(in.i16())})
		now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		for step := 0; len(in.b) > 0 && step < 200; step++ {
			switch in.u8() % 3 {
			case 0: // a run of samples with readings two minutes late
				for range int(in.u8() % 64) {
					now = now.Add(5 * time.Second)
					e.Sample(now, in.value(), in.value(), int(in.u8()), true)
					e.Minute(now.Truncate(time.Minute).Add(-2*time.Minute), in.value(), math.NaN())
				}
			case 1: // a history of up to 40 minutes, starting near now
				n := int(in.u8() % 41)
				d, l := make([]float64, n), make([]float64, n)
				for i := range n {
					d[i], l[i] = in.value(), in.value()
				}
				start := now.Add(time.Duration(int(in.u8())-200) * time.Minute)
				e.Preload(start, d, l)
			case 2: // anywhere in time
				now = time.Unix(in.i64()/4, 0)
			}
			check(t, e.Estimate())
		}
	})
}
