// Package ceiling finds a worker fleet's downstream ceiling: the size past
// which added workers stop adding throughput, because something they share
// (a connection pool, a database, a rate limit) is the bottleneck, not
// their number.
//
// It learns from good minutes: what each minute's workers could complete
// (its capacity: the completions of a saturated minute, one with a visible
// backlog throughout and every slot busy; else the workers at the minute's
// measured service time), and what a saturated minute's workers did
// complete. When the fleet grew from one minute to a saturated one not long
// after and its completions grew by far less than the capacity of the
// earlier minute's workers promised (an ineffective scale-up), the ceiling
// is where the highest throughput seen would be reached at the capacity per
// worker of the fewest workers seen, the least contended: the workers the
// downstream can keep busy before they start waiting for it. More workers than that add contention, not
// throughput; the downstream is left to the idea behind TCP Vegas and
// concurrency limits, that a limit shows as throughput that stops growing
// while latency does.
//
// A ceiling is probed again on its own schedule: while the fleet is held at
// it and needs more, it is raised by one step every ProbeEvery, and a
// fixed downstream then shows as growth again; an unfixed one as a
// saturated minute at the probed size that completes about what the
// ceiling did (or another ineffective scale-up), which sets the ceiling
// back to its knee. A scale-up past the
// ceiling that adds throughput in proportion drops it, and so does Forget
// without a saturated minute. So does a fleet held at the ceiling whose
// workers stay as slow as past it: contention eases below the knee, and
// where it does not, the work itself changed (a deploy that coincided with
// the scale-up).
//
// The package is pure: time is an argument, memory is a fixed ring.
package ceiling

import (
	"math"
	"time"
)

const (
	// Window is how far apart two saturated minutes may be and still be
	// compared: longer, and the work itself may have changed (a deploy).
	Window = 15 * time.Minute
	// MinGrowth is the least relative growth of the fleet between the two
	// minutes compared, so that counting noise is not read as a ceiling.
	MinGrowth = 0.15
	// MinGrowthEstimated is the least growth from a minute that was not
	// saturated, whose capacity is estimated from its service time and is
	// good to some 15 % only.
	MinGrowthEstimated = 0.5
	// Ineffective is the share of the throughput a scale-up's workers
	// promised (at the lower size's capacity per worker) below which the
	// scale-up found a ceiling.
	Ineffective = 0.5
	// Effective is the share of the promised throughput at or above which a
	// scale-up past the ceiling drops it.
	Effective = 0.8
	// ProbeEvery is how long after the last probe was judged (or found
	// the ceiling) a ceiling the fleet is held at is raised by one step;
	// one probe is out at a time.
	ProbeEvery = 10 * time.Minute
	// ProbeLapse is how long a probe waits for a saturated minute at its
	// size to judge it before it lapses and the ceiling goes back to the
	// knee: a start delay, a whole minute and the deleted count's lag fit
	// in it.
	ProbeLapse = 10 * time.Minute
	// ProbeStep is the relative size of one probe's step (at least one
	// worker): above MinGrowth, so that the probe is compared with the
	// ceiling's size.
	ProbeStep = 0.2
	// MaxProbeStep bounds the step, which doubles after each probe that
	// added throughput in proportion: a downstream that grew is followed
	// in a few probes, not one step of 20 % each ProbeEvery.
	MaxProbeStep = 0.8
	// Forget is how long a ceiling lasts without a saturated minute.
	Forget = 30 * time.Minute
	// SuspectFor is how long one ineffective minute stays a suspicion
	// when no good minute comes after it to confirm or refute it.
	SuspectFor = 3 * time.Minute
	// Sigmas is the counting noise, in standard deviations, by which an
	// ineffective scale-up (or a failed probe) must miss what its workers
	// promised: a minute's completions are a count, and a few hundred of
	// them vary by several percent, as much as a small scale-up promises.
	Sigmas = 3
)

// minute is the length of one observation, seconds.
const minute = 60.0

// missed reports whether a scale-up whose throughput grew by gain (relative)
// where its workers promised expected missed the promise by more than
// Sigmas standard deviations of the counting noise of the two minutes'
// completions, lo and hi msg/s over a minute each. Completions of a
// saturated pool are counted as Poisson, which they are for exponential
// service and about are for any service time spread near it.
func missed(gain, expected, lo, hi float64) bool {
	sigma := (1 + gain) * math.Sqrt(1/(lo*minute)+1/(hi*minute))
	return expected-gain > Sigmas*sigma
}

// ringSize holds a Window of one-minute observations and a few more.
const ringSize = 20

// Observation is one good minute: the mean workers in service, the
// messages they completed per second, and what they could complete.
type Observation struct {
	At         time.Time
	Workers    float64
	Throughput float64
	// Capacity is what the workers could complete, msg/s: Throughput when
	// Saturated, else workers at the minute's measured service time.
	Capacity  float64
	Saturated bool
}

func (o Observation) valid() bool {
	return !o.At.IsZero() && o.Workers >= 1 && o.Throughput > 0 && o.Capacity > 0 &&
		!math.IsInf(o.Workers, 0) && !math.IsInf(o.Throughput, 0) && !math.IsInf(o.Capacity, 0)
}

// Ceiling is a learned ceiling and what found it.
type Ceiling struct {
	Workers int       // the fleet's learned maximum
	Since   time.Time // when it was found (or last probed)
	// The scale-up that found it: from Low to High workers, throughput
	// grew by Gain (relative) where the workers' rate promised Expected.
	Low, High      float64
	Gain, Expected float64
	// Throughput is the highest throughput seen, msg/s.
	Throughput float64
	// PerWorker is the capacity per worker of the fewest workers seen,
	// the least contended, msg/s: what a worker completes below the
	// ceiling, where minutes past it measure slower workers.
	PerWorker float64
}

// Detector finds one fleet's ceiling. The zero value is ready to use; it is
// not safe for concurrent use.
type Detector struct {
	ring  [ringSize]Observation
	n     int // observations held
	next  int // where the next one goes
	last  time.Time
	found bool
	c     Ceiling
	// suspect: the saturated minute at suspectAt was an ineffective
	// scale-up, to be confirmed by the next good minute; prevAt is the
	// good minute before the newest.
	suspect   bool
	suspectAt time.Time
	// suspectWorkers are the workers of the suspected minute.
	suspectWorkers float64
	prevAt         time.Time
	// perWorker is the capacity per worker the ceiling was found with, and
	// knee the size it was found at, before any probe.
	perWorker float64
	knee      int
	// lastSat is the newest saturated minute seen.
	lastSat time.Time
	// step is the next probe's relative step (0: ProbeStep).
	step float64
}

func (d *Detector) probeStep() float64 {
	if d.step <= 0 {
		return ProbeStep
	}
	return d.step
}

// Observe records one good minute. Minutes that are not newer than the
// last one, or not valid, are ignored.
func (d *Detector) Observe(o Observation) {
	if o.Saturated {
		o.Capacity = o.Throughput
	}
	if !o.valid() || (!d.last.IsZero() && !o.At.After(d.last)) {
		return
	}
	d.prevAt, d.last = d.last, o.At
	if d.found && o.Workers <= float64(d.knee)*(1+MinGrowth) && o.Capacity < Effective*d.perWorker*o.Workers {
		// At the ceiling's size the workers are as slow as they were past
		// it: what slowed them was the work itself (a deploy at the time of
		// the scale-up), not contention. The minutes before are of another
		// kind of work, and are forgotten with the ceiling.
		d.found, d.n, d.next, d.perWorker = false, 0, 0, 0
	}
	d.ring[d.next] = o
	d.next = (d.next + 1) % ringSize
	d.n = min(d.n+1, ringSize)
	if !o.Saturated {
		d.suspect = false
		return
	}
	d.lastSat = o.At
	switch d.probe(o) {
	case probeFailed:
		// A probe met the downstream: back to the knee, or to where the
		// probe's throughput says the downstream now tops out when that
		// is more (one that grew less than the probe), and the next probe
		// a ProbeEvery from now.
		if d.perWorker > 0 {
			top := int(math.Ceil(o.Throughput/d.perWorker - 1e-9))
			d.knee = max(d.knee, min(top, int(math.Floor(o.Workers+1e-9))))
		}
		d.c.Throughput = math.Max(d.c.Throughput, o.Throughput)
		d.setBack(o.At)
		d.suspect = false
		return
	case probeGained:
		d.gain(o.Workers, o.Throughput)
		d.suspect = false
		return
	}
	d.detect(o)
}

// gain takes a probe whose workers added throughput in proportion: the
// downstream grew. The probed size (workers, completing throughput msg/s)
// is the new knee, and the next probe, twice as large a step, comes at
// once; the first one that adds nothing sets the ceiling back to the last
// size that did. Dropping the ceiling instead would let a backlog built
// against it buy every worker it asks for at once.
func (d *Detector) gain(workers, throughput float64) {
	d.knee = max(d.knee, int(math.Floor(workers+1e-9)))
	d.c.Workers, d.c.Since, d.c.Throughput = d.knee, time.Time{}, math.Max(d.c.Throughput, throughput)
	d.step = min(2*d.probeStep(), MaxProbeStep)
}

// setBack ends the probe out at at: the ceiling goes back to the knee,
// the next probe comes a ProbeEvery later with the first step.
func (d *Detector) setBack(at time.Time) {
	d.c.Workers, d.c.Since, d.step = d.knee, at, ProbeStep
}

// ProbeMoved takes a scale-out read from the samples (Step), minutes
// before a saturated minute can judge it: when it is the probe out (from
// the knee to past it, after the probe was raised) and its slots moved the
// queue as they promised, the probe gained, as a saturated minute would
// have said. It reports whether it was taken.
func (d *Detector) ProbeMoved(k ScaleOut) bool {
	kn := float64(d.knee)
	if !d.found || d.c.Workers <= d.knee || k.At.Before(d.c.Since) ||
		k.Before > kn*(1+MinGrowth) || k.Before < kn*(1-MinGrowth) || k.After < kn*(1+MinGrowth) {
		return false
	}
	d.gain(k.After, d.c.Throughput*k.After/math.Max(k.Before, kn))
	return true
}

// What a saturated minute past the knee says of the ceiling.
const (
	probeNone = iota
	probeFailed
	probeGained
)

// probe judges the saturated minute o, at a size past the knee (a
// probe's), against the ceiling's own record of what the knee's workers
// completed: probeFailed when the workers past the knee added about
// nothing (below Ineffective of what they promised), probeGained when they
// added it in proportion (Effective or more). Such a minute is judged
// against the record, not against the earlier minutes of the window:
// those may be of a small fleet between bursts (a downstream met by bursts
// 20 minutes apart), from which any growth looks large, or the minute the
// probe's workers arrived in, too close in size to compare.
func (d *Detector) probe(o Observation) int {
	if !d.found || o.Workers < float64(d.knee)*(1+MinGrowth) || d.c.Throughput <= 0 {
		return probeNone
	}
	if o.Workers < 0.95*float64(d.c.Workers) {
		// The probe's workers were not all in service for the minute: a
		// minute of the last probe's size, judged already.
		return probeNone
	}
	expected := o.Workers/float64(d.knee) - 1
	gain := o.Throughput/d.c.Throughput - 1
	r := gain / expected
	switch {
	case r < Ineffective && missed(gain, expected, d.c.Throughput, o.Throughput):
		return probeFailed
	case r >= Effective:
		return probeGained
	}
	return probeNone
}

// detect compares the newest minute with the earlier ones in the window:
// an ineffective scale-up sets the ceiling. Each earlier size counts by its
// latest minute before the newest one (a later minute with about as many
// workers or fewer is fresher evidence of what they do), so a change of the
// work itself (a deploy that halves every worker's rate, then a scale-up)
// is compared after the change, not across it.
func (d *Detector) detect(hi Observation) {
	top := 0.0 // the highest saturated throughput seen in the window
	// lo and ratio: the pair with the lowest gain ÷ expected; missLo and
	// missRatio: the lowest of the pairs that missed the promise beyond
	// the counting noise (missed).
	var lo, missLo Observation
	ratio, missRatio := math.Inf(1), math.Inf(1)
	for i := range d.n {
		o := d.ring[i]
		if hi.At.Sub(o.At) > Window {
			continue
		}
		if o.Saturated {
			top = math.Max(top, o.Throughput)
		}
		growth := MinGrowth
		if !o.Saturated {
			growth = MinGrowthEstimated
		}
		if o.At.Equal(hi.At) || hi.Workers < o.Workers*(1+growth) || hi.Workers-o.Workers < 1 || d.superseded(o, hi) {
			continue
		}
		expected := hi.Workers/o.Workers - 1
		gain := hi.Throughput/o.Capacity - 1
		r := gain / expected
		if r < ratio {
			lo, ratio = o, r
		}
		if r < Ineffective && r < missRatio && missed(gain, expected, o.Throughput, hi.Throughput) {
			missLo, missRatio = o, r
		}
	}
	if math.IsInf(ratio, 1) {
		d.suspect = false
		return
	}
	if ratio < Ineffective && math.IsInf(missRatio, 1) {
		// Short of the promise, but within the counting noise: no
		// evidence either way.
		d.suspect = false
		return
	}
	if !math.IsInf(missRatio, 1) {
		lo, ratio = missLo, missRatio
	}
	expected := hi.Workers/lo.Workers - 1
	gain := hi.Throughput/lo.Capacity - 1
	if ratio >= Ineffective {
		d.suspect = false
		if d.found && ratio >= Effective && hi.Workers >= float64(d.c.Workers)*(1+MinGrowth) {
			// Workers past the ceiling added throughput again: the
			// downstream was fixed or scaled.
			d.found = false
		}
		return
	}
	// One ineffective minute is a suspicion; the next good minute, when it
	// is saturated and ineffective too, confirms it. A ceiling wrongly found
	// holds a fleet below its load, so it takes two.
	if !d.suspect || !d.suspectAt.Equal(d.prevAt) {
		d.suspect, d.suspectAt, d.suspectWorkers = true, hi.At, hi.Workers
		return
	}
	d.suspect = false
	// The capacity per worker of the fewest workers in the window, the
	// least contended: the mean over their minutes, not the best of them,
	// which noise raises.
	fewest := lo.Workers
	for i := range d.n {
		if o := d.ring[i]; hi.At.Sub(o.At) <= Window && o.At.Before(hi.At) {
			fewest = math.Min(fewest, o.Workers)
		}
	}
	var capSum, workSum float64
	for i := range d.n {
		o := d.ring[i]
		if hi.At.Sub(o.At) <= Window && o.At.Before(hi.At) && o.Workers <= fewest*(1+MinGrowth) {
			capSum += o.Capacity
			workSum += o.Workers
		}
	}
	perWorker := capSum / workSum // lo is among the minutes summed
	if d.found {
		// A probe met the ceiling again: the fewest workers of the window
		// are the probed ones, contended already; the rate per worker
		// found before them is the one without contention.
		perWorker = math.Max(perWorker, d.perWorker)
	}
	d.perWorker = perWorker
	knee := int(math.Ceil(top/perWorker - 1e-9))
	knee = min(max(knee, 1), int(math.Ceil(hi.Workers-1e-9)))
	d.found, d.knee, d.step = true, knee, ProbeStep
	d.c = Ceiling{Workers: knee, Since: hi.At, Low: lo.Workers, High: hi.Workers,
		Gain: gain, Expected: expected, Throughput: top, PerWorker: perWorker}
}

// superseded reports whether a minute between o and hi had about as many
// workers as o or fewer (within MinGrowth): fresher evidence of what that
// size does.
func (d *Detector) superseded(o, hi Observation) bool {
	for i := range d.n {
		p := d.ring[i]
		if p.At.After(o.At) && p.At.Before(hi.At) && p.Workers <= o.Workers*(1+MinGrowth) {
			return true
		}
	}
	return false
}

// Judged reports whether a saturated minute that began at or after since
// has been observed, and is not a suspicion: the Detector has settled what
// the workers of that time do (a ceiling, or none).
func (d *Detector) Judged(since time.Time) bool {
	if d.found {
		return true
	}
	return !d.lastSat.IsZero() && !d.lastSat.Before(since) && !d.suspect
}

// Suspected returns the workers of the newest saturated minute when it
// was an ineffective scale-up that the next good minute has not confirmed
// or refuted yet, and no ceiling is found: workers past them may add no
// throughput. A suspicion lasts SuspectFor from its minute at most.
func (d *Detector) Suspected(now time.Time) (float64, bool) {
	if d.found || !d.suspect || now.Sub(d.suspectAt) > SuspectFor {
		return 0, false
	}
	return d.suspectWorkers, true
}

// At returns the ceiling in force at now, when there is one. held says the
// fleet is held at the ceiling and needs more workers: then the ceiling is
// raised by one step every ProbeEvery. A ceiling is never below floor (the
// group's min).
func (d *Detector) At(now time.Time, held bool, floor int) (Ceiling, bool) {
	if !d.found {
		return Ceiling{}, false
	}
	if now.Sub(d.lastSat) > Forget {
		d.found = false
		return Ceiling{}, false
	}
	switch {
	case d.c.Workers > d.knee && now.Sub(d.c.Since) >= ProbeLapse:
		// No saturated minute judged the probe (a burst that ended
		// before its workers started): it lapses.
		d.setBack(now)
	case d.c.Workers <= d.knee && held && now.Sub(d.c.Since) >= ProbeEvery:
		d.c.Workers += max(1, int(math.Ceil(float64(d.c.Workers)*d.probeStep())))
		d.c.Since = now
	}
	c := d.c
	c.Workers = max(c.Workers, floor, 1)
	return c, true
}
