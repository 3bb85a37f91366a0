package policy

import (
	"math"
	"sync"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/futures"
	"github.com/queuechecker/queue-checker/internal/model"
)

// planners lend the plan's working space (about 50 KB) to one decision at
// a time: it keeps nothing between plans, so groups need not each hold one.
var planners = sync.Pool{New: func() any { return futures.NewPlanner() }}

// planSpan is how much of the recent past the futures are drawn from.
const planSpan = 3600.0

// planLevelTau is the shortest time constant of the level the futures are
// replayed at, seconds: a burst does not move it much.
const planLevelTau = 300.0

// planMinStep is the shortest step of the book, seconds: an hour of it
// is at most 720 steps (5.8 KB a group), however short the horizon.
const planMinStep = 5.0

// planSteps is the steps of a horizon, as the futures are laid out.
const planSteps = futures.MaxSteps / 2

// planHorizon is how far a plan looks, seconds: long enough for a launch to
// serve (its start delay) and its messages to start (the promise), and for
// a release to be weighed against launching again (a second start delay).
func planHorizon(s Settings) float64 {
	return math.Max(2*s.StartDelay.Seconds()+s.Latency.Seconds(), 10)
}

// planBook is the group's book of arrivals, made for its settings.
func (st *State) planBook(s Settings) *futures.Book {
	step := math.Max(math.Ceil(planHorizon(s)/planSteps), planMinStep)
	if st.book == nil || st.book.Step() != step {
		st.book = futures.NewBook(step, planSpan, math.Max(s.ArrivalSmoothing.Seconds(), planLevelTau))
	}
	return st.book
}

// recordArrivals adds the interval's arrivals to the book the futures are
// drawn from.
func (c *call) recordArrivals() {
	if !c.prevOK || c.s.Policy != PolicyModel || c.suspect {
		return
	}
	obs, ok := c.st.est.Observation(c.at)
	if !ok {
		return
	}
	b := c.st.planBook(c.s)
	from, to := c.prev.at, c.at
	b.Observe(secondsOf(from), secondsOf(to), obs*to.Sub(from).Seconds())
}

// planFleet chooses the count of least expected cost over the futures,
// at or above lo (the floors that stay constraints) and at most the bound.
func (c *call) planFleet(lo int) int {
	s, st := c.s, c.st
	b := st.planBook(s)
	level := b.Level()
	now := c.lambda
	if r, ok := b.Recent(2); ok {
		now = math.Max(now, r)
	}
	pending, later := c.pendingLeft()
	in := futures.Input{
		Level: level, Now: now,
		Backlog: c.visible, Waited: -1,
		InService: c.inService, Pending: pending, PendingLater: later, Current: c.current,
		PerWorker:  c.muEff,
		StartDelay: s.StartDelay.Seconds(), Promise: c.latency(), Horizon: planHorizon(s),
		Lo: lo, Hi: max(c.hi, lo),
		Allowance: (1 - s.LatencyQuantile) * planAim(st.budget),
	}
	if c.ageOK {
		// CloudWatch's oldest age is the largest of the minute that starts
		// at its time: as old as that at the minute's end, and older since.
		in.Waited = c.age + math.Max(c.now.Sub(c.ageAt.Add(time.Minute)).Seconds(), 0)
	}
	if c.hiBy == byCeiling {
		in.Ceiling = c.hi
	}
	p := planners.Get().(*futures.Planner)
	r, ok := p.Plan(b, in)
	planners.Put(p)
	if !ok {
		return lo
	}
	c.b.plan = model.Plan{
		HorizonSeconds: r.Horizon, Futures: r.Futures, FromHistory: r.Blocks,
		Arrivals:  model.Spread{P50: r.P50, P90: r.P90, P99: r.P99},
		Allowance: in.Allowance, UnavoidableLate: r.Unavoidable,
		Chosen: planCost(r.Chosen),
		Budget: st.budget,
	}
	if r.HasMore {
		c.b.planMore = planCost(r.More)
		c.b.plan.OneMore = &c.b.planMore
	}
	if r.HasFewer {
		c.b.planFewer = planCost(r.Fewer)
		c.b.plan.OneFewer = &c.b.planFewer
	}
	c.d.Plan = &c.b.plan
	verb := "would hold"
	if s.PlanActs {
		verb = "holds"
	}
	// The decision's plan has the figures; the reason says what it would do.
	c.reason("the plan over the next %s %s %d workers, p99 of its futures %s msg/s",
		span(r.Horizon), verb, r.Workers, number(r.P99))
	return r.Workers
}

// planCost is a futures cost as the decision shows it.
func planCost(c futures.Cost) model.PlanCost {
	return model.PlanCost{Workers: c.Workers, WorkerSeconds: c.WorkerSeconds, LaunchSeconds: c.LaunchSeconds,
		LateMessages: c.Late, LateShare: c.LateShare(), Cost: c.Total}
}

// pendingLeft is, for each worker on its way whose launch is known, the
// seconds until it serves (its start delay from its launch), and the count
// of those whose launch is not known.
func (c *call) pendingLeft() ([]float64, int) {
	d := c.s.StartDelay.Seconds()
	if !c.fleet.Known {
		return nil, 0
	}
	n := max(c.fleet.Pending, 0)
	out := c.st.pendingBuf[:0]
	for _, since := range c.fleet.PendingSince[:min(n, len(c.fleet.PendingSince))] {
		if !since.IsZero() {
			out = append(out, math.Max(d-c.now.Sub(since).Seconds(), 0))
		}
	}
	c.st.pendingBuf = out
	return out, n - len(out)
}

// planAim is the share of the promise's allowance a plan may spend on
// late messages a count could save: half, so that the plan's misses (a
// fluid model, futures from one hour) still leave the promise kept. With
// under a quarter of the window's budget left, a quarter; with none, a
// tenth.
func planAim(b model.Budget) float64 {
	switch {
	case b.Known && b.Left <= 0:
		return 0.1
	case b.Known && b.Left < 0.25:
		return 0.25
	}
	return 0.5
}

// spendMax is how many times forecast.MemoryChance the recent bursts must
// have, at most, of coming within the horizon for workers to be kept for
// them, when the last hour spent a small share of the promise's allowance.
const spendMax = 4

// memoryChance is the chance within the horizon the recent bursts must
// have for the forecast to keep workers for them (Forecaster.SpendOn):
// forecast.MemoryChance while the last hour spent the promise's allowance
// at its rate or faster, and while the window's budget is unknown or short
// (under a quarter left); as the last hour spent less, more, up to
// spendMax times it at a quarter of the rate or less. The bursts rarer than
// that are left to the allowance the last hour did not spend: a group that
// keeps 99.9 % of a 99 % promise pays for workers that wait for bursts.
func memoryChance(b model.Budget) float64 {
	if !b.Known || b.Left < 0.25 || !(b.BurnRate < 1) {
		return forecast.MemoryChance
	}
	return forecast.MemoryChance / math.Max(b.BurnRate, 1.0/spendMax)
}

// planFloor is the floors that stay constraints on the plan: the rate
// floors for today's arrivals (keeping pace, utilisation, the Erlang C
// wait), or for a recurring load the forecaster expects (its bet), and the
// drain floor over the drain time.
func (c *call) planFloor() int {
	s := c.s
	n := c.rateFloorAt(c.lambdaEff)
	if c.fc.Occurrence != nil && s.forecasting() {
		n = max(n, c.rateRec)
	}
	if d := s.DrainTime.Seconds(); d > 0 {
		n = max(n, capacity.DrainFloor(c.lambdaEff, c.muEff, c.backlog, d))
	}
	return n
}

// secondsOf is t in seconds since the Unix epoch.
func secondsOf(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// climbSteps is how many of the book's latest steps tell that arrivals
// still climb.
const climbSteps = 2

// climbMargin: arrivals this share above the smoothed estimate, and above
// its Poisson noise, are still climbing.
const climbMargin = 0.1

// climbing reports arrivals over the book's last steps above the smoothed
// estimate by more than climbMargin and three standard deviations of a
// Poisson count over them: the estimate lags a load still rising, and a
// release sized on it is wanted back within a start delay (a step up
// after a step up).
func (c *call) climbing() bool {
	if c.st.book == nil || c.s.Policy != PolicyModel {
		return false
	}
	r, ok := c.st.book.Recent(climbSteps)
	if !ok {
		return false
	}
	lam := c.smoothed()
	span := c.recentSpan().Seconds()
	return r > lam*(1+climbMargin)+3*math.Sqrt(math.Max(lam, 1)/span)
}

// recentRate is the arrivals over the book's last climbSteps steps.
func (c *call) recentRate() float64 {
	if c.st.book == nil {
		return 0
	}
	r, _ := c.st.book.Recent(climbSteps)
	return r
}

// recentSpan is the time the book's last climbSteps steps cover.
func (c *call) recentSpan() time.Duration {
	if c.st.book == nil {
		return 0
	}
	return time.Duration(float64(climbSteps) * c.st.book.Step() * float64(time.Second))
}

// smoothed is the arrival estimate's smoothed rate, 0 when unknown.
func (c *call) smoothed() float64 {
	r, _ := c.st.est.Rate() // 0 while unknown
	return math.Max(finite(r), 0)
}

// bookHold is what a replay of the book last gave (Book.Hold's rate,
// Book.Headroom's factor), kept until holdEvery more steps complete or the
// allowance changes.
type bookHold struct {
	steps     int64
	allowance float64
	value     float64
	ok        bool
}

// holdEvery is how many of the book's steps pass before the fixed fleet is
// found again: a replay of the hour costs some tens of microseconds, and
// the fleet it finds moves slowly.
const holdEvery = 12

// holdMinSpan is how much past the book must keep before the fleet that
// would have held it sizes anything, seconds.
const holdMinSpan = 900.0

// heldBy is the fewest workers that, never moving, would have started all
// but the promise's allowance of the last hour's arrivals within the
// promise (Book.Hold): the fleet an operator would size from what was seen.
// The allowance is the share of it a plan may spend (planAim). ok is false
// until the book keeps holdMinSpan of the past.
func (c *call) heldBy() (workers int, allowance float64, ok bool) {
	s := c.s
	if s.Policy != PolicyModel || !(c.muEff > 0) {
		return 0, 0, false
	}
	allowance = (1 - s.LatencyQuantile) * planAim(c.st.budget)
	rate, ok := c.replayed(&c.st.hold, allowance, func(b *futures.Book) (float64, bool) {
		return b.Hold(c.latency(), allowance)
	})
	if !ok {
		return 0, allowance, false
	}
	return capacity.CeilWorkers(effectiveArrival(rate, s.BurstReserve) / c.muEff), allowance, true
}

// replayed is what replay gives of the group's book at allowance, kept in
// h and made anew once holdEvery more steps complete or the allowance
// changes; false until the book keeps holdMinSpan of the past.
func (c *call) replayed(h *bookHold, allowance float64, replay func(*futures.Book) (float64, bool)) (float64, bool) {
	b := c.st.book
	if b == nil || float64(b.Len())*b.Step() < holdMinSpan {
		return 0, false
	}
	if h.steps == 0 || b.Steps()-h.steps >= holdEvery || h.allowance != allowance {
		h.value, h.ok = replay(b)
		h.steps, h.allowance = b.Steps(), allowance
	}
	return h.value, h.ok
}
