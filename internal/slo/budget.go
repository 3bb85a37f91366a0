package slo

import (
	"math"
	"time"
)

// Status is a group's promise read as a service level objective: the share
// of messages started within the promise over the window and the last hour,
// the error budget left and how fast it burns.
type Status struct {
	// Objective is the share of messages that must start within the
	// promise (target.latency_quantile); Window the budget's window.
	Objective float64
	Window    time.Duration
	// Within and Late are the messages started within and past the promise
	// over the window, as far as this process has seen it.
	Within, Late float64
	// Share is Within ÷ (Within + Late); 1 when nothing started.
	Share float64
	// HourWithin, HourLate and HourShare are the same over the last hour.
	HourWithin, HourLate float64
	HourShare            float64
	// BudgetLeft is the share of the window's allowance of late messages,
	// (1 − Objective) × started, not yet spent: 1 untouched, 0 spent, below
	// 0 overspent. 1 when nothing started.
	BudgetLeft float64
	// BurnRate is the last hour's late share ÷ (1 − Objective): 1 spends
	// the budget exactly over the window.
	BurnRate float64
	// Trust is the least trust of the last hour's steps, and Why its reason.
	Trust Trust
	Why   string
}

// Kept reports whether the last hour kept the objective.
func (s Status) Kept() bool { return s.HourShare >= s.Objective }

// bucket sums the steps of one span of time.
type bucket struct {
	start        int64 // Unix seconds of the span's start; 0 when empty
	within, late float64
	trust        Trust
	why          string
}

// Tracker keeps one group's estimate and error budget: minute buckets for the
// last hour, hour buckets for the window. Not safe for concurrent use.
type Tracker struct {
	est       *Estimator
	objective float64
	window    time.Duration
	minutes   [60]bucket
	hours     []bucket // one per hour of the window
}

// NewTracker is a tracker for a promise, the share of messages that must
// start within it (0 < objective < 1; 0.99 otherwise) and the window
// over which its budget is counted, rounded up to whole hours (at least
// one): the hour under way and the whole hours before it.
func NewTracker(promise time.Duration, objective float64, window time.Duration) *Tracker {
	if !(objective > 0 && objective < 1) {
		objective = 0.99
	}
	window = max(window, time.Hour)
	hours := int(math.Ceil(window.Hours()))
	return &Tracker{
		est:       NewEstimator(promise),
		objective: objective,
		window:    time.Duration(hours) * time.Hour,
		hours:     make([]bucket, hours),
	}
}

// Observe folds one interval in and returns what it started.
func (t *Tracker) Observe(in Input) Step {
	st := t.est.Observe(in)
	t.Add(in.At, st)
	return st
}

// Add counts a step at a time in the buckets (Observe does; for replaying
// steps estimated elsewhere).
func (t *Tracker) Add(at time.Time, st Step) {
	sec := at.Unix()
	minute, hour := floorDiv(sec, 60), floorDiv(sec, 3600)
	addTo(&t.minutes[floorMod(minute, 60)], minute*60, st)
	addTo(&t.hours[floorMod(hour, int64(len(t.hours)))], hour*3600, st)
}

// floorDiv and floorMod divide rounding down, so that times before 1970
// (a simulation that starts at the zero time) find their buckets too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

func addTo(b *bucket, start int64, st Step) {
	if b.start != start {
		*b = bucket{start: start}
	}
	b.within += st.Within
	b.late += st.Late
	if st.Trust > b.trust {
		b.trust, b.why = st.Trust, st.Why
	}
}

// Status is the tracker's reading at now.
func (t *Tracker) Status(now time.Time) Status {
	sec := now.Unix()
	s := Status{Objective: t.objective, Window: t.window}
	hourFrom := floorDiv(sec, 60)*60 - 59*60
	for i := range t.minutes {
		b := &t.minutes[i]
		if b.start < hourFrom || b.start > sec {
			continue
		}
		s.HourWithin += b.within
		s.HourLate += b.late
		if b.trust > s.Trust {
			s.Trust, s.Why = b.trust, b.why
		}
	}
	windowFrom := floorDiv(sec, 3600)*3600 - int64(len(t.hours)-1)*3600
	for i := range t.hours {
		b := &t.hours[i]
		if b.start < windowFrom || b.start > sec {
			continue
		}
		s.Within += b.within
		s.Late += b.late
	}
	allowance := 1 - t.objective
	s.Share = share(s.Within, s.Late)
	s.HourShare = share(s.HourWithin, s.HourLate)
	s.BudgetLeft = 1
	if n := s.Within + s.Late; n > 0 {
		s.BudgetLeft = 1 - s.Late/(allowance*n)
	}
	s.BurnRate = (1 - s.HourShare) / allowance
	return s
}

func share(within, late float64) float64 {
	if n := within + late; n > 0 {
		return within / n
	}
	return 1
}
