package poller

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
)

var _ controller.Observer = (*Poller)(nil)

func TestMain(m *testing.M) {
	code := awstest.Main(m)
	// The fuzzing engine's own goroutines outlive the tests.
	fuzzing := flag.Lookup("test.fuzz") != nil && flag.Lookup("test.fuzz").Value.String() != ""
	if code == 0 && !fuzzing {
		// Idle keep-alive connections of the HTTP clients are the
		// transports', not ours.
		if err := goleak.Find(awstest.TransportGoroutines...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

const (
	east  = "us-east-1"
	west  = "eu-west-1"
	south = "ap-southeast-2"
)

// direct is a factory that talks to moto without the proxy, for setting
// up resources. The first call also warms moto up: it builds each
// service's backend for a region on first use, which takes seconds (Auto
// Scaling's most) and holds up every other request meanwhile, so the tests
// do that once before any of them sets a deadline.
func direct(t testing.TB) *awsclient.Factory {
	t.Helper()
	m := awstest.Shared(t)
	f := awsclienttest.Factory(t, m.URL, awsclienttest.Region(east))
	awsclienttest.Warm(t, f, east, west, south)
	return f
}

// factory is the poller's factory, pointed at endpoint, with one attempt
// per call so injected faults show as they are.
func factory(t testing.TB, endpoint string, reg prometheus.Registerer) *awsclient.Factory {
	t.Helper()
	return awsclienttest.Factory(t, endpoint, awsclienttest.Region(east), awsclienttest.MaxAttempts(1), awsclienttest.Registerer(reg))
}

// queueSpec is the content a test queue is given.
type queueSpec struct {
	region                     string
	visible, inFlight, delayed int
}

// makeQueue creates a queue in moto holding exactly the given numbers of
// visible, in-flight (received, not deleted, hidden for an hour) and
// delayed (15 minutes) messages, and returns its configuration.
func makeQueue(t testing.TB, f *awsclient.Factory, spec queueSpec) config.Queue {
	t.Helper()
	ctx := context.Background()
	c := f.SQS(spec.region)
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(awstest.UniqueName(t, "q"))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	url := out.QueueUrl
	send := func(n int, delay int32) {
		for i := range n {
			if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String(fmt.Sprint(i)), DelaySeconds: delay}); err != nil {
				t.Fatalf("send message: %v", err)
			}
		}
	}
	send(spec.inFlight, 0)
	for got := 0; got < spec.inFlight; {
		r, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url,
			MaxNumberOfMessages: int32(min(10, spec.inFlight-got)), VisibilityTimeout: 3600})
		if err != nil {
			t.Fatalf("receive message: %v", err)
		}
		got += len(r.Messages)
	}
	send(spec.visible, 0)
	send(spec.delayed, 900)
	return config.Queue{URL: aws.ToString(url), Region: spec.region}
}

// putSQSMetric puts one datapoint into the AWS/SQS namespace for a queue.
func putSQSMetric(t testing.TB, f *awsclient.Factory, region, queueName, metric string, at time.Time, value float64) {
	t.Helper()
	_, err := f.CloudWatch(region).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
		Namespace: aws.String("AWS/SQS"),
		MetricData: []cwtypes.MetricDatum{{
			MetricName: aws.String(metric),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(queueName)}},
			Timestamp:  aws.Time(at),
			Value:      aws.Float64(value),
		}},
	})
	if err != nil {
		t.Fatalf("put metric data: %v", err)
	}
}

// baseConfig is a configuration with the given groups, as the config
// package would default it.
func baseConfig(groups ...config.Group) config.Config {
	return config.Config{
		Interval: 30 * time.Second,
		// Generous: moto is slow on a busy machine, and only the fault
		// tests are about deadlines.
		AWS:    config.AWS{Region: east, CloudWatchProtocol: awsclient.ProtocolJSON, CallTimeout: 20 * time.Second, ConcurrencyPerRegion: 4},
		Groups: groups,
	}
}

func newTestPoller(t testing.TB, cfg config.Config, f *awsclient.Factory, reg prometheus.Registerer) *Poller {
	t.Helper()
	p, err := New(cfg, f, reg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

func queueName(q config.Queue) string { return q.URL[strings.LastIndex(q.URL, "/")+1:] }

// countQueueCalls counts, through proxy, the GetQueueAttributes calls made
// for each of queues until the test ends, and returns how many reached a
// given set of them so far.
func countQueueCalls(t testing.TB, proxy *awstest.Proxy, queues ...[]config.Queue) func([]config.Queue) int {
	var mu sync.Mutex
	asked := map[string]int{}
	type matcher struct {
		url   string
		match awstest.Match
	}
	var matchers []matcher
	for _, qs := range queues {
		for _, q := range qs {
			matchers = append(matchers, matcher{q.URL, awstest.MatchQueue(q.URL)})
		}
	}
	stop := proxy.Observe(func(req *awstest.Request, _ time.Time) {
		if req.Operation() != "GetQueueAttributes" {
			return
		}
		for _, m := range matchers {
			if m.match(req) {
				mu.Lock()
				asked[m.url]++
				mu.Unlock()
				return
			}
		}
	})
	t.Cleanup(stop)
	return func(qs []config.Queue) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, q := range qs {
			n += asked[q.URL]
		}
		return n
	}
}
