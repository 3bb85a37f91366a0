package policy

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// Through Decide: arrivals climbing 12 msg/s a minute, served at once by a
// fleet that follows every decision (in flight λ × S by Little's law). Once
// the estimate has settled on the climb, the utilisation floor sizes for
// the rate a start delay ahead, not for the estimate, which lags a τ behind.
func TestRampSizedForTheRateWhenNewWorkersServe(t *testing.T) {
	t.Parallel()
	s := base()
	s.Utilization = 0.8
	s.StartDelay = time.Minute
	s.Max = 1000
	h := newHarness(t, s, asg(10, 10, 0))
	rate := func(ts float64) float64 { return 5 + 0.2*ts }
	checked := 0
	for ts := 5.0; ts <= 560; ts += 5 {
		d := h.step(5*time.Second, q(0, int64(math.Round(rate(ts)*s.ServiceTime.Seconds()))))
		if ts < 400 {
			continue // the estimate catches up with the climb (its dump bound holds the first rises back)
		}
		checked++
		ahead := rate(ts + s.StartDelay.Seconds())
		lo, hi := int(math.Ceil(0.97*ahead/s.Utilization)), int(math.Ceil(1.03*ahead/s.Utilization))
		if d.RecommendedWorkers < lo || d.RecommendedWorkers > hi {
			t.Fatalf("at %.0f s: recommended %d, want %d–%d for the %.1f msg/s a start delay ahead (estimate %.1f msg/s); reasons %q",
				ts, d.RecommendedWorkers, lo, hi, ahead, *d.ArrivalRate, d.Reasons)
		}
		if !hasReason(d, "arrivals climbing", "msg/s a minute", "launched now are in service") {
			t.Fatalf("at %.0f s: no reason names the climb: %q", ts, d.Reasons)
		}
	}
	if checked == 0 {
		t.Fatal("no decision checked")
	}
}

// A reason that names two durations names each: the climb's names the
// smoothing (1 minute) and the start delay, here a measured 47.498897552 s,
// read as people read it.
func TestClimbReasonNamesTheSmoothingAndTheStartDelay(t *testing.T) {
	t.Parallel()
	s := base()
	s.StartDelay = 47498897552 * time.Nanosecond
	s.Max = 1000
	h := newHarness(t, s, asg(10, 10, 0))
	for ts := 5.0; ts <= 560; ts += 5 {
		d := h.step(5*time.Second, q(0, int64(math.Round((5+0.2*ts)*s.ServiceTime.Seconds()))))
		if hasReason(d, "arrivals climbing") {
			if !hasReason(d, "arrivals climbing", "(the 1m0s average's lag and the 47s start delay)") {
				t.Fatalf("at %.0f s: %q", ts, d.Reasons)
			}
			return
		}
	}
	t.Fatal("no reason names the climb")
}

func TestDurationTextsAreRounded(t *testing.T) {
	t.Parallel()
	var dt durationTexts
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{200 * time.Millisecond, "200ms"}, {1234567 * time.Microsecond, "1.2s"},
		{47498897552 * time.Nanosecond, "47s"}, {time.Minute, "1m0s"}, {15 * time.Minute, "15m0s"},
	} {
		if got := string(*dt.of(tc.d, slotWindow)); got != tc.want {
			t.Errorf("%v reads %q, want %q", tc.d, got, tc.want)
		}
	}
}

// TestNumbersReadAsNumbers: a reason's numbers and times read as people
// write them at their edges: three figures of 999.7 are 1000 (not 1e+03),
// and 999.7 ms is 1 s.
func TestNumbersReadAsNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v    any
		want string
	}{
		{number(999.7), "1000"}, {number(999.4), "999"}, {number(12.34), "12.3"}, {number(1234.5), "1234"},
		{seconds(0.9997), "1 s"}, {seconds(0.9994), "999 ms"}, {seconds(0.2), "200 ms"}, {seconds(2.5), "2.5 s"},
	} {
		if got := fmt.Sprint(tc.v); got != tc.want {
			t.Errorf("%#v reads %q, want %q", tc.v, got, tc.want)
		}
	}
}
