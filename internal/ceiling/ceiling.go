// Package ceiling finds a worker fleet's downstream ceiling: the size past
// which added workers stop adding throughput, because something they share
// (a connection pool, a database, a rate limit) is the bottleneck, not
// their number.
//
// It learns from saturated minutes only: minutes in which the fleet had a
// visible backlog throughout and every slot busy, so that its completions
// measure what the fleet can do rather than what arrived. When the fleet
// grew between two such minutes not long apart and its completions grew by
// far less than the workers did (an ineffective scale-up), the ceiling is
// where the highest throughput seen would be reached at the best per-worker
// throughput seen: the workers the downstream can keep busy before they
// start waiting for it. More workers than that add contention, not
// throughput; the downstream is left to the idea behind TCP Vegas and
// concurrency limits, that a limit shows as throughput that stops growing
// while latency does.
//
// A ceiling is probed again on its own schedule: while the fleet is held at
// it and needs more, it is raised by one step every ProbeEvery, and a
// fixed downstream then shows as growth again; an unfixed one as another
// ineffective scale-up, which sets the ceiling back. A scale-up past the
// ceiling that adds throughput in proportion drops it, and so does Forget
// without a saturated minute.
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
	// Ineffective: a scale-up that added less than this share of the
	// throughput its workers would add at the lower size's rate per worker
	// found a ceiling.
	Ineffective = 0.5
	// Effective: a scale-up past the ceiling that added at least this share
	// of the throughput its workers promised drops the ceiling.
	Effective = 0.8
	// ProbeEvery is how often a ceiling the fleet is held at is raised by
	// one step.
	ProbeEvery = 10 * time.Minute
	// ProbeStep is the relative size of one probe's step (at least one
	// worker).
	ProbeStep = 0.1
	// Forget: a ceiling no saturated minute has confirmed for this long is
	// dropped.
	Forget = 30 * time.Minute
)

// ringSize holds a Window of one-minute observations and a few more.
const ringSize = 20

// Observation is one saturated minute: the mean workers in service and the
// messages they completed per second.
type Observation struct {
	At         time.Time
	Workers    float64
	Throughput float64
}

func (o Observation) valid() bool {
	return !o.At.IsZero() && o.Workers >= 1 && o.Throughput > 0 &&
		!math.IsInf(o.Workers, 0) && !math.IsInf(o.Throughput, 0)
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
	// lastSat is the newest saturated minute seen.
	lastSat time.Time
}

// Observe records one saturated minute. Minutes that are not newer than
// the last one, or not valid, are ignored.
func (d *Detector) Observe(o Observation) {
	if !o.valid() || (!d.last.IsZero() && !o.At.After(d.last)) {
		return
	}
	d.last, d.lastSat = o.At, o.At
	d.ring[d.next] = o
	d.next = (d.next + 1) % ringSize
	d.n = min(d.n+1, ringSize)
	d.detect(o)
}

// detect compares the newest minute with the earlier ones in the window:
// an ineffective scale-up sets the ceiling. Each earlier size counts by its
// latest minute before the newest one (a minute with no more workers after
// it is fresher evidence of what fewer workers do), so a change of the
// work itself (a deploy that halves every worker's rate, then a scale-up)
// is compared after the change, not across it.
func (d *Detector) detect(hi Observation) {
	best := 0.0 // the best throughput per worker seen in the window
	top := 0.0  // the highest throughput seen in the window
	var lo Observation
	ratio := math.Inf(1) // the lowest gain ÷ expected of the pairs
	for i := range d.n {
		o := d.ring[i]
		if hi.At.Sub(o.At) > Window {
			continue
		}
		best = math.Max(best, o.Throughput/o.Workers)
		top = math.Max(top, o.Throughput)
		if o.At.Equal(hi.At) || hi.Workers < o.Workers*(1+MinGrowth) || hi.Workers-o.Workers < 1 || d.superseded(o, hi) {
			continue
		}
		expected := hi.Workers/o.Workers - 1
		if r := (hi.Throughput/o.Throughput - 1) / expected; r < ratio {
			lo, ratio = o, r
		}
	}
	if math.IsInf(ratio, 1) {
		return
	}
	expected := hi.Workers/lo.Workers - 1
	gain := hi.Throughput/lo.Throughput - 1
	if ratio >= Ineffective {
		if d.found && ratio >= Effective && hi.Workers > float64(d.c.Workers) {
			// Workers past the ceiling added throughput again: the
			// downstream was fixed or scaled.
			d.found = false
		}
		return
	}
	knee := int(math.Ceil(top/best - 1e-9))
	knee = min(max(knee, 1), int(math.Ceil(hi.Workers-1e-9)))
	d.found = true
	d.c = Ceiling{Workers: knee, Since: hi.At, Low: lo.Workers, High: hi.Workers,
		Gain: gain, Expected: expected, Throughput: top}
}

// superseded reports whether a minute between o and hi had no more workers
// than o.
func (d *Detector) superseded(o, hi Observation) bool {
	for i := range d.n {
		p := d.ring[i]
		if p.At.After(o.At) && p.At.Before(hi.At) && p.Workers <= o.Workers {
			return true
		}
	}
	return false
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
	if held && now.Sub(d.c.Since) >= ProbeEvery {
		d.c.Workers += max(1, int(math.Ceil(float64(d.c.Workers)*ProbeStep)))
		d.c.Since = now
	}
	c := d.c
	c.Workers = max(c.Workers, floor, 1)
	return c, true
}
