package sim

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/measure"
)

// cumulative is, at each whole minute k of the clock from the one
// holding twin's start (its time clamped to the start), what twin has
// had by then: the messages sent, the messages deleted (sent less
// waiting and in flight), and the messages in flight with none waiting
// (a fleet that never falls behind). Counted apart from the minute log,
// from the world's scores and snapshots.
func cumulative(t *testing.T, twin *World, minutes int) (sent, deleted, inFlight []int64) {
	t.Helper()
	off := twin.cfg.Start.Sub(twin.cfg.Start.Truncate(time.Minute))
	for k := range minutes + 1 {
		at := twin.cfg.Start.Add(max(time.Duration(k)*time.Minute-off, 0))
		p := twin.Snapshot(at)
		n := twin.Scores().Messages
		if p.OldestAge > 0 {
			t.Fatalf("minute %d: a message waits %v s; the test wants a fleet that never falls behind", k, p.OldestAge)
		}
		sent, deleted, inFlight = append(sent, n), append(deleted, n-p.Backlog), append(inFlight, p.Backlog)
	}
	return sent, deleted, inFlight
}

// The world's history is what it sent, deleted and held in flight,
// minute by minute, counted apart on a twin world (same seed): a CSV
// scenario at 5 msg/s for ten minutes, then 20 msg/s, on 100 workers that
// never let a message wait, each message taking 2 s. The minutes run
// from the first whole minute at or after the start, to the last one
// published by the time asked for (a minute late, 150 s late), at most
// the span back for the arrivals and measure.PreloadSpan for the fleet.
// Over the fleet's minutes the in-flight integral is 2 s × the messages
// deleted, give or take what the messages in flight at either end spent
// outside them, and its average is rate × 2 s (Little's law): 10 and 40
// messages.
func TestHistoryIsTheMinutesSentDeletedAndInFlight(t *testing.T) {
	t.Parallel()
	const service = 2.0
	sc := csvScenario(t, "0,5\n600,20\n3600,20\n")
	tests := []struct {
		name   string
		offset time.Duration // of the world's start past a whole minute
		delay  time.Duration
		now    time.Duration // since the minute holding the start
		span   time.Duration
		// [first, to) are the arrivals' minutes, [fleetFirst, to) the fleet's.
		first, to, fleetFirst int
	}{
		{"a minute late, everything since the start", 0, time.Minute, 20*time.Minute + 30*time.Second, time.Hour, 0, 19, 0},
		{"a minute late, as the minute ends", 0, time.Minute, 20 * time.Minute, time.Hour, 0, 19, 0},
		{"published at once", 0, 0, 20 * time.Minute, time.Hour, 0, 20, 0},
		{"a span of ten minutes", 0, time.Minute, 20*time.Minute + 30*time.Second, 10 * time.Minute, 10, 19, 0},
		{"the fleet's 30 minutes", 0, time.Minute, 45*time.Minute + 59*time.Second, time.Hour, 0, 44, 15},
		{"150 s late, starting 17 s into a minute", 17 * time.Second, 150 * time.Second, 30 * time.Minute, time.Hour, 1, 27, 1},
		{"a span of 90 s reads two minutes", 0, 0, 30*time.Minute + 10*time.Second, 90 * time.Second, 28, 30, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Start: t0.Add(tt.offset), Scenario: sc, Service: Service{Dist: DistConstant, Mean: 2 * time.Second},
				Min: 100, Max: 100, Workers: 100, Seed: 11, MetricDelay: tt.delay}
			w, twin := mustWorld(t, cfg), mustWorld(t, cfg)
			for s := 5 * time.Second; s < tt.now-tt.offset; s += 5 * time.Second {
				w.Snapshot(cfg.Start.Add(s)) // the run's steps, which History must not disturb
			}
			arr, fleet := w.History(t0.Add(tt.now), tt.span, true)
			sent, deleted, inFlight := cumulative(t, twin, tt.to)

			if len(arr.Counts) != tt.to-tt.first || !arr.Start.Equal(t0.Add(time.Duration(tt.first)*time.Minute)) {
				t.Fatalf("arrivals: %d minutes from %v, want %d from minute %d", len(arr.Counts), arr.Start, tt.to-tt.first, tt.first)
			}
			for i, c := range arr.Counts {
				k := tt.first + i
				if want := sent[k+1] - sent[k]; c != float64(want) {
					t.Errorf("minute %d: %v sent, want %d", k, c, want)
				}
			}
			n := tt.to - tt.fleetFirst
			if len(fleet.Deleted) != n || len(fleet.InFlight) != n || !fleet.Start.Equal(t0.Add(time.Duration(tt.fleetFirst)*time.Minute)) {
				t.Fatalf("fleet: %d and %d minutes from %v, want %d from minute %d", len(fleet.Deleted), len(fleet.InFlight), fleet.Start, n, tt.fleetFirst)
			}
			// From the fleet's first minute f to the end of minute k, the
			// messages in flight spent 2 s × the messages deleted in
			// between, less what those in flight at f had spent before f,
			// plus what those in flight at k's end have spent so far.
			f, integral := tt.fleetFirst, 0.0
			for i := range n {
				k := f + i
				if want := float64(deleted[k+1]-deleted[k]) / 60; fleet.Deleted[i] != want {
					t.Errorf("minute %d: deleted %v msg/s, want %v", k, fleet.Deleted[i], want)
				}
				integral += 60 * fleet.InFlight[i]
				done := service * float64(deleted[k+1]-deleted[f])
				lo, hi := done-service*float64(inFlight[f]), done+service*float64(inFlight[k+1])
				if integral < lo-1e-6 || integral > hi+1e-6 {
					t.Errorf("minutes %d to %d: %v message-seconds in flight, want within %v and %v", f, k, integral, lo, hi)
				}
			}
			// Little's law over each rate's whole minutes after the first.
			for _, phase := range []struct {
				from, to int
				want     float64
			}{{1, 10, 5 * service}, {11, tt.to, 20 * service}} {
				sum, m := 0.0, 0
				for i, v := range fleet.InFlight {
					if k := tt.fleetFirst + i; k >= phase.from && k < phase.to {
						sum += v
						m++
					}
				}
				if m >= 5 && math.Abs(sum/float64(m)/phase.want-1) > 0.08 {
					t.Errorf("minutes %d to %d: %v in flight on average, want %v (Little's law) within 8 %%", phase.from, phase.to, sum/float64(m), phase.want)
				}
			}
		})
	}
}

// The weeks before the arrivals' minutes come at five minutes of the
// clock, the sums of their minutes, from the first five minutes that
// start at or after the world's first whole minute up to the five
// minutes holding the arrivals' first minute; with no span (no group
// reads arrivals) neither comes, and without weeks (no group forecasts:
// the burst learner's hour alone) the minutes come alone.
func TestHistoryWeeklyAreTheFiveMinutesBefore(t *testing.T) {
	t.Parallel()
	sc := csvScenario(t, "0,5\n600,20\n3600,20\n")
	for _, offset := range []time.Duration{0, 17 * time.Second, 6 * time.Minute} {
		cfg := Config{Start: t0.Add(offset), Scenario: sc, Service: Service{Dist: DistConstant, Mean: 2 * time.Second},
			Min: 60, Max: 60, Workers: 60, Seed: 5, MetricDelay: time.Minute}
		w, twin := mustWorld(t, cfg), mustWorld(t, cfg)
		now := t0.Add(57*time.Minute + 40*time.Second)
		arr, _ := w.History(now, 13*time.Minute, true) // minutes [44, 56), weeks [from, 40)
		sent, _, _ := cumulative(t, twin, 56)
		shift := int(offset / time.Minute) // twin's minutes are counted from the one holding its start
		if offset%time.Minute != 0 {
			shift++ // its first whole minute
		}
		from := (shift + 4) / 5 * 5
		if len(arr.Counts) != 56-44 || !arr.Start.Equal(t0.Add(44*time.Minute)) || len(arr.Weekly) != (40-from)/5 {
			t.Fatalf("start %v: %d minutes from %v and %d five minutes, want 12 from minute 44 and %d", offset, len(arr.Counts), arr.Start, len(arr.Weekly), (40-from)/5)
		}
		if !arr.WeeklyStart.Equal(t0.Add(time.Duration(from) * time.Minute)) {
			t.Errorf("start %v: the weeks start at %v, want minute %d", offset, arr.WeeklyStart, from)
		}
		base := int(offset / time.Minute) // the minute holding the start is twin's minute 0
		for i, v := range arr.Weekly {
			k := from + 5*i - base
			if want := sent[k+5] - sent[k]; v != float64(want) {
				t.Errorf("start %v: five minutes from minute %d: %v sent, want %d", offset, from+5*i, v, want)
			}
		}
		if none, _ := w.History(now, 0, true); none.Counts != nil || none.Weekly != nil || !none.Start.IsZero() {
			t.Errorf("start %v: with no span %+v, want no arrivals", offset, none)
		}
		if minutes, _ := w.History(now, 13*time.Minute, false); len(minutes.Counts) != 56-44 || minutes.Weekly != nil || !minutes.WeeklyStart.IsZero() {
			t.Errorf("start %v: without the weeks %d minutes and %d five minutes from %v, want 12 and none", offset, len(minutes.Counts), len(minutes.Weekly), minutes.WeeklyStart)
		}
	}
}

// Before a whole minute is published there is no history, and the
// fleet's reaches back measure.PreloadSpan at most.
func TestHistoryEmptyAndBounded(t *testing.T) {
	t.Parallel()
	sc := csvScenario(t, "0,5\n3600,5\n")
	w := mustWorld(t, Config{Scenario: sc, Service: Service{Dist: DistConstant, Mean: time.Second}, Min: 10, Max: 10, Workers: 10, Seed: 3, MetricDelay: time.Minute})
	if arr, fleet := w.History(t0.Add(119*time.Second), time.Hour, true); arr.Counts != nil || fleet.Deleted != nil || !arr.Start.IsZero() || !fleet.Start.IsZero() {
		t.Errorf("at 119 s: %+v, %+v; want none (minute 0 is published at 120 s)", arr, fleet)
	}
	if arr, fleet := w.History(t0.Add(120*time.Second), time.Hour, true); len(arr.Counts) != 1 || len(fleet.Deleted) != 1 {
		t.Errorf("at 120 s: %d and %d minutes, want 1", len(arr.Counts), len(fleet.Deleted))
	}
	if _, fleet := w.History(t0.Add(50*time.Minute), time.Hour, true); len(fleet.Deleted) != int(measure.PreloadSpan/time.Minute)-1 ||
		!fleet.Start.Equal(t0.Add(50*time.Minute-measure.PreloadSpan)) {
		t.Errorf("at 50 min: %d fleet minutes from %v, want %d from %v", len(fleet.Deleted), fleet.Start,
			int(measure.PreloadSpan/time.Minute)-1, t0.Add(50*time.Minute-measure.PreloadSpan))
	}
}
