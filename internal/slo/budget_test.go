package slo

import (
	"testing"
	"time"
)

// The budget of a 99 % objective: 990 within and 10 late in an hour keep
// the objective exactly, spend the whole allowance (10 of 1,000 × 1 %) and
// burn at 1×; 30 late burn at 3× and overspend it twice.
func TestBudgetWorkedExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name              string
		within, late      float64
		share, left, burn float64
		kept              bool
	}{
		{"nothing started", 0, 0, 1, 1, 0, true},
		{"exactly the objective", 990, 10, 0.99, 0, 1, true},
		{"half the allowance", 995, 5, 0.995, 0.5, 0.5, true},
		{"three times the allowance", 970, 30, 0.97, -2, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tr := NewTracker(30*time.Second, 0.99, 30*24*time.Hour)
			// Spread over the hour's minutes, in 5 s steps.
			for i := range 720 {
				tr.Add(at(float64(5*i)), Step{Within: tt.within / 720, Late: tt.late / 720})
			}
			s := tr.Status(at(3599))
			near(t, "hour share", s.HourShare, tt.share, 1e-9)
			near(t, "window share", s.Share, tt.share, 1e-9)
			near(t, "budget left", s.BudgetLeft, tt.left, 1e-9)
			near(t, "burn rate", s.BurnRate, tt.burn, 1e-9)
			if s.Kept() != tt.kept {
				t.Errorf("kept = %v, want %v", s.Kept(), tt.kept)
			}
		})
	}
}

// The hour forgets what is older than an hour; the window remembers it
// until the window has passed.
func TestBudgetWindows(t *testing.T) {
	t.Parallel()
	tr := NewTracker(30*time.Second, 0.99, 3*time.Hour)
	tr.Add(at(0), Step{Within: 90, Late: 10})
	s := tr.Status(at(2 * 3600))
	near(t, "hour within", s.HourWithin+s.HourLate, 0, 1e-9)
	near(t, "window late", s.Late, 10, 1e-9)
	near(t, "budget left", s.BudgetLeft, 1-10/(0.01*100), 1e-9)
	if s.BurnRate != 0 {
		t.Errorf("burn rate = %v with nothing in the last hour", s.BurnRate)
	}
	s = tr.Status(at(3 * 3600))
	near(t, "window after it passed", s.Within+s.Late, 0, 1e-9)
	near(t, "budget left after", s.BudgetLeft, 1, 1e-9)
	// A bucket reused for a later hour starts empty.
	tr.Add(at(3*3600+10), Step{Within: 5})
	s = tr.Status(at(3*3600 + 20))
	near(t, "reused bucket", s.Within+s.Late, 5, 1e-9)
}

// The hour's trust is its least trusted step's.
func TestBudgetTrust(t *testing.T) {
	t.Parallel()
	tr := NewTracker(30*time.Second, 0.99, time.Hour)
	tr.Add(at(0), Step{Within: 1})
	tr.Add(at(60), Step{Within: 1, Trust: TrustRough, Why: WhyUnordered})
	tr.Add(at(120), Step{Within: 1})
	s := tr.Status(at(180))
	if s.Trust != TrustRough || s.Why != WhyUnordered {
		t.Errorf("trust = %v %q, want rough %q", s.Trust, s.Why, WhyUnordered)
	}
	if s := tr.Status(at(3600 + 120)); s.Trust != TrustGood {
		t.Errorf("trust an hour later = %v, want good", s.Trust)
	}
}

func TestNewTrackerDefaults(t *testing.T) {
	t.Parallel()
	tr := NewTracker(time.Second, 7, time.Minute)
	s := tr.Status(at(0))
	if s.Objective != 0.99 || s.Window != time.Hour {
		t.Errorf("objective %v window %v, want 0.99 and 1h", s.Objective, s.Window)
	}
}

// The running sums agree with a count of the same steps made directly,
// whatever the gaps between steps: a 30-day window counted in 3-hour spans
// holds the steps of the span under way and the 239 before it.
func TestBudgetSumsMatchADirectCount(t *testing.T) {
	t.Parallel()
	tr := NewTracker(30*time.Second, 0.99, 30*24*time.Hour)
	if tr.window != 720*time.Hour || len(tr.spans.within) != windowSpans {
		t.Fatalf("window %v in %d spans, want 720h in %d", tr.window, len(tr.spans.within), windowSpans)
	}
	type step struct {
		sec          int64
		within, late float64
	}
	var steps []step
	sec := t0.Unix()
	x := uint64(12345)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for range 20000 {
		switch next() % 100 {
		case 0:
			sec += int64(next() % (40 * 24 * 3600)) // a gap longer than the window, at times
		case 1, 2, 3:
			sec += int64(next() % (6 * 3600))
		default:
			sec += 5
		}
		s := step{sec: sec, within: float64(next() % 100), late: float64(next() % 3)}
		steps = append(steps, s)
		tr.Add(time.Unix(s.sec, 0), Step{Within: s.within, Late: s.late})
		if next()%50 != 0 {
			continue
		}
		st := tr.Status(time.Unix(sec, 0))
		var w, l, hw, hl float64
		spanFrom := (sec/(3*3600) - windowSpans + 1) * 3 * 3600
		hourFrom := (sec/60 - 59) * 60
		for _, p := range steps {
			if p.sec >= spanFrom {
				w, l = w+p.within, l+p.late
			}
			if p.sec >= hourFrom {
				hw, hl = hw+p.within, hl+p.late
			}
		}
		near(t, "window within", st.Within, w, 1e-6*max(w, 1))
		near(t, "window late", st.Late, l, 1e-6*max(l, 1))
		near(t, "hour within", st.HourWithin, hw, 1e-6*max(hw, 1))
		near(t, "hour late", st.HourLate, hl, 1e-6*max(hl, 1))
		if t.Failed() {
			t.Fatalf("at step %d", len(steps))
		}
	}
}

// What the daemon does for each group each interval: one step in, the
// budget read out.
func BenchmarkInterval(b *testing.B) {
	tr := NewTracker(30*time.Second, 0.99, 30*24*time.Hour)
	b.ReportAllocs()
	v := 0.0
	for i := 0; b.Loop(); i++ {
		if i%24 < 12 {
			v += 40
		} else {
			v = max(v-45, 0)
		}
		now := at(float64(5 * i))
		tr.Observe(Input{At: now, Visible: v, Arrived: 50, OldestAge: -1})
		_ = tr.Status(now)
	}
}
