package policy

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/arrivals"
	"github.com/queuechecker/queue-checker/internal/ceiling"
	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/futures"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
)

// State is what the policy keeps about one group between decisions: the
// arrival-rate estimate and the sample it was last updated from, its recent
// per-minute arrivals and their forecast, the recent recommendations for scale-in stabilisation, the last
// known and the last
// desired worker counts, and the streaks the diagnosis counts. The caller
// owns it, one per group, and passes the same one to every Decide call for
// that group; the zero value is ready to use. It is not safe for concurrent
// use.
type State struct {
	est arrivals.Estimator
	// climb keeps the estimate's recent course, for sizing while arrivals
	// climb (arrivals.Trend).
	climb arrivals.Trend
	win   slidingMax[int]     // recommendations, for scale-in stabilisation
	fc    forecast.Forecaster // per-minute arrivals and what they forecast
	// lastDt is the last sampling interval seen, for the forecast's horizon.
	lastDt time.Duration
	// switchProblems are the operator's switches not understood when the
	// fleet was last read: while a read fails they still hold the group.
	switchProblems []string

	// lastRecAt is when a recommendation was last recorded; a gap longer
	// than the stabilisation window starts the window again from the
	// current count.
	lastRecAt time.Time
	// backlogHold is the recommendation held for a backlog until it is
	// served (see holdForBacklog); 0 when none is.
	backlogHold int

	lastCurrent     int // fleet's desired count when it was last read
	haveLastCurrent bool
	lastDesired     int // the last decision's desired count
	haveLastDesired bool

	notConsuming      int       // consecutive samples with a backlog and nothing in flight
	notConsumingSince time.Time // first sample of that streak
	atCapacity        int       // consecutive samples with in-flight at the fleet's capacity
	atCapSince        time.Time // first sample of the current at-capacity streak
	atCapLeast        float64   // the least completion rate in service over that streak, msg/s
	growingAtCap      int       // consecutive samples at capacity whose visible count rose
	cappedLast        bool      // the last decision with data was capped
	shrinking         int       // consecutive samples whose total fell
	lastDiagAt        time.Time // the last sample the streaks counted

	scratch []byte        // reused for formatting reasons
	texts   durationTexts // the durations the reasons name, formatted once

	zero zeroState // scale to zero (activation.go)

	// meas measures the fleet (learn.go), made for the settings' prior
	// measCfg.
	meas    *measure.Estimator
	measCfg measure.Config
	// measUsed: the last decision sized with the measured throughput,
	// which then stays in use down to MeasuredConfidenceKept.
	measUsed bool
	starts   arrivals.StartDelays // measured start delays
	// ceil finds the downstream ceiling from the saturated minutes fed up
	// to ceilFed; ceilHeld: the last decision was held at it.
	ceil     ceiling.Detector
	step     ceiling.Step // a scale-out's effect, read from each sample
	ceilFed  time.Time
	ceilHeld bool

	// bursts learns the group's recent bursts (bursts.go).
	bursts burstLearner
	// noise measures the arrival estimate's noise (noise.go).
	noise rateNoise
	held  heldWatch // messages received and not deleted (held.go)

	// book: the recent arrivals the futures are drawn from (plan.go);
	// hold and headroom what the last replays of it found (Book.Hold,
	// Book.Headroom); budget the promise's error budget last given
	// (SpendBudget); pendingBuf reused for the workers on their way.
	book       *futures.Book
	hold       bookHold
	headroom   bookHold
	budget     model.Budget
	pendingBuf []float64
}

// SpendBudget gives the policy the promise's error budget as the
// controller's estimate has it, for the share of it the next plans may
// spend (planAim).
func (st *State) SpendBudget(b model.Budget) { st.budget = b }

// counts are one sample's numbers as the diagnosis and the burst learner
// use them: the estimator's baseline before the sample (see
// arrivals.Estimator.Update).
type counts struct {
	at                         time.Time
	visible, inFlight, delayed float64
}

func (c counts) total() float64 { return c.visible + c.inFlight + c.delayed }

// slidingMax keeps the recent values of a series as a monotone queue:
// strictly decreasing values from front to back, so the front is the highest
// one still inside the window. Push and expiry are amortised O(1); the
// scale-in stabilisation keeps its recommendations in one.
type slidingMax[T int | float64] struct {
	e []timed[T]
}

// timed is one value and when it was seen.
type timed[T int | float64] struct {
	at time.Time
	v  T
}

// Slots per window of the two sliding maxima. Time is cut into slots of
// window ÷ slots; a value pushed in the slot of the last entry (which, after
// the pops, is larger) is merged into it, and the merged entry takes the
// later time. So a queue holds at most about slots + 1 entries however often
// it is pushed, and the window's maximum can only be higher and longer-lived
// than the exact one, by less than one slot, never lower. Against the
// default window a slot is 5 s (the usual sampling interval: nothing is
// merged).
const stabilizationSlots = 60

// reset empties the queue, keeping its storage.
func (r *slidingMax[T]) reset() { r.e = r.e[:0] }

// expire drops entries older than the window ending at now.
func (r *slidingMax[T]) expire(now time.Time, window time.Duration) {
	cut := now.Add(-window)
	i := 0
	for i < len(r.e) && r.e[i].at.Before(cut) {
		i++
	}
	if i > 0 {
		n := copy(r.e, r.e[i:])
		r.e = r.e[:n]
	}
}

// push records v at now, in a window cut into slots.
func (r *slidingMax[T]) push(now time.Time, v T, window time.Duration, slots int) {
	r.expire(now, window)
	for len(r.e) > 0 && r.e[len(r.e)-1].v <= v {
		r.e = r.e[:len(r.e)-1]
	}
	if n, slot := len(r.e), window/time.Duration(slots); n > 0 && slot > 0 && now.Truncate(slot).Equal(r.e[n-1].at.Truncate(slot)) {
		r.e[n-1].at = now
		return
	}
	r.e = append(r.e, timed[T]{at: now, v: v})
}

// highest is the highest value inside the window ending at now.
func (r *slidingMax[T]) highest(now time.Time, window time.Duration) (T, bool) {
	r.expire(now, window)
	if len(r.e) == 0 {
		return 0, false
	}
	return r.e[0].v, true
}

// queueKey identifies which of a group's queues a sample's counts cover, so
// that counts over different sets of queues are never subtracted. It is an
// FNV-1a hash of the answered count and the failed queues' names and regions.
func queueKey(s model.GroupSample) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	mix := func(v uint64) {
		for range 8 {
			h ^= v & 0xff
			h *= prime
			v >>= 8
		}
	}
	mix(uint64(s.Queues))
	mix(uint64(s.Answered))
	for _, f := range s.Failures {
		for i := 0; i < len(f.Queue); i++ {
			h ^= uint64(f.Queue[i])
			h *= prime
		}
		mix(0xff)
		for i := 0; i < len(f.Region); i++ {
			h ^= uint64(f.Region[i])
			h *= prime
		}
		mix(0xfe)
	}
	return h
}

// Preload warms the forecast with a group's per-minute arrival history (for
// example NumberOfMessagesSent read from CloudWatch at start), and its
// five-minute history of the weeks before (h.Weekly), so that the rhythm of
// its load is known from the first decision, and its burst learner with the
// last hour of the minutes (see burstLearner.preload); with the forecast
// off, only the burst learner. Minutes and buckets the state already
// measured are kept; history older than s's forecast history (the minutes)
// or five weeks (the buckets) is dropped. It returns the minutes taken from
// h: by the forecast, else by the burst learner.
func (st *State) Preload(s Settings, h model.MinuteHistory) int {
	s = s.WithDefaults()
	replayed := st.bursts.preload(h, (s.StartDelay + s.Latency).Seconds(), s.Latency.Seconds())
	if s.Forecast.Off {
		return replayed
	}
	st.fc.Init(s.Forecast.History)
	if len(h.Weekly) > 0 {
		st.fc.PreloadCoarse(model.MinuteHistory{Start: h.WeeklyStart, Counts: h.Weekly}, st.horizon(s))
	}
	return st.fc.Preload(h, st.horizon(s))
}

// horizon is how far ahead the forecast looks: the start delay, one
// sampling interval and a minute (the history's resolution).
func (st *State) horizon(s Settings) time.Duration {
	dt := st.lastDt
	if dt <= 0 || dt > forecast.MaxObservation {
		dt = 0
	}
	return s.StartDelay + dt + time.Minute
}
