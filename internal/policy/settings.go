// Package policy turns what the poller saw into the number of workers a group
// should have, and says why. It is pure: no AWS, no sleeping, no clock; the
// time is an argument.
package policy

import (
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// Policies.
const (
	PolicyModel            = model.PolicyModel
	PolicyBacklogPerWorker = model.PolicyBacklogPerWorker
)

// Settings are one group's sizing rules and bounds, in plain values.
type Settings struct {
	Group  string
	Policy string // PolicyModel (default) or PolicyBacklogPerWorker

	// Per-worker throughput: ServiceTime and Concurrency, or a measured
	// Throughput (completed msg/s per worker), which wins when > 0.
	ServiceTime time.Duration
	Concurrency int
	Throughput  float64
	// WaitSpread is the Allen–Cunneen factor of the service times,
	// (1 + cv²) ÷ 2 for their coefficient of variation cv
	// (capacity.ServiceSpread): the Erlang C wait floor sizes for waits
	// that much longer. 0 means 1, exponential service.
	WaitSpread float64

	Latency   time.Duration // the promise: how long a message may wait
	DrainTime time.Duration // an existing backlog must clear within this
	// Utilization is the busy ceiling, (0, 1]. 0 (target.utilization
	// unset) measures it: the ceiling at which the last hour's arrivals
	// would have kept the promise (headroom.go), never busier than
	// measuredCeilingTop nor with more headroom than
	// model.DefaultUtilization's; WithDefaults sets
	// that bound here and MeasuredCeiling.
	Utilization     float64
	MeasuredCeiling bool
	BurstReserve    float64 // percent added to measured arrivals
	OverheadReserve float64 // percent taken off per-worker throughput
	SafetyWorkers   int

	// Min and Max bound the desired count; Max ≤ 0 sets no maximum of its
	// own (the fleet's own maximum still applies when it is known).
	Min, Max int
	Cap      int // downstream ceiling; 0 = none. Below Min, the cap wins (model.Limits).

	StartDelay time.Duration // launch until a new worker takes its first message
	// ScaleInStabilization: scale in only to the highest recommendation over
	// this window; 0 means the default, a negative value turns it off.
	ScaleInStabilization time.Duration
	// Deadband: a relative change this small is ignored, against flapping;
	// 0 means the default, a negative value turns it off.
	Deadband         float64
	MaxStepOut       int           // workers added per decision; 0 = no limit
	StaleAfter       time.Duration // a sample older than this is stale: hold; 0 = no check
	ArrivalSmoothing time.Duration // time constant of the arrival-rate EWMA

	// LatencyQuantile is the share of messages that must start within
	// Latency; the model policy's Erlang C wait floor sizes for it.
	// Default 0.99.
	LatencyQuantile float64
	// SLOWindow is the window of the promise's error budget, over which
	// LatencyQuantile is the objective; the controller's estimate of the
	// messages started within the promise reads it, the sizing does not.
	SLOWindow time.Duration
	// PlanActs: the model policy's plan over sampled futures (plan.go)
	// sets the count, in place of the rules it would replace (the burst
	// learner's warm capacity, the noise hold, the backlog hold and the
	// scale-in window); otherwise the plan is made and shown only.
	// Measured worse than the rules on most built-in scenarios
	// (docs/deciding.md, "One objective over sampled futures"), so off.
	PlanActs bool
	// Forecast: how the model policy anticipates load (see forecaster).
	Forecast ForecastSettings
	// MetricStaleAfter is how old a CloudWatch reading (oldest age, sent,
	// deleted) may be, from the start of its period, and still be used.
	// CloudWatch's 1-minute datapoints arrive a minute or two late. Default 5m.
	MetricStaleAfter time.Duration
	// CloudWatchCounts: the group reads CloudWatch's per-minute sent and
	// deleted counts (oldest_age.cloudwatch), so the evidence held messages
	// are judged by is on its way even before its first minute arrives (see
	// heldWatch). A group whose samples carry a deleted count reads them
	// too.
	CloudWatchCounts bool

	// Operator switches from the configuration; the fleet's tags
	// (model.Switches) can set them as well. See switches.go.
	Paused     bool // hold: no scaling, metrics still published
	ScaleInOff bool // scale out only
	Pinned     bool // hold at Pin, within the bounds
	Pin        int

	// TakenOver is when this checker took the group's lease
	// (internal/lease), at its start or from another checker; zero when it
	// runs alone. For one scale-in window from then the group is not
	// scaled in (see takeoverHold).
	TakenOver time.Time

	// Activation is the backlog of visible and delayed messages that wakes
	// a group at zero workers (Min 0); 0 means DefaultActivation. See
	// activation.go.
	Activation int

	// FIFO: every queue of the group is a FIFO queue, which hands out one
	// message group's messages at a time (see learn.go).
	FIFO bool

	// Learn says what the measured fleet does (see learn.go): LearnAct
	// sizes with the measured per-worker throughput once it is trusted,
	// LearnReport only reports it, LearnOff does not measure. Default:
	// LearnAct for the model policy, LearnReport for backlog_per_worker.
	Learn string

	// WorkerCostPerHour is what one worker costs an hour, dollars; 0 means
	// no price. The policy does not read it: it travels with the group to
	// the controller's bill and the status page.
	WorkerCostPerHour float64
}

// What the measured fleet does: Settings.Learn.
const (
	LearnAct    = model.LearnAct
	LearnReport = model.LearnReport
	LearnOff    = model.LearnOff
)

// ForecastSettings turn the model policy's forecast on and say how much
// history it keeps.
type ForecastSettings struct {
	// Off: the model policy sizes for today's arrival estimate alone, not
	// for the arrivals forecast over the next start delay. The zero value
	// forecasts.
	Off bool
	// ReportOnly: the forecast is computed, reported in the decision and
	// its reasons, but does not change the count (to judge it before
	// trusting it).
	ReportOnly bool
	// History is how much per-minute arrival history the forecast keeps;
	// default and most: 8 days.
	History time.Duration
	// LateCost is the worker time a message past the promise costs, in
	// multiples of the worker time serving it takes; default
	// DefaultLateCost. It says how eagerly workers are pre-started for a
	// recurring occurrence that may not come (see bet), kept warm between
	// bursts (warmPays) and launched while one is on (launchPays).
	LateCost float64
}

// MaxForecastHistory is the most per-minute history a group keeps.
const MaxForecastHistory = model.MaxForecastHistory

// ArrivalHistory is how much of the group's per-minute arrival history a
// warm start reads for State.Preload: for the model policy, the forecast's
// history (when the forecast is not off) and at least the burst learner's
// memory; none for the other policies.
func (s Settings) ArrivalHistory() time.Duration {
	s = s.WithDefaults()
	switch {
	case s.Policy != PolicyModel:
		return 0
	case s.Forecast.Off:
		return burstMemory
	}
	return max(s.Forecast.History, burstMemory)
}

// forecasting reports whether the forecast sizes the fleet.
func (s Settings) forecasting() bool {
	return !s.Forecast.Off && !s.Forecast.ReportOnly && (s.Policy == "" || s.Policy == PolicyModel)
}

// WithDefaults returns s with every zero setting that has a default filled in.
// StaleAfter has none here: it depends on the sampling interval. Values that
// cannot be meant are made harmless as well: a NaN setting counts as unset,
// a utilisation ceiling above 1 is 1, negative reserves and counts are 0.
func (s Settings) WithDefaults() Settings {
	if s.Policy == "" {
		s.Policy = PolicyModel
	}
	if s.Learn != LearnAct && s.Learn != LearnReport && s.Learn != LearnOff {
		s.Learn = LearnAct
		if s.Policy != PolicyModel {
			s.Learn = LearnReport
		}
	}
	if s.Concurrency <= 0 {
		s.Concurrency = model.DefaultConcurrency
	}
	if s.DrainTime <= 0 {
		s.DrainTime = model.DefaultDrainTime
	}
	if s.SLOWindow <= 0 {
		s.SLOWindow = model.DefaultSLOWindow
	}
	if !(s.Utilization > 0) {
		s.Utilization, s.MeasuredCeiling = model.DefaultUtilization, true
	}
	if s.Utilization > 1 {
		s.Utilization = 1
	}
	if s.ScaleInStabilization == 0 {
		s.ScaleInStabilization = model.DefaultScaleInStabilization
		if s.forecasting() {
			s.ScaleInStabilization = model.DefaultForecastStabilization
		}
	}
	if s.Deadband == 0 || math.IsNaN(s.Deadband) || math.IsInf(s.Deadband, 0) {
		s.Deadband = model.DefaultDeadband
	}
	if s.ArrivalSmoothing <= 0 {
		s.ArrivalSmoothing = model.DefaultArrivalSmoothing
	}
	if !(s.LatencyQuantile > 0 && s.LatencyQuantile < 1) {
		s.LatencyQuantile = model.DefaultLatencyQuantile
	}
	if s.Forecast.History <= 0 || s.Forecast.History > MaxForecastHistory {
		s.Forecast.History = model.DefaultForecastHistory
	}
	if !(s.Forecast.LateCost > 0) || math.IsInf(s.Forecast.LateCost, 0) {
		s.Forecast.LateCost = DefaultLateCost
	}
	if s.MetricStaleAfter <= 0 {
		s.MetricStaleAfter = model.DefaultMetricStaleAfter
	}
	if !(s.BurstReserve > 0) || math.IsInf(s.BurstReserve, 0) {
		s.BurstReserve = 0
	}
	if !(s.OverheadReserve > 0) {
		s.OverheadReserve = 0
	}
	if s.SafetyWorkers < 0 {
		s.SafetyWorkers = 0
	}
	if s.Min < 0 {
		s.Min = 0
	}
	if s.Cap < 0 {
		s.Cap = 0
	}
	if s.MaxStepOut < 0 {
		s.MaxStepOut = 0
	}
	return s
}

// PerWorker is the completed messages per second of one worker: Throughput
// when it is > 0, else Concurrency ÷ ServiceTime. It is 0 when neither is
// known, or when the throughput is infinite.
func (s Settings) PerWorker() float64 {
	if s.Throughput > 0 {
		if math.IsInf(s.Throughput, 0) {
			return 0
		}
		return s.Throughput
	}
	if s.ServiceTime > 0 {
		return float64(max(s.Concurrency, model.DefaultConcurrency)) / s.ServiceTime.Seconds()
	}
	return 0
}

// EffectivePerWorker is μ_eff (docs/model.md, section 6): PerWorker lowered by the overhead
// reserve. It is 0 when the reserve takes all of it (100 % or more).
func (s Settings) EffectivePerWorker() float64 {
	h := s.OverheadReserve
	if !(h > 0) {
		h = 0
	}
	mu := capacity.EffectivePerWorker(s.PerWorker(), h)
	if !(mu > 0) || math.IsInf(mu, 0) {
		return 0
	}
	return mu
}

// ServiceSeconds is the time one message holds one of a worker's
// Concurrency slots: ServiceTime, or Concurrency ÷ Throughput when a
// throughput is given. It is 0 when neither is known.
func (s Settings) ServiceSeconds() float64 {
	mu := s.PerWorker()
	if mu <= 0 {
		return 0
	}
	return float64(max(s.Concurrency, model.DefaultConcurrency)) / mu
}

// TargetBacklogPerWorker is the backlog one worker clears within the latency
// promise: Latency ÷ ServiceTime × Concurrency, or Latency × Throughput. It is
// the target a backlog-per-worker metric is tracked against (AWS's recipe),
// and 0 when the latency or the throughput is unknown.
func (s Settings) TargetBacklogPerWorker() float64 {
	l := s.Latency.Seconds()
	if l <= 0 {
		return 0
	}
	var t float64
	if s.Throughput > 0 {
		t = l * s.PerWorker()
	} else {
		t = capacity.TargetBacklogPerWorker(l, s.ServiceTime.Seconds(), max(s.Concurrency, model.DefaultConcurrency))
	}
	if !(t > 0) || math.IsInf(t, 0) {
		return 0
	}
	return t
}

// Limits are the group's configured bounds: Min, Max and Cap.
func (s Settings) Limits() model.Limits {
	return model.Limits{Min: s.Min, Max: s.Max, Cap: s.Cap}
}

// Bounds are the lowest and highest desired count the policy may set for
// the fleet f, as the publisher sets it and the page shows it:
// s.Limits().For(f) (model.Limits.For: Max, Cap and the fleet's own
// maximum are ceilings never exceeded; Min and the fleet's own minimum are
// floors below them). by names the limit that sets hi ("max", "group's
// max", "cap"), or "" when nothing does.
func (s Settings) Bounds(f model.Fleet) (lo, hi int, by string) {
	b := s.Limits().For(f)
	return b.Lo, b.Hi, b.HiBy
}
