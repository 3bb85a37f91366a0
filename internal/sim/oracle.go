package sim

import (
	"context"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Oracle is a clairvoyant fleet. It knows every message the world will see
// (their arrivals and their work, drawn ahead from the world's own streams),
// the world as it is (its true service time and the changes of it, its
// downstream pool, whatever the group's settings assume) and the start delay
// each worker it launches will take, and pays those delays as every other
// policy does. It follows a plan made before the run (plan.go): the
// smoothest fleet that takes every message's work within a planning
// deadline no longer than the promise, so that a burst may wait up to the
// promise and be served over that window instead of by a fleet the burst's
// size. Run by RunPolicy, it tries deadlines from the promise down and
// keeps the cheapest plan whose run starts the promise share (99 %) of
// messages within the promise: the margin for what the fluid picture of the
// plan leaves out (messages are not divisible among workers) is checked by
// simulation, not assumed.
//
// need(d) is the most workers any cell of the plan needs from now until d
// and one interval ahead; it only grows with d.
//
// Launches. The world draws start delays in launch order, so the q-th
// launch from now takes the q-th delay ahead, d_q, whoever launches it. At
// every interval the oracle makes launch q when need(d_q) reaches current +
// q: made any later, that worker would start after it is needed. Launches
// go in order, so it makes every launch up to the last one so due, the
// earlier ones perhaps early. Otherwise it keeps a worker while it would
// be needed again sooner than its replacement could start: from a fleet of
// n, launch i brings it back to n + i after d_i, so it scales in to the
// largest need(d_i) − i + 1, the least fleet every coming launch restores
// in time. No launch further down the order can be due, or raise that
// floor, than the highest need ahead allows, so the oracle looks at every
// launch that matters and no more. With one start delay D for every worker
// both rules come to need(D): each worker launched one start delay before
// it is needed, and kept through every lull shorter than a start delay
// (keeping it costs less than the start delay a relaunch pays), released
// at the start of a longer one.
//
// For the oracle-instant policy its world has no start delay: the same
// plan, with workers that start at once, a bound no real fleet reaches.
type Oracle struct {
	w        *World
	Interval time.Duration

	h    float64 // the plan's cell, seconds
	plan maxTree // workers each cell needs
	// lag is how much later than the plan the oracle lets a worker start
	// (and go), seconds: the plan is a fluid picture, and the promise
	// leaves room to take a burst's first messages a little later.
	lag    float64
	delays []float64
}

// newOracle makes the oracle that follows fleet, the workers each cell of h
// seconds needs from the world's start on.
func newOracle(w *World, interval time.Duration, fleet []int32, h float64) *Oracle {
	return &Oracle{w: w, Interval: interval, h: h, plan: newMaxTree(fleet)}
}

// observeOne returns the world's one observation at now.
func observeOne(ctx context.Context, w *World, now time.Time) (model.Observation, error) {
	obs, err := w.Observe(ctx, now)
	if err != nil {
		return model.Observation{}, err
	}
	return obs[0], nil
}

// Step sizes the fleet for its coming launches.
func (p *Oracle) Step(ctx context.Context, now time.Time) error {
	o, err := observeOne(ctx, p.w, now)
	if err != nil {
		return err
	}
	p.w.SetDesired(now, p.size(o, now))
	return nil
}

// need is need(d) at `from` seconds since the start, the plan followed lag
// seconds late.
func (p *Oracle) need(from, d float64) int {
	from -= p.lag
	lo := int(math.Max(from, 0) / p.h)
	hi := int(math.Min((from+p.Interval.Seconds()+d)/p.h, float64(p.plan.n-1)))
	return p.plan.max(lo, max(hi, lo))
}

// size is the fleet the oracle asks for at now (see Oracle).
func (p *Oracle) size(o model.Observation, now time.Time) int {
	from := now.Sub(p.w.cfg.Start).Seconds()
	if d, ok := p.w.fixedStartDelay(); ok {
		return p.need(from, d)
	}
	current := o.Fleet.InService + o.Fleet.Pending
	floor, top := p.need(from, 0), p.need(from, math.Inf(1))
	// Launch q can be due only while current + q ≤ top, and can raise the
	// scale-in floor (at least need(d_1) ≥ floor) only while top − q + 1 >
	// floor.
	p.delays = p.w.startDelaysAhead(p.delays[:0], max(top-current, top-floor+1, 1))
	due, keep := 0, 0
	for i, d := range p.delays {
		q := i + 1
		n := p.need(from, d)
		if n >= current+q {
			due = q
		}
		keep = max(keep, n-q+1)
	}
	if due > 0 {
		return current + due
	}
	return keep
}

// maxTree answers the largest value over a range of cells in O(log n).
type maxTree struct {
	n int
	t []int32 // t[n+i] is cell i; t[i] the larger of its two children
}

func newMaxTree(v []int32) maxTree {
	n := max(len(v), 1)
	t := make([]int32, 2*n)
	copy(t[n:], v)
	for i := n - 1; i > 0; i-- {
		t[i] = max(t[2*i], t[2*i+1])
	}
	return maxTree{n: n, t: t}
}

// max is the largest value of cells lo..hi (inclusive, clipped to the
// cells); 0 for an empty range.
func (m maxTree) max(lo, hi int) int {
	lo, hi = max(lo, 0), min(hi, m.n-1)
	best := int32(0)
	for l, r := lo+m.n, hi+m.n+1; l < r; l, r = l/2, r/2 {
		if l&1 == 1 {
			best = max(best, m.t[l])
			l++
		}
		if r&1 == 1 {
			r--
			best = max(best, m.t[r])
		}
	}
	return int(best)
}
