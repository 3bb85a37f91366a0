package measure

import (
	"math"
	"testing"
	"time"
)

// The documented weighting, restated here so the expectations do not come
// from the code under test: weight exp(−age / 6 min), over 24 minutes.
const (
	docTau    = 6.0
	docWindow = 24
)

// t0 is a minute boundary; the tests' minute m starts at t0 + m minutes.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func at(m int, sec float64) time.Time {
	return t0.Add(time.Duration(m)*time.Minute + time.Duration(sec*float64(time.Second)))
}

// level is what the samples of one minute show, held constant.
type level struct {
	visible, inFlight float64
	workers           int
}

// samples feeds minute m with a sample every 5 s (offsets 0, 5, ..., 55)
// at the level lv. The minute is judged once a sample of m+1 arrives.
func samples(e *Estimator, m int, lv level) {
	for s := 0.0; s < 60; s += 5 {
		e.Sample(at(m, s), lv.visible, lv.inFlight, lv.workers, true)
	}
}

// steady feeds minutes from..to-1 at lv and delivers each minute's reading
// one minute after it closes, as CloudWatch would, repeated on every sample.
func steady(e *Estimator, from, to int, lv level, deleted, received float64) {
	for m := from; m < to+2; m++ {
		l := lv
		if m >= to {
			l = level{} // two trailing minutes so every reading is judged
		}
		for s := 0.0; s < 60; s += 5 {
			e.Sample(at(m, s), l.visible, l.inFlight, l.workers, true)
			if d := m - 2; d >= from && d < to {
				e.Minute(at(d, 0), deleted, received)
			}
		}
	}
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(math.Abs(want), 1e-12)
}

func secs(d time.Duration) float64 { return d.Seconds() }

// TestSteadyMinutes checks one kind of minute, repeated, against Little's law
// worked by hand: S = min(L − A·VT, slots) ÷ D.
func TestSteadyMinutes(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	tests := []struct {
		name              string
		cfg               Config
		lv                level
		deleted, received float64
		wantS             float64 // seconds; 0: unknown
		wantPerWorker     float64
		wantSaturated     bool
		wantBatching      bool
	}{
		// 10 in flight at 50 msg/s: 0.2 s; 1 slot per worker: 5 msg/s.
		{"plain", Config{}, level{0, 10, 20}, 50, nan, 0.2, 5, false, false},
		// Backlog everywhere and every slot busy: 80 msg/s ÷ 20 workers.
		{"saturated", Config{}, level{100, 20, 20}, 80, nan, 0.25, 4, true, false},
		// A backlog everywhere and 18.5 of 20 slots busy (saturated from
		// 90 %): 74 msg/s is 0.25 s a message, yet the workers sustain
		// 74 ÷ 20 = 3.7 msg/s, not 1/0.25 = 4.
		{"saturated with idle slots", Config{}, level{100, 18.5, 20}, 74, nan, 0.25, 3.7, true, false},
		// 150 in flight on 20 slots: busy is the 20 slots, 20/100 = 0.2 s.
		{"batching saturated", Config{}, level{500, 150, 20}, 100, nan, 0.2, 5, true, true},
		// 5 workers × 4 slots: 10 in flight at 50 msg/s is 0.2 s; 4/0.2 = 20.
		{"concurrency 4", Config{Concurrency: 4}, level{0, 10, 5}, 50, nan, 0.2, 20, false, false},
		// Received 55, deleted 50: 5 msg/s abandoned hold 5 × 30 = 150 of
		// the 160 in flight; the other 10 make 0.2 s.
		{"abandoned corrected", Config{VisibilityTimeout: 30 * time.Second}, level{0, 160, 20}, 50, 55, 0.2, 5, false, false},
		// The same without the received count: 160 in flight on 20 slots
		// reads as 20 busy slots, 0.4 s, and as batching.
		{"abandoned unknown", Config{VisibilityTimeout: 30 * time.Second}, level{0, 160, 20}, 50, nan, 0.4, 2.5, false, true},
		// Received known but no visibility timeout: no correction.
		{"abandoned without timeout", Config{}, level{0, 160, 20}, 50, 55, 0.4, 2.5, false, true},
		// Received below deleted (boundary noise): no correction.
		{"received below deleted", Config{VisibilityTimeout: 30 * time.Second}, level{0, 10, 20}, 50, 45, 0.2, 5, false, false},
		// More abandoned than in flight: corrected in flight is 0, which
		// leaves nothing busy and the service time unknown.
		{"over-corrected", Config{VisibilityTimeout: 30 * time.Second}, level{0, 10, 20}, 50, 60, 0, 0, false, false},
		// No fleet in service: busy is all of in flight.
		{"no slots", Config{}, level{0, 10, 0}, 50, nan, 0.2, 5, false, false},
		// Deletions while every sample read 0 in flight: too fast to see.
		{"nothing seen in flight", Config{}, level{0, 0, 20}, 50, nan, 0, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(tt.cfg)
			steady(e, 0, 5, tt.lv, tt.deleted, tt.received)
			got := e.Estimate()
			if got.Minutes != 5 {
				t.Fatalf("Minutes = %d, want 5 (%+v)", got.Minutes, got)
			}
			if tt.wantS == 0 {
				if got.ServiceTime != 0 || got.Confidence != 0 {
					t.Errorf("ServiceTime %v, Confidence %v, want 0, 0", got.ServiceTime, got.Confidence)
				}
			} else if !near(secs(got.ServiceTime), tt.wantS, 1e-6) {
				t.Errorf("ServiceTime = %v, want %vs", got.ServiceTime, tt.wantS)
			}
			if !near(got.PerWorker, tt.wantPerWorker, 1e-6) && !(tt.wantPerWorker == 0 && got.PerWorker == 0) {
				t.Errorf("PerWorker = %v, want %v", got.PerWorker, tt.wantPerWorker)
			}
			if got.Saturated != tt.wantSaturated || got.Batching != tt.wantBatching || got.Stuck {
				t.Errorf("Saturated %v Batching %v Stuck %v, want %v %v false",
					got.Saturated, got.Batching, got.Stuck, tt.wantSaturated, tt.wantBatching)
			}
			if tt.wantSaturated && got.SaturatedMinutes != 5 {
				t.Errorf("SaturatedMinutes = %d, want 5", got.SaturatedMinutes)
			}
			if !got.Since.Equal(at(0, 0)) || !got.Last.Equal(at(4, 0)) {
				t.Errorf("Since %v Last %v, want %v %v", got.Since, got.Last, at(0, 0), at(4, 0))
			}
		})
	}
}

// TestMinuteQuality: a minute teaches only when its samples cover it, every
// sample was complete and every value is usable.
func TestMinuteQuality(t *testing.T) {
	t.Parallel()
	type sample struct {
		sec               float64
		visible, inFlight float64
		workers           int
		complete          bool
	}
	every := func(step, from float64) []sample {
		var s []sample
		for x := from; x < 60; x += step {
			s = append(s, sample{x, 0, 10, 20, true})
		}
		return s
	}
	with := func(s []sample, i int, f func(*sample)) []sample {
		f(&s[i])
		return s
	}
	tests := []struct {
		name     string
		samples  []sample // minute 1; minute 0 and 2 are sampled every 5 s
		deleted  float64
		wantGood bool
	}{
		{"every 5 s", every(5, 0), 50, true},
		{"every 20 s: held across", every(20, 0), 50, true},
		{"every 21 s: gaps", every(21, 0), 50, false},
		{"one sample missing", append(every(5, 0)[:4], every(5, 0)[5:]...), 50, true},
		{"a 30 s hole", append(every(5, 0)[:4], every(5, 0)[9:]...), 50, false},
		{"no samples", nil, 50, false},
		{"first 15 s missing", every(5, 15), 50, true},    // minute 0's last sample holds 20 s, across
		{"first 20 s missing", every(5, 20), 50, false},   // a 25 s gap: 20 s of the minute uncovered
		{"last 20 s missing", every(5, 0)[:8], 50, false}, // 35 s to minute 2's first sample
		{"one incomplete sample", with(every(5, 0), 6, func(s *sample) { s.complete = false }), 50, false},
		{"NaN in flight", with(every(5, 0), 3, func(s *sample) { s.inFlight = math.NaN() }), 50, false},
		{"+Inf in flight", with(every(5, 0), 3, func(s *sample) { s.inFlight = math.Inf(1) }), 50, false},
		{"negative visible", with(every(5, 0), 3, func(s *sample) { s.visible = -1 }), 50, false},
		{"negative workers", with(every(5, 0), 3, func(s *sample) { s.workers = -1 }), 50, false},
		{"deleted NaN", every(5, 0), math.NaN(), false},
		{"deleted +Inf", every(5, 0), math.Inf(1), false},
		{"deleted negative", every(5, 0), -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(Config{})
			samples(e, 0, level{0, 10, 20})
			for _, s := range tt.samples {
				e.Sample(at(1, s.sec), s.visible, s.inFlight, s.workers, s.complete)
			}
			samples(e, 2, level{0, 10, 20})
			e.Minute(at(1, 0), tt.deleted, math.NaN())
			got := e.Estimate()
			if good := got.Minutes == 1; good != tt.wantGood {
				t.Fatalf("minute learned: %v, want %v (%+v)", good, tt.wantGood, got)
			}
			if tt.wantGood && !near(secs(got.ServiceTime), 10.0/tt.deleted, 1e-9) {
				t.Errorf("ServiceTime = %v, want %vs", got.ServiceTime, 10.0/tt.deleted)
			}
		})
	}
}

// TestMinuteDelivery covers how readings reach the estimator: repeated,
// late, out of order, too old, early.
func TestMinuteDelivery(t *testing.T) {
	t.Parallel()
	lv := level{0, 10, 20}
	// Each minute m has its own rate so its use can be told: S_m = 10 / D_m.
	rate := func(m int) float64 { return 40 + 2*float64(m) }
	// want is the estimate over the given minutes, worked by hand from the
	// weights exp(−age/τ): Σ w·10 ÷ Σ w·D.
	want := func(ms ...int) float64 {
		newest := ms[len(ms)-1]
		var num, den float64
		for _, m := range ms {
			w := math.Exp(-float64(newest-m) / docTau)
			num += w * 10
			den += w * rate(m)
		}
		return num / den
	}
	tests := []struct {
		name    string
		deliver func(e *Estimator, now int) // called after each sample of minute now
		minutes int                         // sampled: 0..minutes-1
		want    []int                       // minutes learned
	}{
		{"repeated on every sample", func(e *Estimator, now int) {
			if now >= 2 {
				e.Minute(at(now-2, 0), rate(now-2), math.NaN())
			}
		}, 8, []int{0, 1, 2, 3, 4, 5}},
		{"repeated with a revised value while pending", func(e *Estimator, now int) {
			if now == 3 {
				e.Minute(at(3, 0), 1, math.NaN()) // early: pending, then revised
				e.Minute(at(3, 0), rate(3), math.NaN())
			}
		}, 6, []int{3}},
		{"two minutes late", func(e *Estimator, now int) {
			if now >= 3 {
				e.Minute(at(now-3, 0), rate(now-3), math.NaN())
			}
		}, 8, []int{0, 1, 2, 3, 4}},
		{"out of order: the older one is ignored", func(e *Estimator, now int) {
			switch now {
			case 4:
				e.Minute(at(2, 0), rate(2), math.NaN())
			case 5:
				e.Minute(at(1, 0), rate(1), math.NaN())
				e.Minute(at(3, 0), rate(3), math.NaN())
			}
		}, 7, []int{2, 3}},
		{"too old for the buckets kept", func(e *Estimator, now int) {
			if now == 18 {
				e.Minute(at(1, 0), rate(1), math.NaN()) // bucket recycled by minute 17
				e.Minute(at(3, 0), rate(3), math.NaN())
			}
		}, 20, []int{3}},
		{"before the first sample", func(e *Estimator, now int) {
			if now == 0 {
				e.Minute(at(-1, 0), rate(0), math.NaN())
			}
		}, 4, nil},
		{"ahead of the samples: taken when repeated", func(e *Estimator, now int) {
			if now >= 2 {
				e.Minute(at(4, 0), rate(4), math.NaN()) // ignored until minute 4 is sampled
			}
		}, 7, []int{4}},
		{"stamp inside its minute names that minute", func(e *Estimator, now int) {
			if now == 3 {
				e.Minute(at(1, 37), rate(1), math.NaN())
			}
		}, 5, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(Config{})
			for m := 0; m < tt.minutes; m++ {
				for s := 0.0; s < 60; s += 5 {
					e.Sample(at(m, s), lv.visible, lv.inFlight, lv.workers, true)
					tt.deliver(e, m)
				}
			}
			got := e.Estimate()
			if got.Minutes != len(tt.want) {
				t.Fatalf("Minutes = %d, want %d (%+v)", got.Minutes, len(tt.want), got)
			}
			if len(tt.want) == 0 {
				return
			}
			if w := want(tt.want...); !near(secs(got.ServiceTime), w, 1e-6) {
				t.Errorf("ServiceTime = %v, want %.6fs", got.ServiceTime, w)
			}
			if !got.Since.Equal(at(tt.want[0], 0)) || !got.Last.Equal(at(tt.want[len(tt.want)-1], 0)) {
				t.Errorf("Since %v Last %v", got.Since, got.Last)
			}
		})
	}
}

// TestIdleMinutes: minutes with nothing deleted and nothing in flight change
// nothing, however many.
func TestIdleMinutes(t *testing.T) {
	t.Parallel()
	e := New(Config{ServiceTime: 200 * time.Millisecond})
	steady(e, 0, 4, level{0, 10, 20}, 50, math.NaN())
	before := e.Estimate()
	steady(e, 6, 10, level{0, 0, 20}, 0, 0)
	after := e.Estimate()
	if after.ServiceTime != before.ServiceTime || after.Minutes != before.Minutes || after.Last != before.Last {
		t.Errorf("after idle minutes %+v, before %+v", after, before)
	}
	if after.Stuck || after.Batching {
		t.Errorf("idle minutes flagged: %+v", after)
	}
}

// TestStuck: messages held in flight with no deletions are a crash loop, not
// a slow service time.
func TestStuck(t *testing.T) {
	t.Parallel()
	const vt = 30 * time.Second
	good := level{0, 10, 20}
	held := level{200, 20, 20} // every slot holds a message
	tests := []struct {
		name      string
		cfg       Config
		learn     bool    // four good minutes at 0.2 s first
		deleted   float64 // during the held minutes
		received  float64
		wantStuck bool // after two held minutes
		wantS     float64
	}{
		// Crash loop: each slot holds a message for the 30 s timeout, so
		// 20/30 msg/s are received and none deleted.
		{"crash loop, received known", Config{VisibilityTimeout: vt}, true, 0, 20.0 / 30, true, 0.2},
		{"crash loop, received unknown", Config{VisibilityTimeout: vt}, true, 0, math.NaN(), true, 0.2},
		// A trickle: 0.5 msg/s × 0.2 s = 0.1 < 5 % of 20 busy slots.
		{"a trickle of deletions", Config{}, true, 0.5, math.NaN(), true, 0.2},
		// 10 msg/s × 0.2 = 2 ≥ 1: slow, not stuck; learned as 20/10 = 2 s
		// per message (the step detector takes the new level).
		{"slow but moving", Config{}, true, 10, math.NaN(), false, 2},
		// Nothing measured yet: the prior (0.2 s) is the reference.
		{"prior as reference", Config{ServiceTime: 200 * time.Millisecond}, false, 0.5, math.NaN(), true, 0},
		// No prior, no measurement: an implied 20/0.5 = 40 s beyond the 30 s
		// visibility timeout is stuck ...
		{"timeout as reference", Config{VisibilityTimeout: vt}, false, 0.5, math.NaN(), true, 0},
		// ... and 20/1 = 20 s within it is learned.
		{"timeout as reference, within", Config{VisibilityTimeout: vt}, false, 1, math.NaN(), false, 20},
		// With no reference at all, only no deletions at all is stuck.
		{"no reference, nothing deleted", Config{}, false, 0, math.NaN(), true, 0},
		{"no reference, a trickle", Config{}, false, 0.5, math.NaN(), false, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(tt.cfg)
			next := 0
			if tt.learn {
				steady(e, 0, 4, good, 50, 50)
				next = 6
			}
			// One held minute is not yet stuck.
			steady(e, next, next+1, held, tt.deleted, tt.received)
			if got := e.Estimate(); got.Stuck {
				t.Fatalf("Stuck after one held minute: %+v", got)
			}
			steady(e, next+3, next+6, held, tt.deleted, tt.received)
			got := e.Estimate()
			if got.Stuck != tt.wantStuck {
				t.Fatalf("Stuck = %v, want %v (%+v)", got.Stuck, tt.wantStuck, got)
			}
			if tt.wantS == 0 && got.ServiceTime != 0 || tt.wantS != 0 && !near(secs(got.ServiceTime), tt.wantS, 1e-6) {
				t.Errorf("ServiceTime = %v, want %vs", got.ServiceTime, tt.wantS)
			}
			if !tt.wantStuck {
				return
			}
			// A minute deleting at a normal rate clears it.
			steady(e, next+8, next+9, good, 50, 50)
			if got := e.Estimate(); got.Stuck {
				t.Errorf("still Stuck after a normal minute: %+v", got)
			}
		})
	}
}

// TestStuckExpires: with no further minute, Stuck does not hold forever.
func TestStuckExpires(t *testing.T) {
	t.Parallel()
	e := New(Config{ServiceTime: 200 * time.Millisecond})
	steady(e, 0, 3, level{200, 20, 20}, 0, math.NaN())
	if !e.Estimate().Stuck {
		t.Fatalf("not Stuck after 3 held minutes")
	}
	for m := 5; m < 40; m++ {
		samples(e, m, level{200, 20, 20})
	}
	if e.Estimate().Stuck {
		t.Errorf("Stuck 35 minutes after the last held minute")
	}
}

// TestConfidence follows the documented shape: 1 − exp(−n/3.5) for agreeing
// minutes, less for disagreeing ones, and 0 by 30 minutes without a good
// minute.
func TestConfidence(t *testing.T) {
	t.Parallel()
	lv := level{0, 10, 20}
	tests := []struct {
		name    string
		rates   []float64 // deleted per minute; S_m = 10 / rate
		lo, hi  float64
		stalled int // minutes sampled after the last reading, with no reading
	}{
		{"none", nil, 0, 0, 0},
		{"one", []float64{50}, 0.2, 0.3, 0},
		{"three agreeing", []float64{50, 50, 50}, 0.5, 0.6, 0},
		{"ten agreeing", []float64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50}, 0.93, 1, 0},
		// ±40 % alternating: a log spread of 0.34 costs a factor e^−0.94.
		{"ten disagreeing", []float64{35, 65, 35, 65, 35, 65, 35, 65, 35, 65}, 0.3, 0.45, 0},
		{"ten agreeing, 16 minutes stale", []float64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50}, 0.40, 0.55, 16},
		{"ten agreeing, 31 minutes stale", []float64{50, 50, 50, 50, 50, 50, 50, 50, 50, 50}, 0, 0, 31},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(Config{})
			n := len(tt.rates)
			for m := 0; m < n+2+tt.stalled; m++ {
				for s := 0.0; s < 60; s += 5 {
					e.Sample(at(m, s), lv.visible, lv.inFlight, lv.workers, true)
					if d := m - 2; d >= 0 && d < n {
						e.Minute(at(d, 0), tt.rates[d], math.NaN())
					}
				}
			}
			got := e.Estimate()
			if got.Confidence < tt.lo || got.Confidence > tt.hi {
				t.Errorf("Confidence = %.3f, want in [%.2f, %.2f] (%+v)", got.Confidence, tt.lo, tt.hi, got)
			}
		})
	}
}

// TestStep: a lasting step is taken at once; a single outlier is only
// weighed in.
func TestStep(t *testing.T) {
	t.Parallel()
	lv := level{0, 10, 20}
	// rates before and after; S = 10 / rate.
	ewma := func(rates []float64) float64 {
		newest := len(rates) - 1
		var num, den float64
		for m, r := range rates {
			if age := newest - m; age < docWindow {
				w := math.Exp(-float64(age) / docTau)
				num += w * 10
				den += w * r
			}
		}
		return num / den
	}
	const fast, slow = 50.0, 25.0 // 0.2 s and 0.4 s
	tests := []struct {
		name  string
		rates []float64
		want  float64
		mins  int
	}{
		{"steady", []float64{fast, fast, fast, fast, fast, fast}, 0.2, 6},
		{"one slow minute: weighed in", []float64{fast, fast, fast, fast, fast, slow},
			ewma([]float64{fast, fast, fast, fast, fast, slow}), 6},
		{"outlier then back", []float64{fast, fast, fast, fast, fast, slow, fast},
			ewma([]float64{fast, fast, fast, fast, fast, slow, fast}), 7},
		{"two slow minutes: a step", []float64{fast, fast, fast, fast, fast, slow, slow}, 0.4, 2},
		{"a step down", []float64{slow, slow, slow, slow, slow, fast, fast}, 0.2, 2},
		{"steps in opposite directions are not a step", []float64{fast, fast, fast, fast, 100, slow},
			ewma([]float64{fast, fast, fast, fast, 100, slow}), 6},
		// A step is measured against 3 or more minutes before it.
		{"too early for a step", []float64{fast, fast, slow, slow},
			ewma([]float64{fast, fast, slow, slow}), 4},
		// 0.8 s then 0.4 s: both far above 0.2 s, but not one new level.
		{"two deviations that disagree are not a step", []float64{fast, fast, fast, fast, fast, 12.5, slow},
			ewma([]float64{fast, fast, fast, fast, fast, 12.5, slow}), 7},
		// +20 % is inside the 25 % a step must exceed: followed by weight.
		{"a small change is followed gradually", []float64{fast, fast, fast, fast, fast, 41.6667, 41.6667},
			ewma([]float64{fast, fast, fast, fast, fast, 41.6667, 41.6667}), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(Config{})
			n := len(tt.rates)
			for m := 0; m < n+2; m++ {
				for s := 0.0; s < 60; s += 5 {
					e.Sample(at(m, s), lv.visible, lv.inFlight, lv.workers, true)
					if d := m - 2; d >= 0 && d < n {
						e.Minute(at(d, 0), tt.rates[d], math.NaN())
					}
				}
			}
			got := e.Estimate()
			if !near(secs(got.ServiceTime), tt.want, 1e-6) || got.Minutes != tt.mins {
				t.Errorf("ServiceTime %v over %d minutes, want %.6fs over %d", got.ServiceTime, got.Minutes, tt.want, tt.mins)
			}
			// A step names the first minute of its new level.
			var step time.Time
			if tt.name == "two slow minutes: a step" || tt.name == "a step down" {
				step = at(n-2, 0)
			}
			if !got.Step.Equal(step) {
				t.Errorf("Step %v, want %v", got.Step, step)
			}
		})
	}
}

// TestWindow: minutes older than the window before the newest are not
// behind the estimate: after a long quiet spell the old level is gone.
func TestWindow(t *testing.T) {
	t.Parallel()
	e := New(Config{})
	steady(e, 0, 5, level{0, 10, 20}, 50, math.NaN()) // 0.2 s
	// 10/45 = 0.222 s, within the 25 % a step needs, at minutes 28 and 29:
	// minute 4 is 25 minutes before minute 29, out of the 24-minute window.
	steady(e, 28, 30, level{0, 10, 20}, 45, math.NaN())
	got := e.Estimate()
	if got.Minutes != 2 || !near(secs(got.ServiceTime), 10.0/45, 1e-6) || !got.Since.Equal(at(28, 0)) {
		t.Errorf("got %+v, want 0.222 s over minutes 28–29", got)
	}
	// At minutes 26 and 27, minute 4 is 23 minutes old and in, at weight
	// exp(−23/6); minute 3 is out.
	e = New(Config{})
	steady(e, 0, 5, level{0, 10, 20}, 50, math.NaN())
	steady(e, 26, 28, level{0, 10, 20}, 45, math.NaN())
	w := math.Exp(-23 / docTau)
	want := (10 + math.Exp(-1/docTau)*10 + w*10) / (45 + math.Exp(-1/docTau)*45 + w*50)
	if got := e.Estimate(); got.Minutes != 3 || !near(secs(got.ServiceTime), want, 1e-6) {
		t.Errorf("got %+v, want %.6f s over 3 minutes", got, want)
	}
}

// TestClock: samples going back are ignored; a clock reset far back starts
// over.
func TestClock(t *testing.T) {
	t.Parallel()
	e := New(Config{})
	steady(e, 0, 4, level{0, 10, 20}, 50, math.NaN())
	before := e.Estimate()
	e.Sample(at(2, 0), 0, 999, 20, true) // back 3 minutes: ignored
	if got := e.Estimate(); got != before {
		t.Errorf("a sample from the past changed the estimate: %+v, want %+v", got, before)
	}
	e.Sample(at(-60, 0), 0, 10, 20, true) // back an hour: start over
	if got := e.Estimate(); got.Minutes != 0 || got.ServiceTime != 0 {
		t.Errorf("after a clock reset: %+v, want nothing learned", got)
	}
	steady(e, -59, -55, level{0, 10, 25}, 50, math.NaN())
	if got := e.Estimate(); got.Minutes != 4 || !near(secs(got.ServiceTime), 0.2, 1e-9) {
		t.Errorf("learning after the reset: %+v", got)
	}
}

// TestZeroConfig: Concurrency 0 means 1; negative settings mean unknown.
func TestZeroConfig(t *testing.T) {
	t.Parallel()
	e := New(Config{Concurrency: -3, ServiceTime: -time.Second, VisibilityTimeout: -time.Second})
	steady(e, 0, 3, level{0, 160, 20}, 50, 55)
	got := e.Estimate()
	// No correction (timeout unknown), one slot per worker: 20/50 = 0.4 s.
	if !near(secs(got.ServiceTime), 0.4, 1e-9) || !near(got.PerWorker, 2.5, 1e-9) {
		t.Errorf("got %+v, want 0.4 s and 2.5 msg/s", got)
	}
	var empty Estimate
	if got := New(Config{}).Estimate(); got != empty {
		t.Errorf("new estimator: %+v, want zero", got)
	}
}

// TestStuckNoLockIn: stuck minutes teach nothing, so a service time
// measured too short must not make every later minute look stuck. Four
// minutes with 1 in flight at 50 msg/s measure 0.02 s; then 20 are held.
func TestStuckNoLockIn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cfg       Config
		deleted   float64
		wantStuck bool
	}{
		// 45 × 0.02 = 0.9 of 20 held is under 5 %, but 45 msg/s is most of
		// the recent 50 msg/s.
		{"no prior: deletions at the recent rate", Config{}, 45, false},
		{"a prior changes nothing", Config{ServiceTime: 200 * time.Millisecond}, 45, false},
		// Below half the recent rate, the measurement is the reference:
		// 20 × 0.02 = 0.4 of 20 held is stuck (until the 0.02 s minutes
		// leave the window).
		{"a drop below half", Config{ServiceTime: 200 * time.Millisecond}, 20, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := New(tt.cfg)
			steady(e, 0, 4, level{0, 1, 20}, 50, math.NaN())
			steady(e, 6, 10, level{0, 20, 20}, tt.deleted, math.NaN())
			got := e.Estimate()
			if got.Stuck != tt.wantStuck {
				t.Fatalf("Stuck = %v, want %v (%+v)", got.Stuck, tt.wantStuck, got)
			}
			if !tt.wantStuck && (!got.Last.Equal(at(9, 0)) || !near(secs(got.ServiceTime), 20/tt.deleted, 1e-6)) {
				t.Errorf("got %+v, want the new minutes learned (%.3f s)", got, 20/tt.deleted)
			}
		})
	}
}

// TestAbandonedRamp: while in flight grows, receives exceed deletions by the
// growth, not by abandoned messages: R − D − ΔL/60 is 0 and nothing is taken
// off.
func TestAbandonedRamp(t *testing.T) {
	t.Parallel()
	e := New(Config{VisibilityTimeout: 30 * time.Second})
	levels := []float64{10, 12, 14, 16, 18, 20, 20}
	for m := 0; m < len(levels)+2; m++ {
		lv := level{0, 0, 40}
		if m < len(levels) {
			lv.inFlight = levels[m]
		}
		for s := 0.0; s < 60; s += 5 {
			e.Sample(at(m, s), lv.visible, lv.inFlight, lv.workers, true)
			if d := m - 2; d >= 0 && d < len(levels) {
				deleted := 5 * levels[d] // 0.2 s every minute
				grew := 0.0
				if d > 0 {
					grew = levels[d] - levels[d-1]
				}
				e.Minute(at(d, 0), deleted, deleted+grew/60)
			}
		}
	}
	got := e.Estimate()
	if got.Minutes != len(levels) || !near(secs(got.ServiceTime), 0.2, 1e-6) {
		t.Errorf("got %+v, want 0.2 s over %d minutes", got, len(levels))
	}
}

// TestStepIsUsedAtOnce: a step in the service time (0.2 s to 0.4 s, the
// minutes ±10 % noisy) is trusted (confidence 0.5, the policy's bar) from
// the estimate that first shows it, about a minute after its first minute
// is delivered, as docs/measuring.md says: the sizing never falls back to
// the configured value between the old level and the new.
func TestStepIsUsedAtOnce(t *testing.T) {
	t.Parallel()
	lv := level{0, 10, 20}
	noise := []float64{1.04, 0.93, 1.08, 0.97, 1.1, 0.91, 1.02, 0.95, 1.06, 0.99, 1.03, 0.92, 1.07, 0.96, 1.01, 0.94, 1.09, 0.98, 1.05, 0.9, 1.0, 1.02}
	e := New(Config{})
	const step = 12
	for m := range len(noise) + 2 {
		for s := 0.0; s < 60; s += 5 {
			e.Sample(at(m, s), lv.visible, lv.inFlight, lv.workers, true)
			if d := m - 2; d >= 0 && d < len(noise) {
				rate := 50.0
				if d >= step {
					rate = 25
				}
				e.Minute(at(d, 0), rate*noise[d], math.NaN())
			}
		}
		got := e.Estimate()
		if m < 6 {
			continue
		}
		if near(secs(got.ServiceTime), 0.4, 0.2) && got.Confidence < 0.5 {
			t.Errorf("minute %d: the new level %v is known with confidence %.2f, below 0.5: the configured value would size", m, got.ServiceTime, got.Confidence)
		}
		if m >= step+2+2 && !near(secs(got.ServiceTime), 0.4, 0.2) {
			t.Errorf("minute %d: service time %v, want the new 0.4 s a minute after the step's first minute was delivered", m, got.ServiceTime)
		}
	}
}
