package config

import (
	"cmp"
	"math"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// Accepted values of the keys that take one of a few words.
var (
	logLevels           = []string{"debug", "info", "warn", "error"}
	logFormats          = []string{"json", "console"}
	cloudWatchProtocols = []string{"default", "json", "query"} // as internal/awsclient names them
	sqsClients          = []string{"direct", "sdk"}            // as internal/awsclient names them
	policies            = []string{model.PolicyModel, model.PolicyBacklogPerWorker}
	learnModes          = []string{model.LearnAct, model.LearnReport, model.LearnOff}
	perQueueValues      = []string{string(PerQueueAuto), string(PerQueueAll), string(PerQueueOff), string(PerQueueFailedOnly)}
)

const (
	// maxGroupNameLen bounds a group's name, which is a CloudWatch dimension
	// value, a Prometheus label value and a log field.
	maxGroupNameLen = 255
	// maxNamespaceLen is CloudWatch's limit on a namespace.
	maxNamespaceLen = 255
)

var (
	// groupNameRE keeps group names plain: safe as a CloudWatch dimension
	// value, a Prometheus label value, a log field and a URL path segment.
	groupNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	// regionRE is the shape of a region name (us-east-1, eu-central-2,
	// us-gov-west-1): lower-case words and digits joined by hyphens. A name
	// of that shape must also match one of the AWS partitions' region
	// patterns (regions.go): patterns, not a list, so new regions pass.
	regionRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// namespaceRE is CloudWatch's character set for namespaces.
	namespaceRE = regexp.MustCompile(`^[A-Za-z0-9.\-_/#: ]+$`)
)

// Validate reports every problem of the configuration at once: *FieldErrors
// joined with errors.Join, each starting with the YAML path of the key at
// fault and saying what is expected. It expects defaults to be filled (as
// Load does); a zero value where a default exists is judged as written.
func (c Config) Validate() error {
	var p problems
	if c.Interval < time.Second {
		p.add("interval", "must be at least 1s, got %s", c.Interval)
	}
	validateListen(&p, c.Listen)
	oneOf(&p, "log.level", c.Log.Level, logLevels)
	oneOf(&p, "log.format", c.Log.Format, logFormats)
	c.AWS.validate(&p, c.Interval)
	c.Coordination.validate(&p, c.Interval)
	c.KEDA.validate(&p)
	oneOf(&p, "metrics.per_queue", string(c.Metrics.PerQueue), perQueueValues)

	if len(c.Groups) == 0 {
		p.add("groups", "at least one group is required")
	}
	firstName := map[string]int{}
	for i, g := range c.Groups {
		path := indexPath("groups", i)
		if first, dup := firstName[g.Name]; dup && g.Name != "" {
			p.add(joinPath(path, "name"), "%q is already the name of groups[%d]; names must be unique", g.Name, first)
		} else {
			firstName[g.Name] = i
		}
		g.validate(&p, path, c)
	}
	c.validateOwners(&p)
	return p.err()
}

func validateListen(p *problems, listen string) {
	const want = "must be host:port, such as 127.0.0.1:9102 (an empty host listens on every interface)"
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		p.add("listen", "%s; got %q", want, listen)
		return
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add("listen", "port must be a number from 0 to 65535 (0 picks a free port), got %q", port)
	}
}

func (a AWS) validate(p *problems, interval time.Duration) {
	validateRegion(p, "aws.region", a.Region)
	if a.EndpointURL != "" {
		u, err := url.Parse(a.EndpointURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p.add("aws.endpoint_url", "must be an http or https URL such as http://127.0.0.1:5000, got %q", a.EndpointURL)
		}
	}
	oneOf(p, "aws.cloudwatch_protocol", a.CloudWatchProtocol, cloudWatchProtocols)
	oneOf(p, "aws.sqs_client", a.SQSClient, sqsClients)
	if a.MaxAttempts < 1 {
		p.add("aws.max_attempts", "must be at least 1 (the first attempt counts), got %d", a.MaxAttempts)
	}
	switch {
	case a.CallTimeout < 0:
		p.add("aws.call_timeout", "must be >= 0 (0 means 80%% of interval), got %s", a.CallTimeout)
	case a.CallTimeout > 0 && a.CallTimeout >= interval && interval > 0:
		p.add("aws.call_timeout", "must be shorter than interval (%s), got %s", interval, a.CallTimeout)
	}
	if a.ConcurrencyPerRegion < 1 {
		p.add("aws.concurrency_per_region", "must be at least 1, got %d", a.ConcurrencyPerRegion)
	}
	if !(a.SQSPricePerMillionRequests >= 0 && finite(a.SQSPricePerMillionRequests)) {
		p.add("aws.sqs_price_per_million_requests", "must be a number >= 0 (dollars per million requests), got %v", a.SQSPricePerMillionRequests)
	}
	for _, price := range []struct {
		key, unit string
		v         float64
	}{
		{"cloudwatch_price_per_thousand_metrics", "dollars per 1,000 metrics requested", a.CloudWatchPricePerThousandMetrics},
		{"put_metric_data_price_per_thousand_requests", "dollars per 1,000 requests", a.PutMetricDataPricePerThousandRequests},
		{"dynamodb_price_per_million_writes", "dollars per million write request units", a.DynamoDBPricePerMillionWrites},
		{"dynamodb_price_per_million_reads", "dollars per million read request units", a.DynamoDBPricePerMillionReads},
	} {
		if !(price.v >= 0 && finite(price.v)) {
			p.add("aws."+price.key, "must be a number >= 0 (%s), got %v", price.unit, price.v)
		}
	}
	validateWorkerCost(p, "aws.worker_cost_per_hour", a.WorkerCostPerHour)
}

func (g Group) validate(p *problems, path string, c Config) {
	name := joinPath(path, "name")
	switch {
	case g.Name == "":
		p.add(name, "required: a name for the group, such as thumbnails")
	case len(g.Name) > maxGroupNameLen:
		p.add(name, "must be at most %d characters, got %d", maxGroupNameLen, len(g.Name))
	case !groupNameRE.MatchString(g.Name):
		p.add(name, "must be letters, digits, '.', '_' and '-', starting with a letter or digit; got %q", g.Name)
	}

	g.validateQueues(p, path, c.AWS.Region)
	g.OldestAge.validate(p, joinPath(path, "oldest_age"))
	g.Workers.validate(p, joinPath(path, "workers"))
	g.Target.validate(p, joinPath(path, "target"), c.Interval)
	g.Forecast.validate(p, joinPath(path, "forecast"), g.Target.Policy)
	g.Fleet.validate(p, joinPath(path, "fleet"))
	g.Actions.validate(p, joinPath(path, "actions"), g.Fleet)
	if g.IdleSampleInterval < 0 {
		p.add(joinPath(path, "idle_sample_interval"), "must be >= 0 (0 samples every queue every interval), got %s", g.IdleSampleInterval)
	}
}

func (g Group) validateQueues(p *problems, path string, defaultRegion string) {
	path = joinPath(path, "queues")
	if len(g.Queues) == 0 {
		p.add(path, "at least one queue is required")
		return
	}
	first := map[string]int{} // region/account/name -> index
	for i, q := range g.Queues {
		qp := indexPath(path, i)
		if q.URL == "" {
			p.add(joinPath(qp, "url"), "required: the queue URL, such as https://sqs.us-east-1.amazonaws.com/123456789012/jobs")
			validateRegion(p, joinPath(qp, "region"), q.Region)
			continue
		}
		_, urlRegion, err := sqsurl.Parse(q.URL)
		if err != nil {
			p.add(joinPath(qp, "url"), "must be an SQS queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/jobs: %v", err)
			validateRegion(p, joinPath(qp, "region"), q.Region)
			continue
		}
		rp := joinPath(qp, "region")
		if urlRegion != "" {
			if msg := regionProblem(urlRegion); msg != "" {
				p.add(joinPath(qp, "url"), "the region in the URL: %s", msg)
			}
		}
		switch {
		case q.Region != "" && urlRegion != "" && q.Region != urlRegion:
			p.add(rp, "must match the region in the URL (%s), got %q", urlRegion, q.Region)
		case q.Region != "" && q.Region != urlRegion: // the URL's is checked above
			validateRegion(p, rp, q.Region)
		case urlRegion == "" && defaultRegion == "":
			p.add(rp, "required: the URL names no region and aws.region is not set")
		}
		region := cmp.Or(urlRegion, q.Region, defaultRegion)
		key := region + "/" + accountAndName(q.URL)
		if j, dup := first[key]; dup {
			p.add(joinPath(qp, "url"), "the same queue as %s; list a queue once", indexPath(path, j))
		} else {
			first[key] = i
		}
	}
}

// accountAndName returns the "<account>/<name>" path of a queue URL that
// sqsurl.Parse accepted.
func accountAndName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.Trim(u.Path, "/")
}

func (w Workers) validate(p *problems, path string) {
	st, tp := w.ServiceTime != 0, w.Throughput != 0
	switch {
	case !st && !tp:
		p.add(path, "set service_time (the time one message takes, such as 200ms) or throughput (messages per second per worker)")
	case st && tp:
		p.add(path, "set service_time or throughput, not both")
	}
	if st && w.ServiceTime < 0 {
		p.add(joinPath(path, "service_time"), "must be > 0, got %s", w.ServiceTime)
	}
	if tp && !(w.Throughput > 0 && finite(w.Throughput)) {
		p.add(joinPath(path, "throughput"), "must be a number > 0 (messages per second per worker), got %v", w.Throughput)
	}
	if w.Concurrency < 1 {
		p.add(joinPath(path, "concurrency"), "must be at least 1 (messages one worker handles at once), got %d", w.Concurrency)
	}
	if cv := w.ServiceTimeCV; cv != nil && !(*cv >= 0 && *cv <= capacity.MaxServiceTimeCV) {
		p.add(joinPath(path, "service_time_cv"), "must be between 0 (every message takes the same time) and %d (standard deviation ÷ mean of the service time), got %v",
			capacity.MaxServiceTimeCV, *cv)
	}
	if w.Learn != "" {
		oneOf(p, joinPath(path, "learn"), w.Learn, learnModes)
	}
}

func (t Target) validate(p *problems, path string, interval time.Duration) {
	oneOf(p, joinPath(path, "policy"), t.Policy, policies)
	switch {
	case t.Latency == 0:
		p.add(joinPath(path, "latency"), "required: how long a message may wait, such as 30s")
	case t.Latency < 0:
		p.add(joinPath(path, "latency"), "must be > 0, got %s", t.Latency)
	}
	if t.DrainTime <= 0 {
		p.add(joinPath(path, "drain_time"), "must be > 0, got %s", t.DrainTime)
	}
	if u := t.Utilization; u != nil && !(*u > 0 && *u <= 1) {
		p.add(joinPath(path, "utilization"), "must be a ratio in (0, 1], such as 0.8, or unset to measure it; got %v", *u)
	}
	if !(t.BurstReserve >= 0 && finite(t.BurstReserve)) {
		p.add(joinPath(path, "burst_reserve"), "must be a percentage >= 0, got %v", t.BurstReserve)
	}
	if !(t.OverheadReserve >= 0 && t.OverheadReserve < 100) {
		p.add(joinPath(path, "overhead_reserve"), "must be a percentage in [0, 100), got %v", t.OverheadReserve)
	}
	if t.SafetyWorkers < 0 {
		p.add(joinPath(path, "safety_workers"), "must be >= 0, got %d", t.SafetyWorkers)
	}
	if !(t.Deadband >= 0 && t.Deadband < 1) {
		p.add(joinPath(path, "deadband"), "must be a ratio in [0, 1), such as 0.1; got %v", t.Deadband)
	}
	if t.MaxStepOut < 0 {
		p.add(joinPath(path, "max_step_out"), "must be >= 0 (0 means no limit), got %d", t.MaxStepOut)
	}
	if t.StaleAfter != 0 && t.StaleAfter < interval {
		p.add(joinPath(path, "stale_after"), "must be at least interval (%s), got %s", interval, t.StaleAfter)
	}
	if t.ArrivalSmoothing <= 0 {
		p.add(joinPath(path, "arrival_smoothing"), "must be > 0 (the time constant of the arrival-rate average), got %s", t.ArrivalSmoothing)
	}
	if !(t.LatencyQuantile > 0 && t.LatencyQuantile < 1) {
		p.add(joinPath(path, "latency_quantile"), "must be a ratio in (0, 1), such as 0.99; got %v", t.LatencyQuantile)
	}
	if t.SLOWindow.D() < MinSLOWindow {
		p.add(joinPath(path, "slo_window"), "must be at least %s (the error budget's window, such as 30d), got %s", Duration(MinSLOWindow), t.SLOWindow)
	}
}

func (o OldestAge) validate(p *problems, path string) {
	if o.StaleAfter < time.Minute {
		p.add(joinPath(path, "stale_after"), "must be at least 1m, the period of a CloudWatch reading; got %s", o.StaleAfter)
	}
}

// maxWorkerCost bounds a worker's price, dollars an hour.
const maxWorkerCost = 1e6

func validateWorkerCost(p *problems, path string, v float64) {
	if !(v >= 0 && v <= maxWorkerCost) {
		p.add(path, "must be a number of dollars an hour from 0 (no price) to %g, got %v", float64(maxWorkerCost), v)
	}
}

func (f Fleet) validate(p *problems, path string) {
	if f.WorkerCostPerHour != nil {
		validateWorkerCost(p, joinPath(path, "worker_cost_per_hour"), *f.WorkerCostPerHour)
	}
	if f.fleetKinds() > 1 {
		p.add(path, "set one of autoscaling_group, ecs_service and kubernetes, not several")
	}
	if k := f.Kubernetes; k != nil {
		k.validate(p, joinPath(path, "kubernetes"))
	}
	if a := f.AutoScalingGroup; a != nil {
		ap := joinPath(path, "autoscaling_group")
		if a.Name == "" {
			p.add(joinPath(ap, "name"), "required: the Auto Scaling group's name")
		}
		validateRegion(p, joinPath(ap, "region"), a.Region)
	}
	if e := f.ECSService; e != nil {
		ep := joinPath(path, "ecs_service")
		if e.Cluster == "" {
			p.add(joinPath(ep, "cluster"), "required: the ECS cluster's name")
		}
		if e.Service == "" {
			p.add(joinPath(ep, "service"), "required: the ECS service's name")
		}
		validateRegion(p, joinPath(ep, "region"), e.Region)
	}
	if f.Min < 0 {
		p.add(joinPath(path, "min"), "must be >= 0, got %d", f.Min)
	}
	switch {
	case f.Max == 0:
		p.add(joinPath(path, "max"), "required: the most workers the group may have (at least 1)")
	case f.Max < 1:
		p.add(joinPath(path, "max"), "must be at least 1, got %d", f.Max)
	case f.Max < f.Min:
		p.add(joinPath(path, "max"), "must be >= min (%d)", f.Min)
	}
	switch {
	case f.Cap < 0:
		p.add(joinPath(path, "cap"), "must be >= 0 (0 means none), got %d", f.Cap)
	case f.Cap > 0 && f.Cap < f.Min:
		p.add(joinPath(path, "cap"), "must be 0 (none) or >= min (%d), got %d", f.Min, f.Cap)
	}
	if f.StartDelay < 0 {
		p.add(joinPath(path, "start_delay"), "must be >= 0, got %s", f.StartDelay)
	}
	if f.ScaleInStabilization < 0 {
		p.add(joinPath(path, "scale_in_stabilization"), "must be >= 0, got %s", f.ScaleInStabilization)
	}
	f.validateSafety(p, path)
}

func (a Actions) validate(p *problems, path string, f Fleet) {
	if a.SetDesiredCapacity && f.fleetKinds() == 0 {
		p.add(joinPath(path, "set_desired_capacity"), "needs fleet.autoscaling_group, fleet.ecs_service or fleet.kubernetes to act on")
	}
	m := a.CloudWatchMetrics
	if m == nil {
		return
	}
	mp := joinPath(path, "cloudwatch_metrics")
	if f.fleetKinds() == 0 && f.FixedWorkers == 0 {
		p.add(mp, "needs the workers it divides by: name the fleet (fleet.autoscaling_group, fleet.ecs_service or fleet.kubernetes; set_desired_capacity: false reads it only) or set fleet.fixed_workers")
	}
	np := joinPath(mp, "namespace")
	switch {
	case m.Namespace == "":
		p.add(np, "must not be empty (leave the key out for %s)", DefaultNamespace)
	case strings.HasPrefix(m.Namespace, "AWS/"):
		p.add(np, "must not start with AWS/, which is reserved for AWS services; got %q", m.Namespace)
	case len(m.Namespace) > maxNamespaceLen || !namespaceRE.MatchString(m.Namespace):
		p.add(np, "must be at most %d letters, digits, spaces and . - _ / # : characters; got %q", maxNamespaceLen, m.Namespace)
	}
	validateRegion(p, joinPath(mp, "region"), m.Region)
}

// validateRegion checks the shape of a region name; empty is not checked.
func validateRegion(p *problems, path, region string) {
	switch {
	case region == "":
	case !regionRE.MatchString(region):
		p.add(path, "must be a region name such as us-east-1, got %q", region)
	default:
		if msg := regionProblem(region); msg != "" {
			p.add(path, "%s", msg)
		}
	}
}

func oneOf(p *problems, path, value string, allowed []string) {
	for _, a := range allowed {
		if value == a {
			return
		}
	}
	p.add(path, "must be one of %s; got %q", strings.Join(allowed, ", "), value)
}

func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }
