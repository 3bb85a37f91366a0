package policy

import (
	"math"
	"sync"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
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
	step := math.Max(math.Ceil(planHorizon(s)/planSteps), 1)
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
	}
	in.LatePrice, c.b.plan.PriceFactor = c.latePrice()
	if c.ageOK {
		in.Waited = c.age + c.now.Sub(c.ageAt.Add(60e9)).Seconds()
		in.Waited = math.Max(in.Waited, c.age)
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
		LatePrice: in.LatePrice, PriceFactor: c.b.plan.PriceFactor,
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
	c.reason("the plan over %d futures of the next %s (arrivals p50 %s, p90 %s, p99 %s msg/s) %s %d workers: about %s of %s messages late, at %s worker-seconds a late message",
		r.Futures, span(r.Horizon), number(r.P50), number(r.P90), number(r.P99), verb, r.Workers, number(r.Chosen.Late), number(r.Chosen.Arrivals), number(in.LatePrice))
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

// The price of a late message moves with the budget's recent burn.
const (
	// burnWindow is the time constant, seconds, of the recent late share
	// and of the price's moves.
	burnWindow = 300.0
	// burnAim is the burn rate the price aims at: half the allowance, so
	// a bad hour still keeps the promise.
	burnAim = 0.5
	// minPriceFactor and maxPriceFactor bound the price's factor.
	minPriceFactor = 0.02
	maxPriceFactor = 8.0
	// maxPriceStep bounds one move of the factor's logarithm.
	maxPriceStep = 0.25
	// maxBurnSeen bounds the burn, as a multiple of burnAim, one move
	// answers: a cold start's backlog is not a reason to buy for an hour.
	maxBurnSeen = 4.0
	// burnMessages: the recent late share is known from this many messages.
	burnMessages = 100
)

// lateprice is the factor of the price of a late message: an integral of
// the budget's recent burn against burnAim, so the plan spends the
// promise's allowance instead of buying capacity for every burst (a budget
// burning slowly makes late messages cheaper, until some are late) and buys
// margin when it burns fast.
type lateprice struct {
	log       float64   // the factor's natural logarithm
	late, all float64   // messages late and started, decayed over burnWindow
	seen, at  time.Time // the last estimate observed; the last move
}

// observe adds an estimate's last cycle.
func (p *lateprice) observe(b model.Budget) {
	if b.At.IsZero() || !b.At.After(p.seen) {
		return
	}
	if !p.seen.IsZero() {
		k := math.Exp(-b.At.Sub(p.seen).Seconds() / burnWindow)
		p.late, p.all = p.late*k, p.all*k
	}
	p.seen = b.At
	if b.StepWithin >= 0 && b.StepLate >= 0 && !math.IsInf(b.StepWithin+b.StepLate, 0) {
		p.late += b.StepLate
		p.all += b.StepWithin + b.StepLate
	}
}

// factor moves the factor for the burn since the last move, at now, and
// returns it.
func (p *lateprice) factor(allowance float64, now time.Time) float64 {
	if p.at.IsZero() || !now.After(p.at) || p.all < burnMessages || !(allowance > 0) {
		if p.at.IsZero() || now.After(p.at) {
			p.at = now
		}
		return math.Exp(p.log)
	}
	dt := now.Sub(p.at).Seconds()
	p.at = now
	burn := p.late / p.all / allowance
	step := dt / burnWindow * (math.Min(burn/burnAim, maxBurnSeen) - 1)
	p.log += math.Min(math.Max(step, -maxPriceStep), maxPriceStep)
	p.log = math.Min(math.Max(p.log, math.Log(minPriceFactor)), math.Log(maxPriceFactor))
	return math.Exp(p.log)
}

// latePrice is what a message started past the promise costs in
// worker-seconds, and the factor in it: the work of the messages the
// promise lets through for each late one (a slot's service time ÷ the
// allowance), times the factor the budget's recent burn moves (lateprice).
func (c *call) latePrice() (float64, float64) {
	s := c.s
	allowance := 1 - s.LatencyQuantile
	f := c.st.price.factor(allowance, c.now)
	per := c.perServer
	if !(per > 0) || !(allowance > 0) {
		return 0, f
	}
	return (1 / per) / allowance * f, f
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
