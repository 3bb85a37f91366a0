package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
)

// TestE2ETargetTrackingConverges plays the part of a target-tracking policy
// on BacklogPerWorkerRatio (target 1.0) against moto: each simulated minute
// the checker samples the queue, reads the Auto Scaling group it does not
// scale, and publishes; the test reads the ratio back from CloudWatch,
// checks it against backlog ÷ in-service ÷ target computed here, and sets
// the group's desired capacity to ceil(in-service × ratio), as target
// tracking does. The fleet must settle at ceil(backlog ÷ target) workers.
// A second group names an Auto Scaling group that does not exist: it must
// publish Backlog alone, never a ratio computed against a made-up count.
func TestE2ETargetTrackingConverges(t *testing.T) {
	f := direct(t)
	ctx := context.Background()
	const (
		visible     = 600
		serviceTime = time.Second
		latency     = 30 * time.Second // target backlog per worker: 30
	)
	target := latency.Seconds() / serviceTime.Seconds()
	q := makeQueue(t, f, queueSpec{region: east, visible: visible})
	ghostQ := makeQueue(t, f, queueSpec{region: east, visible: 40})
	asg := makeASG(t, f, 0, 50, 1)
	ns := awstest.UniqueName(t, "Tracking")
	moto := awstest.Shared(t)

	doc := fmt.Sprintf(`interval: 60s
aws: {region: %[1]s, endpoint_url: %[2]s, cloudwatch_protocol: json}
groups:
  - name: tracked
    queues: [{url: %[3]q}]
    workers: {service_time: %[4]s}
    target: {latency: %[5]s}
    fleet: {autoscaling_group: {name: %[6]s}, max: 50}
    actions: {set_desired_capacity: false, cloudwatch_metrics: {namespace: %[7]s}}
  - name: ghost
    queues: [{url: %[8]q}]
    workers: {service_time: %[4]s}
    target: {latency: %[5]s}
    fleet: {autoscaling_group: {name: %[6]s-missing}, max: 50}
    actions: {set_desired_capacity: false, cloudwatch_metrics: {namespace: %[7]s}}
`, east, moto.URL, q.url, serviceTime, latency, asg, ns, ghostQ.url)
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("config: %v\n%s", err, doc)
	}
	log := zaptest.NewLogger(t)
	asm, err := assemble(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := controller.New(controller.Options{Groups: asm.groups, Observer: asm.observer, Actuator: asm.actuator, Logger: log})
	if err != nil {
		t.Fatal(err)
	}

	// Simulated minutes, in the past so that CloudWatch takes the datapoints,
	// one 60-second period each.
	base := time.Now().UTC().Truncate(time.Minute).Add(-30 * time.Minute)
	want := int(math.Ceil(visible / target))
	var sizes []int
	var last []model.Decision
	for minute := range 6 {
		now := base.Add(time.Duration(minute) * time.Minute)
		inService := asgInService(t, f, asg)
		ds, err := ctrl.RunOnce(ctx, now)
		if err != nil {
			t.Fatalf("minute %d: RunOnce: %v", minute, err)
		}
		last = ds
		ratio := readMetric(t, f, ns, "tracked", "BacklogPerWorkerRatio", now)
		if exp := visible / float64(max(inService, 1)) / target; math.Abs(ratio-exp) > 1e-9 {
			t.Fatalf("minute %d: ratio read back %v, want %d ÷ %d ÷ %v = %v", minute, ratio, visible, inService, target, exp)
		}
		if got := readMetric(t, f, ns, "tracked", "DesiredWorkers", now); int(got) != byGroup(ds)["tracked"].DesiredWorkers {
			t.Errorf("minute %d: DesiredWorkers read back %v, decision %d", minute, got, byGroup(ds)["tracked"].DesiredWorkers)
		}
		next := int(math.Ceil(float64(inService) * ratio)) // target tracking at 1.0
		if _, err := f.AutoScaling(east).SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{
			AutoScalingGroupName: aws.String(asg), DesiredCapacity: aws.Int32(int32(next)),
		}); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, next)
	}
	t.Logf("desired capacity per minute: %v", sizes)
	for i, n := range sizes[len(sizes)-3:] {
		if n != want {
			t.Errorf("minute %d: desired %d, want it settled at ceil(%d ÷ %v) = %d (all: %v)", len(sizes)-3+i, n, visible, target, want, sizes)
		}
	}

	// The group whose fleet cannot be read publishes its backlog only.
	var ghost []string
	for _, n := range metricNames(t, f, ns) {
		if g, name, _ := strings.Cut(n, "/"); g == "ghost" {
			ghost = append(ghost, name)
		}
	}
	if !slices.Equal(ghost, []string{"Backlog"}) {
		t.Errorf("ghost group published %v, want [Backlog] only", ghost)
	}
	reasons := strings.Join(byGroup(last)["ghost"].Reasons, "; ")
	if !strings.Contains(reasons, "the fleet was not read") {
		t.Errorf("ghost group's reasons do not say its fleet was not read: %s", reasons)
	}
}

// asgInService counts an Auto Scaling group's InService instances.
func asgInService(t testing.TB, f *awsclient.Factory, name string) int {
	t.Helper()
	out, err := f.AutoScaling(east).DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{
		AutoScalingGroupNames: []string{name},
	})
	if err != nil || len(out.AutoScalingGroups) != 1 {
		t.Fatalf("describe auto scaling group %s: %v", name, err)
	}
	n := 0
	for _, in := range out.AutoScalingGroups[0].Instances {
		if in.LifecycleState == "InService" {
			n++
		}
	}
	return n
}

// readMetric reads the one datapoint of a group's metric in the minute
// starting at at.
func readMetric(t testing.TB, f *awsclient.Factory, namespace, group, metric string, at time.Time) float64 {
	t.Helper()
	out, err := f.CloudWatch(east).GetMetricStatistics(context.Background(), &cloudwatch.GetMetricStatisticsInput{
		Namespace:  aws.String(namespace),
		MetricName: aws.String(metric),
		Dimensions: []cwtypes.Dimension{{Name: aws.String("Group"), Value: aws.String(group)}},
		StartTime:  aws.Time(at),
		EndTime:    aws.Time(at.Add(time.Minute)),
		Period:     aws.Int32(60),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticAverage, cwtypes.StatisticSampleCount},
	})
	if err != nil {
		t.Fatalf("get %s of %s: %v", metric, group, err)
	}
	if len(out.Datapoints) != 1 || aws.ToFloat64(out.Datapoints[0].SampleCount) != 1 {
		t.Fatalf("%s of %s at %s: %d datapoints %+v, want one of one sample", metric, group, at, len(out.Datapoints), out.Datapoints)
	}
	return aws.ToFloat64(out.Datapoints[0].Average)
}
