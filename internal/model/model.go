// Package model holds the plain values that flow between the checker's parts:
// what the poller saw (GroupSample, Fleet), what the policy decided (Decision).
// It has no behaviour beyond small derived values, and no dependency on AWS.
package model

import "time"

// Error classes of a failed AWS call, as recorded on samples and in metrics.
const (
	ErrClassThrottled   = "throttled"    // the service asked us to slow down
	ErrClassServer      = "server_error" // 5xx from the service
	ErrClassTimeout     = "timeout"      // no answer before the deadline
	ErrClassMalformed   = "malformed"    // an answer we could not parse, or a missing attribute
	ErrClassClient      = "client_error" // 4xx: permissions, missing queue, bad request
	ErrClassNetwork     = "network"      // connection refused, reset, DNS
	ErrClassUnavailable = "unavailable"  // anything else
)

// QueueSample is one queue's answer in one interval. When Err is set the
// counts are meaningless and must not be summed.
type QueueSample struct {
	Group    string
	Queue    string // queue name, the last element of the URL
	URL      string
	Region   string
	At       time.Time
	Visible  int64 // ApproximateNumberOfMessages
	InFlight int64 // ApproximateNumberOfMessagesNotVisible
	Delayed  int64 // ApproximateNumberOfMessagesDelayed
	Err      error
	ErrClass string
}

// QueueFailure names a queue that did not answer and why.
type QueueFailure struct {
	Queue   string `json:"queue"`
	Region  string `json:"region"`
	Class   string `json:"class"`
	Message string `json:"message"`
}

// Reading is a value with the time it describes, for data that can be stale
// (CloudWatch datapoints are 1-minute aggregates and arrive late).
type Reading struct {
	Value float64
	At    time.Time
}

// GroupSample is what one interval learned about one group's queues: counts
// summed over the queues that answered, and which did not.
type GroupSample struct {
	Group string
	At    time.Time

	Visible  int64
	InFlight int64
	Delayed  int64
	// Backlog is the count the policy sizes against: visible, plus in-flight
	// and delayed when the group's counting switches include them.
	Backlog int64

	Queues   int // queues configured
	Answered int // queues that answered this interval
	Failures []QueueFailure

	// CloudWatch readings, nil when not configured or not (yet) known.
	OldestAge *Reading // ApproximateAgeOfOldestMessage, seconds (max over queues)
	Sent      *Reading // NumberOfMessagesSent, msg/s (sum over queues)
	Deleted   *Reading // NumberOfMessagesDeleted, msg/s (sum over queues)

	// Polling is what sampling the group's queues costs and where it falls short.
	Polling Polling
}

// Polling describes how a group's queues were sampled. Answered (above)
// includes the idle queues that were not asked this interval: their last
// counts, all zero, are carried forward as known.
type Polling struct {
	Asked             int     // queues asked this interval
	RequestsPerMinute float64 // SQS requests for the group's queues over the last minute
	MonthlyCost       float64 // RequestsPerMinute over a 30-day month at the configured price, dollars
	// Notices say, per region, why a round of calls did not fit its
	// deadline; empty when every region fits. Shared: do not modify.
	Notices []string
}

// Missing reports that no queue of the group answered: nothing is known.
func (s GroupSample) Missing() bool { return s.Answered == 0 }

// Partial reports that some, but not all, queues answered.
func (s GroupSample) Partial() bool { return s.Answered > 0 && s.Answered < s.Queues }

// Fleet is the worker fleet as read back from Auto Scaling or ECS.
type Fleet struct {
	Kind string // "autoscaling", "ecs", or "" when the group has no fleet to read
	Name string
	At   time.Time

	Known bool // false when the read failed or there is nothing to read
	Err   error

	Desired   int
	Min       int // the group's own bounds (ECS services have none: 0 and 0)
	Max       int
	InService int // instances InService / tasks RUNNING
	Pending   int // instances launching or warming / tasks PENDING
	// PendingSince holds the launch time of each pending worker, when known.
	PendingSince []time.Time
}

// Floors are the worker counts each sizing rule asks for; nil when the rule
// does not apply (no arrival estimate, no latency promise).
type Floors struct {
	Drain            *int `json:"drain"`
	Utilization      *int `json:"utilization"`
	Wait             *int `json:"wait"`
	BacklogPerWorker *int `json:"backlog_per_worker"`
}

// Diagnosis states, after seed 000's reading of depth against in-flight.
const (
	DiagHealthy          = "healthy"
	DiagIdle             = "idle"
	DiagDraining         = "draining"
	DiagUnderProvisioned = "under_provisioned"
	DiagNotConsuming     = "not_consuming"
	DiagStuck            = "stuck"
	DiagCapped           = "capped"
	DiagUnknown          = "unknown" // nothing is known (no data)
)

// Diagnoses lists every diagnosis state, for exporting one series per state.
var Diagnoses = []string{DiagHealthy, DiagIdle, DiagDraining, DiagUnderProvisioned,
	DiagNotConsuming, DiagStuck, DiagCapped, DiagUnknown}

// Decision is the policy's answer for one group at one time, with every
// number that produced it. Its JSON form is a contract: `checker once
// --output json`, the logs and the status page print it.
type Decision struct {
	Group            string    `json:"group"`
	At               time.Time `json:"at"`
	Visible          int64     `json:"visible"`
	InFlight         int64     `json:"in_flight"`
	Delayed          int64     `json:"delayed"`
	Backlog          int64     `json:"backlog"`
	CurrentWorkers   int       `json:"current_workers"`
	InServiceWorkers int       `json:"in_service_workers"`
	PendingWorkers   int       `json:"pending_workers"`
	// ArrivalRate is the smoothed arrival estimate in msg/s; nil when unknown.
	ArrivalRate            *float64 `json:"arrival_rate"`
	BacklogPerWorker       float64  `json:"backlog_per_worker"`
	TargetBacklogPerWorker float64  `json:"target_backlog_per_worker"`
	Floors                 Floors   `json:"floors"`
	// RecommendedWorkers is what the sizing rules ask for, before guards and clamps.
	RecommendedWorkers int `json:"recommended_workers"`
	// DesiredWorkers is the count to set, after guards and clamps.
	DesiredWorkers int      `json:"desired_workers"`
	Capped         bool     `json:"capped"`
	Held           bool     `json:"held"`
	HoldReason     string   `json:"hold_reason"`
	Partial        bool     `json:"partial"`
	Diagnosis      string   `json:"diagnosis"`
	Reasons        []string `json:"reasons"`
	// Utilization is arrivals over the capacity of the current workers; nil when unknown.
	Utilization *float64 `json:"utilization"`
	// DrainSeconds is the time to clear the backlog with the current workers; nil when it never drains or is unknown.
	DrainSeconds     *float64 `json:"drain_seconds"`
	OldestAgeSeconds *float64 `json:"oldest_age_seconds"`
}

// Observation is one interval's view of one group: its queues and its fleet.
type Observation struct {
	Sample GroupSample
	Fleet  Fleet
}

// Action is what was done with one decision.
type Action struct {
	Group            string `json:"group"`
	MetricsPublished int    `json:"metrics_published"` // CloudWatch datums sent
	Scaled           bool   `json:"scaled"`            // the desired count was set
	From             int    `json:"from"`
	To               int    `json:"to"`
	DryRun           bool   `json:"dry_run"` // nothing was changed on purpose
}
