// Package callrate measures how often something is counted: the checker's
// AWS calls a minute, from the rounds (cycles) that made them. It imports
// the standard library only, so that the packages that count their calls
// (the poller, the lease, the controller) need nothing else for it.
package callrate

import "time"

// rateSpan is the span a Window measures over.
const rateSpan = time.Minute

// Window measures a count's rate over the last minute of rounds (a
// cycle's calls, say). The zero value is ready to use.
type Window struct {
	rounds []round
}

type round struct {
	at  time.Time
	n   float64
	per time.Duration // the span the round stands for, ending at at
}

// Add records n counted in the span per that ends at now, and returns the
// count per minute over the rounds of the last minute: from the start of
// the span of the oldest round kept to now. Rounds more than a minute old
// are dropped, the newest always kept. A first round with per <= 0 stands
// for no time and the rate is 0 until a later one.
func (w *Window) Add(now time.Time, n float64, per time.Duration) float64 {
	w.rounds = append(w.rounds, round{at: now, n: n, per: max(per, 0)})
	drop := 0
	for drop < len(w.rounds)-1 && !w.rounds[drop].at.After(now.Add(-rateSpan)) {
		drop++
	}
	if drop > 0 {
		w.rounds = append(w.rounds[:0], w.rounds[drop:]...)
	}
	total := 0.0
	for _, r := range w.rounds {
		total += r.n
	}
	span := now.Sub(w.rounds[0].at) + w.rounds[0].per
	if span <= 0 {
		return 0
	}
	return total / span.Minutes()
}

// Len is the rounds kept.
func (w *Window) Len() int { return len(w.rounds) }
