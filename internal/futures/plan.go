package futures

import (
	"math"
	"slices"
)

// Sizes of a plan.
const (
	// Futures is how many futures a plan samples.
	Futures = 32
	// MaxSteps bounds the steps of a horizon.
	MaxSteps = 64
	// analogDraws: each future's block is the closest, by the ratio of the
	// step before it to its level, of this many evenly spaced in its
	// stratum, so the futures start where today is (calm, or in a burst).
	analogDraws = 4
	// surgeFactor: arrivals now this many times the closest block's start
	// are a surge the book has not seen; every future keeps it.
	surgeFactor = 1.5
)

// Input is what a plan weighs: today's arrivals and queue, the fleet as it
// stands, what a worker does, and the range of counts to choose from.
type Input struct {
	// Level is the arrivals' smoothed level, msg/s; Now their rate over the
	// last steps (a surge shows there first).
	Level, Now float64
	// Backlog is the messages waiting; Waited how long the oldest has
	// waited, seconds (negative: not known).
	Backlog, Waited float64
	// InService is the workers serving; Pending, for each worker on its
	// way whose launch is known, the seconds until it serves, and
	// PendingLater the workers on their way whose launch is not known (they
	// serve after a whole start delay); Current is the count the fleet is
	// set to (in service and on the way).
	InService    int
	Pending      []float64
	PendingLater int
	Current      int
	// PerWorker is the messages a worker in service completes a second.
	PerWorker float64
	// StartDelay and Promise are seconds; Horizon is how far the plan
	// looks, seconds.
	StartDelay, Promise, Horizon float64
	// Lo and Hi bound the counts weighed.
	Lo, Hi int
	// Ceiling is the workers past which more add no completions (a
	// downstream pool); 0 for none.
	Ceiling int
	// LatePrice is what one message started past the promise costs, in
	// worker-seconds.
	LatePrice float64
}

// Cost is a count's expected cost over the futures.
type Cost struct {
	Workers int
	// WorkerSeconds are paid seconds over the horizon (workers starting
	// included); LaunchSeconds the start delay of each launch, charged
	// again as the price of a launch; Late the messages started past the
	// promise; Arrivals the messages that came; Total the sum of the
	// three, late messages at the late price.
	WorkerSeconds, LaunchSeconds, Late, Arrivals, Total float64
}

// LateShare is the share of the futures' messages started past the promise.
func (c Cost) LateShare() float64 {
	if c.Arrivals <= 0 {
		return 0
	}
	return c.Late / c.Arrivals
}

// Result is a plan: the count it chose, what that count and one more and
// one fewer cost, and the spread of the futures' arrivals.
type Result struct {
	Workers             int
	Chosen, More, Fewer Cost
	// HasMore and HasFewer: the count one more, or one fewer, is within
	// [Lo, Hi].
	HasMore, HasFewer bool
	// P50, P90 and P99 are the futures' mean arrivals over the horizon,
	// msg/s, at those quantiles.
	P50, P90, P99 float64
	Futures       int
	Horizon, Step float64
	// Blocks is true when the futures were replayed from the book; false
	// when it held less than a horizon and every future is today's level.
	Blocks bool
}

// Planner plans over the futures of one Book. It keeps its buffers and its
// random numbers between plans: a plan allocates nothing.
type Planner struct {
	rates [Futures][MaxSteps]float64
	cum   [Futures][MaxSteps + 1]float64
	mean  [Futures]float64
	k, s  int
	// old holds, per future and step, the arrivals by the promise before
	// the step's end: what starts in the step up to it starts late.
	old      [Futures][MaxSteps + 1]float64
	ready    [MaxSteps + 1]float64
	base     [MaxSteps + 1]float64
	capacity [MaxSteps]float64
	in       Input
	step     float64
}

// NewPlanner makes a planner.
func NewPlanner() *Planner { return new(Planner) }

// Plan chooses the count in [in.Lo, in.Hi] of the least expected cost over
// futures drawn from b. Searching from the current count, it moves only
// while a move lowers the cost.
//
// A plan needs finite, non-negative inputs, a positive throughput and
// horizon, and counts below MaxWorkers; without them, or when the futures'
// sums overflow, it is not made (false).
func (p *Planner) Plan(b *Book, in Input) (Result, bool) {
	if !in.valid() {
		return Result{}, false
	}
	in.Lo = max(in.Lo, 0)
	in.Hi = min(max(in.Hi, in.Lo), MaxWorkers)
	in.Lo = min(in.Lo, in.Hi)
	p.in = in
	p.step = b.Step()
	p.s = min(max(int(math.Ceil(in.Horizon/p.step)), 1), MaxSteps)
	blocks := p.sample(b)
	for k := range p.k {
		if !finite(p.cum[k][p.s]) {
			return Result{}, false
		}
	}
	p.fleet()

	best := p.search(p.seed())
	r := Result{Workers: best.Workers, Chosen: best, Futures: p.k, Horizon: float64(p.s) * p.step, Step: p.step, Blocks: blocks}
	if best.Workers+1 <= in.Hi {
		r.More, r.HasMore = p.eval(best.Workers+1), true
	}
	if best.Workers-1 >= in.Lo {
		r.Fewer, r.HasFewer = p.eval(best.Workers-1), true
	}
	var m [Futures]float64
	copy(m[:p.k], p.mean[:p.k])
	slices.Sort(m[:p.k])
	r.P50, r.P90, r.P99 = quantile(m[:p.k], 0.5), quantile(m[:p.k], 0.9), quantile(m[:p.k], 0.99)
	for _, c := range [3]Cost{r.Chosen, r.More, r.Fewer} {
		if !finite(c.Total) || !finite(c.WorkerSeconds) || !finite(c.LaunchSeconds) || !finite(c.Late) || !finite(c.Arrivals) {
			return Result{}, false
		}
	}
	return r, true
}

// MaxWorkers bounds the counts a plan weighs.
const MaxWorkers = 1 << 30

// valid reports whether the inputs can be planned on.
func (in Input) valid() bool {
	for _, x := range [...]float64{in.Level, in.Now, in.Backlog, in.PerWorker, in.StartDelay, in.Promise, in.Horizon, in.LatePrice} {
		if !finite(x) || x < 0 {
			return false
		}
	}
	for _, x := range in.Pending {
		if !finite(x) {
			return false
		}
	}
	return in.PerWorker > 0 && in.Horizon > 0 && !math.IsNaN(in.Waited) && !math.IsInf(in.Waited, 0) &&
		in.InService >= 0 && in.InService < MaxWorkers && in.Current >= 0 && in.Current < MaxWorkers &&
		in.PendingLater >= 0 && in.PendingLater < MaxWorkers && len(in.Pending) < MaxWorkers
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// quantile of sorted xs, the nearest rank.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	i := min(int(math.Ceil(q*float64(len(xs))))-1, len(xs)-1)
	return xs[max(i, 0)]
}

// seed is the count the search starts from: the cheapest of the current
// count, the lowest allowed, and the counts that start the backlog within
// the promise while keeping pace with today's arrivals and with the
// busiest future's. The cost is not convex where a backlog is past saving
// by a few workers but not by many; these put the search in reach of both.
func (p *Planner) seed() int {
	in := p.in
	busiest := 0.0
	for k := range p.k {
		busiest = math.Max(busiest, p.mean[k])
	}
	best := p.eval(min(max(in.Current, in.Lo), in.Hi))
	for _, rate := range [...]float64{-1, in.Level, busiest} {
		n := in.Lo
		if rate >= 0 {
			n = int(math.Min(math.Ceil((rate+in.Backlog/math.Max(in.Promise, 1))/in.PerWorker), float64(in.Hi)))
		}
		n = min(max(n, in.Lo), in.Hi)
		if n == best.Workers {
			continue
		}
		if c := p.eval(n); c.Total < best.Total {
			best = c
		}
	}
	return best.Workers
}

// search walks from start towards cheaper counts: a first step of about
// 3 % of the count, doubled while the cost falls, then halved back to one
// worker around the cheapest count found.
func (p *Planner) search(start int) Cost {
	in := p.in
	best := p.eval(start)
	delta := max(1, start/32)
	for dir := 1; dir >= -1; dir -= 2 {
		moved := false
		step := delta
		for {
			n := min(max(best.Workers+dir*step, in.Lo), in.Hi)
			if n == best.Workers {
				break
			}
			c := p.eval(n)
			if !(c.Total < best.Total) {
				break
			}
			best, moved = c, true
			step *= 2
		}
		for step = max(step/2, 1); moved && step >= 1; step /= 2 {
			for _, n := range [2]int{best.Workers + step, best.Workers - step} {
				if n < in.Lo || n > in.Hi {
					continue
				}
				if c := p.eval(n); c.Total < best.Total {
					best = c
				}
			}
			if step == 1 {
				break
			}
		}
		if moved {
			break
		}
	}
	return best
}

// sample lays out the futures' arrivals and reports whether they came from
// the book's blocks. The book is cut into as many strata as futures; each
// future is the block of its stratum whose step before it is closest, as a
// ratio to its level, to today's arrivals to theirs (the analog of today:
// calm, or a burst so far into it), shifted to today's level (what it had
// above or below its own level kept as it was: a burst keeps its size).
// Strata, not
// random draws: the futures of consecutive plans overlap all but a step, so
// the plan does not move for the luck of a draw.
func (p *Planner) sample(b *Book) bool {
	in, s := p.in, p.s
	level := math.Max(in.Level, 0)
	now := math.Max(in.Now, 0)
	if b.Len() < s+1 {
		// Too little seen: one future, today's rate held.
		p.k = 1
		r := math.Max(level, now)
		for i := range s {
			p.rates[0][i] = r
		}
		p.cumulate(0)
		return false
	}
	p.k = Futures
	ratioNow := 1.0
	if level > 0 {
		ratioNow = now / level
	}
	surgeSteps := p.surgeAge(b, level, now)
	span := b.Len() - s // block starts 1..span: each has a step before it
	for k := range p.k {
		j, ratio, dist := 1, 1.0, math.Inf(1)
		for m := range analogDraws {
			c := 1 + (k*analogDraws+m)*span/(Futures*analogDraws)
			r, l := b.at(c - 1)
			rr := 1.0
			if l > 0 {
				rr = r / l
			}
			if d := math.Abs(math.Log((rr + 1e-3) / (ratioNow + 1e-3))); d < dist {
				j, ratio, dist = c, rr, d
			}
		}
		_, l := b.at(j)
		shift := level - l
		// A surge larger than its analog's start is kept for as long
		// again as it has lasted.
		keep := 0
		if ratioNow > surgeFactor*math.Max(ratio, 1) {
			keep = surgeSteps
		}
		for i := range s {
			r, _ := b.at(j + i)
			v := math.Max(r+shift, 0)
			if i < keep {
				v = math.Max(v, now)
			}
			p.rates[k][i] = v
		}
		p.cumulate(k)
	}
	return true
}

// surgeAge is how many steps today's surge has lasted: the last steps of
// the book above surgeFactor × the level, and the one in progress.
func (p *Planner) surgeAge(b *Book, level, now float64) int {
	if !(now > surgeFactor*level) {
		return 0
	}
	n := 1
	for i := b.Len() - 1; i >= 0; i-- {
		r, _ := b.at(i)
		if !(r > surgeFactor*level) {
			break
		}
		n++
	}
	return n
}

// cumulate fills future k's cumulative arrivals (the backlog first) and
// its mean rate.
func (p *Planner) cumulate(k int) {
	c := &p.cum[k]
	c[0] = math.Max(p.in.Backlog, 0)
	for i := range p.s {
		c[i+1] = c[i] + p.rates[k][i]*p.step
	}
	p.mean[k] = (c[p.s] - c[0]) / (float64(p.s) * p.step)
	for i := range p.s {
		p.old[k][i] = p.arrivedBy(k, float64(i+1)*p.step-p.in.Promise)
	}
	p.old[k][p.s] = p.arrivedBy(k, float64(p.s)*p.step-p.in.Promise)
}

// fleet lays out the workers on their way by the step they start serving
// in (index s: after the horizon).
func (p *Planner) fleet() {
	clear(p.base[:])
	for _, left := range p.in.Pending {
		p.base[p.stepOf(left)]++
	}
	p.base[p.stepOf(p.in.StartDelay)] += float64(max(p.in.PendingLater, 0))
}

// stepOf is the step in which a worker that serves after left seconds
// starts (s when past the horizon).
func (p *Planner) stepOf(left float64) int {
	if !(left > 0) {
		return 0
	}
	return min(int(math.Ceil(left/p.step)), p.s)
}

// arrivedBy is future k's cumulative arrivals by time t, seconds from now;
// before now, the backlog's, spread evenly over the oldest's wait.
func (p *Planner) arrivedBy(k int, t float64) float64 {
	if t <= 0 {
		q := p.cum[k][0]
		w := p.waited()
		if w <= 0 {
			if t < 0 {
				return 0 // the whole backlog came at 0
			}
			return q
		}
		return q * math.Min(math.Max(0, (t+w)/w), 1)
	}
	x := t / p.step
	i := int(x)
	if i >= p.s {
		return p.cum[k][p.s]
	}
	f := x - float64(i)
	return p.cum[k][i] + f*(p.cum[k][i+1]-p.cum[k][i])
}

// waited is how long the backlog's oldest message has waited: as given, or
// the backlog over today's arrivals, at most the promise.
func (p *Planner) waited() float64 {
	in := p.in
	if in.Waited >= 0 {
		return in.Waited
	}
	if r := math.Max(in.Level, in.Now); r > 0 {
		return math.Min(in.Backlog/r, in.Promise)
	}
	return in.Promise
}

// eval is the expected cost of setting the fleet to n now and holding it
// over the horizon: the plan is made again at every decision, so a later
// launch or release is the next plan's. Workers released go from those on
// their way first, the latest first. The fleet's course is the same in
// every future; only the queue differs.
func (p *Planner) eval(n int) Cost {
	in := p.in
	s, dt := p.s, p.step
	mu := math.Max(in.PerWorker, 0)
	ceiling := math.Inf(1)
	if in.Ceiling > 0 {
		ceiling = float64(in.Ceiling)
	}
	copy(p.ready[:s+1], p.base[:s+1])
	serving, onWay := float64(max(in.InService, 0)), float64(len(in.Pending)+max(in.PendingLater, 0))
	launches := 0.0
	if add := float64(n - in.Current); add > 0 {
		p.ready[p.stepOf(in.StartDelay)] += add
		onWay += add
		launches = add
	} else if add < 0 {
		cut := -add
		for i := s; i >= 0 && cut > 0; i-- {
			x := math.Min(cut, p.ready[i])
			p.ready[i] -= x
			onWay -= x
			cut -= x
		}
		serving = math.Max(serving-cut, 0)
	}
	paid := 0.0
	for i := range s {
		serving += p.ready[i]
		onWay -= p.ready[i]
		paid += (serving + onWay) * dt
		p.capacity[i] = min(serving, ceiling) * mu * dt
	}
	// What is left at the end is late if already past the promise, or more
	// than the fleet then can start within it.
	endRate := math.Min(serving+onWay, ceiling) * mu * in.Promise
	out := Cost{Workers: n, WorkerSeconds: paid, LaunchSeconds: launches * in.StartDelay}
	for k := range p.k {
		cum, old := &p.cum[k], &p.old[k]
		late, done := 0.0, 0.0
		for i := range s {
			served := min(done+p.capacity[i], cum[i+1])
			late += max(0, min(served, old[i])-done)
			done = served
		}
		late += max(0, old[s]-done, cum[s]-done-endRate)
		out.Late += late
		out.Arrivals += cum[s] - cum[0]
	}
	f := float64(p.k)
	out.Late /= f
	out.Arrivals /= f
	out.Total = out.WorkerSeconds + out.LaunchSeconds + in.LatePrice*out.Late
	return out
}
