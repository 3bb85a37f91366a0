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
