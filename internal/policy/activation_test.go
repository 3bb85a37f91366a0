package policy

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

func zeroSettings() Settings {
	s := base()
	s.Min = 0
	s.Max = 20
	s.ScaleInStabilization = 5 * time.Minute
	// Size for the latest arrivals only, so that the forecast's memory of
	// recent bursts does not hide these rules.
	s.Forecast.Off = true
	return s
}

func TestActivationAtZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		activation int
		visible    int64
		delayed    int64
		inFlight   int64
		want       int // desired on this one decision, from zero workers
	}{
		{name: "empty stays asleep", want: 0},
		{name: "one visible wakes by default", visible: 1, want: 1},
		{name: "one delayed wakes by default", delayed: 1, want: 1},
		{name: "in flight alone does not wake", inFlight: 3, want: 0},
		{name: "below the threshold stays asleep", activation: 10, visible: 6, delayed: 3, want: 0},
		{name: "at the threshold wakes", activation: 10, visible: 7, delayed: 3, want: 1},
		{name: "a large backlog wakes with the sizing's count", activation: 10, visible: 300, want: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := zeroSettings()
			s.Activation = tt.activation
			smp := model.GroupSample{Group: "g", At: t0, Visible: tt.visible, Delayed: tt.delayed, InFlight: tt.inFlight,
				Backlog: tt.visible + tt.delayed + tt.inFlight, Queues: 1, Answered: 1}
			f := asg(0, 0, 0)
			d := Decide(s, smp, f, &State{}, t0)
			checkDecision(t, s, f, d)
			if d.DesiredWorkers != tt.want {
				t.Errorf("desired %d, want %d; reasons %q", d.DesiredWorkers, tt.want, d.Reasons)
			}
		})
	}
}

// TestScaleToZeroRule checks the rule on its own, on a decision the other
// guards would let go to zero: it keeps one worker until the scale-in
// window has been quiet, counted from the first empty sample.
func TestScaleToZeroRule(t *testing.T) {
	t.Parallel()
	s := zeroSettings().WithDefaults()
	tests := []struct {
		name       string
		quietSince time.Duration // before now; -1: not quiet
		sample     model.GroupSample
		current    int
		target     int
		want       int
		reason     string
	}{
		{"quiet for the window: zero", 5 * time.Minute, q(0, 0), 2, 0, 0, "scaling to zero"},
		{"quiet for less: one worker", 5*time.Minute - time.Second, q(0, 0), 2, 0, 1, "keeping 1 worker"},
		{"first empty sample: one worker", -1, q(0, 0), 1, 0, 1, "quiet for 0s"},
		{"a message in flight: one worker", 10 * time.Minute, q(0, 1), 1, 0, 1, "keeping 1 worker"},
		{"a delayed message: one worker", 10 * time.Minute, model.GroupSample{Group: "g", Delayed: 1, Queues: 1, Answered: 1}, 1, 0, 1, "keeping 1 worker"},
		{"not going to zero: untouched", -1, q(0, 0), 3, 2, 2, ""},
		{"asleep, below activation", -1, q(0, 0), 0, 1, 0, "staying at zero"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := &State{}
			if tt.quietSince >= 0 {
				st.zero.quietSince = t0.Add(-tt.quietSince)
			}
			smp := tt.sample
			smp.At = t0
			c := call{s: s, sample: smp, fleet: asg(tt.current, tt.current, 0), st: st, now: t0, b: new(box),
				current: tt.current, target: tt.target, usable: true, at: t0}
			c.scaleToZero()
			c.finishReasons()
			if c.target != tt.want {
				t.Errorf("target %d, want %d; %q", c.target, tt.want, c.d.Reasons)
			}
			if tt.reason != "" && !hasReason(c.d, tt.reason) {
				t.Errorf("no reason with %q: %q", tt.reason, c.d.Reasons)
			}
		})
	}
}

// TestSparseTrafficDoesNotThrash drives Decide with Poisson traffic of one
// message every 5 minutes on average for six hours, each message taken
// within an interval and served within the next, and checks the promise of
// scale to zero: the group goes to zero only after the scale-in window with
// nothing visible, delayed or in flight; at zero it wakes on the first
// decision that sees a message; so it launches at most once per gap between
// messages longer than the window, plus once at the start.
func TestSparseTrafficDoesNotThrash(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2, 3} {
		s := zeroSettings()
		s.ArrivalSmoothing = 5 * time.Second // let the estimate forget at once: the rule must hold alone
		h := newHarness(t, s, asg(0, 0, 0))
		step := 5 * time.Second
		rng := rand.New(rand.NewPCG(seed, 0))
		mean := 5 * time.Minute
		next := time.Duration(rng.ExpFloat64() * float64(mean))
		var arrivals []time.Duration
		launches, prev := 0, 0
		lastBusy := -time.Hour
		inFlight := false
		for i := 1; i <= int(6*time.Hour/step); i++ {
			elapsed := time.Duration(i) * step
			smp := q(0, 0)
			if inFlight {
				smp, inFlight = q(0, 1), false
			}
			if next <= elapsed {
				arrivals = append(arrivals, next)
				for next <= elapsed {
					next += time.Duration(rng.ExpFloat64() * float64(mean))
				}
				smp = q(1, 0)
				inFlight = true
			}
			if smp.Visible+smp.InFlight > 0 {
				lastBusy = elapsed
			}
			d := h.step(step, smp)
			switch {
			case prev == 0 && smp.Visible > 0 && d.DesiredWorkers == 0:
				t.Fatalf("seed %d at %s: a message at zero workers did not wake the group", seed, elapsed)
			case prev > 0 && d.DesiredWorkers == 0 && elapsed-lastBusy <= s.ScaleInStabilization:
				t.Fatalf("seed %d at %s: went to zero %s after the last message, within the %s window", seed, elapsed, elapsed-lastBusy, s.ScaleInStabilization)
			case prev == 0 && d.DesiredWorkers > 0:
				launches++
			}
			prev = d.DesiredWorkers
		}
		longGaps := 0
		for i := 1; i < len(arrivals); i++ {
			if arrivals[i]-arrivals[i-1] > s.ScaleInStabilization {
				longGaps++
			}
		}
		t.Logf("seed %d: %d messages, %d gaps over %s, %d launches in 6 h (%.1f an hour)",
			seed, len(arrivals), longGaps, s.ScaleInStabilization, launches, float64(launches)/6)
		if launches > longGaps+1 {
			t.Errorf("seed %d: %d launches, more than the %d gaps longer than the window plus one", seed, launches, longGaps)
		}
		if launches == 0 {
			t.Errorf("seed %d: no launch at all", seed)
		}
	}
}

func TestMinAboveZeroIgnoresActivation(t *testing.T) {
	t.Parallel()
	s := base() // Min 1
	s.Activation = 50
	smp := q(10, 0)
	smp.At = t0
	d := Decide(s, smp, asg(1, 1, 0), &State{}, t0)
	if d.DesiredWorkers < 1 || hasReason(d, "activation") {
		t.Errorf("min 1: desired %d, reasons %q; activation must not apply", d.DesiredWorkers, d.Reasons)
	}
}

// TestLongJobKeepsItsWorker: a group that does not count in-flight messages
// in its backlog, serving one 20-minute job, keeps its worker while the job
// is in flight, and goes to zero only a window after it is done.
func TestLongJobKeepsItsWorker(t *testing.T) {
	t.Parallel()
	s := zeroSettings()
	s.ServiceTime = 20 * time.Minute
	h := newHarness(t, s, asg(0, 0, 0))
	step := 5 * time.Second
	notCounted := func(visible, inFlight int64) model.GroupSample {
		smp := q(visible, inFlight)
		smp.Backlog = visible
		return smp
	}
	if d := h.step(step, notCounted(1, 0)); d.DesiredWorkers < 1 {
		t.Fatalf("a job at zero: desired %d, want a worker", d.DesiredWorkers)
	}
	for i := 0; i < int(20*time.Minute/step); i++ {
		if d := h.step(step, notCounted(0, 1)); d.DesiredWorkers < 1 {
			t.Fatalf("%s into the job: desired %d, want its worker kept; %q", time.Duration(i+1)*step, d.DesiredWorkers, d.Reasons)
		}
	}
	done := h.now.Add(step)
	var zeroAt time.Time
	for range int(15 * time.Minute / step) {
		if d := h.step(step, notCounted(0, 0)); d.DesiredWorkers == 0 {
			zeroAt = h.now
			break
		}
	}
	if zeroAt.IsZero() || zeroAt.Sub(done) < s.ScaleInStabilization {
		t.Errorf("went to zero %s after the job ended (zero time %v), want at least the %s window, and within 15m", zeroAt.Sub(done), zeroAt, s.ScaleInStabilization)
	}
}

// With the forecast on, a group whose messages come often enough that one is
// expected within the start delay keeps one worker instead of going to zero
// after each; one whose messages are rarer goes to zero after the window.
func TestScaleToZeroWaitsForExpectedMessages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		every int // minutes between messages in the history
		zero  bool
	}{
		// A message every 5 minutes: λ = 1/300 msg/s; within a 60 s start
		// delay and a 5 s interval, 1 − e^(−65/300) = 19.5 % ≥ 5 %.
		{"every 5 minutes", 5, false},
		// Every 30 minutes: 1 − e^(−65/1800) = 3.5 % < 5 %.
		{"every 30 minutes", 30, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			s.Min, s.Max = 0, 20
			s.StartDelay = time.Minute
			h := newHarness(t, s, asg(1, 1, 0))
			start := h.now.Add(-2 * time.Hour).Truncate(time.Minute)
			hist := model.MinuteHistory{Start: start, Counts: make([]float64, 120)}
			for i := range hist.Counts {
				if i%tc.every == 0 {
					hist.Counts[i] = 1
				}
			}
			h.st.Preload(s, hist)
			var d model.Decision
			for range 5 * 12 { // five quiet minutes
				d = h.step(5*time.Second, q(0, 0))
			}
			if got := d.DesiredWorkers == 0; got != tc.zero {
				t.Fatalf("desired %d, want zero %v; reasons %q", d.DesiredWorkers, tc.zero, d.Reasons)
			}
			if !tc.zero && !hasReason(d, "keeping 1 worker: at", "a message is expected within the 1m0s start delay") {
				t.Fatalf("reasons %q", d.Reasons)
			}
		})
	}
}
