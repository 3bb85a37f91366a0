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
		h := b.step
		total += r * h
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
		late += r * over
		backlog = math.Max(end, 0)
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
