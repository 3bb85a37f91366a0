package capacity

import (
	"errors"
	"fmt"
	"math"
)

// PlanInput is what an engineer knows about one queue and its worker pool:
// the planner's fields (docs/model.md, sections 3 to 6) and a latency target. Rates
// are in messages per second, times in seconds, reserves in percent.
//
// Per-worker throughput is given one of two ways: PerWorker, the measured
// completions per second of one worker, or ServiceTime with Concurrency, the
// seconds one message takes and the messages a worker handles at once. The
// Erlang C model reads them differently (see NewPlan).
type PlanInput struct {
	Queue           string  `json:"queue"`
	ArrivalRate     float64 `json:"arrival_rate"`                     // λ, msg/s
	Workers         int     `json:"workers"`                          // current pool
	PerWorker       float64 `json:"per_worker,omitempty"`             // μ, msg/s per worker; or
	ServiceTime     float64 `json:"service_time_seconds,omitempty"`   // S, seconds per message
	Concurrency     int     `json:"concurrency"`                      // k, messages per worker at once; 0 means 1
	Backlog         float64 `json:"backlog"`                          // Q0, messages waiting now
	DrainTarget     float64 `json:"drain_target_seconds"`             // T
	Utilization     float64 `json:"utilization"`                      // ceiling u, (0, 1]
	BurstPercent    float64 `json:"burst_percent"`                    // b, added to arrivals
	OverheadPercent float64 `json:"overhead_percent"`                 // h, taken off throughput
	StartDelay      float64 `json:"start_delay_seconds"`              // d, until added workers take work
	SafetyWorkers   int     `json:"safety_workers"`                   // s, added after the floors
	Cap             int     `json:"cap"`                              // 0 means none
	LatencyTarget   float64 `json:"latency_target_seconds,omitempty"` // queue wait; 0 means none
	// LatencyQuantile is the share of messages that must start within
	// LatencyTarget, as the daemon promises (target.latency_quantile); 0
	// means DefaultLatencyQuantile.
	LatencyQuantile float64 `json:"latency_quantile,omitempty"`
	// ServiceTimeCV is the coefficient of variation of the service time
	// (standard deviation ÷ mean): the waits of the Erlang C model are
	// stretched by (1 + cv²) ÷ 2 (Allen–Cunneen, ServiceSpread). 0 means 1,
	// exponential service, as Erlang C assumes; for service times that
	// hardly vary give a small value such as 0.1.
	ServiceTimeCV float64 `json:"service_time_cv,omitempty"`
	Horizon       float64 `json:"horizon_seconds"` // burn-down span; 0 means d + 2T
	// WorkerCostPerHour is what one worker costs an hour, in dollars; 0
	// means no price: the plan then counts workers, not dollars.
	WorkerCostPerHour float64 `json:"worker_cost_per_hour,omitempty"`
}

// Field names of PlanInput, as they appear in FieldError and in JSON, so a
// command line can name its flags and a web form its inputs.
const (
	FieldQueue           = "queue"
	FieldArrivalRate     = "arrival_rate"
	FieldWorkers         = "workers"
	FieldPerWorker       = "per_worker"
	FieldServiceTime     = "service_time_seconds"
	FieldConcurrency     = "concurrency"
	FieldBacklog         = "backlog"
	FieldDrainTarget     = "drain_target_seconds"
	FieldUtilization     = "utilization"
	FieldBurstPercent    = "burst_percent"
	FieldOverheadPercent = "overhead_percent"
	FieldStartDelay      = "start_delay_seconds"
	FieldSafetyWorkers   = "safety_workers"
	FieldCap             = "cap"
	FieldLatencyTarget   = "latency_target_seconds"
	FieldLatencyQuantile = "latency_quantile"
	FieldServiceTimeCV   = "service_time_cv"
	FieldHorizon         = "horizon_seconds"
)

// DefaultLatencyQuantile is the share of messages a latency target
// promises to start within it when none is given: the daemon's default
// (target.latency_quantile).
const DefaultLatencyQuantile = 0.99

// Bounds of PlanInput. They are far beyond any real queue and keep every
// product and quotient of the plan finite in float64.
const (
	MaxRate        = 1e9        // msg/s, arrivals and per-worker throughput
	MinPerWorker   = 1e-9       // msg/s
	MinServiceTime = 1e-9       // seconds
	MaxServiceTime = 1e9        // seconds
	MaxConcurrency = 1_000_000  // messages per worker at once
	MaxWorkers     = MaxServers // current, safety and cap
	MaxBacklog     = 1e15       // messages
	MaxSeconds     = 1e10       // drain target, start delay, latency target, horizon
	MinDrainTarget = 1          // seconds
	MinHorizon     = 1          // seconds, when given
	MaxBurst       = 10_000     // percent
)

// FieldError is one problem with one input field.
type FieldError struct {
	Field   string // one of the Field constants
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// FieldErrors lists the FieldErrors in err, which may be one FieldError or
// several joined by errors.Join, as Validate returns them.
func FieldErrors(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(e error) {
		if e == nil {
			return
		}
		if fe, ok := e.(*FieldError); ok { //nolint:errorlint // walks the tree itself
			out = append(out, fe)
			return
		}
		if j, ok := e.(interface{ Unwrap() []error }); ok { //nolint:errorlint // walks the tree itself
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		walk(errors.Unwrap(e))
	}
	walk(err)
	return out
}

// Validate returns every problem with the input at once, each a
// *FieldError naming its field, joined with errors.Join; nil when the input
// can be planned.
func (in PlanInput) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Message: fmt.Sprintf(format, a...)})
	}
	rangeCheck := func(field string, x, lo, hi float64, format string, a ...any) {
		if !(x >= lo && x <= hi) {
			bad(field, "must be %s (got %v)", fmt.Sprintf(format, a...), x)
		}
	}
	rangeCheck(FieldArrivalRate, in.ArrivalRate, 0, MaxRate, "between 0 and %g msg/s", float64(MaxRate))
	if in.Workers < 0 || in.Workers > MaxWorkers {
		bad(FieldWorkers, "must be between 0 and %d (got %d)", MaxWorkers, in.Workers)
	}

	hasPerWorker, hasService := in.PerWorker != 0, in.ServiceTime != 0
	switch {
	case hasPerWorker && hasService:
		bad(FieldPerWorker, "give a per-worker throughput or a service time, not both")
	case !hasPerWorker && !hasService:
		bad(FieldPerWorker, "must be > 0: a per-worker throughput (or a service time) is required")
	case hasPerWorker:
		rangeCheck(FieldPerWorker, in.PerWorker, MinPerWorker, MaxRate,
			"> 0, between %g and %g msg/s", MinPerWorker, float64(MaxRate))
	default:
		rangeCheck(FieldServiceTime, in.ServiceTime, MinServiceTime, MaxServiceTime,
			"> 0, between %g and %g seconds", MinServiceTime, float64(MaxServiceTime))
	}
	switch {
	case in.Concurrency < 0 || in.Concurrency > MaxConcurrency:
		bad(FieldConcurrency, "must be between 1 and %d (got %d)", MaxConcurrency, in.Concurrency)
	case in.Concurrency > 1 && hasPerWorker && !hasService:
		bad(FieldConcurrency, "applies only with a service time: a per-worker throughput already counts every message a worker handles at once")
	}

	rangeCheck(FieldBacklog, in.Backlog, 0, MaxBacklog, "between 0 and %g messages", float64(MaxBacklog))
	rangeCheck(FieldDrainTarget, in.DrainTarget, MinDrainTarget, MaxSeconds,
		"between %v and %g seconds", MinDrainTarget, float64(MaxSeconds))
	if !(in.Utilization > 0 && in.Utilization <= 1) {
		bad(FieldUtilization, "must be in (0, 1], a ratio such as 0.8 (got %v)", in.Utilization)
	}
	rangeCheck(FieldBurstPercent, in.BurstPercent, 0, MaxBurst, "a percentage between 0 and %d", MaxBurst)
	if !(in.OverheadPercent >= 0 && in.OverheadPercent < 100) {
		bad(FieldOverheadPercent, "must be a percentage in [0, 100) (got %v)", in.OverheadPercent)
	}
	rangeCheck(FieldStartDelay, in.StartDelay, 0, MaxSeconds, "between 0 and %g seconds", float64(MaxSeconds))
	if in.SafetyWorkers < 0 || in.SafetyWorkers > MaxWorkers {
		bad(FieldSafetyWorkers, "must be between 0 and %d (got %d)", MaxWorkers, in.SafetyWorkers)
	}
	if in.Cap < 0 || in.Cap > MaxWorkers {
		bad(FieldCap, "must be between 0 (no cap) and %d (got %d)", MaxWorkers, in.Cap)
	}
	if in.LatencyTarget != 0 {
		rangeCheck(FieldLatencyTarget, in.LatencyTarget, math.SmallestNonzeroFloat64, MaxSeconds,
			"> 0 and at most %g seconds, or 0 for none", float64(MaxSeconds))
	}
	if in.LatencyQuantile != 0 && !(in.LatencyQuantile > 0 && in.LatencyQuantile < 1) {
		bad(FieldLatencyQuantile, "must be a share in (0, 1), such as 0.99, or 0 for %v (got %v)", DefaultLatencyQuantile, in.LatencyQuantile)
	}
	rangeCheck(FieldServiceTimeCV, in.ServiceTimeCV, 0, MaxServiceTimeCV,
		"between 0 (exponential, 1) and %g", float64(MaxServiceTimeCV))
	rangeCheck(FieldWorkerCost, in.WorkerCostPerHour, 0, MaxWorkerCost,
		"between 0 (no price) and %g dollars an hour", float64(MaxWorkerCost))
	if in.Horizon != 0 {
		rangeCheck(FieldHorizon, in.Horizon, MinHorizon, MaxSeconds,
			"between %v and %g seconds, or 0 for the default", MinHorizon, float64(MaxSeconds))
	}
	return errors.Join(errs...)
}

// spread is the Allen–Cunneen factor of the input's service times:
// ServiceSpread of its cv, 1 (exponential) when none is given.
func (in PlanInput) spread() float64 {
	if in.ServiceTimeCV > 0 {
		return ServiceSpread(in.ServiceTimeCV)
	}
	return 1
}

// WaitModel names the queueing model the plan's waits come from: Erlang C,
// stretched by the Allen–Cunneen factor when a service time cv is given.
func (in PlanInput) WaitModel() string {
	if !(in.ServiceTimeCV > 0) {
		return "Erlang C"
	}
	return fmt.Sprintf("Erlang C, waits × %s for a service time cv of %s", FormatNumber(in.spread()), FormatNumber(in.ServiceTimeCV))
}
