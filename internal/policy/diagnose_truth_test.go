package policy

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A group that receives and serves a stream with an empty queue is healthy:
// idle means that nothing arrives.
func TestIdleOnlyWhenNothingArrives(t *testing.T) {
	t.Parallel()
	fast := func() Settings { s := base(); s.ServiceTime = 50 * time.Millisecond; return s }
	cases := []struct {
		name    string
		s       func() Settings
		fleet   model.Fleet
		sent    float64 // NumberOfMessagesSent, msg/s; < 0: none
		deleted float64 // NumberOfMessagesDeleted, msg/s; < 0: none
		flight  []int64 // in flight per sample; nothing visible
		want    string
	}{
		// 14 msg/s at 50 ms each keep 0.7 slots busy on average: in flight
		// reads 0 or 1 of 5 slots, as an idle fleet's would.
		{"14 msg/s sent, empty queue: healthy", fast, asg(5, 5, 0), 14, -1, []int64{1, 0, 1, 0, 1, 0}, model.DiagHealthy},
		{"14 msg/s deleted, empty queue: healthy", fast, asg(5, 5, 0), -1, 14, []int64{0, 1, 0, 0, 1, 0}, model.DiagHealthy},
		{"in flight coming and going, no CloudWatch: healthy", fast, asg(5, 5, 0), -1, -1, []int64{1, 1, 1, 1, 1, 1}, model.DiagHealthy},
		{"nothing sent, deleted or in flight: idle", fast, asg(5, 5, 0), 0, 0, []int64{0, 0, 0, 0, 0, 0}, model.DiagIdle},
		{"first sample, nothing in flight: idle", fast, asg(5, 5, 0), -1, -1, []int64{0}, model.DiagIdle},
		{"first sample, a message in flight: healthy", fast, asg(5, 5, 0), -1, -1, []int64{1}, model.DiagHealthy},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.s(), tc.fleet)
			var d model.Decision
			for i, f := range tc.flight {
				smp := q(0, f)
				at := h.now.Add(tick).Add(-30 * time.Second)
				if tc.sent >= 0 {
					smp.Sent = reading(tc.sent, at)
				}
				if tc.deleted >= 0 {
					smp.Deleted = reading(tc.deleted, at)
				}
				dt := tick
				if i == 0 {
					dt = 0
				}
				d = h.step(dt, smp)
			}
			if d.Diagnosis != tc.want {
				t.Fatalf("diagnosis %q, want %q; arrival %v, reasons %q", d.Diagnosis, tc.want, ptrVal(d.ArrivalRate), d.Reasons)
			}
		})
	}
}

// After the stream stops, the arrival estimate decays to 0 and the group
// becomes idle; while it decays, it is not.
func TestIdleAfterTheStreamStops(t *testing.T) {
	t.Parallel()
	s := base()
	s.ServiceTime = 50 * time.Millisecond
	h := newHarness(t, s, asg(5, 5, 0))
	for range 12 {
		h.step(tick, q(0, 1))
	}
	first := h.step(tick, q(0, 0))
	if first.Diagnosis == model.DiagIdle {
		t.Fatalf("idle one sample after the stream stopped; arrival %v", ptrVal(first.ArrivalRate))
	}
	var d model.Decision
	for range 240 { // 20 minutes at 5 s
		d = h.step(tick, q(0, 0))
		if d.Diagnosis == model.DiagIdle {
			break
		}
	}
	if d.Diagnosis != model.DiagIdle || d.ArrivalRate == nil || *d.ArrivalRate != 0 {
		t.Fatalf("diagnosis %q with arrival %v after 20 quiet minutes, want idle at 0", d.Diagnosis, ptrVal(d.ArrivalRate))
	}
}

func ptrVal(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// cronHistory is per-minute history of a 2 msg/s stream with a job of
// `job` msg/s for two minutes at :07, :27 and :47 of every hour, for the
// given hours before end.
func cronHistory(end time.Time, hours int, job float64) model.MinuteHistory {
	start := end.Add(-time.Duration(hours) * time.Hour).Truncate(time.Minute)
	n := int(end.Sub(start) / time.Minute)
	h := model.MinuteHistory{Start: start, Counts: make([]float64, n)}
	for i := range h.Counts {
		m := start.Add(time.Duration(i) * time.Minute).Minute()
		rate := 2.0
		if (m-7)%20 == 0 || (m-8)%20 == 0 {
			rate = job
		}
		h.Counts[i] = rate * 60
	}
	return h
}

// cappedBeforeJob is the group TestCappedOnlyByCurrentLoad, its benchmark
// and TestBetReasonSaysTheBet decide for: capped at 12, a 90 s start
// delay, and the time, 10:05:30, a start delay and an interval before the
// job of cronHistory due at 10:07.
func cappedBeforeJob() (Settings, time.Time) {
	s := base()
	s.StartDelay = 90 * time.Second
	s.Cap = 12
	return s, time.Date(2025, 3, 1, 10, 5, 30, 0, time.UTC)
}

// harnessBeforeJob is a harness of that group, 4 workers in service, at two
// minutes before its time, with eight hours of the job's history preloaded.
func harnessBeforeJob(t *testing.T) (Settings, *harness) {
	t.Helper()
	s, now := cappedBeforeJob()
	h := newHarness(t, s, asg(4, 4, 0))
	h.now = now.Add(-2 * time.Minute)
	if n := h.st.Preload(s, cronHistory(h.now, 8, 40)); n == 0 {
		t.Fatal("nothing preloaded")
	}
	return s, h
}

// A cap below what a forecast asks for, but above what today's load needs,
// lowers the count to the cap without calling the group capped; a cap below
// today's load's needs does.
func TestCappedOnlyByCurrentLoad(t *testing.T) {
	t.Parallel()
	_, now := cappedBeforeJob()

	t.Run("forecast above the cap, today's load below it", func(t *testing.T) {
		t.Parallel()
		s, h := harnessBeforeJob(t)
		var d model.Decision
		for range 24 {
			// 2 msg/s at 1 s: two in flight.
			d = h.step(tick, q(0, 2))
		}
		if d.Forecast == nil || !(d.Forecast.Rate > 20) {
			t.Fatalf("no forecast of the job: %+v; reasons %q", d.Forecast, d.Reasons)
		}
		if d.RecommendedWorkers <= s.Cap {
			t.Fatalf("recommended %d, want above the cap %d for the forecast", d.RecommendedWorkers, s.Cap)
		}
		// Today's 2 msg/s need a handful of workers, far below the cap:
		// ceil(2 / 0.8) = 3 at the utilisation ceiling.
		if d.Capped || d.Diagnosis == model.DiagCapped {
			t.Fatalf("capped (%v, %q) by a forecast; reasons %q", d.Capped, d.Diagnosis, d.Reasons)
		}
		if d.DesiredWorkers != s.Cap {
			t.Fatalf("desired %d, want the cap %d", d.DesiredWorkers, s.Cap)
		}
		if !hasReason(d, "the forecast asks for", "the cap allows 12") {
			t.Fatalf("no reason says the forecast was lowered to the cap: %q", d.Reasons)
		}
	})
	t.Run("today's load above the cap", func(t *testing.T) {
		t.Parallel()
		s, _ := cappedBeforeJob()
		h := newHarness(t, s, asg(12, 12, 0))
		h.now = now.Add(-2 * time.Minute)
		var d model.Decision
		for i := range 24 {
			// 30 msg/s arrive, 12 workers serve 12: the queue grows by
			// 18 msg/s.
			d = h.step(tick, q(int64(i)*18*5, 12))
		}
		need := int(math.Ceil(30 / 0.8))
		if d.RecommendedWorkers < need {
			t.Fatalf("recommended %d, want at least %d", d.RecommendedWorkers, need)
		}
		if !d.Capped || d.Diagnosis != model.DiagCapped {
			t.Fatalf("capped %v, diagnosis %q: want capped; reasons %q", d.Capped, d.Diagnosis, d.Reasons)
		}
	})
}

// BenchmarkDecideForecastAboveCap is one decision whose forecast asks for
// more than the cap while today's load does not, with eight hours of
// history: the path on which the current load's need is computed beside
// the recommendation (diagnosis and clamp).
func BenchmarkDecideForecastAboveCap(b *testing.B) {
	s, now := cappedBeforeJob()
	var st State
	st.Preload(s, cronHistory(now.Add(-2*time.Minute), 8, 40))
	fleet := asg(4, 4, 0)
	at := now.Add(-2 * time.Minute)
	for range 24 {
		at = at.Add(tick)
		smp := q(0, 2) // 2 msg/s at 1 s, as TestCappedOnlyByCurrentLoad: today's load far below the cap
		smp.At = at
		Decide(s, smp, fleet, &st, at)
	}
	d := Decide(s, model.GroupSample{}, fleet, &st, at)
	_ = d
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		t := at.Add(time.Duration(i%2) * time.Millisecond)
		smp := q(0, 2)
		smp.At = t
		d = Decide(s, smp, fleet, &st, t)
	}
	b.StopTimer()
	if d.Forecast == nil || d.Capped || d.RecommendedWorkers <= s.Cap {
		b.Fatalf("not the path measured: forecast %+v, capped %v, recommended %d", d.Forecast, d.Capped, d.RecommendedWorkers)
	}
}

// TestBetReasonSaysTheBet checks the sentence a bet writes, appended piece
// by piece, against the same facts formatted by fmt: the counts, the
// pattern, the chance to a tenth of a percent with trailing zeros cut, the
// time, the rate to three figures and the floor that sizes for it.
func TestBetReasonSaysTheBet(t *testing.T) {
	t.Parallel()
	_, h := harnessBeforeJob(t)
	bets := 0
	for range 24 {
		d := h.step(tick, q(0, 2))
		f := d.Forecast
		if f == nil || f.Bet == nil {
			continue
		}
		bets++
		when := "expected at"
		if !f.At.After(d.At) {
			when = "due since"
		}
		floor := "the utilisation floor"
		if f.Floor == model.FloorWait {
			floor = "the wait floor"
		}
		rate := strconv.FormatFloat(f.SizedFor, 'g', 3, 64)
		if f.SizedFor == math.Trunc(f.SizedFor) {
			rate = strconv.Itoa(int(f.SizedFor))
		}
		want := fmt.Sprintf("seen %d of %d times, %s, chance %s %%: pre-starting %d of %d workers for the load %s %s (%s msg/s; missed, about %d messages past the promise): %s",
			f.Seen, f.Of, f.Pattern, strconv.FormatFloat(math.Round(f.Bet.Chance*1000)/10, 'g', -1, 64), f.Bet.Workers, f.Bet.Need,
			when, f.At.Format("15:04:05"), rate, int(f.Bet.LateIfMissed), floor)
		if !slices.Contains(d.Reasons, want) {
			t.Fatalf("at %s the reasons do not say the bet %+v as %q: %q", d.At.Format("15:04:05"), *f.Bet, want, d.Reasons)
		}
	}
	if bets == 0 {
		t.Fatal("no decision bet on the job")
	}
}
