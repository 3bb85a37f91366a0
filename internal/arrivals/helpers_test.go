package arrivals

import (
	"math"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// dumpBound is the documented bound an observation may enter the EWMA at:
// the reference (the larger of the last observation and the estimate) plus
// three standard deviations of counting noise, √((reference + completions)/Δt).
// uncertain is the most Little's law over the interval can be wrong by: half
// the change of the busy slots times the per-slot rate.
func dumpBound(ref, completions, dt, uncertain float64) float64 {
	return ref + 3*math.Sqrt((ref+completions)/dt) + uncertain
}
