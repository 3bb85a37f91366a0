package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/model"
)

// valid returns a valid configuration with one group that has a fleet.
func valid() Config {
	c := Default()
	g := DefaultGroup()
	g.Name = "jobs"
	g.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}}
	g.Workers.ServiceTime = 200 * time.Millisecond
	g.Target.Latency = 30 * time.Second
	g.Fleet.AutoScalingGroup = &AutoScalingGroup{Name: "jobs-workers"}
	g.Fleet.Min, g.Fleet.Max = 1, 10
	c.Groups = []Group{g}
	return c
}

// TestValidateRules changes one thing in a valid configuration and expects
// exactly the listed problems; an empty list means the change is valid (the
// boundary cases).
func TestValidateRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config, g *Group)
		want   []string
	}{
		{"valid as is", func(*Config, *Group) {}, nil},
		{"interval 1s", func(c *Config, _ *Group) { c.Interval = time.Second }, nil},
		{"interval under 1s", func(c *Config, _ *Group) { c.Interval = 999 * time.Millisecond },
			[]string{"interval: must be at least 1s, got 999ms"}},
		{"listen on every interface", func(c *Config, _ *Group) { c.Listen = ":9102" }, nil},
		{"listen IPv6", func(c *Config, _ *Group) { c.Listen = "[::1]:9102" }, nil},
		{"listen without port", func(c *Config, _ *Group) { c.Listen = "127.0.0.1" },
			[]string{`listen: must be host:port, such as 127.0.0.1:9102 (an empty host listens on every interface); got "127.0.0.1"`}},
		{"listen port out of range", func(c *Config, _ *Group) { c.Listen = "127.0.0.1:65536" },
			[]string{`listen: port must be a number from 0 to 65535 (0 picks a free port), got "65536"`}},
		{"listen port by name", func(c *Config, _ *Group) { c.Listen = "127.0.0.1:http" },
			[]string{`listen: port must be a number from 0 to 65535 (0 picks a free port), got "http"`}},
		{"log level empty", func(c *Config, _ *Group) { c.Log.Level = "" },
			[]string{`log.level: must be one of debug, info, warn, error; got ""`}},
		{"log format console", func(c *Config, _ *Group) { c.Log.Format = "console" }, nil},
		{"endpoint without host", func(c *Config, _ *Group) { c.AWS.EndpointURL = "http://" },
			[]string{`aws.endpoint_url: must be an http or https URL such as http://127.0.0.1:5000, got "http://"`}},
		{"endpoint https", func(c *Config, _ *Group) { c.AWS.EndpointURL = "https://vpce.example.com" }, nil},
		{"protocol query", func(c *Config, _ *Group) { c.AWS.CloudWatchProtocol = "query" }, nil},
		{"sqs client sdk", func(c *Config, _ *Group) { c.AWS.SQSClient = "sdk" }, nil},
		{"sqs client unknown", func(c *Config, _ *Group) { c.AWS.SQSClient = "fast" },
			[]string{`aws.sqs_client: must be one of direct, sdk; got "fast"`}},
		{"sqs client empty", func(c *Config, _ *Group) { c.AWS.SQSClient = "" },
			[]string{`aws.sqs_client: must be one of direct, sdk; got ""`}},
		{"per_queue false", func(c *Config, _ *Group) { c.Metrics.PerQueue = PerQueueOff }, nil},
		{"per_queue failed_only", func(c *Config, _ *Group) { c.Metrics.PerQueue = PerQueueFailedOnly }, nil},
		{"per_queue yes", func(c *Config, _ *Group) { c.Metrics.PerQueue = "yes" },
			[]string{`metrics.per_queue: must be one of auto, true, false, failed_only; got "yes"`}},
		{"free requests", func(c *Config, _ *Group) { c.AWS.SQSPricePerMillionRequests = 0 }, nil},
		{"negative price", func(c *Config, _ *Group) { c.AWS.SQSPricePerMillionRequests = -0.4 },
			[]string{`aws.sqs_price_per_million_requests: must be a number >= 0 (dollars per million requests), got -0.4`}},
		{"price NaN", func(c *Config, _ *Group) { c.AWS.SQSPricePerMillionRequests = math.NaN() },
			[]string{`aws.sqs_price_per_million_requests: must be a number >= 0 (dollars per million requests), got NaN`}},
		{"service time cv 0", func(_ *Config, g *Group) { g.Workers.ServiceTimeCV = ptr(0.0) }, nil},
		{"service time cv 2.5", func(_ *Config, g *Group) { g.Workers.ServiceTimeCV = ptr(2.5) }, nil},
		{"service time cv negative", func(_ *Config, g *Group) { g.Workers.ServiceTimeCV = ptr(-0.5) },
			[]string{`groups[0].workers.service_time_cv: must be between 0 (every message takes the same time) and 100 (standard deviation ÷ mean of the service time), got -0.5`}},
		{"service time cv NaN", func(_ *Config, g *Group) { g.Workers.ServiceTimeCV = ptr(math.NaN()) },
			[]string{`groups[0].workers.service_time_cv: must be between 0 (every message takes the same time) and 100 (standard deviation ÷ mean of the service time), got NaN`}},
		{"idle sampling off", func(_ *Config, g *Group) { g.IdleSampleInterval = 0 }, nil},
		{"idle sampling negative", func(_ *Config, g *Group) { g.IdleSampleInterval = -time.Second },
			[]string{`groups[0].idle_sample_interval: must be >= 0 (0 samples every queue every interval), got -1s`}},
		{"call timeout equal to interval", func(c *Config, _ *Group) { c.AWS.CallTimeout = c.Interval },
			[]string{"aws.call_timeout: must be shorter than interval (5s), got 5s"}},
		{"call timeout negative", func(c *Config, _ *Group) { c.AWS.CallTimeout = -time.Second },
			[]string{"aws.call_timeout: must be >= 0 (0 means 80% of interval), got -1s"}},
		{"no groups", func(c *Config, _ *Group) { c.Groups = nil },
			[]string{"groups: at least one group is required"}},
		{"name too long", func(_ *Config, g *Group) { g.Name = strings.Repeat("a", 256) },
			[]string{"groups[0].name: must be at most 255 characters, got 256"}},
		{"name at the limit", func(_ *Config, g *Group) { g.Name = strings.Repeat("a", 255) }, nil},
		{"name starting with a dot", func(_ *Config, g *Group) { g.Name = ".jobs" },
			[]string{`groups[0].name: must be letters, digits, '.', '_' and '-', starting with a letter or digit; got ".jobs"`}},
		{"no queues", func(_ *Config, g *Group) { g.Queues = nil },
			[]string{"groups[0].queues: at least one queue is required"}},
		{"queue region agrees with the URL", func(_ *Config, g *Group) { g.Queues[0].Region = "us-east-1" }, nil},
		{"queue region from aws.region", func(c *Config, g *Group) {
			c.AWS.Region = "eu-west-1"
			g.Queues[0].URL = "http://localhost:9324/000000000000/jobs"
		}, nil},
		{"same queue in two groups", func(c *Config, g *Group) {
			other := *g
			other.Name = "jobs-2"
			other.Fleet.AutoScalingGroup = nil
			c.Groups = append(c.Groups, other)
		}, []string{"groups[1].queues[0].url: the same queue as groups[0].queues[0]; another group counts it already (set shared: true on this entry to count it in both on purpose)"}},
		{"same queue in two groups, shared", func(c *Config, g *Group) {
			other := *g
			other.Name = "jobs-2"
			other.Fleet.AutoScalingGroup = nil
			other.Queues = []Queue{{URL: g.Queues[0].URL, Shared: true}}
			c.Groups = append(c.Groups, other)
		}, nil},
		{"same queue by region key and by URL", func(c *Config, g *Group) {
			c.AWS.Region = "us-east-1"
			g.Queues[0].URL = "http://localhost:9324/000000000000/jobs"
			other := *g
			other.Name = "jobs-2"
			other.Fleet.AutoScalingGroup = nil
			other.Queues = []Queue{{URL: "http://localhost:9324/000000000000/jobs", Region: "us-east-1"}}
			c.Groups = append(c.Groups, other)
		}, []string{"groups[1].queues[0].url: the same queue as groups[0].queues[0]; another group counts it already (set shared: true on this entry to count it in both on purpose)"}},
		{"two groups set the same Auto Scaling group", func(c *Config, g *Group) {
			g.Actions.SetDesiredCapacity = true
			other := *g
			other.Name = "jobs-2"
			other.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/other"}}
			other.Fleet.AutoScalingGroup = &AutoScalingGroup{Name: "jobs-workers"}
			c.Groups = append(c.Groups, other)
		}, []string{"groups[1].fleet.autoscaling_group: the same fleet as groups[0].fleet.autoscaling_group, which also acts on it (set_desired_capacity or cloudwatch_metrics); a fleet has one owner"}},
		{"one sets, one publishes for the same group via aws.region", func(c *Config, g *Group) {
			c.AWS.Region = "us-east-1"
			g.Actions.SetDesiredCapacity = true
			other := *g
			other.Name = "jobs-2"
			other.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/other"}}
			other.Fleet.AutoScalingGroup = &AutoScalingGroup{Name: "jobs-workers", Region: "us-east-1"}
			other.Actions = Actions{CloudWatchMetrics: &CloudWatchMetrics{Namespace: "QueueChecker"}}
			c.Groups = append(c.Groups, other)
		}, []string{"groups[1].fleet.autoscaling_group: the same fleet as groups[0].fleet.autoscaling_group, which also acts on it (set_desired_capacity or cloudwatch_metrics); a fleet has one owner"}},
		{"a second group only reads the fleet", func(c *Config, g *Group) {
			g.Actions.SetDesiredCapacity = true
			other := *g
			other.Name = "jobs-2"
			other.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/other"}}
			other.Actions = Actions{}
			c.Groups = append(c.Groups, other)
		}, nil},
		{"same group name in two regions", func(c *Config, g *Group) {
			g.Actions.SetDesiredCapacity = true
			g.Fleet.AutoScalingGroup = &AutoScalingGroup{Name: "w", Region: "us-east-1"}
			other := *g
			other.Name = "jobs-2"
			other.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/other"}}
			other.Fleet.AutoScalingGroup = &AutoScalingGroup{Name: "w", Region: "eu-west-1"}
			c.Groups = append(c.Groups, other)
		}, nil},
		{"ECS service by name and by ARN", func(c *Config, g *Group) {
			g.Actions.SetDesiredCapacity = true
			g.Fleet.AutoScalingGroup = nil
			g.Fleet.ECSService = &ECSService{Cluster: "c", Service: "s", Region: "us-east-1"}
			other := *g
			other.Name = "jobs-2"
			other.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/other"}}
			other.Fleet.ECSService = &ECSService{Cluster: "c", Service: "arn:aws:ecs:us-east-1:123456789012:service/c/s", Region: "us-east-1"}
			c.Groups = append(c.Groups, other)
		}, []string{"groups[1].fleet.ecs_service: the same fleet as groups[0].fleet.ecs_service, which also acts on it (set_desired_capacity or cloudwatch_metrics); a fleet has one owner"}},
		{"same name in two regions", func(_ *Config, g *Group) {
			g.Queues = append(g.Queues, Queue{URL: "https://sqs.eu-west-1.amazonaws.com/123456789012/jobs"})
		}, nil},
		{"same queue twice", func(_ *Config, g *Group) { g.Queues = append(g.Queues, g.Queues[0]) },
			[]string{"groups[0].queues[1].url: the same queue as groups[0].queues[0]; list a queue once"}},
		{"throughput instead of service time", func(_ *Config, g *Group) {
			g.Workers.ServiceTime, g.Workers.Throughput = 0, 2.4
		}, nil},
		{"neither service time nor throughput", func(_ *Config, g *Group) { g.Workers.ServiceTime = 0 },
			[]string{"groups[0].workers: set service_time (the time one message takes, such as 200ms) or throughput (messages per second per worker)"}},
		{"infinite throughput", func(_ *Config, g *Group) {
			g.Workers.ServiceTime, g.Workers.Throughput = 0, math.Inf(1)
		}, []string{"groups[0].workers.throughput: must be a number > 0 (messages per second per worker), got +Inf"}},
		{"NaN throughput", func(_ *Config, g *Group) {
			g.Workers.ServiceTime, g.Workers.Throughput = 0, math.NaN()
		}, []string{"groups[0].workers.throughput: must be a number > 0 (messages per second per worker), got NaN"}},
		{"latency missing", func(_ *Config, g *Group) { g.Target.Latency = 0 },
			[]string{"groups[0].target.latency: required: how long a message may wait, such as 30s"}},
		{"latency missing for backlog_per_worker", func(_ *Config, g *Group) {
			g.Target.Policy, g.Target.Latency = model.PolicyBacklogPerWorker, 0
		}, []string{"groups[0].target.latency: required: how long a message may wait, such as 30s"}},
		{"utilization 1", func(_ *Config, g *Group) { g.Target.Utilization = ptr(1.0) }, nil},
		{"utilization just above 1", func(_ *Config, g *Group) { g.Target.Utilization = ptr(1.0001) },
			[]string{"groups[0].target.utilization: must be a ratio in (0, 1], such as 0.8, or unset to measure it; got 1.0001"}},
		{"utilization NaN", func(_ *Config, g *Group) { g.Target.Utilization = ptr(math.NaN()) },
			[]string{"groups[0].target.utilization: must be a ratio in (0, 1], such as 0.8, or unset to measure it; got NaN"}},
		{"overhead reserve just under 100", func(_ *Config, g *Group) { g.Target.OverheadReserve = 99.9 }, nil},
		{"burst reserve above 100", func(_ *Config, g *Group) { g.Target.BurstReserve = 250 }, nil},
		{"burst reserve infinite", func(_ *Config, g *Group) { g.Target.BurstReserve = math.Inf(1) },
			[]string{"groups[0].target.burst_reserve: must be a percentage >= 0, got +Inf"}},
		{"deadband 0", func(_ *Config, g *Group) { g.Target.Deadband = 0 }, nil},
		{"deadband just under 1", func(_ *Config, g *Group) { g.Target.Deadband = 0.99 }, nil},
		{"stale after equal to interval", func(c *Config, g *Group) { g.Target.StaleAfter = c.Interval }, nil},
		{"stale after 0 means the default", func(_ *Config, g *Group) { g.Target.StaleAfter = 0 }, nil},
		{"stale after negative", func(_ *Config, g *Group) { g.Target.StaleAfter = -time.Second },
			[]string{"groups[0].target.stale_after: must be at least interval (5s), got -1s"}},
		{"latency quantile 1", func(_ *Config, g *Group) { g.Target.LatencyQuantile = 1 },
			[]string{"groups[0].target.latency_quantile: must be a ratio in (0, 1), such as 0.99; got 1"}},
		{"latency quantile 0.5", func(_ *Config, g *Group) { g.Target.LatencyQuantile = 0.5 }, nil},
		{"slo window 1h", func(_ *Config, g *Group) { g.Target.SLOWindow = Duration(time.Hour) }, nil},
		{"slo window 90d", func(_ *Config, g *Group) { g.Target.SLOWindow = Duration(90 * 24 * time.Hour) }, nil},
		{"slo window under 1h", func(_ *Config, g *Group) { g.Target.SLOWindow = Duration(59 * time.Minute) },
			[]string{"groups[0].target.slo_window: must be at least 1h (the error budget's window, such as 30d), got 59m0s"}},
		{"slo window 0", func(_ *Config, g *Group) { g.Target.SLOWindow = 0 },
			[]string{"groups[0].target.slo_window: must be at least 1h (the error budget's window, such as 30d), got 0s"}},
		{"slo window negative", func(_ *Config, g *Group) { g.Target.SLOWindow = Duration(-time.Hour) },
			[]string{"groups[0].target.slo_window: must be at least 1h (the error budget's window, such as 30d), got -1h0m0s"}},
		{"forecast history 1h", func(_ *Config, g *Group) { g.Forecast.History = Duration(time.Hour) }, nil},
		{"forecast history 8d", func(_ *Config, g *Group) { g.Forecast.History = Duration(8 * 24 * time.Hour) }, nil},
		{"forecast history under 1h", func(_ *Config, g *Group) { g.Forecast.History = Duration(59 * time.Minute) },
			[]string{"groups[0].forecast.history: must be from 1h to 8d, got 59m0s"}},
		{"forecast history over 8d", func(_ *Config, g *Group) { g.Forecast.History = Duration(8*24*time.Hour + time.Minute) },
			[]string{"groups[0].forecast.history: must be from 1h to 8d, got 192h1m0s"}},
		{"forecast mode report", func(_ *Config, g *Group) { g.Forecast.Mode = ForecastReport }, nil},
		{"forecast mode unknown", func(_ *Config, g *Group) { g.Forecast.Mode = "dry" },
			[]string{`groups[0].forecast.mode: must be one of act, report; got "dry"`}},
		{"forecast off", func(_ *Config, g *Group) { g.Forecast.Enabled = ptr(false) }, nil},
		{"forecast off under backlog_per_worker", func(_ *Config, g *Group) {
			g.Target.Policy, g.Forecast.Enabled = model.PolicyBacklogPerWorker, ptr(false)
		}, nil},
		{"forecast left to its default under backlog_per_worker", func(_ *Config, g *Group) {
			g.Target.Policy = model.PolicyBacklogPerWorker
		}, nil},
		{"forecast enabled under backlog_per_worker", func(_ *Config, g *Group) {
			g.Target.Policy, g.Forecast.Enabled = model.PolicyBacklogPerWorker, ptr(true)
		}, []string{"groups[0].forecast.enabled: the backlog_per_worker policy has no forecast (it sizes on the backlog alone); remove the key, set it to false, or use target.policy model"}},
		{"CloudWatch readings stale after 1m", func(_ *Config, g *Group) { g.OldestAge.StaleAfter = time.Minute }, nil},
		{"CloudWatch readings stale under 1m", func(_ *Config, g *Group) { g.OldestAge.StaleAfter = 59 * time.Second },
			[]string{"groups[0].oldest_age.stale_after: must be at least 1m, the period of a CloudWatch reading; got 59s"}},
		{"max equal to min", func(_ *Config, g *Group) { g.Fleet.Min, g.Fleet.Max = 4, 4 }, nil},
		{"max below min", func(_ *Config, g *Group) { g.Fleet.Min, g.Fleet.Max = 3, 2 },
			[]string{"groups[0].fleet.max: must be >= min (3)"}},
		{"max missing", func(_ *Config, g *Group) { g.Fleet.Min, g.Fleet.Max = 0, 0 },
			[]string{"groups[0].fleet.max: required: the most workers the group may have (at least 1)"}},
		{"cap equal to min", func(_ *Config, g *Group) { g.Fleet.Min, g.Fleet.Cap = 2, 2 }, nil},
		{"cap above max", func(_ *Config, g *Group) { g.Fleet.Cap = 100 }, nil},
		{"ECS service", func(_ *Config, g *Group) {
			g.Fleet.AutoScalingGroup = nil
			g.Fleet.ECSService = &ECSService{Cluster: "c", Service: "s", Region: "eu-west-1"}
		}, nil},
		{"set desired capacity with a fleet", func(_ *Config, g *Group) { g.Actions.SetDesiredCapacity = true }, nil},
		{"set desired capacity without a fleet", func(_ *Config, g *Group) {
			g.Fleet.AutoScalingGroup = nil
			g.Actions.SetDesiredCapacity = true
		}, []string{"groups[0].actions.set_desired_capacity: needs fleet.autoscaling_group, fleet.ecs_service or fleet.kubernetes to act on"}},
		{"no fleet and no metrics is allowed", func(_ *Config, g *Group) { g.Fleet.AutoScalingGroup = nil }, nil},
		{"metrics from a fleet that is only read", func(_ *Config, g *Group) {
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: DefaultNamespace}
		}, nil},
		{"metrics from a fixed fleet", func(_ *Config, g *Group) {
			g.Fleet.AutoScalingGroup, g.Fleet.FixedWorkers = nil, 4
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: DefaultNamespace}
		}, nil},
		{"metrics without workers to divide by", func(_ *Config, g *Group) {
			g.Fleet.AutoScalingGroup = nil
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: DefaultNamespace}
		}, []string{"groups[0].actions.cloudwatch_metrics: needs the workers it divides by: name the fleet (fleet.autoscaling_group, fleet.ecs_service or fleet.kubernetes; set_desired_capacity: false reads it only) or set fleet.fixed_workers"}},
		{"fixed workers and a fleet", func(_ *Config, g *Group) { g.Fleet.FixedWorkers = 2 },
			[]string{"groups[0].fleet.fixed_workers: set fixed_workers or a fleet to read (autoscaling_group, ecs_service, kubernetes), not both"}},
		{"pin at min", func(_ *Config, g *Group) { n := 1; g.Fleet.Pin = &n }, nil},
		{"pin 0 with min 0", func(_ *Config, g *Group) { n := 0; g.Fleet.Min, g.Fleet.Pin = 0, &n }, nil},
		{"pin above max", func(_ *Config, g *Group) { n := 11; g.Fleet.Pin = &n },
			[]string{"groups[0].fleet.pin: must be within min and max (1 to 10), got 11"}},
		{"pin negative", func(_ *Config, g *Group) { n := -1; g.Fleet.Pin = &n },
			[]string{"groups[0].fleet.pin: must be a whole number of workers >= 0, got -1"}},
		{"paused, scale-in off", func(_ *Config, g *Group) { g.Fleet.Paused, g.Fleet.ScaleIn = true, false }, nil},
		{"activation 0", func(_ *Config, g *Group) { g.Fleet.Activation = 0 },
			[]string{"groups[0].fleet.activation: must be at least 1 (visible or delayed messages that wake a group at zero), got 0"}},
		{"activation 50 at min 0", func(_ *Config, g *Group) { g.Fleet.Min, g.Fleet.Activation = 0, 50 }, nil},
		{"fixed workers negative", func(_ *Config, g *Group) { g.Fleet.AutoScalingGroup, g.Fleet.FixedWorkers = nil, -1 },
			[]string{"groups[0].fleet.fixed_workers: must be >= 0 (0 means none), got -1"}},
		{"namespace with allowed punctuation", func(_ *Config, g *Group) {
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: "Team/Queue Checker:prod#1.x_y-z"}
		}, nil},
		{"namespace too long", func(_ *Config, g *Group) {
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: strings.Repeat("n", 256)}
		}, []string{fmt.Sprintf("groups[0].actions.cloudwatch_metrics.namespace: must be at most 255 letters, digits, spaces and . - _ / # : characters; got %q", strings.Repeat("n", 256))}},
		{"problems in two groups", func(c *Config, g *Group) {
			other := *g
			other.Name = "other"
			other.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/other"}}
			other.Fleet.Max = -1
			g.Target.Utilization = ptr(0.0)
			c.Groups = append(c.Groups, other)
		}, []string{
			"groups[0].target.utilization: must be a ratio in (0, 1], such as 0.8, or unset to measure it; got 0",
			"groups[1].fleet.max: must be at least 1, got -1",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tt.change(&c, &c.Groups[0])
			err := c.Validate()
			var got []string
			for _, p := range Problems(err) {
				got = append(got, p.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems differ\ngot:  %q\nwant: %q", got, tt.want)
			}
			if len(Problems(err)) == 0 && err != nil {
				t.Errorf("an error without problems: %v", err)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := Default()
	check(t, "interval", c.Interval, 5*time.Second)
	check(t, "listen", c.Listen, "127.0.0.1:9102")
	check(t, "log", c.Log, Log{Level: "info", Format: "json"})
	check(t, "aws", c.AWS, AWS{CloudWatchProtocol: "default", SQSClient: "direct", MaxAttempts: 3, ConcurrencyPerRegion: 128,
		SQSPricePerMillionRequests: 0.40, CloudWatchPricePerThousandMetrics: 0.01, PutMetricDataPricePerThousandRequests: 0.01,
		DynamoDBPricePerMillionWrites: 0.625, DynamoDBPricePerMillionReads: 0.125})
	check(t, "metrics", c.Metrics, Metrics{PerQueue: "auto"})
	check(t, "dry_run", c.DryRun, false)
	if c.Groups != nil {
		t.Errorf("groups = %v, want none", c.Groups)
	}

	g := DefaultGroup()
	check(t, "count", g.Count, Count{InFlight: true, Delayed: false})
	check(t, "workers", g.Workers, Workers{Concurrency: 1})
	check(t, "target", g.Target, Target{
		Policy: "model", DrainTime: 15 * time.Minute,
		Deadband: 0.1, ArrivalSmoothing: time.Minute,
		LatencyQuantile: 0.99, SLOWindow: Duration(30 * 24 * time.Hour),
	})
	check(t, "forecast", g.Forecast, Forecast{Mode: "act", History: Duration(8 * 24 * time.Hour)})
	check(t, "oldest_age", g.OldestAge, OldestAge{CloudWatch: false, StaleAfter: 5 * time.Minute})
	check(t, "fleet.scale_in_stabilization", g.Fleet.ScaleInStabilization, 5*time.Minute)
	check(t, "fleet.scale_in", g.Fleet.ScaleIn, true)
	check(t, "fleet.activation", g.Fleet.Activation, 1)
	check(t, "fleet.paused", g.Fleet.Paused, false)
	if g.Fleet.Pin != nil {
		t.Errorf("fleet.pin = %d, want none", *g.Fleet.Pin)
	}
	check(t, "fleet.max", g.Fleet.Max, 0)
	check(t, "actions.set_desired_capacity", g.Actions.SetDesiredCapacity, false)
	check(t, "idle_sample_interval", g.IdleSampleInterval, 30*time.Second)
	if g.Fleet.AutoScalingGroup != nil || g.Fleet.ECSService != nil || g.Actions.CloudWatchMetrics != nil {
		t.Errorf("default group has blocks: %+v", g)
	}
	check(t, "stale_after of a 2s interval", g.Target.StaleAfterFor(2*time.Second), 6*time.Second)
	check(t, "call timeout of a 5s interval", c.CallTimeout(), 4*time.Second)
}

func TestCloudWatchProtocolsMatchAWSClient(t *testing.T) {
	t.Parallel()
	want := []string{awsclient.ProtocolDefault, awsclient.ProtocolJSON, awsclient.ProtocolQuery}
	if !reflect.DeepEqual(cloudWatchProtocols, want) {
		t.Errorf("accepted protocols %q, the client knows %q", cloudWatchProtocols, want)
	}
	check(t, "default", DefaultCloudWatchProtocol, awsclient.ProtocolDefault)
}

func TestSQSClientsMatchAWSClient(t *testing.T) {
	t.Parallel()
	want := []string{awsclient.SQSClientDirect, awsclient.SQSClientSDK}
	if !reflect.DeepEqual(sqsClients, want) {
		t.Errorf("accepted SQS clients %q, the client knows %q", sqsClients, want)
	}
	check(t, "default", DefaultSQSClient, awsclient.SQSClientDirect)
}

func ptr[T any](v T) *T { return &v }

func TestNotes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(c *Config, g *Group)
		want   []string
	}{
		{"a fleet that is scaled", func(_ *Config, g *Group) { g.Actions.SetDesiredCapacity = true }, nil},
		{"a fleet only read", func(*Config, *Group) {},
			[]string{"groups[0].actions: neither set_desired_capacity nor cloudwatch_metrics: the fleet is read, never scaled (KEDA scales Kubernetes workloads only)"}},
		{"observed only", func(_ *Config, g *Group) { g.Fleet.AutoScalingGroup = nil },
			[]string{"groups[0]: no fleet, no cloudwatch_metrics and no keda.listen: the group is only observed (Prometheus, logs, `checker once`)"}},
		{"an Auto Scaling group is not KEDA's", func(c *Config, _ *Group) { c.KEDA.Listen = "127.0.0.1:9103" },
			[]string{"groups[0].actions: neither set_desired_capacity nor cloudwatch_metrics: the fleet is read, never scaled (KEDA scales Kubernetes workloads only)"}},
		{"a workload only read", func(_ *Config, g *Group) {
			g.Fleet.AutoScalingGroup = nil
			g.Fleet.Kubernetes = &Kubernetes{Namespace: "workers", Deployment: "jobs"}
		}, []string{"groups[0].actions: neither set_desired_capacity, cloudwatch_metrics nor keda.listen: the workload is read, never scaled"}},
		{"a workload KEDA scales", func(c *Config, g *Group) {
			c.KEDA.Listen = "127.0.0.1:9103"
			g.Fleet.AutoScalingGroup = nil
			g.Fleet.Kubernetes = &Kubernetes{Namespace: "workers", Deployment: "jobs"}
		}, nil},
		{"no fleet, KEDA's answer only", func(c *Config, g *Group) {
			c.KEDA.Listen = "127.0.0.1:9103"
			g.Fleet.AutoScalingGroup = nil
		}, nil},
		{"a target-tracking policy follows the metrics", func(_ *Config, g *Group) {
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: DefaultNamespace}
		}, nil},
		{"metrics only", func(_ *Config, g *Group) {
			g.Fleet.AutoScalingGroup = nil
			g.Fleet.FixedWorkers = 3
			g.Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: DefaultNamespace}
		}, nil},
		{"every interface, cap above max", func(c *Config, g *Group) {
			c.Listen = "0.0.0.0:9102"
			g.Actions.SetDesiredCapacity = true
			g.Fleet.Cap = 11
		}, []string{
			"listen: listens on every interface; metrics and the status page are open to the network",
			"groups[0].fleet.cap: above max: the cap never binds",
		}},
		{"a fleet measured without CloudWatch", func(_ *Config, g *Group) {
			g.Actions.SetDesiredCapacity = true
			g.OldestAge.CloudWatch = false
		}, []string{"groups[0].workers: the fleet is not measured: learning the service time needs CloudWatch's deleted count (oldest_age.cloudwatch: true); sizing trusts the configured value"}},
		{"learning off needs no CloudWatch", func(_ *Config, g *Group) {
			g.Actions.SetDesiredCapacity = true
			g.OldestAge.CloudWatch = false
			g.Workers.Learn = "off"
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			c.Groups[0].OldestAge.CloudWatch = true
			tt.change(&c, &c.Groups[0])
			if err := c.Validate(); err != nil {
				t.Fatalf("the configuration is invalid: %v", err)
			}
			var got []string
			for _, n := range c.Notes() {
				got = append(got, n.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("notes differ\ngot:  %q\nwant: %q", got, tt.want)
			}
		})
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	a := &FieldError{Path: "interval", Msg: "a"}
	b := &FieldError{Path: "listen", Msg: "b", Line: 3}
	tests := []struct {
		name string
		err  error
		want []*FieldError
	}{
		{"nil", nil, nil},
		{"plain error", errors.New("x"), nil},
		{"one", a, []*FieldError{a}},
		{"joined", errors.Join(a, b), []*FieldError{a, b}},
		{"wrapped join", fmt.Errorf("load: %w", errors.Join(a, errors.New("x"), b)), []*FieldError{a, b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Problems(tt.err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Problems = %v, want %v", got, tt.want)
			}
		})
	}
	check(t, "with a line", b.Error(), "listen: b (line 3)")
	check(t, "the document", (&FieldError{Msg: "m"}).Error(), "(document): m")
}

// FuzzParse feeds Parse arbitrary documents: it must never panic, and what it
// accepts must be valid.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "groups: []", "interval: 5s\n", "groups: [~]", "&a [*a]", "a: &a {<<: *a}",
		"groups:\n  - &g {name: a, <<: *g}\n",
	} {
		f.Add([]byte(seed))
	}
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			return
		}
		if verr := c.Validate(); verr != nil {
			t.Fatalf("Parse accepted a configuration that Validate rejects: %v", verr)
		}
	})
}

// A group's worker price: its own, else aws.worker_cost_per_hour; an
// explicit 0 is no price for that group alone.
func TestWorkerCostPerHour(t *testing.T) {
	t.Parallel()
	c, err := Load("testdata/prices.ok.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{0.0416, 0.17, 0} {
		if got := c.WorkerCostPerHour(c.Groups[i]); got != want {
			t.Errorf("%s: %v, want %v", c.Groups[i].Name, got, want)
		}
	}
}
