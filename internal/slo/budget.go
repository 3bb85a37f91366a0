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

// Kept reports whether the last hour kept the objective (within the
// rounding of sums of estimates).
func (s Status) Kept() bool { return s.HourShare >= s.Objective-1e-9 }

// spans sums steps over the last n spans of time, each width seconds long:
// a ring of buckets with running sums, so that a reading costs no walk of
// the buckets. Spans are numbered from the Unix epoch, rounding down.
type spans struct {
	width        int64
	within, late []float64
	trust        []Trust // nil unless the spans keep their least trust
	why          []string
	head         int64 // the newest span counted
	started      bool
	sumW, sumL   float64
}

func newSpans(n int, width int64, trust bool) spans {
	s := spans{width: width, within: make([]float64, n), late: make([]float64, n)}
	if trust {
		s.trust, s.why = make([]Trust, n), make([]string, n)
	}
	return s
}

// advance moves the ring to span k, emptying the spans that leave it.
func (s *spans) advance(k int64) {
	n := int64(len(s.within))
	if !s.started {
		s.head, s.started = k, true
		return
	}
	if k <= s.head {
		return
	}
	if k-s.head >= n {
		clear(s.within)
		clear(s.late)
		if s.trust != nil {
			clear(s.trust)
			clear(s.why)
		}
		s.sumW, s.sumL = 0, 0
		s.head = k
		return
	}
	for j := s.head + 1; j <= k; j++ {
		i := floorMod(j, n)
		s.sumW -= s.within[i]
		s.sumL -= s.late[i]
		s.within[i], s.late[i] = 0, 0
		if s.trust != nil {
			s.trust[i], s.why[i] = TrustGood, ""
		}
	}
	s.head = k
}

// add counts a step at Unix second sec; a step older than the ring is lost.
func (s *spans) add(sec int64, st Step) {
	k := floorDiv(sec, s.width)
	s.advance(k)
	if k <= s.head-int64(len(s.within)) {
		return
	}
	i := floorMod(k, int64(len(s.within)))
	w, l := finite(st.Within), finite(st.Late)
	s.within[i] += w
	s.late[i] += l
	s.sumW += w
	s.sumL += l
	if s.trust != nil && st.Trust > s.trust[i] {
		s.trust[i], s.why[i] = st.Trust, st.Why
	}
}

// sums are the ring's totals at Unix second sec, and its least trust.
func (s *spans) sums(sec int64) (within, late float64, trust Trust, why string) {
	s.advance(floorDiv(sec, s.width))
	for i := range s.trust {
		if s.trust[i] > trust {
			trust, why = s.trust[i], s.why[i]
		}
	}
	return max(s.sumW, 0), max(s.sumL, 0), trust, why
}

// windowSpans bounds the window's buckets: a 30-day window counts in
// 3-hour spans.
const windowSpans = 240

// Tracker keeps one group's estimate and error budget: minute spans for the
// last hour, spans of whole hours for the window. Not safe for concurrent
// use; a reading (Status) moves the spans to its time too.
type Tracker struct {
	est       *Estimator
	objective float64
	window    time.Duration
	hour      spans
	spans     spans
}

// NewTracker is a tracker for a promise, the share of messages that must
// start within it (0 < objective < 1; 0.99 otherwise) and the window
// over which its budget is counted (at least an hour). The window is
// counted in at most 240 spans of whole hours: the span under way and the
// whole spans before it, rounded up to cover the window.
func NewTracker(promise time.Duration, objective float64, window time.Duration) *Tracker {
	if !(objective > 0 && objective < 1) {
		objective = 0.99
	}
	hours := int64(math.Ceil(max(window, time.Hour).Hours()))
	width := (hours + windowSpans - 1) / windowSpans // hours a span
	n := (hours + width - 1) / width
	return &Tracker{
		est:       NewEstimator(promise),
		objective: objective,
		window:    time.Duration(n*width) * time.Hour,
		hour:      newSpans(60, 60, true),
		spans:     newSpans(int(n), width*3600, false),
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
	t.hour.add(sec, st)
	t.spans.add(sec, st)
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

// Status is the tracker's reading at now.
func (t *Tracker) Status(now time.Time) Status {
	sec := now.Unix()
	s := Status{Objective: t.objective, Window: t.window}
	s.HourWithin, s.HourLate, s.Trust, s.Why = t.hour.sums(sec)
	s.Within, s.Late, _, _ = t.spans.sums(sec)
	allowance := 1 - t.objective
	s.Share = Share(s.Within, s.Late)
	s.HourShare = Share(s.HourWithin, s.HourLate)
	s.BudgetLeft = 1
	if n := s.Within + s.Late; n > 0 {
		s.BudgetLeft = 1 - s.Late/(allowance*n)
	}
	s.BurnRate = (1 - s.HourShare) / allowance
	return s
}

// Share is within ÷ (within + late): the share of messages started within
// the promise; 1 when none started.
func Share(within, late float64) float64 {
	if n := within + late; n > 0 {
		return within / n
	}
	return 1
}
