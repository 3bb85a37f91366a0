// Package config is the checker's YAML configuration: its types, defaults,
// strict loading and whole-file validation.
package config

import "time"

// Config is the whole file. See config.example.yaml for every key, commented.
type Config struct {
	Interval time.Duration `yaml:"interval"` // how often every queue is sampled (1s or more)
	Listen   string        `yaml:"listen"`   // /metrics, /healthz, /readyz and the status page
	DryRun   bool          `yaml:"dry_run"`  // decide and export, change nothing in AWS
	Log      Log           `yaml:"log"`
	AWS      AWS           `yaml:"aws"`
	Metrics  Metrics       `yaml:"metrics"`
	Groups   []Group       `yaml:"groups"`
	// Coordination, when present, shares the groups among several checkers.
	Coordination *Coordination `yaml:"coordination"`
	// KEDA serves KEDA's external scaler; off unless keda.listen is set.
	KEDA KEDA `yaml:"keda"`
	// Debug holds the switches for looking inside a running checker.
	Debug Debug `yaml:"debug"`
}

// Debug holds the switches for looking inside a running checker; all off
// by default.
type Debug struct {
	// Pprof serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/ on the listen address. Off by default: a profile
	// shows the process's memory and stacks to whoever reaches the port.
	Pprof bool `yaml:"pprof"`
}

// Metrics chooses which Prometheus series the checker exports.
type Metrics struct {
	// PerQueue is true (every queue's series), false (none: group series
	// only), failed_only (only the series of queues whose last sample
	// failed) or auto (the default: true up to PerQueueAutoLimit queues,
	// failed_only beyond, where every queue's series cost more CPU per
	// scrape and memory than the rest of the checker).
	PerQueue PerQueue `yaml:"per_queue"`
}

// PerQueue is the metrics.per_queue switch: "true", "false", "failed_only"
// or "auto".
type PerQueue string

// The values of metrics.per_queue.
const (
	PerQueueAll        PerQueue = "true"
	PerQueueOff        PerQueue = "false"
	PerQueueFailedOnly PerQueue = "failed_only"
	PerQueueAuto       PerQueue = "auto"
)

// PerQueueAutoLimit is the most queues for which metrics.per_queue auto
// keeps every queue's series.
const PerQueueAutoLimit = 1000

// Resolve is the switch in force for a configuration of queues queues:
// auto is true up to PerQueueAutoLimit, failed_only beyond.
func (p PerQueue) Resolve(queues int) PerQueue {
	if p != PerQueueAuto {
		return p
	}
	if queues <= PerQueueAutoLimit {
		return PerQueueAll
	}
	return PerQueueFailedOnly
}

// Log chooses the logger's level (debug, info, warn, error) and format (json, console).
type Log struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
}

// AWS holds settings shared by every AWS client.
type AWS struct {
	// Region is the default region for fleets and metrics that name none; empty
	// means the SDK's own default (AWS_REGION, the profile, ...).
	Region string `yaml:"region"`
	// EndpointURL sends every service to one endpoint (emulators, tests);
	// empty means the SDK's own resolution, AWS_ENDPOINT_URL* included.
	EndpointURL string `yaml:"endpoint_url"`
	// CloudWatchProtocol is default | json | query; emulators such as moto need json.
	CloudWatchProtocol string `yaml:"cloudwatch_protocol"`
	// SQSClient is the GetQueueAttributes caller: direct (default), the
	// checker's own, without the SDK's per-call middleware, or sdk, the
	// SDK's SQS client.
	SQSClient string `yaml:"sqs_client"`
	// MaxAttempts is the SDK retryer's attempts per call, the first included.
	MaxAttempts int `yaml:"max_attempts"`
	// CallTimeout bounds one AWS call, retries included; 0 means 80 % of interval.
	CallTimeout time.Duration `yaml:"call_timeout"`
	// ConcurrencyPerRegion is the ceiling of the calls in flight to one
	// region's endpoint; within it the poller sizes each region's
	// concurrency from the latency it measures.
	ConcurrencyPerRegion int `yaml:"concurrency_per_region"`
	// SQSPricePerMillionRequests is the price of a million SQS requests, in
	// dollars, for the estimated monthly cost of sampling; default 0.40.
	SQSPricePerMillionRequests float64 `yaml:"sqs_price_per_million_requests"`
	// CloudWatchPricePerThousandMetrics is what GetMetricData costs per
	// 1,000 metrics requested, dollars; default 0.01.
	CloudWatchPricePerThousandMetrics float64 `yaml:"cloudwatch_price_per_thousand_metrics"`
	// PutMetricDataPricePerThousandRequests is what PutMetricData costs per
	// 1,000 requests, dollars; default 0.01.
	PutMetricDataPricePerThousandRequests float64 `yaml:"put_metric_data_price_per_thousand_requests"`
	// DynamoDBPricePerMillionWrites and DynamoDBPricePerMillionReads are
	// DynamoDB on-demand's prices of a million write and read request
	// units, dollars, for the lease table (coordination); defaults 0.625
	// and 0.125.
	DynamoDBPricePerMillionWrites float64 `yaml:"dynamodb_price_per_million_writes"`
	DynamoDBPricePerMillionReads  float64 `yaml:"dynamodb_price_per_million_reads"`
	// WorkerCostPerHour is what one worker costs an hour, dollars, for the
	// groups that set no fleet.worker_cost_per_hour; 0 (the default) is no
	// price: the checker then counts workers, not dollars.
	WorkerCostPerHour float64 `yaml:"worker_cost_per_hour"`
}

// Group is one worker fleet and the queues it drains.
type Group struct {
	Name      string    `yaml:"name"`
	Queues    []Queue   `yaml:"queues"`
	Count     Count     `yaml:"count"`
	OldestAge OldestAge `yaml:"oldest_age"`
	Workers   Workers   `yaml:"workers"`
	Target    Target    `yaml:"target"`
	Forecast  Forecast  `yaml:"forecast"`
	Fleet     Fleet     `yaml:"fleet"`
	Actions   Actions   `yaml:"actions"`
	// IdleSampleInterval is the longest a queue that has been empty
	// (visible, in flight and delayed all 0) goes unsampled; default 30s,
	// 0 samples every queue every interval.
	IdleSampleInterval time.Duration `yaml:"idle_sample_interval"`
}

// Queue is one SQS queue. Region is required when the URL names none.
type Queue struct {
	URL    string `yaml:"url"`
	Region string `yaml:"region"`
	// Shared lets a queue that an earlier group lists be counted by this
	// group as well: its messages are then counted in both backlogs, on
	// purpose (two fleets that both take from it).
	Shared bool `yaml:"shared"`
}

// Count says which messages besides the visible ones make up the backlog.
type Count struct {
	InFlight bool `yaml:"in_flight"` // default true
	Delayed  bool `yaml:"delayed"`   // default false
}

// OldestAge turns on reading ApproximateAgeOfOldestMessage (and the sent and
// deleted counts) from CloudWatch, once a minute.
type OldestAge struct {
	CloudWatch bool `yaml:"cloudwatch"`
	// StaleAfter is how old a CloudWatch reading may be, from the start of
	// its 1-minute period, and still be used; default 5m.
	StaleAfter time.Duration `yaml:"stale_after"`
}

// Workers describes one worker's throughput: ServiceTime and Concurrency, or
// a measured Throughput in completed msg/s per worker.
type Workers struct {
	ServiceTime time.Duration `yaml:"service_time"`
	Concurrency int           `yaml:"concurrency"` // default 1
	Throughput  float64       `yaml:"throughput"`
	// ServiceTimeCV is the coefficient of variation of one message's
	// service time (standard deviation ÷ mean), for the Erlang C wait
	// floor (Allen–Cunneen): unset, 1, exponential service.
	ServiceTimeCV *float64 `yaml:"service_time_cv"`
	// Learn is what the measured fleet does: act (size with the measured
	// per-worker throughput once it is trusted), report (measure and show
	// it, size with the configured one) or off. Default: act for the model
	// policy, report for backlog_per_worker. Measuring needs CloudWatch's
	// deleted count (oldest_age.cloudwatch: true).
	Learn string `yaml:"learn"`
}

// Target is the promise and the sizing policy.
type Target struct {
	Policy    string        `yaml:"policy"`     // model (default) | backlog_per_worker
	Latency   time.Duration `yaml:"latency"`    // how long a message may wait
	DrainTime time.Duration `yaml:"drain_time"` // default 15m
	// Utilization is the busy ceiling; unset, measured from the arrivals
	// (the busiest at which the last hour's would have kept the promise,
	// up to 0.9, with no more headroom than DefaultUtilization's).
	Utilization      *float64      `yaml:"utilization"`
	BurstReserve     float64       `yaml:"burst_reserve"`    // percent
	OverheadReserve  float64       `yaml:"overhead_reserve"` // percent
	SafetyWorkers    int           `yaml:"safety_workers"`
	Deadband         float64       `yaml:"deadband"`          // fraction, default 0.1
	MaxStepOut       int           `yaml:"max_step_out"`      // workers added per decision; 0 = no limit
	StaleAfter       time.Duration `yaml:"stale_after"`       // default 3 × interval
	ArrivalSmoothing time.Duration `yaml:"arrival_smoothing"` // EWMA time constant, default 1m
	LatencyQuantile  float64       `yaml:"latency_quantile"`  // share of messages that start within Latency, default 0.99
	// SLOWindow is the window of the promise's error budget: the share
	// LatencyQuantile is counted over it, and 1 − LatencyQuantile of its
	// messages may start late. Default 30d.
	SLOWindow Duration `yaml:"slo_window"`
}

// Forecast is how the model policy anticipates load: it forecasts the
// arrivals of the next start delay from recurring patterns and recent
// bursts in the group's per-minute arrival history, and starts workers for
// them before they arrive. The backlog_per_worker policy has no forecast.
type Forecast struct {
	// Enabled turns the forecast on; nil (the key absent) means on for the
	// model policy. An explicit true under backlog_per_worker is a problem.
	Enabled *bool `yaml:"enabled"`
	// Mode is act (the forecast sizes the fleet) or report (it is computed,
	// shown in the decision, its reasons, the metrics and the status page,
	// and changes no count). Default act.
	Mode string `yaml:"mode"`
	// History is how much per-minute arrival history the forecast keeps and
	// reads at start: 1h to 8d, default 8d.
	History Duration `yaml:"history"`
	// LateCost is what a message past the promise costs, in worker time, as
	// a multiple of the worker time serving it takes: it says how eagerly
	// workers are pre-started for recurring load that may not come, kept
	// warm between bursts and launched while a burst is on. 0: the default
	// (model.DefaultLateCost, 10).
	LateCost float64 `yaml:"late_cost"`
}

// Fleet is where the workers live and the bounds on their number.
type Fleet struct {
	AutoScalingGroup     *AutoScalingGroup `yaml:"autoscaling_group"`
	ECSService           *ECSService       `yaml:"ecs_service"`
	Min                  int               `yaml:"min"`
	Max                  int               `yaml:"max"`
	Cap                  int               `yaml:"cap"` // downstream ceiling; 0 = none
	StartDelay           time.Duration     `yaml:"start_delay"`
	ScaleInStabilization time.Duration     `yaml:"scale_in_stabilization"` // default 5m
	// FixedWorkers is the size of a fleet that is not read from AWS (workers
	// on machines of their own, a fleet another tool sizes): the per-worker
	// metrics are computed against it. 0 = none.
	FixedWorkers int `yaml:"fixed_workers"`
	// Paused holds the group: no scaling call, metrics still published.
	// The tag queue-checker:paused=true on the fleet does the same.
	Paused bool `yaml:"paused"`
	// ScaleIn false lets the group scale out only (default true). The tag
	// queue-checker:scale-in=false on the fleet does the same.
	ScaleIn bool `yaml:"scale_in"`
	// Pin holds the group at this count, within min and max; absent = none.
	// The tag queue-checker:pin=N on the fleet wins over it.
	Pin *int `yaml:"pin"`
	// Activation is the backlog of visible and delayed messages that wakes
	// a group at zero workers (min 0); default 1.
	Activation int `yaml:"activation"`
	// WorkerCostPerHour is what one worker of this fleet costs an hour,
	// dollars (an instance's or a task's price); absent means
	// aws.worker_cost_per_hour, 0 means no price for this group.
	WorkerCostPerHour *float64 `yaml:"worker_cost_per_hour"`
	// Kubernetes is a workload (Deployment, StatefulSet, or any kind with
	// a scale subresource) read and scaled through its scale subresource;
	// at most one of AutoScalingGroup, ECSService and Kubernetes.
	Kubernetes *Kubernetes `yaml:"kubernetes"`
}

// AutoScalingGroup names an EC2 Auto Scaling group.
type AutoScalingGroup struct {
	Name   string `yaml:"name"`
	Region string `yaml:"region"`
}

// ECSService names an ECS service.
type ECSService struct {
	Cluster string `yaml:"cluster"`
	Service string `yaml:"service"`
	Region  string `yaml:"region"`
}

// Actions says what the checker does with a decision.
type Actions struct {
	SetDesiredCapacity bool               `yaml:"set_desired_capacity"`
	CloudWatchMetrics  *CloudWatchMetrics `yaml:"cloudwatch_metrics"`
}

// CloudWatchMetrics publishes the group's metrics with dimension Group=<name>.
type CloudWatchMetrics struct {
	Namespace      string `yaml:"namespace"`
	Region         string `yaml:"region"`
	HighResolution bool   `yaml:"high_resolution"`
}
