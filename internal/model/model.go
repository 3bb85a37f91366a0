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
	MonthlyCost       float64 // RequestsPerMinute over a month of 730 hours at the configured price, dollars
	// CloudWatchMetricsPerMinute is the CloudWatch metrics the group's
	// queues are read for each minute (GetMetricData bills each one), and
	// CloudWatchMonthlyCost what that costs over a month of 730 hours; 0 for a
	// group that reads no CloudWatch.
	CloudWatchMetricsPerMinute float64
	CloudWatchMonthlyCost      float64
	// Notices say, per region, why a round of calls did not fit its
	// deadline; empty when every region fits. Shared: do not modify.
	Notices []string
}

// Missing reports that no queue of the group answered: nothing is known.
func (s GroupSample) Missing() bool { return s.Answered == 0 }

// Partial reports that some, but not all, queues answered.
func (s GroupSample) Partial() bool { return s.Answered > 0 && s.Answered < s.Queues }

// FleetFixed is the Kind of a fleet of configured, fixed size
// (fleet.fixed_workers): known without being read.
const FleetFixed = "fixed"

// FleetECS is the Kind of an ECS service. DescribeServices names no pending
// task, so its PendingSince is, per pending task, when the poller first saw
// its deployment's pending count include it (oldest leaving first), never
// before the deployment's creation.
const FleetECS = "ecs"

// Fleet is the worker fleet as read back from Auto Scaling or ECS.
type Fleet struct {
	Kind string // "autoscaling", "ecs", "kubernetes", "fixed", or "" when the group has no fleet to read
	Name string
	At   time.Time

	Known bool // false when the read failed or there is nothing to read
	Err   error

	Desired   int
	Min       int // the group's own bounds (ECS services have none: 0 and 0)
	Max       int
	InService int // instances InService / tasks RUNNING
	Pending   int // instances launching or warming / tasks PENDING
	// Draining counts workers on their way out: instances Terminating,
	// Terminating:Wait or Terminating:Proceed, and ECS tasks still running
	// that the service is stopping. They are not capacity (neither InService
	// nor Pending counts them), but the messages they hold are still in the
	// queue's in-flight count.
	Draining int
	// PendingSince holds the launch time of each pending worker, when known.
	PendingSince []time.Time
	// Switches are the operator's switches read from the fleet's tags.
	Switches Switches
}

// Switches are an operator's overrides of a group, set without a redeploy
// as tags on its Auto Scaling group or ECS service (see docs/configuration.md,
// "Pause and switches").
type Switches struct {
	Paused      bool      // queue-checker:paused=true: hold, no scaling call
	PausedBy    string    // queue-checker:paused-by
	PausedSince time.Time // queue-checker:paused-at, else when first seen paused
	ScaleInOff  bool      // queue-checker:scale-in=false: scale out only
	Pinned      bool      // queue-checker:pin=N: hold at Pin, within min and max
	Pin         int
	// NotUnderstood name the switches the checker cannot read: a key in
	// its namespace that names no switch exactly (a misspelling, another
	// word, a negation), a value not understood, two keys for one switch
	// at odds. Any one holds the group: neither in nor out, no scaling
	// call.
	NotUnderstood []string
	// Warnings name what was ignored without holding: a paused-at that is
	// not a time, a key read as the switch it names in another spelling.
	Warnings []string
}

// Floors are the worker counts each sizing rule asks for; nil when the rule
// does not apply (no arrival estimate, no latency promise).
type Floors struct {
	Drain            *int `json:"drain"`
	Utilization      *int `json:"utilization"`
	Wait             *int `json:"wait"`
	BacklogPerWorker *int `json:"backlog_per_worker"`
	// UtilizationCeiling is the busy ceiling the utilisation floor sized
	// with: target.utilization, or the one measured when it is unset.
	UtilizationCeiling *float64 `json:"utilization_ceiling"`
}

// Diagnosis states: what a queue's depth and age, read against its in-flight
// count and the fleet, say about whether more workers would help.
const (
	DiagHealthy          = "healthy"
	DiagIdle             = "idle"
	DiagDraining         = "draining"
	DiagUnderProvisioned = "under_provisioned"
	// DiagCatchingUp: the workers the load needs are asked for and still
	// starting, and the promise holds.
	DiagCatchingUp   = "catching_up"
	DiagNotConsuming = "not_consuming"
	DiagStuck        = "stuck"
	DiagCapped       = "capped"
	// DiagDownstreamLimited: the learned ceiling keeps the fleet below what
	// the backlog needs, because more workers added no throughput; or a
	// suspected one holds it while a scale-out that hardly moved the queue
	// waits for the minutes that say why.
	DiagDownstreamLimited = "downstream_limited"
	// DiagMessagesHeld: messages are received and not deleted (poison
	// messages, an outage, a downstream that refuses the work): in flight
	// stays far above what the deletions explain. See Decision.HeldMessages.
	DiagMessagesHeld = "messages_held"
	DiagUnknown      = "unknown" // nothing is known (no data)
	// DiagLate: messages wait and the oldest has waited longer than the
	// promise, though no other state explains it: the promise is broken
	// now, whatever the counts say.
	DiagLate = "late"
)

// Diagnoses lists every diagnosis state, for exporting one series per state.
var Diagnoses = []string{DiagHealthy, DiagIdle, DiagDraining, DiagUnderProvisioned, DiagCatchingUp,
	DiagNotConsuming, DiagStuck, DiagCapped, DiagDownstreamLimited, DiagMessagesHeld, DiagUnknown, DiagLate}

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
	// DrainingWorkers are finishing their messages before they stop; they
	// are not in InServiceWorkers and not capacity.
	DrainingWorkers int `json:"draining_workers"`
	// ArrivalRate is the smoothed arrival estimate in msg/s; nil when unknown.
	ArrivalRate *float64 `json:"arrival_rate"`
	// BacklogPerWorker is the backlog ÷ the current workers (the fleet's
	// desired count, starting workers included; at least 1): Prometheus'
	// checker_group_backlog_messages_per_worker. 0 without usable counts.
	BacklogPerWorker float64 `json:"backlog_per_worker"`
	// BacklogPerInServiceWorker is the backlog ÷ the workers in service of
	// the fleet read this cycle (at least 1), AWS's backlog per instance:
	// CloudWatch's BacklogPerWorker, which target tracking follows. nil
	// when the fleet was not read.
	BacklogPerInServiceWorker *float64 `json:"backlog_per_in_service_worker"`
	TargetBacklogPerWorker    float64  `json:"target_backlog_per_worker"`
	Floors                    Floors   `json:"floors"`
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
	// OldestAgeAt is the time of the CloudWatch datapoint the oldest age is
	// (ApproximateAgeOfOldestMessage, a minute or more old when read); nil
	// with the age.
	OldestAgeAt *time.Time `json:"oldest_age_at"`
	// Paused: an operator paused the group; nothing is scaled, metrics are
	// still published. PausedBy and PausedSince say who and since when, as
	// far as known ("configuration" for fleet.paused).
	Paused      bool       `json:"paused"`
	PausedBy    string     `json:"paused_by"`
	PausedSince *time.Time `json:"paused_since"`
	// ScaleInOff: the group only scales out (tag or fleet.scale_in: false).
	ScaleInOff bool `json:"scale_in_off"`
	// Pinned is the count an operator pinned the group at; nil when none.
	Pinned *int `json:"pinned"`
	// Warnings are problems an operator must see that do not stop the
	// decision, such as a paused-at tag that is not a time.
	Warnings []string `json:"warnings"`
	// SwitchProblems are the operator's switches (tags, annotations) the
	// checker cannot read or follow: a key in its namespace that names no
	// switch exactly, a value not understood, a pin outside min and max.
	// Any one holds the group (Held, HoldReason "switch not understood"):
	// neither in nor out, and no scaling call. Empty when none.
	SwitchProblems []string `json:"switch_problems"`
	// Forecast is the arrival rate the fleet is sized to meet over the next
	// start delay when it is above today's estimate; nil when there is none.
	Forecast *Forecast `json:"forecast"`
	// Plan is what the model policy's plan over sampled futures weighed;
	// nil when it made none (another policy, or no data to plan on).
	Plan *Plan `json:"plan"`
	// Measured is what the checker measured of the fleet, against what the
	// settings say; every value is nil while unknown.
	Measured Measured `json:"measured"`
	// NeedWithoutForecast is the count the load now present needs: the
	// recommendation without the forecast's share (the same as
	// RecommendedWorkers when no forecast raised it), before guards and
	// clamps; nil when the recommendation is unknown.
	NeedWithoutForecast *int `json:"need_without_forecast"`
	// Bursts is what the model policy has learned of the group's recent
	// bursts and the warm capacity they ask for; nil until it has seen one.
	Bursts *Bursts `json:"bursts"`
	// HeldMessages says that messages are received and not deleted, and
	// what the checker does about it; nil when none are.
	HeldMessages *HeldMessages `json:"held_messages"`
	// NotActed says why the controller did not act on this decision
	// (nothing published, nothing scaled this cycle); nil when it was free
	// to. The policy never sets it: it is what the controller adds.
	NotActed *NotActed `json:"not_acted"`
}

// Causes of a NotActed.
const (
	// NotActedReload: the configuration was reloaded during the cycle; the
	// next cycle acts on the new one.
	NotActedReload = "reload"
	// NotActedRestartNeeded: a refused reload asks for a restart, and the
	// configuration running no longer acts.
	NotActedRestartNeeded = "restart_needed"
)

// NotActed is why the controller did not act on a decision: a Cause to
// match on and a Message for people.
type NotActed struct {
	Cause   string `json:"cause"`
	Message string `json:"message"`
}

// NotActedOn says why a decision is not acted on: restartNeeded is the
// refused reload's reason ("" when none), reloading whether a reload waits
// for the cycle to end; nil when the decision may be acted on. A reload
// waiting is the nearer cause: the next cycle runs the new configuration.
func NotActedOn(restartNeeded string, reloading bool) *NotActed {
	switch {
	case reloading:
		return &NotActed{Cause: NotActedReload,
			Message: "the configuration was reloaded during this cycle; the next cycle acts on the new one"}
	case restartNeeded != "":
		return &NotActed{Cause: NotActedRestartNeeded,
			Message: "restart needed (" + restartNeeded + "); this configuration no longer acts"}
	}
	return nil
}

// Bursts is what a group's recent bursts were like (within the last hour),
// and what keeping capacity warm for them costs against relaunching it for
// each burst. Costs are in worker-hours an hour, and in dollars an hour when
// a worker's price is set.
type Bursts struct {
	// Count is how many bursts the figures cover.
	Count int `json:"count"`
	// Messages, LengthSeconds and GapSeconds are the median burst's size,
	// its length and the median quiet gap between two bursts (0 when fewer
	// than two bursts are known).
	Messages      float64 `json:"messages"`
	LengthSeconds float64 `json:"length_seconds"`
	GapSeconds    float64 `json:"gap_seconds"`
	// BaseRate is the arrival rate between bursts, msg/s.
	BaseRate float64 `json:"base_rate"`
	// NeedWorkers is the fleet that, never moving, would have served the
	// recent bursts within the promise: all of the last hour's or, once
	// bursts have been learned for longer, all but the largest NeedHours − 1
	// of the last NeedHours hours' (the same high quantile, from more
	// bursts; NeedHours is 1 for the last hour's largest).
	NeedWorkers int `json:"need_workers"`
	NeedHours   int `json:"need_hours"`
	// WarmWorkers is the count kept warm for the next burst now (0: none).
	WarmWorkers int `json:"warm_workers"`
	// HoldWorkerHours is what keeping the workers beyond the rate floors
	// warm costs an hour; RelaunchWorkerHours what relaunching them for
	// each burst would (their start delays and the messages past the
	// promise, at forecast.late_cost).
	HoldWorkerHours     float64  `json:"hold_worker_hours"`
	RelaunchWorkerHours float64  `json:"relaunch_worker_hours"`
	HoldDollars         *float64 `json:"hold_dollars"`
	RelaunchDollars     *float64 `json:"relaunch_dollars"`
	// LateIfRelaunchedPerHour is how many messages an hour relaunching the
	// workers for each burst would leave past the promise; ForThePromise:
	// they are kept warm although holding costs more, because that is more
	// than the share of all arrivals the promise may miss.
	LateIfRelaunchedPerHour float64 `json:"late_if_relaunched_per_hour"`
	ForThePromise           bool    `json:"for_the_promise"`
	// Chance is how likely the next burst is to come before a worker
	// launched now could start.
	Chance float64 `json:"chance"`
	// InBurst: a burst is on; RemainingSeconds is how much longer it is
	// expected to last, from the lengths of the recent ones.
	InBurst          bool    `json:"in_burst"`
	RemainingSeconds float64 `json:"remaining_seconds"`
	// NotLaunchedWorkers is how many more workers the floors asked for
	// while a burst is on that are not launched: they would start a start
	// delay from now, and the messages they would keep within the promise
	// then (LaunchKeepsMessages) are worth less, at forecast.late_cost, than
	// they would cost until the queue is empty. 0: none held back.
	NotLaunchedWorkers  int     `json:"not_launched_workers"`
	LaunchKeepsMessages float64 `json:"launch_keeps_messages"`
}

// Kinds of HeldMessages.
const (
	// HeldPoison: deletions go on, but below what the in-flight count
	// implies: some messages (poison ones, or those a downstream refuses)
	// are received again and again and never deleted.
	HeldPoison = "poison"
	// HeldOutage: (almost) nothing is deleted while messages are received.
	HeldOutage = "outage"
)

// HeldMessages describes messages held in flight and not deleted, from the
// last whole minute CloudWatch's deleted count covers (see docs/measuring.md).
type HeldMessages struct {
	// Kind is HeldPoison or HeldOutage.
	Kind string `json:"kind"`
	// Since is the start of the first minute that showed them.
	Since time.Time `json:"since"`
	// Minute is the start of the last minute judged.
	Minute time.Time `json:"minute"`
	// InFlight is that minute's mean in-flight count, Held the part of it
	// that its deletions do not explain (in flight − deleted × the time a
	// message holds a slot).
	InFlight float64 `json:"in_flight"`
	Held     float64 `json:"held"`
	// Deleted and Sent are that minute's deletions and arrivals, msg/s;
	// Sent is nil when unknown.
	Deleted float64  `json:"deleted"`
	Sent    *float64 `json:"sent"`
	// HoldAt is the fleet's count before the messages began to be held,
	// which the fleet is held at: more workers only receive the held
	// messages again, and fewer would serve the good ones late.
	HoldAt int `json:"hold_at"`
	// Advice is what to do, for an operator.
	Advice string `json:"advice"`
}

// Measured is the fleet as measured from the queue's own numbers (see
// docs/measuring.md): the time a message holds a worker's slot, from
// Little's law over the in-flight messages and CloudWatch's deleted count,
// and the completions one worker sustains while the fleet is saturated.
type Measured struct {
	ServiceTimeSeconds  *float64 `json:"service_time_seconds"`
	PerWorkerThroughput *float64 `json:"per_worker_throughput"`
	StartDelaySeconds   *float64 `json:"start_delay_seconds"`
	// Confidence is how far the measurement is trusted, 0..1; the sizing
	// uses it from MeasuredConfidence on.
	Confidence *float64 `json:"confidence"`
	// CeilingWorkers is the learned downstream ceiling: the workers past
	// which more workers added no throughput.
	CeilingWorkers *int `json:"ceiling_workers"`
	// ConfiguredServiceTimeSeconds is what the settings say (or
	// concurrency ÷ throughput).
	ConfiguredServiceTimeSeconds float64 `json:"configured_service_time_seconds"`
	// SizingWith says which per-worker throughput the floors used:
	// "measured" or "configured".
	SizingWith string `json:"sizing_with"`
	// Stuck: messages are held in flight with (almost) no deletions; the
	// measurement is not updated from such minutes.
	Stuck bool `json:"stuck"`
}

// Forecast is the arrivals a group is expected to see within the next start
// delay (plus one interval), and what they were forecast from.
type Forecast struct {
	// Rate is an upper estimate of the arrival rate, msg/s, over that span.
	Rate float64 `json:"rate"`
	// At is when that load is expected to start: now for load that is
	// expected at any time (recent bursts), the next occurrence's time for a
	// recurring pattern.
	At time.Time `json:"at"`
	// Pattern names what the forecast comes from: "every 20m", "daily" (a
	// recurring job or surge), or "recent bursts" (load that came
	// and went often enough lately to be expected within the span).
	Pattern string `json:"pattern"`
	// Confidence is the share of the pattern's recent occurrences that came
	// as expected, 0..1: Seen ÷ Of for a recurring pattern.
	Confidence float64 `json:"confidence"`
	// Seen and Of are a recurring pattern's record: of its last Of expected
	// times, Seen had an onset. Both 0 for recent bursts.
	Seen int `json:"seen"`
	Of   int `json:"of"`
	// Floor is the floor the policy sized for the forecast, FloorWait or
	// FloorUtilization, and SizedFor the arrival rate it sized for, msg/s
	// (the burst reserve included); "" and 0 when the forecast sized nothing
	// (report mode, or today's arrivals already at its rate).
	Floor    string  `json:"floor"`
	SizedFor float64 `json:"sized_for"`
	// Bet is what the policy pre-starts for a recurring occurrence not yet
	// come; nil when there is no such occurrence or the forecast sized
	// nothing. The time it is for is At, its record Seen of Of.
	Bet *Bet `json:"bet"`
}

// The floors a forecast can size (Forecast.Floor).
const (
	FloorWait        = "wait"
	FloorUtilization = "utilization"
)

// Bet is the policy's bet on a recurring occurrence that has not come yet:
// of the Need workers its floor asks for, it pre-starts the share whose
// expected cost is least (see docs/deciding.md, the bet).
type Bet struct {
	// Workers is the count the floor asks for now, today's share included,
	// and Need what it would ask for the whole occurrence: Workers ≤ Need.
	Workers int `json:"workers"`
	Need    int `json:"need"`
	// Chance is how likely the occurrence comes, 0..1.
	Chance float64 `json:"chance"`
	// LateIfMissed estimates the messages past the promise if the
	// occurrence came with no worker pre-started for it.
	LateIfMissed float64 `json:"late_if_missed"`
}

// MinuteHistory is a per-minute count series, oldest first, and the
// coarser weekly history before it.
type MinuteHistory struct {
	Start  time.Time // the first minute, UTC, truncated to the minute
	Counts []float64 // messages in each minute; NaN where CloudWatch had no datapoint
	// Weekly are the messages of each five minutes from WeeklyStart
	// (truncated to five minutes), NaN where CloudWatch had no datapoint:
	// the weeks before Start, for the forecast's weekly rhythms.
	WeeklyStart time.Time
	Weekly      []float64
}

// FleetHistory is a group's recent per-minute completions and in-flight
// count, oldest first, summed over its queues: what the fleet measurement
// learns from at a warm start (see internal/measure, Preload).
type FleetHistory struct {
	Start time.Time // the first minute, UTC, truncated to the minute
	// Deleted is each minute's NumberOfMessagesDeleted in msg/s (its Sum ÷
	// 60); InFlight the minute's average ApproximateNumberOfMessagesNotVisible.
	// NaN where the minute is unknown. The two have the same length.
	Deleted, InFlight []float64
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
	// MetricRequests is the PutMetricData requests made (up to 1,000
	// datums each), accepted or not; 0 under dry run, which calls nothing.
	MetricRequests int `json:"metric_requests"`
}
