package sim

import (
	"context"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// Oracle is a clairvoyant fleet: it knows the scenario's arrival rate
// ahead of time, the world as it is (its true service time and the changes
// of it, its downstream pool, whatever the group's settings assume) and
// the start delay each worker it launches will take, and pays those delays
// as every other policy does. No policy that sees only the past can hold
// the promise for much less, except by luck.
//
// What a window of time needs is the fewest workers for which, by Erlang C
// at the window's highest rate and service time, at most 1 % of messages
// wait longer than the latency target, raised if needed to clear any
// backlog within the latency target, and never more than the downstream
// pool keeps busy: past the pool a worker adds no completions, it only
// moves messages from the queue into slower service. need(d) is what the
// window from now to d and one interval ahead needs; it only grows with d.
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
// floor, than the highest need ahead (need over the whole scenario)
// allows, so the oracle looks at every launch that matters and no more.
// With one start delay D for every worker both rules come to need(D): each
// worker launched one start delay before it is needed and kept while it
// will be needed again sooner than a new one could start.
//
// For the oracle-instant policy its world has no start delay, and it sizes
// for the next interval only: a bound no real fleet reaches.
type Oracle struct {
	w        *World
	Latency  time.Duration
	Interval time.Duration
	Miss     float64 // share of messages allowed past the target in the Erlang C model

	steps   []needStep   // need(d), this interval
	changes []rateChange // the scenario's, for steps
	delays  []float64    // the delays of the coming launches
}

// needStep is a step of need(d): n for every delay past d.
type needStep struct {
	d float64
	n int
}

// NewOracle makes the oracle for w.
func NewOracle(w *World, latency, interval time.Duration) *Oracle {
	return &Oracle{w: w, Latency: latency, Interval: interval, Miss: 0.01}
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

// size is the fleet the oracle asks for at now (see Oracle).
func (p *Oracle) size(o model.Observation, now time.Time) int {
	from := now.Sub(p.w.cfg.Start).Seconds()
	if d, ok := p.w.fixedStartDelay(); ok {
		p.needs(o.Sample, from, d)
		return p.need(d)
	}
	p.needs(o.Sample, from, math.Inf(1))
	current := o.Fleet.InService + o.Fleet.Pending
	floor, top := p.steps[0].n, p.steps[len(p.steps)-1].n
	// Launch q can be due only while current + q ≤ top, and can raise the
	// scale-in floor (at least need(d_1) ≥ floor) only while top − q + 1 >
	// floor.
	p.delays = p.w.startDelaysAhead(p.delays[:0], max(top-current, top-floor+1, 1))
	due, keep := 0, 0
	for i, d := range p.delays {
		q := i + 1
		n := p.need(d)
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

// needs works out need(d) at `from` (seconds since the start), for delays
// up to longest, as steps: the need within one interval, then each rise as
// a change of rate or of service time enters the window. A periodic
// scenario shows every rate within one period.
func (p *Oracle) needs(s model.GroupSample, from, longest float64) {
	cfg := &p.w.cfg
	iv := p.Interval.Seconds()
	rate := cfg.Scenario.maxRate(from, from+iv)
	factor := p.w.changes.maxFactor(from, from+iv)
	p.steps = append(p.steps[:0], needStep{d: math.Inf(-1), n: p.needFor(s, rate, factor)})
	until := from + iv + longest
	if cfg.Scenario.Period > 0 {
		until = math.Min(until, from+cfg.Scenario.Period.Seconds())
	}
	p.changes = cfg.Scenario.appendRateChanges(p.changes[:0], from+iv, until)
	rs, cs := p.changes, p.w.changes
	for len(cs) > 0 && cs[0].at < from+iv {
		cs = cs[1:]
	}
	for len(cs) > 0 && cs[len(cs)-1].at >= until {
		cs = cs[:len(cs)-1]
	}
	for len(rs) > 0 || len(cs) > 0 {
		// The next change of either kind; both when they coincide.
		at := math.Inf(1)
		if len(rs) > 0 {
			at = rs[0].at
		}
		if len(cs) > 0 {
			at = math.Min(at, cs[0].at)
		}
		raised := false
		for len(rs) > 0 && rs[0].at == at {
			raised = raised || rs[0].rate > rate
			rate = math.Max(rate, rs[0].rate)
			rs = rs[1:]
		}
		for len(cs) > 0 && cs[0].at == at {
			raised = raised || cs[0].factor > factor
			factor = math.Max(factor, cs[0].factor)
			cs = cs[1:]
		}
		if !raised {
			continue
		}
		// A change at `at` is within the window of a delay past at − from − iv.
		if n := p.needFor(s, rate, factor); n > p.steps[len(p.steps)-1].n {
			p.steps = append(p.steps, needStep{d: at - from - iv, n: n})
		}
	}
}

// need is need(d), from the steps.
func (p *Oracle) need(d float64) int {
	i := len(p.steps) - 1
	for i > 0 && p.steps[i].d >= d {
		i--
	}
	return p.steps[i].n
}

// needFor is the fleet a window needs whose highest rate and service-time
// factor are rate and factor, within the fleet's maximum.
func (p *Oracle) needFor(s model.GroupSample, rate, factor float64) int {
	cfg := &p.w.cfg
	conc := max(cfg.Concurrency, 1)
	perSlot := 1 / (cfg.Service.Mean.Seconds() * factor)
	n := cfg.Max
	if slots, ok := capacity.WaitQuantileFloor(rate, perSlot, p.Latency.Seconds(), p.Miss); ok {
		n = (slots + conc - 1) / conc
		if lat := p.Latency.Seconds(); lat > 0 && s.Visible > 0 {
			n = max(n, capacity.DrainFloor(rate, perSlot*float64(conc), float64(s.Visible), lat))
		}
	}
	if pool := cfg.DownstreamPool; pool > 0 {
		n = min(n, (pool+conc-1)/conc)
	}
	return min(n, cfg.Max)
}
