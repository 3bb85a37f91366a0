package model

import "time"

// The names and defaults of a group's sizing settings. They are shared by
// the configuration, which fills the defaults into the file's groups and
// checks the names, and the policy, which fills the same defaults into zero
// settings; they live here so that the configuration does not import the
// policy (and the poller, which reads the configuration, compiles no
// policy).

// Policies: target.policy.
const (
	PolicyModel            = "model"
	PolicyBacklogPerWorker = "backlog_per_worker"
)

// What the measured fleet does: workers.learn.
const (
	LearnAct    = "act"
	LearnReport = "report"
	LearnOff    = "off"
)

// MaxForecastHistory is the most per-minute history a group keeps.
const MaxForecastHistory = 8 * 24 * time.Hour

// StaleIntervals is how many sampling intervals make a sample, or the
// loop's last good cycle, stale.
const StaleIntervals = 3

// StaleAfter is the one staleness rule: a sample older than three intervals
// is stale (target.stale_after's default, which holds the decision), and a
// checker whose last good cycle is older than that is not ready (/healthz,
// /readyz, the status page's health) or, when no cycle has started in that
// time, not live (/livez).
func StaleAfter(interval time.Duration) time.Duration {
	return StaleIntervals * interval
}

// Defaults of the settings that have one.
const (
	DefaultDrainTime            = 15 * time.Minute
	DefaultUtilization          = 0.8
	DefaultScaleInStabilization = 5 * time.Minute
	DefaultDeadband             = 0.1
	DefaultArrivalSmoothing     = time.Minute
	DefaultConcurrency          = 1
	DefaultLatencyQuantile      = 0.99
	DefaultSLOWindow            = 30 * 24 * time.Hour // the promise's error budget's window
	DefaultMetricStaleAfter     = 5 * time.Minute
	DefaultForecastHistory      = 8 * 24 * time.Hour
	// DefaultForecastStabilization is the scale-in stabilisation window of
	// the model policy when its forecast is on: the forecast keeps the
	// capacity that load expected within the start delay needs, so the
	// window only rides out the noise of single samples.
	DefaultForecastStabilization = 30 * time.Second
	// DefaultActivation is the backlog (visible plus delayed messages) that
	// wakes a group at zero workers.
	DefaultActivation = 1
	// DefaultLateCost is the worker time a message that waits past the
	// promise costs, in multiples of the worker time serving it takes.
	DefaultLateCost = 10
)
