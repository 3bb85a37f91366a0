package config

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Defaults of the keys that have one. Keys not listed default to the zero
// value: false, 0 (none, no limit) or empty (the SDK's own choice).
const (
	DefaultInterval             = 5 * time.Second
	DefaultListen               = "127.0.0.1:9102"
	DefaultLogLevel             = "info"
	DefaultLogFormat            = "json"
	DefaultCloudWatchProtocol   = "default"
	DefaultSQSClient            = "direct"
	DefaultMaxAttempts          = 3
	DefaultConcurrencyPerRegion = 128
	// DefaultSQSPricePerMillion is SQS's public price of a million standard
	// requests in us-east-1, beyond the free tier (aws.amazon.com/sqs/pricing).
	DefaultSQSPricePerMillion = 0.40
	// DefaultCloudWatchPricePerThousandMetrics, DefaultPutMetricDataPrice-
	// PerThousand and the DynamoDB on-demand prices are us-east-1 list
	// prices too (docs/cost.md says when they were read).
	DefaultCloudWatchPricePerThousandMetrics = 0.01
	DefaultPutMetricDataPricePerThousand     = 0.01
	DefaultDynamoDBPricePerMillionWrites     = 0.625
	DefaultDynamoDBPricePerMillionReads      = 0.125
	DefaultIdleSampleInterval                = 30 * time.Second
	DefaultPerQueue                          = PerQueueAuto
	DefaultConcurrency                       = model.DefaultConcurrency
	DefaultPolicy                            = model.PolicyModel
	DefaultDrainTime                         = model.DefaultDrainTime
	DefaultUtilization                       = model.DefaultUtilization
	DefaultDeadband                          = model.DefaultDeadband
	DefaultArrivalSmoothing                  = model.DefaultArrivalSmoothing
	DefaultScaleInStabilization              = model.DefaultScaleInStabilization
	DefaultLatencyQuantile                   = model.DefaultLatencyQuantile
	DefaultForecastMode                      = ForecastAct
	DefaultSLOWindow                         = Duration(model.DefaultSLOWindow)
	DefaultForecastHistory                   = Duration(model.DefaultForecastHistory)
	DefaultMetricStaleAfter                  = model.DefaultMetricStaleAfter
	DefaultActivation                        = model.DefaultActivation
	// DefaultStaleAfterIntervals is target.stale_after, in intervals, when
	// the key is absent or 0.
	DefaultStaleAfterIntervals = model.StaleIntervals
	// DefaultNamespace is actions.cloudwatch_metrics.namespace when the block
	// is present without one.
	DefaultNamespace = "QueueChecker"
)

// Default returns the configuration of an empty file: every top-level
// default filled, no groups.
func Default() Config {
	return Config{
		Interval: DefaultInterval,
		Listen:   DefaultListen,
		Log:      Log{Level: DefaultLogLevel, Format: DefaultLogFormat},
		AWS: AWS{
			CloudWatchProtocol:   DefaultCloudWatchProtocol,
			SQSClient:            DefaultSQSClient,
			MaxAttempts:          DefaultMaxAttempts,
			ConcurrencyPerRegion: DefaultConcurrencyPerRegion,

			SQSPricePerMillionRequests: DefaultSQSPricePerMillion,

			CloudWatchPricePerThousandMetrics:     DefaultCloudWatchPricePerThousandMetrics,
			PutMetricDataPricePerThousandRequests: DefaultPutMetricDataPricePerThousand,
			DynamoDBPricePerMillionWrites:         DefaultDynamoDBPricePerMillionWrites,
			DynamoDBPricePerMillionReads:          DefaultDynamoDBPricePerMillionReads,
		},
		Metrics: Metrics{PerQueue: DefaultPerQueue},
	}
}

// DefaultGroup returns a group with every default filled: what each entry of
// groups is decoded over. It has no name, queues, throughput, latency or max,
// which a valid group must set. Target.StaleAfter is 0, meaning 3 × interval,
// because the interval is not known here.
func DefaultGroup() Group {
	return Group{
		Count:     Count{InFlight: true},
		OldestAge: OldestAge{StaleAfter: DefaultMetricStaleAfter},
		Workers:   Workers{Concurrency: DefaultConcurrency},
		Target: Target{
			Policy:           DefaultPolicy,
			DrainTime:        DefaultDrainTime,
			Deadband:         DefaultDeadband,
			ArrivalSmoothing: DefaultArrivalSmoothing,
			LatencyQuantile:  DefaultLatencyQuantile,
			SLOWindow:        DefaultSLOWindow,
		},
		Forecast: Forecast{Mode: DefaultForecastMode, History: DefaultForecastHistory},
		Fleet:    Fleet{ScaleInStabilization: DefaultScaleInStabilization, ScaleIn: true, Activation: DefaultActivation},

		IdleSampleInterval: DefaultIdleSampleInterval,
	}
}

// defaultCloudWatchMetrics is what a present cloudwatch_metrics block is
// decoded over.
func defaultCloudWatchMetrics() CloudWatchMetrics {
	return CloudWatchMetrics{Namespace: DefaultNamespace}
}

// StaleAfterFor returns t.StaleAfter, or its default of 3 × interval
// (model.StaleAfter) when 0.
func (t Target) StaleAfterFor(interval time.Duration) time.Duration {
	if t.StaleAfter > 0 {
		return t.StaleAfter
	}
	return model.StaleAfter(interval)
}

// CallTimeout is the deadline of one AWS call, retries included:
// aws.call_timeout, or 80 % of the interval when that is 0.
func (c Config) CallTimeout() time.Duration {
	if c.AWS.CallTimeout > 0 {
		return c.AWS.CallTimeout
	}
	return c.Interval * 4 / 5
}

// WorkerCostPerHour is group g's price of a worker-hour, dollars:
// fleet.worker_cost_per_hour when set, else aws.worker_cost_per_hour; 0
// means no price.
func (c Config) WorkerCostPerHour(g Group) float64 {
	if g.Fleet.WorkerCostPerHour != nil {
		return *g.Fleet.WorkerCostPerHour
	}
	return c.AWS.WorkerCostPerHour
}

// MinSLOWindow is the shortest target.slo_window: the shipped alerts read
// the error budget's burn over windows of up to 3 days, and an hour is the
// shortest window over which a share of messages means anything.
const MinSLOWindow = time.Hour
