package slo

import "math"

// Counts are one sample of a group's queues.
type Counts struct {
	Visible, InFlight, Delayed float64
	// Slots is how many messages the workers in service can hold at once
	// (workers × concurrency); < 0 when unknown.
	Slots float64
}

// Arrived is the messages that arrived between two samples dt seconds apart,
// by conservation: what the queues gained, plus what the workers completed,
// the mean of the in-flight counts at the two ends (at most one message a
// slot, since messages held by a dead worker complete nothing) over the mean
// service time (Little's law). Never negative; 0 for a dt or service time
// that is not positive.
func Arrived(prev, cur Counts, dt, serviceTime float64) float64 {
	if !(dt > 0) || !(serviceTime > 0) {
		return 0
	}
	a, b := prev.InFlight, cur.InFlight
	if prev.Slots >= 0 {
		a = math.Min(a, prev.Slots)
	}
	if cur.Slots >= 0 {
		b = math.Min(b, cur.Slots)
	}
	gained := cur.Visible + cur.InFlight + cur.Delayed - (prev.Visible + prev.InFlight + prev.Delayed)
	return finite(gained + (a+b)/2*dt/serviceTime)
}
