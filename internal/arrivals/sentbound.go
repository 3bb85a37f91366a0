package arrivals

import "math"

// The arrivals CloudWatch says were sent bound the estimate. Little's law
// over the in-flight count counts every busy slot as completing messages at
// the per-slot rate; messages received and never deleted (the policy's held watch) keep
// slots "busy" without completing anything, so that count grows with the
// fleet, and an arrival estimate built on it buys more workers, which make
// more assumed completions. NumberOfMessagesSent is a direct count of the
// arrivals, a minute or more late; an observation above it by more than its
// counting noise, sentSigmas standard deviations of a Poisson count over its
// minute, is taken at that bound.
//
// A rise that came after the counted minute is not lost where the queue
// shows it: the bound is never below the queue's growth over the interval,
// which arrived whatever was completed, and a saturated surge (see
// Estimator) is measured apart from the smoothed estimate. (The last
// deleted count is no help here: from before an outage, it would allow
// completions that no longer happen.) While
// messages are known to be held (the held watch), the bound is the sent
// count itself: the Little's law term is known to be wrong, and what was sent
// is what arrives.
const sentSigmas = 2

// sentBound is the highest arrival observation the sent count sent (msg/s
// over one minute) allows, with growth the queue's growth over the interval
// (msg/s), and held whether messages are known to be held.
func sentBound(sent, growth float64, held bool) float64 {
	if held {
		return sent
	}
	noise := sentSigmas * math.Sqrt(math.Max(sent, 1/deletedPeriod.Seconds())/deletedPeriod.Seconds())
	return math.Max(sent+noise, growth)
}
