package measure

import "math"

// bucketFor returns minute m's bucket, recycling the slot when it holds an
// older minute (judging that minute first if its reading is pending). It
// returns nil when the slot holds a newer minute.
func (e *Estimator) bucketFor(m int64) *bucket {
	b := &e.buckets[slot(m)]
	if b.used {
		if b.minute == m {
			return b
		}
		if b.minute > m {
			return nil
		}
		if b.pending {
			e.judge(b)
		}
	}
	*b = bucket{minute: m, used: true, received: math.NaN(), firstIn: math.NaN()}
	if e.hasPrev && e.prevOK {
		b.firstIn = e.prevIn // the value in force as the minute begins
	}
	return b
}

// cover adds the previous sample's values, held over [from, to) seconds of
// minute m, to m's bucket.
func (e *Estimator) cover(m int64, from, to float64) {
	d := to - from
	if !(d > 0) {
		return
	}
	b := e.bucketFor(m)
	if b == nil {
		return
	}
	if math.IsNaN(b.firstIn) {
		b.firstIn = e.prevIn
	}
	b.lastIn = e.prevIn
	b.covered += d
	b.samples++
	b.inFlight += e.prevIn * d
	b.workers += e.prevWork * d
	if !(e.prevVis >= 1) {
		b.noBacklog = true
	}
	if overSlots(e.prevIn, e.prevWork*e.conc) {
		b.overSlots = true
	}
}

// flush judges, oldest first, the pending minutes the samples have passed.
func (e *Estimator) flush() {
	for e.pending > 0 {
		var next *bucket
		for i := range e.buckets {
			b := &e.buckets[i]
			if b.used && b.pending && b.minute < e.prevMin && (next == nil || b.minute < next.minute) {
				next = b
			}
		}
		if next == nil {
			return
		}
		e.judge(next)
	}
}

// judge learns from a minute whose samples are all in and whose reading has
// come: a good minute becomes a record, a stuck one counts towards Stuck,
// and any other teaches nothing.
func (e *Estimator) judge(b *bucket) {
	b.pending = false
	e.pending--
	if b.tainted || b.covered < minCovered {
		return // partial or sparse
	}
	r, v := e.assess(minuteFacts{
		minute:   b.minute,
		inFlight: b.inFlight / b.covered,
		samples:  b.samples,
		workers:  b.workers / b.covered,
		deleted:  b.deleted,
		received: b.received,
		growth:   (b.lastIn - b.firstIn) / minuteSecs,
		backlog:  !b.noBacklog,
		over:     b.overSlots,
	})
	switch v {
	case stuckMinute:
		e.stuckRun++
		e.lastStuckAt = e.now
	case activeMinute:
		e.stuckRun = 0
	case goodMinute:
		e.stuckRun = 0
		e.detectStep(r)
		e.push(r)
		e.lastGoodAt = e.now
	}
}

// minuteFacts are what one whole minute gives the judging.
type minuteFacts struct {
	minute   int64
	inFlight float64 // mean in flight
	samples  int     // in-flight samples behind it (0: one reading of the minute's mean)
	workers  float64 // mean workers in service; 0 when unknown
	deleted  float64 // msg/s
	received float64 // msg/s; NaN when not read
	growth   float64 // the in-flight count's growth over the minute ÷ 60 s
	backlog  bool    // a visible backlog throughout
	over     bool    // a sample held more in flight than its slots (overSlots)
}

// verdict is what judging a minute found.
type verdict int

const (
	teachesNothing verdict = iota // invalid values, or idle
	stuckMinute                   // messages held with (almost) no deletions
	activeMinute                  // deletions at a normal rate, but no usable record
	goodMinute                    // a good minute: its record is to be learned
)

// assess judges one minute against the minutes learned before it, without
// changing the Estimator: the live minutes (judge) and the preloaded ones
// (Preload) are judged by this one rule.
func (e *Estimator) assess(m minuteFacts) (record, verdict) {
	d, l, w := m.deleted, m.inFlight, m.workers
	if !finite(l) || !finite(w) || l < 0 || w < 0 || !finite(d) || d < 0 {
		return record{}, teachesNothing
	}
	c := w * e.conc // mean slots in service
	var cur summary // the minutes behind the estimate, weighed as of this one
	if e.nrec > 0 {
		cur = e.summarize(m.minute, e.cut, math.MaxInt64)
	}

	// Messages held with (almost) no deletions: a crash loop or hung
	// workers, whatever the received count says.
	if l >= 1 && (c <= 0 || l >= stuckHeldShare*c) && e.tooFewDeletions(d, capped(l, c), cur) {
		return record{}, stuckMinute
	}
	if d <= 0 {
		return record{}, teachesNothing // idle, or too little in flight to say anything
	}

	// In flight less the abandoned messages waiting out their timeout.
	// Messages leave the in-flight set when deleted or when their timeout
	// returns them, so the returns are R − D less the set's growth.
	rd := math.NaN()
	if finite(m.received) {
		rd = m.received - d - m.growth
		if !finite(rd) {
			rd = math.NaN()
		}
	}
	lc := l
	// A sample above the slots shows batches, unless abandoned messages,
	// subtracted here, explain what is above them.
	over := m.over
	if a, ok := cur.abandoned(rd); ok && e.vt > 0 {
		lc = math.Max(0, l-a*e.vt)
		over = over && a == 0
	}
	busy := capped(lc, c)
	r := record{
		minute:     m.minute,
		busy:       busy,
		deleted:    d,
		workers:    w,
		excess:     rd,
		lnS:        math.NaN(),
		saturated:  c > 0 && m.backlog && lc >= SaturatedShare*c,
		batching:   c > 0 && (lc > batchingRatio*c || over),
		backlogged: m.backlog,
	}
	if s := busy / d; s > 0 && finite(s) {
		r.lnS = math.Log(math.Min(s, maxServiceSecs))
		r.noise = countNoise(busy, d, s, m.samples, r.saturated)
	}
	if !finite(r.busy/r.deleted) || !finite(r.workers) {
		return record{}, activeMinute
	}
	return r, goodMinute
}

// countNoise is the standard deviation of a minute's ln S that its counts
// explain: busy messages in flight on average over n samples (a Poisson
// count, correlated as exp(−Δ ÷ s) between samples Δ apart; none when
// saturated: every slot was busy) and d msg/s deleted over the minute (see
// the package documentation).
func countNoise(busy, d, s float64, n int, saturated bool) float64 {
	v := 1 / (minuteSecs * d)
	if !saturated && busy > 0 {
		n = max(n, 1)
		rho := math.Exp(-minuteSecs / float64(n) / s)
		v += math.Min(1, (1+rho)/((1-rho)*float64(n))) / busy
	}
	return math.Sqrt(v)
}

// capped is the busy slots: in flight, but no more than the slots when they
// are known.
func capped(l, c float64) float64 {
	if c > 0 && l > c {
		return c
	}
	return l
}

// tooFewDeletions reports whether d msg/s, with busy messages held, is
// (almost) no deletions: less than half the rate of the minutes behind the
// estimate cur, and explaining less than stuckRateShare of busy at the
// service time measured (else configured). With neither known, an implied
// service time beyond the visibility timeout is stuck, and with that unknown
// too, only a minute that deleted nothing.
//
// The normal-rate test keeps a measurement that came out far too short from
// calling every later minute stuck: stuck minutes teach nothing, so that
// mistake could not correct itself while the measurement lasts.
func (e *Estimator) tooFewDeletions(d, busy float64, cur summary) bool {
	if cur.n > 0 && d >= normalRate*cur.deleted/cur.weight {
		return false
	}
	ref := cur.serviceTime()
	if ref == 0 {
		ref = e.prior
	}
	switch {
	case ref > 0:
		return d*ref < stuckRateShare*busy
	case e.vt > 0:
		return d*e.vt < busy
	default:
		return d <= 0
	}
}

// detectStep forgets the minutes before a step in the service time: when
// this minute and the one before it both deviate, in the same direction, from
// the estimate of the minutes before the first, by more than changeMinLog and
// changeSigmas spreads (and changeSigmas times the noise their own counts
// explain, countNoise), and agree with each other within √2 times that (the
// spread of a difference of two minutes), the estimate restarts from the
// first.
func (e *Estimator) detectStep(r record) {
	prev := e.suspectSign
	e.suspectSign = 0
	if math.IsNaN(r.lnS) {
		return
	}
	hi := int64(math.MaxInt64)
	if prev != 0 {
		hi = e.suspect
	}
	ref := e.summarize(r.minute, e.cut, hi)
	s := ref.serviceTime()
	if ref.lnN < changeMinutes || !(s > 0) {
		return
	}
	dev := r.lnS - math.Log(s)
	margin := math.Max(changeMinLog, changeSigmas*math.Max(ref.spread(), r.noise))
	if math.Abs(dev) <= margin {
		return
	}
	sign := 1
	if dev < 0 {
		sign = -1
	}
	if prev == sign && math.Abs(r.lnS-e.suspectLnS) <= math.Sqrt2*margin {
		e.cut = e.suspect
		return
	}
	e.suspect, e.suspectSign, e.suspectLnS = r.minute, sign, r.lnS
}

// push appends a good minute; minutes arrive in order, and one that does
// not is dropped.
func (e *Estimator) push(r record) {
	if e.nrec > 0 && r.minute <= e.newestRecord() {
		return
	}
	e.recs[e.nrec%window] = r
	e.nrec++
	if e.nrec >= 2*window {
		e.nrec -= window // keep the count bounded; the ring index is unchanged
	}
}

// newestRecord is the newest good minute; only when nrec > 0.
func (e *Estimator) newestRecord() int64 { return e.recs[(e.nrec-1)%window].minute }

// summary is the weighted view of the good minutes behind an estimate.
type summary struct {
	n           int
	first, last int64
	weight      float64 // Σ w
	busy        float64 // Σ w busy
	deleted     float64 // Σ w D
	lnN         int     // minutes with lnS
	ln          moments // of lnS
	satN        int
	satDeleted  float64
	satWorkers  float64
	batchN      int
	excess      float64 // Σ w (R − D) over every minute in the window with R read
	excessW     float64 // Σ w over those
}

// summarize weighs the good minutes in [lo, hi) within the window ending at
// minute newest; the excess of receives over deletions, over every minute in
// the window.
func (e *Estimator) summarize(newest, lo, hi int64) summary {
	var s summary
	for i := 0; i < min(e.nrec, window); i++ {
		r := &e.recs[i]
		age := newest - r.minute
		if age < 0 || age >= window {
			continue
		}
		w := weights[age]
		if !math.IsNaN(r.excess) {
			s.excess += w * r.excess
			s.excessW += w
		}
		if r.minute < lo || r.minute >= hi {
			continue
		}
		s.weight += w
		if s.n == 0 || r.minute < s.first {
			s.first = r.minute
		}
		if s.n == 0 || r.minute > s.last {
			s.last = r.minute
		}
		s.n++
		s.busy += w * r.busy
		s.deleted += w * r.deleted
		if !math.IsNaN(r.lnS) {
			s.lnN++
			s.ln.add(w, r.lnS)
		}
		if r.saturated {
			s.satN++
			s.satDeleted += w * r.deleted
			s.satWorkers += w * r.workers
		}
		if r.batching {
			s.batchN++
		}
	}
	return s
}

// serviceTime is Σ w busy ÷ Σ w D in seconds, at most maxServiceSecs; 0 when
// unknown.
func (s summary) serviceTime() float64 {
	if !(s.deleted > 0) {
		return 0
	}
	v := s.busy / s.deleted
	if !finite(v) || v < 0 {
		return 0
	}
	return math.Min(v, maxServiceSecs)
}

// abandoned is the rate of receives that end in no deletion, msg/s: the
// weighted mean of the returns R − D − ΔL/60 over the window's minutes and
// this one (rd, NaN when R was not read), not below 0. One minute's returns
// are noisy (a message received in one minute and deleted in the next counts
// against the first, and the in-flight counts at its ends are samples), but
// over consecutive minutes both terms telescope, leaving the messages that
// were never deleted. The second result is false when no minute read R.
func (s summary) abandoned(rd float64) (float64, bool) {
	sum, w := s.excess, s.excessW
	if !math.IsNaN(rd) {
		sum += rd
		w++
	}
	if !(w > 0) {
		return 0, false
	}
	a := math.Max(0, sum/w)
	return a, finite(a)
}

// spread is the weighted standard deviation of the minutes' ln S_m.
func (s summary) spread() float64 { return s.ln.sd() }

// moments are weighted sums for a mean and a standard deviation.
type moments struct{ n, w, x, xx float64 }

func (m *moments) add(w, x float64) {
	m.n++
	m.w += w
	m.x += w * x
	m.xx += w * x * x
}

// sd is the weighted standard deviation; 0 with fewer than 2 values.
func (m moments) sd() float64 {
	if m.n < 2 || !(m.w > 0) {
		return 0
	}
	mean := m.x / m.w
	v := m.xx/m.w - mean*mean
	if !(v > 0) || !finite(v) {
		return 0
	}
	return math.Sqrt(v)
}
