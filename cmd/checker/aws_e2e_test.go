package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
)

// The end-to-end tests' regions: queues in both, Auto Scaling groups and
// metrics in east, ECS services in west.
const (
	east = "us-east-1"
	west = "eu-west-1"
)

// direct returns SDK clients that talk to moto itself, never through a
// proxy, for setting up resources and reading them back. The first call
// warms moto up: it builds each service's backend for a region on first use,
// which takes seconds and holds up every other request meanwhile, so that
// happens before any checker runs under its per-call deadlines.
func direct(t testing.TB) *awsclient.Factory {
	t.Helper()
	m := awstest.Shared(t)
	f := awsclienttest.Factory(t, m.URL, awsclienttest.Region(east))
	awsclienttest.Warm(t, f, east, west)
	return f
}

// queueSpec is what a test queue holds.
type queueSpec struct {
	region                     string
	visible, inFlight, delayed int
}

// testQueue is a queue made in moto.
type testQueue struct {
	url, region string
}

// makeQueue creates a queue holding exactly the given numbers of visible,
// in-flight (received, not deleted, hidden for an hour) and delayed (15
// minutes) messages.
func makeQueue(t testing.TB, f *awsclient.Factory, spec queueSpec) testQueue {
	t.Helper()
	ctx := context.Background()
	c := f.SQS(spec.region)
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(awstest.UniqueName(t, "q"))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	q := testQueue{url: aws.ToString(out.QueueUrl), region: spec.region}
	sendMessages(t, f, q, spec.inFlight, 0)
	for got := 0; got < spec.inFlight; {
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl,
			MaxNumberOfMessages: int32(min(10, spec.inFlight-got)), VisibilityTimeout: 3600})
		if err != nil {
			t.Fatalf("receive message: %v", err)
		}
		got += len(r.Messages)
	}
	sendMessages(t, f, q, spec.visible, 0)
	sendMessages(t, f, q, spec.delayed, 900)
	return q
}

// sendMessages sends n messages to q, ten to a call, delayed by delay
// seconds.
func sendMessages(t testing.TB, f *awsclient.Factory, q testQueue, n int, delay int32) {
	t.Helper()
	for sent := 0; sent < n; {
		var batch []sqstypes.SendMessageBatchRequestEntry
		for i := 0; i < 10 && sent+i < n; i++ {
			batch = append(batch, sqstypes.SendMessageBatchRequestEntry{
				Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(strconv.Itoa(sent + i)), DelaySeconds: delay,
			})
		}
		out, err := f.SQS(q.region).SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{
			QueueUrl: aws.String(q.url), Entries: batch,
		})
		if err != nil {
			t.Fatalf("send messages: %v", err)
		}
		if len(out.Failed) > 0 {
			t.Fatalf("send messages: %d of %d failed: %s", len(out.Failed), len(batch), aws.ToString(out.Failed[0].Message))
		}
		sent += len(batch)
	}
}

// queueCounts reads a queue's visible, in-flight and delayed counts.
func queueCounts(t testing.TB, f *awsclient.Factory, q testQueue) [3]int {
	t.Helper()
	out, err := f.SQS(q.region).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	})
	if err != nil {
		t.Fatalf("get queue attributes: %v", err)
	}
	var n [3]int
	for i, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"} {
		if n[i], err = strconv.Atoi(out.Attributes[k]); err != nil {
			t.Fatalf("attribute %s = %q: %v", k, out.Attributes[k], err)
		}
	}
	return n
}

// purge empties q, in-flight messages included, and checks that it is empty.
func purge(t testing.TB, f *awsclient.Factory, q testQueue) {
	t.Helper()
	if _, err := f.SQS(q.region).PurgeQueue(context.Background(), &sqs.PurgeQueueInput{QueueUrl: aws.String(q.url)}); err != nil {
		t.Fatalf("purge queue: %v", err)
	}
	if n := queueCounts(t, f, q); n != [3]int{} {
		t.Fatalf("after purge the queue holds %v (visible, in flight, delayed), want none", n)
	}
}

// makeASG creates an Auto Scaling group (and its launch configuration) in
// east.
func makeASG(t testing.TB, f *awsclient.Factory, minSize, maxSize, desired int32) string {
	t.Helper()
	name := awstest.UniqueName(t, "asg")
	awstest.CreateAutoScalingGroup(t, f.AutoScaling(east), east, name, minSize, maxSize, desired)
	return name
}

// asgDesired reads an Auto Scaling group's desired capacity.
func asgDesired(t testing.TB, f *awsclient.Factory, name string) int {
	t.Helper()
	out, err := f.AutoScaling(east).DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{
		AutoScalingGroupNames: []string{name},
	})
	if err != nil {
		t.Fatalf("describe auto scaling group %s: %v", name, err)
	}
	if len(out.AutoScalingGroups) != 1 {
		t.Fatalf("describe auto scaling group %s: %d groups", name, len(out.AutoScalingGroups))
	}
	return int(aws.ToInt32(out.AutoScalingGroups[0].DesiredCapacity))
}

// testService is an ECS service made in moto, in west.
type testService struct {
	cluster, service string
}

// makeService creates an ECS cluster, task definition and service in west.
func makeService(t testing.TB, f *awsclient.Factory, desired int32) testService {
	t.Helper()
	s := testService{cluster: awstest.UniqueName(t, "cluster"), service: awstest.UniqueName(t, "svc")}
	awstest.CreateECSService(t, f.ECS(west), s.cluster, s.service, desired)
	return s
}

// serviceDesired reads an ECS service's desired count.
func serviceDesired(t testing.TB, f *awsclient.Factory, s testService) int {
	t.Helper()
	out, err := f.ECS(west).DescribeServices(context.Background(), &ecs.DescribeServicesInput{
		Cluster: aws.String(s.cluster), Services: []string{s.service},
	})
	if err != nil {
		t.Fatalf("describe service %s/%s: %v", s.cluster, s.service, err)
	}
	if len(out.Services) != 1 {
		t.Fatalf("describe service %s/%s: %d services", s.cluster, s.service, len(out.Services))
	}
	return int(out.Services[0].DesiredCount)
}

// metricNames lists the metrics of a namespace in east, as "Group/Metric".
func metricNames(t testing.TB, f *awsclient.Factory, namespace string) []string {
	t.Helper()
	out, err := f.CloudWatch(east).ListMetrics(context.Background(), &cloudwatch.ListMetricsInput{Namespace: aws.String(namespace)})
	if err != nil {
		t.Fatalf("list metrics of %s: %v", namespace, err)
	}
	var names []string
	for _, m := range out.Metrics {
		group := "?"
		for _, d := range m.Dimensions {
			if aws.ToString(d.Name) == "Group" {
				group = aws.ToString(d.Value)
			}
		}
		names = append(names, group+"/"+aws.ToString(m.MetricName))
	}
	slices.Sort(names)
	return names
}

// metricMaxima reads every datapoint of one metric of a group around now and
// returns their maxima.
func metricMaxima(t testing.TB, f *awsclient.Factory, namespace, group, metric string) []float64 {
	t.Helper()
	now := time.Now()
	out, err := f.CloudWatch(east).GetMetricStatistics(context.Background(), &cloudwatch.GetMetricStatisticsInput{
		Namespace:  aws.String(namespace),
		MetricName: aws.String(metric),
		Dimensions: []cwtypes.Dimension{{Name: aws.String("Group"), Value: aws.String(group)}},
		StartTime:  aws.Time(now.Add(-10 * time.Minute)),
		EndTime:    aws.Time(now.Add(10 * time.Minute)),
		Period:     aws.Int32(60),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticMaximum},
	})
	if err != nil {
		t.Fatalf("get statistics of %s %s{Group=%s}: %v", namespace, metric, group, err)
	}
	var v []float64
	for _, p := range out.Datapoints {
		v = append(v, aws.ToFloat64(p.Maximum))
	}
	return v
}

// e2eGroup is one group of a test configuration. Zero durations and counts
// leave the key out (its default applies), apart from min.
type e2eGroup struct {
	name   string
	queues []testQueue
	policy string

	serviceTime, latency, drainTime time.Duration
	arrivalSmoothing                time.Duration
	// forecastOff sizes for the latest arrival rate alone: no forecast
	// keeps capacity for bursts.
	forecastOff bool

	asg     string       // Auto Scaling group in east, or
	service *testService // ECS service in west

	min, max, cap                    int
	startDelay, scaleInStabilization time.Duration

	namespace string // CloudWatch metrics in east; "" publishes none
}

// e2eConfig is a whole test configuration.
type e2eConfig struct {
	endpoint    string
	interval    time.Duration
	dryRun      bool
	maxAttempts int
	groups      []e2eGroup
}

// yaml renders the configuration file.
func (c e2eConfig) yaml() string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("interval: %s", c.interval)
	w("listen: 127.0.0.1:0")
	w("dry_run: %t", c.dryRun)
	w("log: {level: info, format: json}")
	w("aws:")
	w("  region: %s", east)
	w("  endpoint_url: %s", c.endpoint)
	w("  cloudwatch_protocol: json")
	if c.maxAttempts > 0 {
		w("  max_attempts: %d", c.maxAttempts)
	}
	w("groups:")
	listed := map[string]bool{} // queues an earlier group lists: shared on purpose
	for _, g := range c.groups {
		w("  - name: %s", g.name)
		w("    queues:")
		for _, q := range g.queues {
			w("      - {url: %q, region: %s, shared: %t}", q.url, q.region, listed[q.url])
			listed[q.url] = true
		}
		w("    count: {in_flight: true, delayed: false}")
		w("    workers: {service_time: %s, concurrency: 1}", g.serviceTime)
		w("    target:")
		if g.policy != "" {
			w("      policy: %s", g.policy)
		}
		w("      latency: %s", g.latency)
		if g.drainTime > 0 {
			w("      drain_time: %s", g.drainTime)
		}
		if g.arrivalSmoothing > 0 {
			w("      arrival_smoothing: %s", g.arrivalSmoothing)
		}
		if g.forecastOff {
			w("    forecast: {enabled: false}")
		}
		w("    fleet:")
		switch {
		case g.asg != "":
			w("      autoscaling_group: {name: %s, region: %s}", g.asg, east)
		case g.service != nil:
			w("      ecs_service: {cluster: %s, service: %s, region: %s}", g.service.cluster, g.service.service, west)
		}
		w("      min: %d", g.min)
		w("      max: %d", g.max)
		if g.cap > 0 {
			w("      cap: %d", g.cap)
		}
		w("      start_delay: %s", g.startDelay)
		if g.scaleInStabilization > 0 {
			w("      scale_in_stabilization: %s", g.scaleInStabilization)
		}
		w("    actions:")
		w("      set_desired_capacity: true")
		if g.namespace != "" {
			w("      cloudwatch_metrics: {namespace: %s, region: %s}", g.namespace, east)
		}
	}
	return b.String()
}

// writeConfig writes c to a file in a fresh temporary directory.
func writeConfig(t testing.TB, c e2eConfig) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, c.yaml())
	return path
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// metricValue finds one sample in a Prometheus text exposition: the series
// named name whose labels include every pair of labels. It returns false
// when there is none.
func metricValue(exposition, name string, labels map[string]string) (float64, bool) {
	sc := bufio.NewScanner(strings.NewReader(exposition))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		series, value := line[:sp], line[sp+1:]
		got, set, _ := strings.Cut(series, "{")
		if got != name {
			continue
		}
		set = strings.TrimSuffix(set, "}")
		ok := true
		for k, v := range labels {
			if !strings.Contains(","+set+",", ","+k+"="+strconv.Quote(v)+",") {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// logMessages returns the messages of the JSON log lines in logs.
func logMessages(logs string) []string {
	var msgs []string
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg != "" {
			msgs = append(msgs, line.Msg)
		}
	}
	return msgs
}
