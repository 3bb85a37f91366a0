package sim

import (
	"context"
	"math"
	"slices"
	"time"
)

// PromiseShare is the share of messages the oracle and fixed-best start
// within the promise: the daemon's latency quantile.
const PromiseShare = 0.99

// maxPlanCells bounds the oracle's plan: a longer run plans on longer cells.
const maxPlanCells = 1_000_000

// missBudget is how many scored messages may wait past the promise for a
// run of rc to still start PromiseShare of them within it: the scored
// arrivals (those from the warm-up to the end) are drawn ahead, as the
// world will draw them.
func missBudget(rc RunConfig) int64 {
	var n int64
	from, until := rc.World.WarmUp.Seconds(), rc.Duration.Seconds()
	planMessages(rc.World, until, func(at, _ float64) {
		if at >= from {
			n++
		}
	})
	return int64(math.Floor((1 - PromiseShare) * float64(n)))
}

// searchRun is one run of a search: its result, and whether it was
// stopped early once past the miss budget (its scores are then partial,
// and it fell short of PromiseShare).
type searchRun struct {
	res     Result
	stopped bool
}

func (s searchRun) holds() bool {
	return !s.stopped && s.res.SLOAttainment >= PromiseShare
}

// runFixedBest is the fixed-best policy: the fewest workers, never scaled,
// that start PromiseShare of the messages within the promise, found by
// search on runs of the fixed policy over the same messages (the same
// seed), each stopped as soon as it has missed too many: from the fluid
// picture's fleet, a gallop to a fleet that holds and one that does not,
// then bisection between them. Without such a fleet within the bounds it
// is the largest fleet.
func runFixedBest(ctx context.Context, rc RunConfig) (Result, error) {
	budget := missBudget(rc)
	runs := map[int]searchRun{}
	try := func(n int, stop bool) (searchRun, error) {
		if r, ok := runs[n]; ok && (!r.stopped || stop) {
			return r, nil
		}
		cfg := rc.World
		cfg.Workers = n
		b := budget
		if !stop {
			b = -1
		}
		res, stopped, err := rc.runWorld(ctx, PolicyFixedBest, cfg, func(*World) Autoscaler { return fixedFleet{} }, b)
		if err != nil {
			return searchRun{}, err
		}
		res.Workers = n
		r := searchRun{res: res, stopped: stopped}
		runs[n] = r
		return r, nil
	}
	lo, hi := rc.World.Min, rc.World.Max
	// Gallop from the fleet the fluid picture needs (the simulation then
	// says what the messages' indivisibility adds), doubling the step, then
	// halve the interval where the smallest fleet that holds must be.
	guess := min(max(fluidFixed(rc), lo), hi)
	r, err := try(guess, true)
	if err != nil {
		return Result{}, err
	}
	if r.holds() {
		hi = guess
		for step := 1; hi > lo; step *= 2 {
			n := max(hi-step, lo)
			r, err := try(n, true)
			if err != nil {
				return Result{}, err
			}
			if !r.holds() {
				lo = n + 1
				break
			}
			hi = n
		}
	} else {
		lo = guess + 1
		for step := 1; lo < hi; step *= 2 {
			n := min(lo+step-1, hi)
			r, err := try(n, true)
			if err != nil {
				return Result{}, err
			}
			if r.holds() {
				hi = n
				break
			}
			lo = n + 1
		}
	}
	for lo < hi {
		mid := (lo + hi) / 2
		r, err := try(mid, true)
		if err != nil {
			return Result{}, err
		}
		if r.holds() {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	// hi holds, or is the largest fleet, which may not: run it in full.
	r, err = try(hi, false)
	return r.res, err
}

// fluidFixed is the fewest workers that, in the fluid picture of the
// oracle's plan (a first-in-first-out queue served at the fleet's slots),
// take every cell's work within the promise: a first guess for fixed-best.
func fluidFixed(rc RunConfig) int {
	c := rc.World
	h := planCell(rc)
	g := newWorkGrid(c, rc.Duration.Seconds(), h)
	conc := float64(max(c.Concurrency, 1))
	latency := c.LatencyTarget.Seconds()
	holds := func(n int) bool {
		rate := float64(n) * conc
		q := 0.0
		for _, w := range g.work {
			q += w
			if q > rate*(latency+h) {
				return false
			}
			q = math.Max(q-rate*h, 0)
		}
		return true
	}
	lo, hi := c.Min, c.Max
	for lo < hi {
		mid := (lo + hi) / 2
		if holds(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return hi
}

// planCell is the length of the oracle's plan cells: a sixteenth of the
// promise, at most an interval, and long enough that the run has at most
// maxPlanCells.
func planCell(rc RunConfig) float64 {
	h := math.Min(rc.Interval.Seconds(), rc.World.LatencyTarget.Seconds()/16)
	return math.Max(math.Max(h, rc.Duration.Seconds()/maxPlanCells), 0.05)
}

// runOracle is the oracle policy (see Oracle). It plans for candidate
// deadlines, from one cell to twice the promise, and keeps the longest
// whose run starts PromiseShare of the messages within the promise, found
// by bisection (a longer deadline gives a smoother, cheaper plan that
// holds the promise for fewer messages); deadlines past the promise are
// tried because the promise share lets a few messages wait longer. At that
// deadline it then rounds the plan's fractions of workers down as far as
// the runs still hold (roundFleet). Without a plan that holds, the most
// careful one (one cell, every fraction rounded up).
func runOracle(ctx context.Context, rc RunConfig, name string) (Result, error) {
	cfg := rc.World
	if name == PolicyOracleInstant {
		cfg.StartDelay = 0
	}
	h := planCell(rc)
	grid := newWorkGrid(cfg, rc.Duration.Seconds(), h)
	top := cfg.Max
	if pool := cfg.DownstreamPool; pool > 0 {
		conc := max(cfg.Concurrency, 1)
		top = min(top, (pool+conc-1)/conc)
	}
	budget := missBudget(rc)
	type key struct{ m, trim, lag int }
	runs := map[key]searchRun{}
	plans := map[int][]float64{}
	try := func(k key, stop bool) (searchRun, error) {
		if r, ok := runs[k]; ok && (!r.stopped || stop) {
			return r, nil
		}
		plan, ok := plans[k.m]
		if !ok {
			plan = grid.plannedFleet(float64(k.m)*h, cfg.Concurrency, top)
			plans[k.m] = plan
		}
		fleet := roundFleet(plan, planTrims[k.trim], top)
		b := budget
		if !stop {
			b = -1
		}
		// The oracle chooses its starting fleet, as fixed-best does: the
		// workers its plan keeps at the start.
		lag := planLags[k.lag] * cfg.LatencyTarget.Seconds()
		start := cfg
		o := newOracle(nil, rc.Interval, fleet, h)
		o.lag = lag
		start.Workers = min(max(o.need(0, cfg.StartDelay.Seconds()), cfg.Min), cfg.Max)
		res, stopped, err := rc.runWorld(ctx, name, start, func(w *World) Autoscaler {
			o := newOracle(w, rc.Interval, fleet, h)
			o.lag = lag
			return o
		}, b)
		if err != nil {
			return searchRun{}, err
		}
		res.PlanDeadline = float64(k.m) * h
		r := searchRun{res: res, stopped: stopped}
		runs[k] = r
		return r, nil
	}
	// The candidate deadlines, in cells, ascending: one cell, fractions
	// and multiples of the promise.
	var cands []int
	for _, f := range planDeadlines {
		m := max(int(f*cfg.LatencyTarget.Seconds()/h), 1)
		if len(cands) == 0 || m > cands[len(cands)-1] {
			cands = append(cands, m)
		}
	}
	promise := slices.Index(cands, max(int(cfg.LatencyTarget.Seconds()/h), 1))
	m, err := longestHolding(len(cands), promise, func(i int) (bool, error) {
		r, err := try(key{cands[i], 0, 0}, true)
		return r.holds(), err
	})
	if err != nil {
		return Result{}, err
	}
	if m < 0 {
		r, err := try(key{cands[0], 0, 0}, false)
		return r.res, err
	}
	trim, err := longestHolding(len(planTrims), 0, func(i int) (bool, error) {
		r, err := try(key{cands[m], i, 0}, true)
		return r.holds(), err
	})
	if err != nil {
		return Result{}, err
	}
	trim = max(trim, 0)
	lag, err := longestHolding(len(planLags), 0, func(i int) (bool, error) {
		r, err := try(key{cands[m], trim, i}, true)
		return r.holds(), err
	})
	if err != nil {
		return Result{}, err
	}
	return runs[key{cands[m], trim, max(lag, 0)}].res, nil
}

// longestHolding is the largest index in [0, n) for which holds is true,
// found by bisection from index first, on the assumption that holds is
// true up to some index and false past it; −1 when none holds.
func longestHolding(n, first int, holds func(int) (bool, error)) (int, error) {
	lo, hi := -1, n
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if first >= 0 {
			mid, first = max(min(first, hi-1), lo+1), -1
		}
		ok, err := holds(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// planDeadlines are the oracle's planning deadlines, as shares of the
// promise (0: one cell).
var planDeadlines = []float64{0, 0.25, 0.5, 0.75, 1, 1.1, 1.25, 1.5, 2}

// planLags are how late the oracle tries following its plan, as shares of
// the promise, in order.
var planLags = []float64{0, 0.25, 0.5, 0.75}

// planTrims are the fractions of a worker the oracle tries rounding down
// (roundFleet), in order.
var planTrims = []float64{0, 0.2, 0.4, 0.6, 0.8}

// fixedFleet never scales.
type fixedFleet struct{}

func (fixedFleet) Step(context.Context, time.Time) error { return nil }
