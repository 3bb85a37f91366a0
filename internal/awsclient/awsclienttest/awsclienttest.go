// Package awsclienttest makes the *awsclient.Factory of a test, pointed at
// an emulator (awstest's moto server, a proxy in front of it, or a local
// stand-in).
//
// It lives apart from awstest because awsclient's own tests use awstest's
// emulator and proxy: awstest cannot import awsclient.
package awsclienttest

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awsclient"
)

// Option changes the options Factory passes to awsclient.New.
type Option func(*awsclient.Options)

// Factory returns a factory whose clients all talk to endpoint, with
// us-east-1 as the default region and CloudWatch over AWS JSON (as moto
// speaks it); opts change that. It fails the test when awsclient.New
// refuses the options.
func Factory(t testing.TB, endpoint string, opts ...Option) *awsclient.Factory {
	t.Helper()
	o := awsclient.Options{Region: "us-east-1", EndpointURL: endpoint, CloudWatchProtocol: awsclient.ProtocolJSON}
	for _, opt := range opts {
		opt(&o)
	}
	f, err := awsclient.New(context.Background(), o)
	if err != nil {
		t.Fatalf("awsclient.New: %v", err)
	}
	return f
}

// Region sets the default region.
func Region(r string) Option { return func(o *awsclient.Options) { o.Region = r } }

// MaxAttempts sets the retryer's attempts per call, the first included.
func MaxAttempts(n int) Option { return func(o *awsclient.Options) { o.MaxAttempts = n } }

// Registerer has the factory's request metrics registered with r.
func Registerer(r prometheus.Registerer) Option {
	return func(o *awsclient.Options) { o.Registerer = r }
}

var (
	warmOnce sync.Once
	warmErr  error
)

// Warm makes one cheap call of SQS, Auto Scaling, ECS and CloudWatch in
// each region through f, the first time a test of the binary calls it;
// later calls only report how that went. moto builds each service's
// backend for a region on first use, which takes seconds and holds up
// every other request meanwhile, so tests warm it before any of them sets
// a deadline. It fails the test when a call failed.
func Warm(t testing.TB, f *awsclient.Factory, regions ...string) {
	t.Helper()
	warmOnce.Do(func() {
		ctx := context.Background()
		for _, r := range regions {
			if _, err := f.SQS(r).ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
				warmErr = err
			}
			if _, err := f.AutoScaling(r).DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{}); err != nil {
				warmErr = err
			}
			if _, err := f.ECS(r).ListClusters(ctx, &ecs.ListClustersInput{}); err != nil {
				warmErr = err
			}
			if _, err := f.CloudWatch(r).ListMetrics(ctx, &cloudwatch.ListMetricsInput{}); err != nil {
				warmErr = err
			}
		}
	})
	if warmErr != nil {
		t.Fatalf("warm moto up: %v", warmErr)
	}
}
