package sim

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// sampleAt is w's sample at s seconds after its own start.
func sampleAt(t *testing.T, w *World, s float64) model.GroupSample {
	t.Helper()
	obs, err := w.Observe(context.Background(), w.cfg.Start.Add(time.Duration(s*float64(time.Second))))
	if err != nil {
		t.Fatal(err)
	}
	return obs[0].Sample
}

// completed is how many messages twin has completed by each of the times
// (seconds after its start, in order): every arrival so far less those
// waiting or in flight.
func completed(twin *World, times []float64) []int64 {
	out := make([]int64, len(times))
	for i, s := range times {
		p := twin.Snapshot(twin.cfg.Start.Add(time.Duration(s * float64(time.Second))))
		out[i] = twin.Scores().Messages - p.Backlog
	}
	return out
}

// A bursty queue on a fleet that falls behind in the bursts, observed every
// 5 s: the poller reads at 0, 60, 120, ... s, and each read finds the newest
// minute published by then. Its Deleted reading is that minute's
// completions ÷ 60, counted independently on a twin world (same seed) as
// arrivals less backlog at the minute's ends, and stamped with the
// minute's start, a whole minute of the clock even when the world starts
// between two.
func TestDeletedIsTheMinutesCompletions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		delay  time.Duration
		offset time.Duration // of the world's start past a whole minute
	}{
		{"published at the minute's end", 0, 0},
		{"a minute late", time.Minute, 0},
		{"150 s late, starting 17 s into a minute", 150 * time.Second, 17 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, _ := Builtin(ScenarioBursty, 10, time.Hour)
			cfg := Config{Start: t0.Add(tt.offset), Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
				Min: 4, Max: 4, Workers: 4, Seed: 7, MetricDelay: tt.delay}
			w, twin := mustWorld(t, cfg), mustWorld(t, cfg)
			off := tt.offset.Seconds()
			// bounds[k] is minute k's start in seconds since the world's
			// start, clamped to the start.
			bounds := make([]float64, 25)
			for k := range bounds {
				bounds[k] = math.Max(0, float64(k)*60-off)
			}
			done := completed(twin, bounds)
			var seen int
			for s := 0.0; s <= 1200; s += 5 {
				got := sampleAt(t, w, s).Deleted
				read := math.Floor(s/60) * 60
				k := int64(math.Floor((read+off-tt.delay.Seconds())/60)) - 1 // newest published by the read
				if k < 0 {
					if got != nil {
						t.Fatalf("at %v s: deleted %+v before any minute is published", s, got)
					}
					continue
				}
				n := done[k+1] - done[k]
				wantAt := t0.Add(time.Duration(k) * time.Minute)
				if got == nil || got.Value != float64(n)/60 || !got.At.Equal(wantAt) {
					t.Fatalf("at %v s: deleted %+v, want %v (%d completions) at %v", s, got, float64(n)/60, n, wantAt)
				}
				seen++
			}
			if seen < 150 {
				t.Errorf("only %d readings checked", seen)
			}
		})
	}
}

// A minute's datapoint can be read once its minute and the delay have
// passed, and the poller reads at most once a minute: it holds what it
// found last until a minute after its last read, however many minutes are
// published meanwhile. Its look-back is 10 minutes before the minute under
// way, so a delay past 9 minutes is never read.
func TestMetricsArePublishedLateAndReadOncePerMinute(t *testing.T) {
	t.Parallel()
	type obs struct {
		s      float64
		minute int64 // the minute the reading is of; -1 for none
	}
	tests := []struct {
		name  string
		delay time.Duration
		obs   []obs
	}{
		// Minute k is published at (k+1)·60 + 90 s.
		{"90 s late", 90 * time.Second, []obs{
			{0, -1},
			{149.5, -1}, // read: minute 0 is not out yet
			{150, -1},   // out now, but the last read was a moment ago
			{209.5, 0},  // read: minute 0
			{210, 0},    // minute 1 is out, not read
			{269.5, 1},  // read
			{400, 4},    // read: minutes 2 to 4 are out, the newest wins
			{459, 4},    // minute 5 out at 450, but the last read was at 400
			{460, 5},    // read
		}},
		{"first read as minute 0 is published", 90 * time.Second, []obs{{150, 0}}},
		{"first read just before", 90 * time.Second, []obs{{149.5, -1}, {150, -1}, {209.25, -1}, {209.5, 0}}},
		// Published at (k+1)·60 + 540 s: at 659 s minute 0 is just within
		// the look-back (from minute 10 − 10).
		{"at the edge of the look-back", 9 * time.Minute, []obs{{599, -1}, {659, 0}, {719, 1}}},
		// Published at (k+1)·60 + 570 s: the newest minute out is within
		// the look-back only for reads in the second half of a minute.
		{"near the look-back", 9*time.Minute + 30*time.Second, []obs{{600, -1}, {665, -1}, {760, 2}, {820, 3}, {900, -1}}},
		{"past the look-back", 10 * time.Minute, []obs{{0, -1}, {660, -1}, {720, -1}, {1800, -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			steady, _ := Builtin(ScenarioSteady, 5, time.Hour)
			w := mustWorld(t, Config{Scenario: steady, Service: Service{Mean: 200 * time.Millisecond},
				Min: 2, Max: 2, Workers: 2, Seed: 3, MetricDelay: tt.delay, ReportOldestAge: true})
			for _, o := range tt.obs {
				s := sampleAt(t, w, o.s)
				if o.minute < 0 {
					if s.Deleted != nil || s.OldestAge != nil {
						t.Errorf("at %v s: deleted %+v, oldest age %+v; want none", o.s, s.Deleted, s.OldestAge)
					}
					continue
				}
				want := t0.Add(time.Duration(o.minute) * time.Minute)
				if s.Deleted == nil || !s.Deleted.At.Equal(want) || s.OldestAge == nil || !s.OldestAge.At.Equal(want) {
					t.Errorf("at %v s: deleted %+v, oldest age %+v; want both of the minute at %v", o.s, s.Deleted, s.OldestAge, want)
				}
			}
		})
	}
}

// The oldest-age datapoint is the highest age the oldest message reached
// within the minute: here it peaks mid-minute, as a burst (15 msg/s for 20
// s of every minute, on a worker that serves 10 msg/s) drains. The
// maximum is taken independently from a twin world sampled every 10 ms.
func TestOldestAgeIsTheMinutesMaximum(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		offset time.Duration
	}{
		{"starting on a minute", 0},
		{"starting 17 s into one", 17 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc := csvScenario(t, "0,15\n20,0\n60,15\n80,0\n120,15\n140,0\n180,15\n200,0\n240,15\n260,0\n")
			sc.Period = time.Minute * 5
			cfg := Config{Start: t0.Add(tt.offset), Scenario: sc, Service: Service{Mean: 100 * time.Millisecond},
				Min: 1, Max: 1, Workers: 1, Seed: 5, ReportOldestAge: true}
			w, twin := mustWorld(t, cfg), mustWorld(t, cfg)
			off := tt.offset.Seconds()
			for k := int64(1); k <= 6; k++ {
				from, to := math.Max(0, float64(k)*60-off), float64(k+1)*60-off
				want := 0.0
				for s := from; s <= to; s += 0.01 {
					want = math.Max(want, twin.Snapshot(twin.cfg.Start.Add(time.Duration(s*float64(time.Second)))).OldestAge)
				}
				got := sampleAt(t, w, to).OldestAge // read as the minute is published
				wantAt := t0.Add(time.Duration(k) * time.Minute)
				if got == nil || math.Abs(got.Value-want) > 0.02 || !got.At.Equal(wantAt) {
					t.Errorf("minute %d: oldest age %+v, want %.3f s at %v", k, got, want, wantAt)
				}
				if want < 5 {
					t.Errorf("minute %d: highest age %.3f s: the burst did not build a queue", k, want)
				}
			}
		})
	}
}

// Exact metrics are the completions per second over the last 60 s and the
// oldest age, both as of the sample, from the first sample on.
func TestExactMetricsAreAsOfTheSample(t *testing.T) {
	t.Parallel()
	sc, _ := Builtin(ScenarioBursty, 10, time.Hour)
	cfg := Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, Min: 3, Max: 3, Workers: 3, Seed: 2,
		ReportOldestAge: true, MetricsExact: true, MetricDelay: 5 * time.Minute}
	w, twin := mustWorld(t, cfg), mustWorld(t, cfg)
	var times []float64
	for s := 0.0; s <= 900; s += 5 {
		times = append(times, s)
	}
	done := make([]int64, len(times))
	ages := make([]float64, len(times))
	for i, s := range times {
		p := twin.Snapshot(at(s))
		done[i], ages[i] = twin.Scores().Messages-p.Backlog, p.OldestAge
	}
	for i := 1; i < len(times); i++ {
		s := times[i]
		smp := sampleAt(t, w, s)
		from := max(0, i-12) // 60 s before
		n := done[i] - done[from]
		span := s - times[from]
		age := ages[i]
		if smp.Deleted == nil || math.Abs(smp.Deleted.Value-float64(n)/span) > 1e-9 || !smp.Deleted.At.Equal(at(s)) {
			t.Fatalf("at %v s: deleted %+v, want %v now", s, smp.Deleted, float64(n)/span)
		}
		if smp.OldestAge == nil || smp.OldestAge.Value != age || !smp.OldestAge.At.Equal(at(s)) {
			t.Fatalf("at %v s: oldest age %+v, want %v now", s, smp.OldestAge, age)
		}
	}
}
