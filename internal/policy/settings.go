// Package policy turns what the poller saw into the number of workers a group
// should have, and says why. It is pure: no AWS, no sleeping, no clock; the
// time is an argument.
package policy

import "time"

// Policies.
const (
	PolicyModel            = "model"
	PolicyBacklogPerWorker = "backlog_per_worker"
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

	Latency         time.Duration // the promise: how long a message may wait
	DrainTime       time.Duration // an existing backlog must clear within this
	Utilization     float64       // ceiling, (0, 1]
	BurstReserve    float64       // percent added to measured arrivals
	OverheadReserve float64       // percent taken off per-worker throughput
	SafetyWorkers   int

	Min, Max int
	Cap      int // downstream ceiling; 0 = none

	StartDelay           time.Duration // launch until a new worker takes its first message
	ScaleInStabilization time.Duration // scale in to the highest recommendation over this window
	Deadband             float64       // relative change ignored, against flapping
	MaxStepOut           int           // workers added per decision; 0 = no limit
	StaleAfter           time.Duration // a sample older than this is stale: hold
	ArrivalSmoothing     time.Duration // time constant of the arrival-rate EWMA
}

// Defaults of the settings that have one; WithDefaults fills them in.
const (
	DefaultDrainTime            = 15 * time.Minute
	DefaultUtilization          = 0.8
	DefaultScaleInStabilization = 5 * time.Minute
	DefaultDeadband             = 0.1
	DefaultArrivalSmoothing     = time.Minute
	DefaultConcurrency          = 1
)

// WithDefaults returns s with every zero setting that has a default filled in.
// StaleAfter has none here: it depends on the sampling interval.
func (s Settings) WithDefaults() Settings {
	if s.Policy == "" {
		s.Policy = PolicyModel
	}
	if s.Concurrency <= 0 {
		s.Concurrency = DefaultConcurrency
	}
	if s.DrainTime <= 0 {
		s.DrainTime = DefaultDrainTime
	}
	if s.Utilization <= 0 {
		s.Utilization = DefaultUtilization
	}
	if s.ScaleInStabilization <= 0 {
		s.ScaleInStabilization = DefaultScaleInStabilization
	}
	if s.Deadband <= 0 {
		s.Deadband = DefaultDeadband
	}
	if s.ArrivalSmoothing <= 0 {
		s.ArrivalSmoothing = DefaultArrivalSmoothing
	}
	return s
}
