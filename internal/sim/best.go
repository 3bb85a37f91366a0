package sim

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"
)

// PromiseShare is the share of messages the oracle and fixed-best start
// within the promise: the daemon's latency quantile.
const PromiseShare = 0.99

// maxPlanCells bounds the oracle's plan: a longer run plans on longer cells.
const maxPlanCells = 1_000_000

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

// search runs a policy's candidates, each at most once: a run stopped
// early (once it has missed more than budget messages) is kept for the
// searches that also stop early; one asked for in full runs again in full.
type search[K comparable] struct {
	budget int64
	runs   map[K]searchRun
	// run runs candidate k, stopped early once past budget (-1: never).
	run func(k K, budget int64) (res Result, stopped bool, err error)
}

func newSearch[K comparable](budget int64, run func(K, int64) (Result, bool, error)) *search[K] {
	return &search[K]{budget: budget, runs: map[K]searchRun{}, run: run}
}

// try is candidate k's run, stopped early when stop is set.
func (s *search[K]) try(k K, stop bool) (searchRun, error) {
	if r, ok := s.runs[k]; ok && (!r.stopped || stop) {
		return r, nil
	}
	b := s.budget
	if !stop {
		b = -1
	}
	res, stopped, err := s.run(k, b)
	if err != nil {
		return searchRun{}, err
	}
	r := searchRun{res: res, stopped: stopped}
	s.runs[k] = r
	return r, nil
}

// runFixedBest is the fixed-best policy: the fewest workers, never scaled,
// that start PromiseShare of the messages within the promise, found by
// search on runs of the fixed policy over the same messages (the same
// seed), each stopped as soon as it has missed too many (see fewestFixed),
// from the fluid picture's fleet (the simulation then says what the
// messages' indivisibility adds). Without such a fleet within the bounds it
// is the largest fleet.
func runFixedBest(ctx context.Context, rc RunConfig) (Result, error) {
	grid := newWorkGrid(rc.World, rc.Duration.Seconds(), planCell(rc))
	s := newSearch(grid.missBudget(), func(n int, budget int64) (Result, bool, error) {
		return rc.runFixed(ctx, PolicyFixedBest, n, budget)
	})
	return fewestFixed(s, rc.World, fluidFixed(rc.World, grid), searchRun.holds)
}

// fewestFixed is the result of the fewest workers within c's bounds whose
// run holds, by search s on runs stopped early: from guess, a gallop to a
// fleet that holds and one that does not, doubling the step, then
// bisection between them. Without a fleet that holds it is the largest.
func fewestFixed(s *search[int], c Config, guess int, holds func(searchRun) bool) (Result, error) {
	lo, hi := c.Min, c.Max
	guess = min(max(guess, lo), hi)
	r, err := s.try(guess, true)
	if err != nil {
		return Result{}, err
	}
	if holds(r) {
		hi = guess
		for step := 1; hi > lo; step *= 2 {
			n := max(hi-step, lo)
			r, err := s.try(n, true)
			if err != nil {
				return Result{}, err
			}
			if !holds(r) {
				lo = n + 1
				break
			}
			hi = n
		}
	} else {
		lo = guess + 1
		for step := 1; lo < hi; step *= 2 {
			n := min(lo+step-1, hi)
			r, err := s.try(n, true)
			if err != nil {
				return Result{}, err
			}
			if holds(r) {
				hi = n
				break
			}
			lo = n + 1
		}
	}
	for lo < hi {
		mid := (lo + hi) / 2
		r, err := s.try(mid, true)
		if err != nil {
			return Result{}, err
		}
		if holds(r) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	// hi holds, or is the largest fleet, which may not: run it in full.
	r, err = s.try(hi, false)
	return r.res, err
}

// ErrNoWarmUp is the fixed-warm-up policy's error on a run without a
// warm-up: it has seen nothing to size its fleet from.
var ErrNoWarmUp = errors.New("fixed-warm-up sizes its fleet from the warm-up: the run has none")

// runFixedWarmUp is the fixed-warm-up policy: the fleet an operator would
// size from what they had seen, then leave alone. Its size is the fewest
// workers, never scaled, that start PromiseShare of the warm-up's messages
// within the promise, found as fixed-best finds its fleet (fewestFixed)
// but on runs of the warm-up alone, every message in it scored (a message
// still waiting when the warm-up ends counts with the wait so far);
// nothing after the warm-up goes into it. That fleet then runs the whole
// run over the same messages and is scored as every policy is, after the
// warm-up. Without a fleet within the bounds that holds over the warm-up
// it is the largest.
func runFixedWarmUp(ctx context.Context, rc RunConfig) (Result, error) {
	n, err := warmUpFleet(ctx, rc)
	if err != nil {
		return Result{}, err
	}
	res, _, err := rc.runFixed(ctx, PolicyFixedWarmUp, n, -1)
	return res, err
}

// warmUpFleet is fixed-warm-up's fleet for the run rc (see runFixedWarmUp).
func warmUpFleet(ctx context.Context, rc RunConfig) (int, error) {
	if rc.World.WarmUp <= 0 {
		return 0, ErrNoWarmUp
	}
	seen := rc
	seen.Duration = min(rc.World.WarmUp, rc.Duration)
	seen.World.WarmUp = 0
	seen.Progress = nil
	grid := newWorkGrid(seen.World, seen.Duration.Seconds(), planCell(seen))
	s := newSearch(grid.missBudget(), func(n int, budget int64) (Result, bool, error) {
		return seen.runFixed(ctx, PolicyFixedWarmUp, n, budget)
	})
	r, err := fewestFixed(s, seen.World, fluidFixed(seen.World, grid), searchRun.holds)
	if err != nil {
		return 0, err
	}
	return r.Workers, nil
}

// runFixedSameCost is the fixed-same-cost policy: the most workers, never
// scaled, whose cost over the scored window (the run after the warm-up)
// is no more than the model's over the same messages (the same seed, a
// restart included), and at least the fewest workers. It answers "at the
// model's bill, what would a fleet that never moves have done?": where it
// starts more messages within the promise than the model, the model's
// motion cost more than it bought. Like fixed-best it is chosen in
// hindsight: the fleet's size comes from the model's whole run.
func runFixedSameCost(ctx context.Context, rc RunConfig) (Result, error) {
	m, err := rc.modelRun(ctx)
	if err != nil {
		return Result{}, err
	}
	n := min(max(sameCost(rc, m), rc.World.Min), rc.World.Max)
	res, _, err := rc.runFixed(ctx, PolicyFixedSameCost, n, -1)
	return res, err
}

// modelRun runs the model policy over the run's messages, without
// progress reports, for the fixed fleets compared with it.
func (rc RunConfig) modelRun(ctx context.Context) (Result, error) {
	quiet := rc
	quiet.Progress = nil
	m, _, err := quiet.runWorld(ctx, PolicyModel, rc.World, nil, -1)
	return m, err
}

// sameCost is the most workers, never scaled, whose worker-seconds over
// the scored window are no more than the model run m's: a valid run's
// warm-up is shorter than it, so a fixed fleet's cost is exactly n × the
// scored seconds (the small tolerance keeps a fleet that costs the
// model's to the worker).
func sameCost(rc RunConfig, m Result) int {
	scored := (rc.Duration - rc.World.WarmUp).Seconds()
	return int(math.Floor(m.WorkerSeconds/scored + 1e-9))
}

// runFixedSameShare is the fixed-same-share policy: the fewest workers,
// never scaled, that start at least as many of the scored messages within
// the promise as the model over the same messages (the same seed, a
// restart included). It answers "what would a fleet that never moves have
// cost for what the model kept?": where it costs less than the model, the
// model paid for motion a fixed fleet did without. The search (see
// fewestFixed) starts from fixed-same-cost's fleet, and each run stops
// once it has missed more messages than the model did. Like fixed-best it
// is chosen in hindsight, and without such a fleet within the bounds it is
// the largest.
func runFixedSameShare(ctx context.Context, rc RunConfig) (Result, error) {
	m, err := rc.modelRun(ctx)
	if err != nil {
		return Result{}, err
	}
	s := newSearch(m.missed, func(n int, budget int64) (Result, bool, error) {
		return rc.runFixed(ctx, PolicyFixedSameShare, n, budget)
	})
	return fewestFixed(s, rc.World, sameCost(rc, m), func(r searchRun) bool {
		return !r.stopped && r.res.missed <= m.missed
	})
}

// runFixed runs n workers, never scaled, as the policy name, stopped once
// more than budget messages have missed the promise (see runWorld; -1:
// never); its Workers is n.
func (rc RunConfig) runFixed(ctx context.Context, name string, n int, budget int64) (Result, bool, error) {
	cfg := rc.World
	cfg.Workers = n
	res, stopped, err := rc.runWorld(ctx, name, cfg, func(*World) Autoscaler { return fixedFleet{} }, budget)
	res.Workers = n
	return res, stopped, err
}

// fluidFixed is the fewest workers that, in the fluid picture of the
// oracle's plan (a first-in-first-out queue served at the fleet's slots),
// take every cell's work (the grid's, cells of the plan's length) within
// the promise of c: a first guess for fixed-best.
func fluidFixed(c Config, g workGrid) int {
	h := g.h
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
	if pool := cfg.widestPool(); pool > 0 {
		conc := max(cfg.Concurrency, 1)
		top = min(top, (pool+conc-1)/conc)
	}
	type key struct{ m, trim, lag int }
	plans := map[int][]float64{}
	s := newSearch(grid.missBudget(), func(k key, budget int64) (Result, bool, error) {
		plan, ok := plans[k.m]
		if !ok {
			plan = grid.plannedFleet(float64(k.m)*h, cfg.Concurrency, top)
			plans[k.m] = plan
		}
		fleet := roundFleet(plan, planTrims[k.trim], top)
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
		}, budget)
		res.PlanDeadline = float64(k.m) * h
		return res, stopped, err
	})
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
		r, err := s.try(key{cands[i], 0, 0}, true)
		return r.holds(), err
	})
	if err != nil {
		return Result{}, err
	}
	if m < 0 {
		r, err := s.try(key{cands[0], 0, 0}, false)
		return r.res, err
	}
	trim, err := longestHolding(len(planTrims), 0, func(i int) (bool, error) {
		r, err := s.try(key{cands[m], i, 0}, true)
		return r.holds(), err
	})
	if err != nil {
		return Result{}, err
	}
	trim = max(trim, 0)
	lag, err := longestHolding(len(planLags), 0, func(i int) (bool, error) {
		r, err := s.try(key{cands[m], trim, i}, true)
		return r.holds(), err
	})
	if err != nil {
		return Result{}, err
	}
	return s.runs[key{cands[m], trim, max(lag, 0)}].res, nil
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
