package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/controller"
)

// wiredDaemon is what `checker run` and `checker once` wire from a
// configuration file, without the loop: the tests drive RunOnce on a
// clock of their own.
type wiredDaemon struct {
	src  *configSource
	sum  [32]byte
	asm  *assembly
	ctrl *controller.Controller
}

// wireDaemon loads the configuration file at path and wires it as the
// daemon does (loadConfig, assemble, controller.New), logging to log.
func wireDaemon(ctx context.Context, t testing.TB, path string, log *zap.Logger) wiredDaemon {
	t.Helper()
	src, cfg, sum, err := loadConfig(ctx, path)
	if err != nil {
		doc, _ := os.ReadFile(path)
		t.Fatalf("config: %v\n%s", err, doc)
	}
	asm, err := assemble(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := controller.New(controller.Options{
		Groups: asm.groups, Observer: asm.observer, Actuator: asm.actuator, Logger: log.Named("controller"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return wiredDaemon{src: src, sum: sum, asm: asm, ctrl: ctrl}
}

// motoConfigHead is the start of a configuration file on moto in east,
// up to the groups' list.
func motoConfigHead(interval time.Duration, endpoint string) string {
	return fmt.Sprintf("interval: %s\nlisten: 127.0.0.1:0\nlog: {level: info, format: json}\n"+
		"aws: {region: %s, endpoint_url: %s, cloudwatch_protocol: json}\ngroups:\n", interval, east, endpoint)
}

// pastClock is a simulated clock's start: half an hour in the past, so
// that CloudWatch takes every datapoint planted for the run, and half an
// interval into a minute, so that no sample falls on a minute's edge.
func pastClock(interval time.Duration) time.Time {
	return time.Now().UTC().Truncate(time.Minute).Add(-30 * time.Minute).Add(interval / 2)
}

// name is the queue's name, the last part of its URL (the QueueName
// dimension of its metrics).
func (q testQueue) name() string {
	return q.url[strings.LastIndexByte(q.url, '/')+1:]
}

// putSQSMetric puts one AWS/SQS datapoint for a queue in east, stamped at the
// start of its minute, as SQS publishes it.
func putSQSMetric(t testing.TB, f *awsclient.Factory, queueName, metric string, minute time.Time, sum float64) {
	t.Helper()
	if _, err := f.CloudWatch(east).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
		Namespace: aws.String("AWS/SQS"),
		MetricData: []cwtypes.MetricDatum{{
			MetricName: aws.String(metric),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(queueName)}},
			Timestamp:  aws.Time(minute),
			Value:      aws.Float64(sum),
			Unit:       cwtypes.StandardUnitCount,
		}},
	}); err != nil {
		t.Fatalf("put %s of %s at %s: %v", metric, queueName, minute, err)
	}
}
