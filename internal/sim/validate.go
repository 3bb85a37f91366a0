package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Paths of RunConfig's fields, as field errors name them.
const (
	FieldDuration           = "Duration"
	FieldInterval           = "Interval"
	FieldWorkerCost         = "WorkerCostPerHour"
	FieldRestartAt          = "RestartAt"
	FieldPeers              = "Peers"
	FieldScenario           = "World.Scenario"
	FieldServiceMean        = "World.Service.Mean"
	FieldServiceDist        = "World.Service.Dist"
	FieldServiceCV          = "World.Service.CV"
	FieldConcurrency        = "World.Concurrency"
	FieldStartDelay         = "World.StartDelay"
	FieldLatencyTarget      = "World.LatencyTarget"
	FieldMin                = "World.Min"
	FieldMax                = "World.Max"
	FieldWorkers            = "World.Workers"
	FieldWarmUp             = "World.WarmUp"
	FieldAssumedServiceTime = "World.AssumedServiceTime"
	FieldDownstreamPool     = "World.DownstreamPool"
	FieldServiceChanges     = "World.ServiceChanges"
	FieldPoolChanges        = "World.PoolChanges"
	FieldStartDelayCV       = "World.StartDelayCV"
	FieldMetricDelay        = "World.MetricDelay"
	FieldScaleIn            = "World.ScaleIn"
	FieldVisibilityTimeout  = "World.VisibilityTimeout"
)

// FieldError is one problem of a RunConfig: the path of the field, from
// RunConfig as Go spells it (World.Service.CV), and what is wrong with its
// value. A problem that involves other fields lists their paths in Others,
// and Msg names them by those paths where it names them, so a caller that
// knows the fields by other names (a command's flags) can say it in its
// own words.
type FieldError struct {
	Field  string
	Msg    string
	Others []string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// FieldErrors are the field errors in err, in order: every one of a join,
// as Validate returns them. Nil for nil.
func FieldErrors(err error) []*FieldError {
	if err == nil {
		return nil
	}
	var out []*FieldError
	for _, e := range unjoin(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			out = append(out, fe)
		}
	}
	return out
}

// Validate reports every problem of the run at once, each a *FieldError
// joined with errors.Join: values a run cannot use and values beyond the
// limits of one run (bounds.go). Run and RunPolicy refuse a run it finds a
// problem with. What the run's size makes of them together is Estimate's.
func (rc RunConfig) Validate() error {
	var errs []error
	bad := func(field string, others []string, format string, a ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, a...), Others: others})
	}
	rc.validateTimes(bad)
	rc.World.validateFleet(bad)
	rc.validateScoring(bad)
	rc.World.validateWorld(bad)
	if err := rc.peerParams().Validate(); err != nil {
		for _, e := range unjoin(err) {
			bad(FieldPeers, nil, "%v", e)
		}
	}
	return errors.Join(errs...)
}

// problemFunc records one problem of a field, naming the other fields it
// is judged against.
type problemFunc func(field string, others []string, format string, a ...any)

// validateTimes checks the run's length and interval, the service time,
// the concurrency, the start delay and the promise.
func (rc RunConfig) validateTimes(bad problemFunc) {
	w := rc.World
	if rc.Duration <= 0 || rc.Duration > MaxDuration {
		bad(FieldDuration, nil, "%v: must be > 0 and at most %v", rc.Duration, MaxDuration)
	}
	if w.Service.Mean <= 0 {
		bad(FieldServiceMean, nil, "%v: must be > 0", w.Service.Mean)
	}
	switch w.Service.Dist {
	case "", DistExponential, DistConstant:
	case DistLognormal:
		if !(w.Service.CV > 0) || w.Service.CV > MaxServiceCV {
			bad(FieldServiceCV, nil, "%v: must be > 0 and at most %d", w.Service.CV, MaxServiceCV)
		}
	default:
		bad(FieldServiceDist, nil, "%q: want exponential, lognormal or constant", w.Service.Dist)
	}
	if w.Concurrency < 0 { // 0 is 1
		bad(FieldConcurrency, nil, "%d: must be >= 1", w.Concurrency)
	}
	if w.StartDelay < 0 || w.StartDelay > MaxStartDelay {
		bad(FieldStartDelay, nil, "%v: must be within 0 and 24h", w.StartDelay)
	}
	if rc.Interval <= 0 || (rc.Duration > 0 && rc.Interval > rc.Duration) {
		bad(FieldInterval, []string{FieldDuration}, "%v: must be > 0 and at most %s", rc.Interval, FieldDuration)
	}
	if w.LatencyTarget <= 0 {
		bad(FieldLatencyTarget, nil, "%v: must be > 0", w.LatencyTarget)
	}
}

// validateFleet checks the fleet's bounds, its size and its message slots.
func (w Config) validateFleet(bad problemFunc) {
	if w.Min < 0 {
		bad(FieldMin, nil, "%d: must be >= 0", w.Min)
	}
	if w.Max < max(w.Min, 1) || w.Max > MaxWorkers {
		bad(FieldMax, []string{FieldMin}, "%d: must be >= 1, >= %s (%d) and at most %d", w.Max, FieldMin, w.Min, MaxWorkers)
	}
	if w.Concurrency >= 1 && w.Max >= 1 && w.Max <= MaxWorkers && float64(w.Concurrency)*float64(w.Max) > MaxSlots {
		bad(FieldConcurrency, []string{FieldMax}, "%d × %s %d: at most %d message slots in a fleet", w.Concurrency, FieldMax, w.Max, MaxSlots)
	}
	if w.Workers < max(w.Min, 0) || w.Workers > w.Max {
		bad(FieldWorkers, []string{FieldMin, FieldMax}, "%d: must be within %s (%d) and %s (%d)", w.Workers, FieldMin, w.Min, FieldMax, w.Max)
	}
}

// validateScoring checks the warm-up, the restart and the price.
func (rc RunConfig) validateScoring(bad problemFunc) {
	w := rc.World
	switch {
	case w.WarmUp < 0:
		bad(FieldWarmUp, nil, "%v: must be >= 0", w.WarmUp)
	case rc.Duration > 0 && w.WarmUp >= rc.Duration:
		bad(FieldWarmUp, []string{FieldDuration}, "%v: must be shorter than the run (%v)", w.WarmUp, rc.Duration)
	}
	switch {
	case rc.RestartAt < 0:
		bad(FieldRestartAt, nil, "%v: must be >= 0", rc.RestartAt)
	case rc.Duration > 0 && rc.RestartAt >= rc.Duration:
		bad(FieldRestartAt, []string{FieldDuration}, "%v: must be shorter than the run (%v)", rc.RestartAt, rc.Duration)
	}
	if !(rc.WorkerCostPerHour >= 0 && rc.WorkerCostPerHour <= maxWorkerCost) {
		bad(FieldWorkerCost, nil, "%v: want dollars an hour, from 0 (no price) to 1e6", rc.WorkerCostPerHour)
	}
}

// validateWorld checks the world's own fields, as NewWorld checks them.
func (w Config) validateWorld(bad problemFunc) {
	if err := w.Scenario.Validate(); err != nil {
		bad(FieldScenario, nil, "%v", err)
	}
	if w.AssumedServiceTime < 0 {
		bad(FieldAssumedServiceTime, nil, "%v: must be >= 0", w.AssumedServiceTime)
	}
	if w.DownstreamPool < 0 {
		bad(FieldDownstreamPool, nil, "%d: must be >= 0", w.DownstreamPool)
	}
	for _, err := range serviceChangeErrors(w.ServiceChanges) {
		bad(FieldServiceChanges, nil, "%v", err)
	}
	for _, err := range poolChangeErrors(w.PoolChanges) {
		bad(FieldPoolChanges, nil, "%v", err)
	}
	if !(w.StartDelayCV >= 0) || math.IsInf(w.StartDelayCV, 0) {
		bad(FieldStartDelayCV, nil, "%v: must be a finite number >= 0", w.StartDelayCV)
	}
	if w.MetricDelay < 0 {
		bad(FieldMetricDelay, nil, "%v: must be >= 0", w.MetricDelay)
	}
	if w.ScaleIn != "" && !slices.Contains(ScaleInModes, w.ScaleIn) {
		bad(FieldScaleIn, nil, "%q: want %s", w.ScaleIn, strings.Join(ScaleInModes, " or "))
	}
	if w.VisibilityTimeout < 0 {
		bad(FieldVisibilityTimeout, nil, "%v: must be >= 0", w.VisibilityTimeout)
	}
}

// unjoin is the errors a join holds, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
