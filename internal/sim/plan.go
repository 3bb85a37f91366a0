package sim

import (
	"math"
	"math/rand/v2"
)

// The oracle's plan (see Oracle): the fleet over time that starts every
// message within a planning deadline at the fewest worker-seconds, for the
// messages the world will really see.
//
// The world draws every message's arrival and work from streams of its own
// (NewWorld), so the oracle can draw the same messages ahead of the run. They
// are binned on a grid of cells h seconds long: cell k holds the work (slot
// seconds: each message's service time × the service change in force when
// it arrives) of the messages arriving in [k·h, (k+1)·h).
//
// Started work. S(t) is the work taken up by the fleet by t, a fluid
// picture of first in, first out service. It can take no work that has not
// arrived, S(t_k) ≤ A(t_k) = the work of the cells before k, and the work of
// every cell must be taken within the planning deadline D' of the cell's
// start: S(t_k) ≥ A(t_{k−m+1}) with m = ⌊D'/h⌋ (at least 1). Between the two
// curves the taut string, the shortest path from S(0) = 0 to S(end) = the
// lower bound at the end, has the least peak slope of every feasible S and
// the least of every convex function of the slopes: the smoothest fleet that
// serves the messages in time, which lets a burst wait up to the deadline and
// serves it over that window instead of buying a fleet the burst's size.
// The slope over a cell is the busy slots it needs; ⌈slope ÷ concurrency⌉
// the workers, within the fleet's maximum and the downstream pool.

// planMessages draws the messages the world of cfg will see until `until`
// seconds, in arrival order, and calls fn with each one's arrival (seconds
// since the start) and service time as drawn (before any service change).
// It repeats NewWorld's draws exactly: the same seeds, the same Poisson
// process, one service draw per arrival.
func planMessages(cfg Config, until float64, fn func(at, service float64)) {
	arr := rand.New(rand.NewPCG(cfg.Seed, arrivalStream))
	svcRand := rand.New(rand.NewPCG(cfg.Seed, serviceStream))
	svc := newSampler(cfg.Service)
	var cur arrivalCursor
	cur.init(cfg.Scenario)
	next := func(t float64) float64 {
		for {
			rate, end := cur.at(t)
			if math.IsInf(end, 1) && rate == 0 {
				return math.Inf(1)
			}
			if rate > 0 {
				n := t + arr.ExpFloat64()/rate
				if n < end {
					return n
				}
			}
			t = end
		}
	}
	for t := next(0); t <= until; t = next(t) {
		fn(t, svc.draw(svcRand))
	}
}

// workGrid is the work arriving in each cell of a grid.
type workGrid struct {
	h      float64   // cell length, seconds
	work   []float64 // slot-seconds arriving in each cell
	count  []int32   // messages arriving in each cell
	scored int64     // messages arriving from the warm-up on
}

// newWorkGrid bins the messages of cfg's world over `until` seconds into
// cells h seconds long, each message's work multiplied by the service
// change in force when it arrives, and counts the scored ones (those from
// cfg's warm-up on).
func newWorkGrid(cfg Config, until, h float64) workGrid {
	n := int(math.Ceil(until/h)) + 1
	g := workGrid{h: h, work: make([]float64, n), count: make([]int32, n)}
	changes := newServiceChanges(cfg.ServiceChanges)
	factor, ci := 1.0, 0
	from := cfg.WarmUp.Seconds()
	planMessages(cfg, until, func(at, service float64) {
		for ci < len(changes) && changes[ci].at <= at {
			factor = changes[ci].v
			ci++
		}
		k := min(int(at/h), n-1)
		g.work[k] += service * factor
		g.count[k]++
		if at >= from {
			g.scored++
		}
	})
	return g
}

// missBudget is how many scored messages may wait past the promise for
// the run whose messages the grid holds to still start PromiseShare of
// them within it.
func (g workGrid) missBudget() int64 {
	return int64(math.Floor((1 - PromiseShare) * float64(g.scored)))
}

// tautString returns the slopes, one per cell, of the taut string from
// (0, 0) through the corridor lo[k] ≤ S(k·h) ≤ up[k], k = 0..n, ending at
// lo[n]; lo[0] must be ≤ 0 ≤ up[0] and lo ≤ up everywhere.
//
// From each vertex it widens the cone of slopes that stay within the
// corridor up to every next point; when a point's bounds leave the cone the
// string bends at the point that last narrowed the cone on the violated
// side (it touches the upper bound there when the new lower bound is above
// the cone, the lower bound when the new upper bound is below it), and the
// walk starts again from that vertex.
func tautString(lo, up []float64, h float64) []float64 {
	n := len(lo) - 1
	slopes := make([]float64, n)
	ax, ay := 0, 0.0
	for ax < n {
		sMin, sMax := math.Inf(-1), math.Inf(1)
		iMin, iMax := ax, ax
		bent := false
		for k := ax + 1; k <= n; k++ {
			dx := float64(k-ax) * h
			top := up[k]
			if k == n {
				top = lo[n] // the string ends at the lower bound
			}
			lk, uk := (lo[k]-ay)/dx, (top-ay)/dx
			if lk > sMax {
				// The string bends down at the upper bound of iMax.
				fill(slopes[ax:iMax], sMax)
				ax, ay = iMax, up[iMax]
				bent = true
				break
			}
			if uk < sMin {
				// The string bends up at the lower bound of iMin.
				fill(slopes[ax:iMin], sMin)
				ax, ay = iMin, lo[iMin]
				bent = true
				break
			}
			if lk >= sMin {
				sMin, iMin = lk, k
			}
			if uk <= sMax {
				sMax, iMax = uk, k
			}
		}
		if !bent {
			fill(slopes[ax:n], (lo[n]-ay)/(float64(n-ax)*h))
			break
		}
	}
	return slopes
}

func fill(s []float64, v float64) {
	for i := range s {
		s[i] = v
	}
}

// plannedFleet is the workers each cell needs for the grid's work to be
// taken within the deadline (seconds): the taut string's busy slots over
// the cell, in workers of conc slots (fractions of them), within top.
//
// No fleet takes work faster than top workers can: E, the earliest that
// top workers take the work, bounds the corridor, so that no cell is asked
// for work that no fleet within the bounds could have taken by then (those
// messages are late whatever the plan), and the string stays within top
// workers because E does.
func (g workGrid) plannedFleet(deadline float64, conc, top int) []float64 {
	n := len(g.work)
	m := max(int(deadline/g.h), 1)
	c := float64(max(conc, 1))
	// A[k]: the work of the cells before k.
	A := make([]float64, n+1)
	for k, w := range g.work {
		A[k+1] = A[k] + w
	}
	lo := make([]float64, n+1)
	up := make([]float64, n+1)
	earliest, step := 0.0, float64(top)*c*g.h
	for k := range lo {
		if k > 0 {
			earliest = math.Min(A[k], earliest+step)
		}
		lo[k] = math.Min(A[max(k-m+1, 0)], earliest)
		up[k] = earliest
	}
	slopes := tautString(lo, up, g.h)
	for k := range slopes {
		slopes[k] /= c
	}
	return slopes
}

// roundFleet is the whole workers of a plan of fractional ones: each cell's
// rounded up, unless its fraction is at most trim (0 ≤ trim < 1), at most
// top. The fluid picture is careful in places (a fraction of a worker is
// a whole one) and not in others (a message is not divisible among
// workers); the oracle finds by simulation how far it can round down.
func roundFleet(workers []float64, trim float64, top int) []int32 {
	out := make([]int32, len(workers))
	for k, w := range workers {
		n := math.Ceil(w - 1e-9)
		if n-w >= 1-trim {
			n--
		}
		out[k] = int32(min(max(n, 0), float64(top)))
	}
	return out
}
