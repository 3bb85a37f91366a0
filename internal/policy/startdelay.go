package policy

import (
	"slices"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Start delays measured from the fleet: each worker seen pending (with its
// launch time, model.Fleet.PendingSince) and then gone from the pending
// workers while the workers in service grew has started; its start delay is
// the time from its launch to the middle of the interval in which it
// started.
const (
	// startDelaySamples is how many of the latest starts are kept.
	startDelaySamples = 32
	// startDelayMinSamples is how many starts must be measured before the
	// measured start delay sizes the pre-starts.
	startDelayMinSamples = 5
	// startDelayQuantile is the share of starts the measured start delay
	// covers: pre-starts are sized for the slow ones.
	startDelayQuantile = 0.9
	// maxPendingTracked bounds the pending workers compared between reads.
	maxPendingTracked = 256
)

// startDelays measures a fleet's start delays. The zero value is ready.
type startDelays struct {
	prev      []time.Time // launch times of the workers pending at the last read, sorted
	prevIn    int         // workers in service at the last read
	prevAt    time.Time
	have      bool
	ring      [startDelaySamples]float64 // seconds
	n, next   int
	quantile  float64 // startDelayQuantile of the ring, when n changed last
	computedN int
	sorted    [startDelaySamples]float64
}

// observe compares the fleet with the last read of it.
func (sd *startDelays) observe(f model.Fleet, now time.Time) {
	if !f.Known || now.IsZero() {
		return
	}
	cur := f.PendingSince[:min(len(f.PendingSince), f.Pending, maxPendingTracked)]
	if sd.have && now.After(sd.prevAt) {
		grew := f.InService - sd.prevIn
		mid := sd.prevAt.Add(now.Sub(sd.prevAt) / 2)
		// The launch times pending before and not now, oldest first (both
		// lists are sorted): a merge walk.
		i, j := 0, 0
		for i < len(sd.prev) && grew > 0 {
			switch {
			case j < len(cur) && cur[j].Equal(sd.prev[i]):
				i++
				j++
			case j < len(cur) && cur[j].Before(sd.prev[i]):
				j++
			default:
				if d := mid.Sub(sd.prev[i]).Seconds(); d >= 0 && !sd.prev[i].IsZero() {
					sd.add(d)
				}
				grew--
				i++
			}
		}
	}
	sd.prev = append(sd.prev[:0], cur...)
	sd.prevIn, sd.prevAt, sd.have = f.InService, now, true
}

func (sd *startDelays) add(d float64) {
	sd.ring[sd.next] = d
	sd.next = (sd.next + 1) % startDelaySamples
	sd.n = min(sd.n+1, startDelaySamples)
	sd.computedN = -1
}

// measured is the startDelayQuantile of the latest starts, and how many
// there are; 0 and false before startDelayMinSamples.
func (sd *startDelays) measured() (time.Duration, int, bool) {
	if sd.n < startDelayMinSamples {
		return 0, sd.n, false
	}
	if sd.computedN != sd.n {
		s := sd.sorted[:sd.n]
		copy(s, sd.ring[:sd.n])
		slices.Sort(s)
		sd.quantile = s[min(int(startDelayQuantile*float64(sd.n)), sd.n-1)]
		sd.computedN = sd.n
	}
	return time.Duration(sd.quantile * float64(time.Second)), sd.n, true
}
