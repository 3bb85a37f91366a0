// Package futures plans a fleet over sampled futures of its arrivals: the
// recent past, resampled in blocks at today's level, scored by one fluid
// queue model for every count the plan weighs (docs/deciding.md, "One
// objective over sampled futures"). It knows nothing of AWS, the clock or
// logging: times are seconds, rates messages per second.
package futures

import "math"

// Book keeps the arrivals of the recent past on a grid of equal steps, with
// the level (an exponentially weighted mean) each step was measured against,
// so that a block of it can be replayed at another level.
type Book struct {
	step, tau, fall float64
	// rates and levels are rings of the completed steps: the arrivals of
	// each, msg/s, and the level before it.
	rates, levels []float32
	head, n       int
	closed        int64 // steps completed since the book began
	// open is the step being filled, from openAt (seconds), with openMsgs.
	openAt   float64
	openMsgs float64
	started  bool
	level    float64
}

// levelFall is how many times faster the level follows a fall than a rise.
const levelFall = 10

// NewBook keeps span seconds of steps of step seconds, measured against a
// level smoothed over tau seconds.
func NewBook(step, span, tau float64) *Book {
	n := max(int(math.Ceil(span/step)), 1)
	tau = math.Max(tau, step)
	return &Book{step: step, tau: tau, fall: math.Max(tau/levelFall, step), rates: make([]float32, n), levels: make([]float32, n)}
}

// Step is the width of one step, seconds.
func (b *Book) Step() float64 { return b.step }

// Steps is the number of steps completed since the book began: it moves
// whenever the kept past does.
func (b *Book) Steps() int64 { return b.closed }

// Len is the number of completed steps kept.
func (b *Book) Len() int { return b.n }

// Level is the arrivals' level after the last completed step, msg/s.
func (b *Book) Level() float64 { return b.level }

// Observe records msgs arrivals over the seconds (from, to], spread evenly
// over them. An interval that starts after a gap of more than the kept span
// starts the book again; one that goes back in time is ignored.
func (b *Book) Observe(from, to, msgs float64) {
	if !(to > from) || math.IsNaN(msgs) || math.IsInf(msgs, 0) || msgs < 0 {
		return
	}
	if !b.started || from-b.openAt > float64(len(b.rates))*b.step {
		b.head, b.n, b.level, b.started = 0, 0, msgs/(to-from), true
		b.openAt, b.openMsgs = math.Floor(from/b.step)*b.step, 0
	}
	if to <= b.openAt {
		return
	}
	from = math.Max(from, b.openAt)
	rate := msgs / (to - from)
	for from < to {
		end := b.openAt + b.step
		part := math.Min(to, end) - from
		b.openMsgs += rate * part
		from += part
		if from >= end {
			b.close()
		}
	}
}

// close completes the open step.
func (b *Book) close() {
	r := b.openMsgs / b.step
	b.rates[b.head], b.levels[b.head] = float32(r), float32(b.level)
	b.head = (b.head + 1) % len(b.rates)
	b.n = min(b.n+1, len(b.rates))
	b.closed++
	// The level is the arrivals' base: it follows a fall within a step's
	// worth of its time constant and a rise over the whole, so a burst
	// moves it little and it is back at the base soon after.
	a := 1 - math.Exp(-b.step/b.tau)
	if r < b.level {
		a = 1 - math.Exp(-b.step/b.fall)
	}
	b.level += (r - b.level) * a
	b.openAt += b.step
	b.openMsgs = 0
}

// at is the i-th completed step from the oldest kept: its rate and the
// level before it.
func (b *Book) at(i int) (rate, level float64) {
	k := (b.head - b.n + i + len(b.rates)) % len(b.rates)
	return float64(b.rates[k]), float64(b.levels[k])
}

// Recent is the mean rate of the last k completed steps, and false when
// fewer are kept.
func (b *Book) Recent(k int) (float64, bool) {
	if k <= 0 || b.n < k {
		return 0, false
	}
	sum := 0.0
	for i := b.n - k; i < b.n; i++ {
		r, _ := b.at(i)
		sum += r
	}
	return sum / float64(k), true
}
