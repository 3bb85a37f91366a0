package poller

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// A group scaled to zero has nothing else to wake it: its idle queue is
// asked every interval, never backed off, and the first message is seen
// within one interval of landing. A group with workers, idle as long, backs
// off as before (the control).
func TestGroupAtZeroIsNeverBackedOff(t *testing.T) {
	t.Parallel()
	const (
		interval = 2 * time.Second
		idleMax  = 30 * time.Second
		rounds   = 30 // a minute
	)
	moto := awstest.Shared(t)
	d := direct(t)
	atZero := makeQueue(t, d, queueSpec{region: east})
	withWorkers := makeQueue(t, d, queueSpec{region: east})
	zeroASG := awstest.UniqueName(t, "zero")
	oneASG := awstest.UniqueName(t, "one")
	awstest.CreateAutoScalingGroup(t, d.AutoScaling(east), east, zeroASG, 0, 5, 0)
	awstest.CreateAutoScalingGroup(t, d.AutoScaling(east), east, oneASG, 1, 5, 1)
	proxy := awstest.NewProxy(t, moto.URL)
	count := countQueueCalls(t, proxy, []config.Queue{atZero, withWorkers})

	cfg := baseConfig(
		config.Group{Name: "zero", Queues: []config.Queue{atZero}, IdleSampleInterval: idleMax,
			Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: zeroASG}}},
		config.Group{Name: "one", Queues: []config.Queue{withWorkers}, IdleSampleInterval: idleMax,
			Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: oneASG}}},
	)
	cfg.Interval = interval
	cfg.AWS.CallTimeout = time.Second
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, cfg, factory(t, proxy.URL, reg), reg)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * interval) }
	ctx := context.Background()
	for i := range rounds {
		if _, err := p.Observe(ctx, at(i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := count([]config.Queue{atZero}); n != rounds {
		t.Errorf("the queue of the group at zero was asked %d times in %d intervals, want every one", n, rounds)
	}
	if n := count([]config.Queue{withWorkers}); n >= rounds/2 {
		t.Errorf("the idle queue of the group with a worker was asked %d times in %d intervals: not backed off", n, rounds)
	}
	if _, err := d.SQS(east).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(atZero.URL), MessageBody: aws.String("wake")}); err != nil {
		t.Fatal(err)
	}
	obs, err := p.Observe(ctx, at(rounds))
	if err != nil {
		t.Fatal(err)
	}
	if v := obs[0].Sample.Visible; v != 1 {
		t.Errorf("the message was not seen in the next interval: visible %d", v)
	}
}
