package futures

import "math"

// Late replays the book's arrivals through a fluid FIFO queue served at
// rate msg/s from an empty start, and returns the messages that would have
// started more than promise seconds after they arrived, and all the
// messages. A message waits for the backlog ahead of it: B ÷ rate. Within a
// step arrivals are even, so the backlog moves linearly and the late ones
// are found exactly, step by step.
func (b *Book) Late(rate, promise float64) (late, total float64) {
	if !(rate > 0) {
		for i := range b.n {
			r, _ := b.at(i)
			total += r * b.step
		}
		return total, total
	}
	limit := rate * math.Max(promise, 0) // the backlog a message may find
	backlog := 0.0
	for i := range b.n {
		r, _ := b.at(i)
		total += r * b.step
		late += lateInStep(backlog, r, rate, limit, b.step)
		backlog = math.Max(backlog+(r-rate)*b.step, 0)
	}
	return late, total
}

// Hold is the least rate, msg/s, at which a fleet that never moved would
// have started all but a share allowance of the book's messages within
// promise seconds: the fixed fleet an operator would size from the kept
// past, found by bisection to within holdPrecision of the peak step. ok is
// false when the book holds no arrivals.
func (b *Book) Hold(promise, allowance float64) (rate float64, ok bool) {
	peak, sum := 0.0, 0.0
	for i := range b.n {
		r, _ := b.at(i)
		peak, sum = math.Max(peak, r), sum+r
	}
	if !(sum > 0) {
		return 0, false
	}
	lo, hi := sum/float64(b.n), peak // the mean falls behind; the peak never waits
	if late, total := b.Late(lo, promise); late <= allowance*total {
		return lo, true
	}
	for hi-lo > holdPrecision*peak {
		mid := (lo + hi) / 2
		if late, total := b.Late(mid, promise); late <= allowance*total {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, true
}

// holdPrecision is the bisection's tolerance, a share of the peak step's
// rate: a fleet of 500 is found to within a worker.
const holdPrecision = 0.002

// Follower is a fleet that follows the arrivals' estimate: at each step it
// serves Headroom × the estimate (an exponentially weighted mean over Tau
// seconds of the steps before) as it was Lag seconds earlier, or as it is
// when that is lower: more workers take a start delay to serve, fewer are
// gone at once. Least is the least headroom worth finding: a book that
// needs less gets Least.
type Follower struct {
	Headroom, Tau, Lag, Least float64
}

// maxLagSteps bounds the steps a follower's lag spans.
const maxLagSteps = 255

// lateFollowing is Late for a follower.
func (b *Book) lateFollowing(f Follower, promise float64) (late, total float64) {
	var ring [maxLagSteps + 1]float64
	lag := min(max(int(math.Round(f.Lag/b.step)), 0), maxLagSteps)
	a := 1 - math.Exp(-b.step/math.Max(f.Tau, b.step))
	backlog, est := 0.0, 0.0
	for i := range b.n {
		r, _ := b.at(i)
		if i == 0 {
			est = r
			for k := range ring {
				ring[k] = r
			}
		}
		then := ring[(i+len(ring)-lag)%len(ring)]
		rate := f.Headroom * math.Min(est, then)
		h := b.step
		total += r * h
		late += lateInStep(backlog, r, rate, rate*math.Max(promise, 0), h)
		backlog = math.Max(backlog+(r-rate)*h, 0)
		est += (r - est) * a
		ring[(i+1)%len(ring)] = est
	}
	return late, total
}

// lateInStep is the messages of a step of h seconds at r msg/s, served at
// rate from a backlog, that find more than limit ahead of them.
func lateInStep(backlog, r, rate, limit, h float64) float64 {
	end := backlog + (r-rate)*h
	over := 0.0 // seconds of the step the backlog is past the limit
	switch {
	case r > rate && backlog >= limit:
		over = h
	case r > rate && end > limit:
		over = h - (limit-backlog)/(r-rate)
	case r < rate && backlog > limit:
		over = math.Min(h, (backlog-limit)/(rate-r))
	case r == rate && backlog > limit:
		over = h
	}
	return r * over
}

// Headroom is the least factor over the arrivals' estimate, from f.Least
// to f.Headroom, at which a follower would have started all but a share
// allowance of the book's messages within promise seconds: the headroom
// the kept past needed, to within holdPrecision. It is f.Headroom when
// even that leaves more late, and ok is false when the book holds no
// arrivals.
func (b *Book) Headroom(f Follower, promise, allowance float64) (float64, bool) {
	most, least := f.Headroom, math.Min(math.Max(f.Least, 0), f.Headroom)
	if late, total := b.lateFollowing(f, promise); !(total > 0) {
		return 0, false
	} else if late > allowance*total {
		return most, true
	}
	f.Headroom = least
	if late, total := b.lateFollowing(f, promise); least > 0 && late <= allowance*total {
		return least, true
	}
	lo, hi := least, most
	for hi-lo > holdPrecision {
		f.Headroom = (lo + hi) / 2
		if late, total := b.lateFollowing(f, promise); late <= allowance*total {
			hi = f.Headroom
		} else {
			lo = f.Headroom
		}
	}
	return hi, true
}
