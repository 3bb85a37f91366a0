package arrivals

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
	// startDelaySamples is how many of the latest starts are kept: several
	// scale-outs, so that the fast starts of one large one do not fill it
	// alone.
	startDelaySamples = 256
	// startDelayMinSamples is how many starts must be measured before the
	// measured start delay sizes the pre-starts.
	startDelayMinSamples = 5
	// startDelayQuantile is the share of starts the measured start delay
	// covers: pre-starts are sized for the slow ones.
	startDelayQuantile = 0.9
	// maxPendingTracked bounds the pending workers compared between reads.
	maxPendingTracked = 256
)

// StartDelays measures a fleet's start delays. The zero value is ready.
type StartDelays struct {
	prev      []time.Time // launch times of the workers pending at the last read, sorted
	prevIn    int         // workers in service at the last read
	prevAt    time.Time
	have      bool
	ring      [startDelaySamples]float32 // seconds
	n, next   int
	quantile  float64 // startDelayQuantile of the ring, when n changed last
	computedN int
	sorted    []float32 // scratch for the quantile, made on the first
}

// Observe compares the fleet with the last read of it.
func (sd *StartDelays) Observe(f model.Fleet, now time.Time) {
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

func (sd *StartDelays) add(d float64) {
	sd.ring[sd.next] = float32(d)
	sd.next = (sd.next + 1) % startDelaySamples
	sd.n = min(sd.n+1, startDelaySamples)
	sd.computedN = -1
}

// Measured is the startDelayQuantile of the latest starts, and how many
// there are; 0 and false before startDelayMinSamples. Workers still pending
// at now that are older than the starts' quantile are counted with their
// age so far: while a scale-out is starting, the starts seen are its fast
// ones, and its slow ones must not be left out.
func (sd *StartDelays) Measured(now time.Time) (time.Duration, int, bool) {
	if sd.n < startDelayMinSamples {
		return 0, sd.n, false
	}
	if sd.computedN != sd.n {
		if sd.sorted == nil {
			sd.sorted = make([]float32, 0, 2*startDelaySamples)
		}
		s := sd.sorted[:sd.n]
		copy(s, sd.ring[:sd.n])
		slices.Sort(s)
		sd.quantile = float64(s[min(int(startDelayQuantile*float64(sd.n)), sd.n-1)])
		sd.computedN = sd.n
	}
	q := sd.quantile
	s := sd.sorted[:0]
	// The oldest pending first (prev is sorted), as many as starts are kept.
	for _, l := range sd.prev[:min(len(sd.prev), startDelaySamples)] {
		if age := now.Sub(l).Seconds(); age > sd.quantile && !l.IsZero() {
			s = append(s, float32(age))
		}
	}
	if len(s) > 0 {
		s = append(s, sd.ring[:sd.n]...)
		slices.Sort(s)
		q = float64(s[min(int(startDelayQuantile*float64(len(s))), len(s)-1)])
		sd.computedN = -1 // sorted was reused
	}
	return time.Duration(q * float64(time.Second)), sd.n, true
}
