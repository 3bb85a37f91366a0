package measure

import (
	"math"
	"time"
)

// PreloadSpan is the history worth giving Preload: the 24 minutes of the
// window behind an estimate, and the few minutes by which CloudWatch's
// newest minutes come late. Older minutes would leave the window before
// the first live minute is learned.
const PreloadSpan = 30 * time.Minute

// Preload learns from a group's recent per-minute history, read when the
// checker starts or reloads (CloudWatch's NumberOfMessagesDeleted and the
// per-minute average of ApproximateNumberOfMessagesNotVisible), so that a
// restarted checker sizes with the service time its fleet has had instead
// of the configured one for its first minutes.
//
// Minute i is [start + i min, start + (i+1) min), start truncated to the
// minute; deleted[i] is its completions in msg/s (the minute's Sum ÷ 60) and
// inFlight[i] its mean number of messages in flight. A minute where either
// is NaN, infinite or negative is unknown and skipped; minutes beyond the
// shorter slice are ignored.
//
// Each known minute is judged as a live complete minute would be, with what
// the history does not say left out:
//
//   - the workers in service are unknown, so no slot count caps busy (the
//     in-flight count is taken as it is), and no minute is saturated or
//     batching: the per-worker rate of a preloaded minute is Concurrency ÷
//     its service time;
//   - the received count is unknown, so nothing is taken off for abandoned
//     messages (as live, where the poller does not read it either);
//   - the in-flight count is CloudWatch's, which SQS reports about once a
//     minute, where a live minute averages the checker's samples every
//     interval: one minute is noisier, and the weighting over the window
//     evens that out.
//
// A stuck minute (messages held, almost nothing deleted) is not learned
// from, an idle one teaches nothing, and the step detection runs over the
// minutes in order. When the Estimator has learned nothing yet, stuck
// minutes at the end of the history set Stuck as live ones would.
//
// Minutes measured live are kept: only minutes before the first sample's
// minute (the samples own every minute from there on, whether judged yet
// or not) and before the oldest good minute already learned are taken. So
// a preload never replaces a minute with a newer or better-informed one,
// and preloading the same history again adds nothing new. The minutes
// taken go before those already learned, and the step detection runs again
// over them all, oldest first.
//
// A preloaded minute is a good minute at its own time: it leaves the
// window like any other, counts towards Confidence like a live one, and
// the staleness decay counts from the end of the newest one to the latest
// sample. So minutes that end just before the first sample are fresh, and
// history from before a long outage is not trusted. Preloaded minutes
// carry no workers (After reports Workers 0 and Capacity 0: a caller that
// needs the fleet's size, such as the downstream ceiling, learns nothing
// from them).
//
// It returns the number of preloaded good minutes the Estimator keeps.
func (e *Estimator) Preload(start time.Time, deleted, inFlight []float64) int {
	first, _ := minuteOf(start)
	limit := int64(math.MaxInt64)
	if e.hasPrev {
		limit = e.firstMin
	}
	if e.nrec > 0 {
		limit = min(limit, e.oldestRecord())
	}
	n := min(len(deleted), len(inFlight))
	if m := limit - first; m < int64(n) {
		n = int(max(m, 0))
	}
	known := func(i int) bool {
		return finite(deleted[i]) && deleted[i] >= 0 && finite(inFlight[i]) && inFlight[i] >= 0
	}
	some := false
	for i := range n {
		if known(i) {
			some = true
			break
		}
	}
	if !some {
		return 0
	}

	kept := e.records()
	learned := len(kept) > 0 || e.stuckRun > 0
	e.recs, e.nrec = [window]record{}, 0
	e.cut, e.suspectSign = math.MinInt64, 0
	made, run := 0, 0
	var runAt time.Time
	for i := range n {
		if !known(i) {
			continue
		}
		m := first + int64(i)
		r, v := e.assess(minuteFacts{minute: m, inFlight: inFlight[i], deleted: deleted[i], received: math.NaN()})
		end := minuteTime(m + 1)
		switch v {
		case stuckMinute:
			run++
			runAt = end
		case activeMinute:
			run = 0
		case goodMinute:
			run = 0
			e.detectStep(r)
			e.push(r)
			made++
			if end.After(e.lastGoodAt) {
				e.lastGoodAt = end
			}
		}
	}
	for _, r := range kept {
		e.detectStep(r)
		e.push(r)
	}
	if !learned && run > 0 {
		e.stuckRun, e.lastStuckAt = run, runAt
	}
	return max(0, min(made, window-len(kept)))
}

// records returns the good minutes kept, oldest first.
func (e *Estimator) records() []record {
	n := min(e.nrec, window)
	out := make([]record, 0, n)
	for i := e.nrec - n; i < e.nrec; i++ {
		out = append(out, e.recs[i%window])
	}
	return out
}

// oldestRecord is the oldest good minute kept; only when nrec > 0.
func (e *Estimator) oldestRecord() int64 {
	return e.recs[(e.nrec-min(e.nrec, window))%window].minute
}
