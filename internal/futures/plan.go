package futures

import (
	"cmp"
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
	// RecencyHalfLife is the age, seconds, at which a block of the book
	// weighs half as much as today's.
	RecencyHalfLife = 900.0
	// RareShare is the weight of the futures a plan spends the promise's
	// allowance on rather than keeps capacity for: those where the count
	// would leave the largest share of messages late.
	RareShare = 0.05
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
	// Allowance is the share of the futures' messages that may start past
	// the promise because of the count chosen: late messages no count could
	// save (those of a surge before any launch could serve) are not
	// counted against it.
	Allowance float64
}

// Cost is a count's expected cost over the futures.
type Cost struct {
	Workers int
	// WorkerSeconds are paid seconds over the horizon (workers starting
	// included); LaunchSeconds the start delay of each launch, charged
	// again as the price of a launch; Late the messages started past the
	// promise; Arrivals the messages that came; Total the worker-seconds
	// and the launches' charge.
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
	// Unavoidable is the late messages no count within the bounds saves
	// (those of the largest count weighed).
	Unavoidable float64
	// P50, P90 and P99 are the futures' mean arrivals over the horizon,
	// msg/s, at those quantiles.
	P50, P90, P99 float64
	Futures       int
	Horizon, Step float64
	// Blocks is true when the futures were replayed from the book; false
	// when it held less than a horizon and every future is today's level.
	Blocks bool
}

// Avoidable is the share of the futures' messages c starts past the
// promise that the largest count would have started within it.
func (r Result) Avoidable(c Cost) float64 {
	if c.Arrivals <= 0 {
		return 0
	}
	return max(c.Late-r.Unavoidable, 0) / c.Arrivals
}

// Planner plans over the futures of a Book. Its buffers are reused from
// plan to plan (a plan allocates nothing) and carry nothing between them:
// one Planner serves any Book, one plan at a time.
type Planner struct {
	rates [Futures][MaxSteps]float64
	cum   [Futures][MaxSteps + 1]float64
	mean  [Futures]float64
	// weight is each future's weight, by how recent its block is and how
	// close its start to today's; wsum their sum.
	weight [Futures]float64
	wsum   float64
	// late holds each future's late messages at the count last weighed,
	// top at the largest count.
	late, top [Futures]float64
	// weighed are the counts this plan has weighed, with whether each
	// meets the allowance; seen how many.
	weighed [maxWeighed]weighed
	seen    int
	// counted is each future's weight in the allowance: its weight, less
	// what of it the allowance is spent on (spare).
	counted [Futures]float64
	k, s    int
	// old holds, per future and step, the arrivals by the promise before
	// the step's end: what starts in the step up to it starts late.
	old    [Futures][MaxSteps + 1]float64
	ready  [MaxSteps + 1]float64
	base   [MaxSteps + 1]float64
	course [MaxSteps + 1]float64
	in     Input
	step   float64
}

// NewPlanner makes a planner.
func NewPlanner() *Planner { return new(Planner) }

// Plan chooses the fewest workers in [in.Lo, in.Hi] whose late messages
// over futures drawn from b, beyond those no count within the bounds
// saves, stay within the allowance: the promise spent on what cannot be
// helped, and on no more than the allowance of what can. Late messages
// fall as the count rises, so the fewest is found by bisection.
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

	r := Result{Futures: p.k, Horizon: float64(p.s) * p.step, Step: p.step, Blocks: blocks}
	p.seen = 0
	top := p.eval(in.Hi)
	r.Unavoidable = top.Late
	p.top = p.late
	p.note(top, true)
	low := p.eval(in.Lo)
	p.spare()
	p.note(low, p.meets())
	// The fewest that meet the allowance: from the current count, a gallop
	// to a bracket, then bisection (most plans move the count a little).
	bad, good := in.Lo, in.Hi
	if !p.test(in.Lo) {
		start := min(max(in.Current, in.Lo+1), in.Hi)
		if p.test(start) {
			good = start
			for step := 1; good-step > bad; step *= 2 {
				if n := good - step; p.test(n) {
					good = n
				} else {
					bad = n
					break
				}
			}
		} else {
			bad = start
			for step := 1; bad+step < good; step *= 2 {
				if n := bad + step; p.test(n) {
					good = n
					break
				} else {
					bad = n
				}
			}
		}
		for good-bad > 1 {
			if mid := bad + (good-bad)/2; p.test(mid) {
				good = mid
			} else {
				bad = mid
			}
		}
	} else {
		good = in.Lo
	}
	best := p.cost(good)
	r.Workers, r.Chosen = best.Workers, best
	if best.Workers+1 <= in.Hi {
		r.More, r.HasMore = p.cost(best.Workers+1), true
	}
	if best.Workers-1 >= in.Lo {
		r.Fewer, r.HasFewer = p.cost(best.Workers-1), true
	}
	r.P50, r.P90, r.P99 = p.spread()
	for _, c := range [3]Cost{r.Chosen, r.More, r.Fewer} {
		if !finite(c.Total) || !finite(c.Late) || !finite(c.Arrivals) {
			return Result{}, false
		}
	}
	return r, true
}

// MaxWorkers bounds the counts a plan weighs.
const MaxWorkers = 1 << 30

// valid reports whether the inputs can be planned on.
func (in Input) valid() bool {
	for _, x := range [...]float64{in.Level, in.Now, in.Backlog, in.PerWorker, in.StartDelay, in.Promise, in.Horizon, in.Allowance} {
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

// spread is the futures' mean arrivals at 0.5, 0.9 and 0.99 by weight:
// at each, the smallest mean whose future and those below it weigh that
// share of all. One sort serves the three.
func (p *Planner) spread() (p50, p90, p99 float64) {
	var idx [Futures]int
	for k := range p.k {
		idx[k] = k
	}
	slices.SortFunc(idx[:p.k], func(a, b int) int { return cmp.Compare(p.mean[a], p.mean[b]) })
	var at [3]float64
	qs := [3]float64{0.5, 0.9, 0.99}
	acc, q := 0.0, 0
	for _, k := range idx[:p.k] {
		acc += p.weight[k]
		for ; q < len(qs) && acc >= qs[q]*p.wsum-1e-12; q++ {
			at[q] = p.mean[k]
		}
	}
	for ; q < len(qs); q++ {
		at[q] = p.mean[idx[p.k-1]]
	}
	return at[0], at[1], at[2]
}

// sample lays out the futures' arrivals and reports whether they came from
// the book's blocks. The book is cut into as many strata as futures; each
// future is the block of its stratum whose step before it is closest, as a
// ratio to its level, to today's arrivals to theirs (the analog of today:
// calm, or a burst so far into it), shifted to today's level (what it had
// above or below its own level kept as it was: a burst keeps its size).
// Strata, not random draws: the futures of consecutive plans overlap all
// but a step, so the plan does not move for the luck of a draw.
func (p *Planner) sample(b *Book) bool {
	in, s := p.in, p.s
	level := math.Max(in.Level, 0)
	now := math.Max(in.Now, 0)
	if b.Len() < s+1 {
		// Too little seen: one future, today's rate held.
		p.k, p.weight[0], p.wsum = 1, 1, 1
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
	p.wsum = 0
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
		// A block's weight halves every RecencyHalfLife of its age (a burst
		// that does not come back counts for less as time passes without
		// it), and falls with how far its start is from today's (a block
		// that starts in a burst says little of a calm moment's future).
		age := float64(b.Len()-j) * p.step
		p.weight[k] = math.Exp2(-age/RecencyHalfLife) * math.Exp(-(dist/math.Ln2)*(dist/math.Ln2))
		p.wsum += p.weight[k]
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

// maxWeighed bounds the counts one plan remembers having weighed: a
// gallop and a bisection over a billion counts take about 64.
const maxWeighed = 96

// weighed is a count a plan has weighed.
type weighed struct {
	cost  Cost
	meets bool
}

// note remembers a count weighed.
func (p *Planner) note(c Cost, meets bool) {
	if p.seen < maxWeighed {
		p.weighed[p.seen] = weighed{c, meets}
		p.seen++
	}
}

// find is a count already weighed.
func (p *Planner) find(n int) (weighed, bool) {
	for _, w := range p.weighed[:p.seen] {
		if w.cost.Workers == n {
			return w, true
		}
	}
	return weighed{}, false
}

// test reports whether n meets the allowance, weighing it if not yet.
func (p *Planner) test(n int) bool {
	if w, ok := p.find(n); ok {
		return w.meets
	}
	c := p.eval(n)
	m := p.meets()
	p.note(c, m)
	return m
}

// cost is n's cost, weighing it if not yet.
func (p *Planner) cost(n int) Cost {
	if w, ok := p.find(n); ok {
		return w.cost
	}
	c := p.eval(n)
	p.note(c, p.meets())
	return c
}

// spare marks the rarest futures, those the allowance is spent on rather
// than capacity kept for: the futures in which the fewest workers weighed
// (at the last eval) leave the largest share of their messages late that
// the most would save, up to RareShare of the futures' weight.
func (p *Planner) spare() {
	var idx [Futures]int
	var share [Futures]float64
	for k := range p.k {
		idx[k] = k
		if arr := p.cum[k][p.s] - p.cum[k][0]; arr > 0 {
			share[k] = max(p.late[k]-p.top[k], 0) / arr
		} else if p.late[k] > p.top[k] {
			share[k] = math.Inf(1)
		}
	}
	slices.SortFunc(idx[:p.k], func(a, b int) int { return cmp.Compare(share[b], share[a]) })
	left := RareShare * p.wsum
	for _, k := range idx[:p.k] {
		p.counted[k] = p.weight[k]
	}
	for _, k := range idx[:p.k] {
		if share[k] <= 0 || left <= 0 {
			break
		}
		// The future at the edge is spent in part, so that the plan does
		// not jump as weights move across it.
		x := min(p.weight[k], left)
		p.counted[k] -= x
		left -= x
	}
}

// meets reports whether the count last weighed keeps the late messages a
// larger count would save within the allowance, over all futures but the
// rarest (spare).
func (p *Planner) meets() bool {
	late, arrivals := 0.0, 0.0
	for k := range p.k {
		w := p.counted[k]
		late += w * max(p.late[k]-p.top[k], 0)
		arrivals += w * (p.cum[k][p.s] - p.cum[k][0])
	}
	if arrivals <= 0 {
		return late <= 0
	}
	return late/arrivals <= p.in.Allowance
}

// eval is the expected cost of setting the fleet to n now, and of the
// launches later decisions would make in each future: whenever the
// workers serving and on their way cannot keep pace with the step's
// arrivals and start the backlog within the promise, the difference is
// launched, to serve a start delay later. Workers released go from those
// on their way first, the latest first.
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
	ds := p.stepOf(in.StartDelay)
	out := Cost{Workers: n}
	for k := range p.k {
		cum, old, rates := &p.cum[k], &p.old[k], &p.rates[k]
		copy(p.course[:s+1], p.ready[:s+1])
		sv, ow, more := serving, onWay, 0.0
		late, done, paid := 0.0, 0.0, 0.0
		for i := range s {
			sv += p.course[i]
			ow -= p.course[i]
			if i > 0 && in.Promise > 0 {
				// The later decisions: a launch whenever the workers serving
				// and on their way cannot keep pace and start the backlog
				// within the promise.
				need := math.Ceil((rates[i] + (cum[i]-done)/in.Promise) / mu)
				if short := need - sv - ow; short > 0 {
					if i+ds < s {
						p.course[i+ds] += short
					}
					ow += short
					more += short
				}
			}
			paid += (sv + ow) * dt
			served := min(done+min(sv, ceiling)*mu*dt, cum[i+1])
			late += max(0, min(served, old[i])-done)
			done = served
		}
		// What is left at the end is late if already past the promise, or
		// more than the fleet then can start within it.
		late += max(0, old[s]-done, cum[s]-done-min(sv+ow, ceiling)*mu*in.Promise)
		p.late[k] = late
		w := p.weight[k]
		out.Late += w * late
		out.Arrivals += w * (cum[s] - cum[0])
		out.WorkerSeconds += w * paid
		out.LaunchSeconds += w * (launches + more) * in.StartDelay
	}
	f := p.wsum
	out.Late /= f
	out.Arrivals /= f
	out.WorkerSeconds /= f
	out.LaunchSeconds /= f
	out.Total = out.WorkerSeconds + out.LaunchSeconds
	return out
}
