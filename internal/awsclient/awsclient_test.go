package awsclient

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/model"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// attributeCallers are the two ways the factory makes GetQueueAttributes
// calls: the SDK's client and the poller's direct caller. Every test of
// the call runs through both, so that they answer, fail, retry and count
// alike.
type attributeCaller interface {
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var attributeCallers = []struct {
	name string
	get  func(f *Factory, region string) attributeCaller
}{
	{"sdk", func(f *Factory, region string) attributeCaller { return f.SQS(region) }},
	{"direct", func(f *Factory, region string) attributeCaller { return f.SQSAttributes(region) }},
}

// TestClassifyThroughProxy sends real SDK calls to moto through the fault
// proxy and checks both the class of each injected failure and what the
// request metrics recorded.
func TestClassifyThroughProxy(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()

	direct, err := New(ctx, Options{Region: "us-east-1", EndpointURL: moto.URL})
	if err != nil {
		t.Fatal(err)
	}
	created, err := direct.SQS("us-east-1").CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("awsclient-classify")})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	queueURL := aws.ToString(created.QueueUrl)

	tests := []struct {
		name    string
		fault   *awstest.Fault
		timeout time.Duration
		want    string
	}{
		{name: "answer", want: ""},
		{name: "throttled", fault: &awstest.Fault{Kind: awstest.FaultThrottle}, want: model.ErrClassThrottled},
		{name: "throttling exception", fault: &awstest.Fault{Kind: awstest.FaultThrottle, Code: "ThrottlingException"}, want: model.ErrClassThrottled},
		{name: "server error", fault: &awstest.Fault{Kind: awstest.FaultServerError}, want: model.ErrClassServer},
		{name: "malformed", fault: &awstest.Fault{Kind: awstest.FaultMalformed}, want: model.ErrClassMalformed},
		{name: "slow", fault: &awstest.Fault{Kind: awstest.FaultSlow, Delay: time.Minute}, timeout: 300 * time.Millisecond, want: model.ErrClassTimeout},
		{name: "reset", fault: &awstest.Fault{Kind: awstest.FaultReset}, want: model.ErrClassNetwork},
	}
	for _, caller := range attributeCallers {
		for _, tc := range tests {
			t.Run(caller.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				proxy := awstest.NewProxy(t, moto.URL)
				if tc.fault != nil {
					proxy.Inject(awstest.MatchQueue(queueURL), *tc.fault)
				}
				reg := prometheus.NewRegistry()
				f, err := New(ctx, Options{Region: "us-east-1", EndpointURL: proxy.URL, MaxAttempts: 1, Registerer: reg})
				if err != nil {
					t.Fatal(err)
				}
				callCtx := ctx
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					callCtx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				out, err := caller.get(f, "us-east-1").GetQueueAttributes(callCtx, &sqs.GetQueueAttributesInput{
					QueueUrl:       aws.String(queueURL),
					AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
				})
				if got := Classify(err); got != tc.want {
					t.Fatalf("Classify(%v) = %q, want %q", err, got, tc.want)
				}
				if err == nil && out.Attributes["ApproximateNumberOfMessages"] != "0" {
					t.Errorf("attributes %v, want ApproximateNumberOfMessages 0", out.Attributes)
				}
				outcome := tc.want
				if outcome == "" {
					outcome = OutcomeSuccess
				}
				want := `
# HELP checker_aws_requests_total AWS API calls made, by service, operation and outcome (success or the error class).
# TYPE checker_aws_requests_total counter
checker_aws_requests_total{operation="GetQueueAttributes",outcome="` + outcome + `",service="sqs"} 1
`
				if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "checker_aws_requests_total"); err != nil {
					t.Error(err)
				}
				if n := testutil.CollectAndCount(reg, "checker_aws_request_duration_seconds"); n != 1 {
					t.Errorf("duration series = %d, want 1", n)
				}
			})
		}
	}
}

// TestRetriesCountAsOneCall checks that the metrics see a call as its
// caller does: three throttled attempts are one throttled call.
func TestRetriesCountAsOneCall(t *testing.T) {
	for _, caller := range attributeCallers {
		t.Run(caller.name, func(t *testing.T) { testRetriesCountAsOneCall(t, caller.get) })
	}
}

func testRetriesCountAsOneCall(t *testing.T, get func(*Factory, string) attributeCaller) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	proxy := awstest.NewProxy(t, moto.URL)
	reg := prometheus.NewRegistry()
	f, err := New(ctx, Options{Region: "eu-west-1", EndpointURL: proxy.URL, MaxAttempts: 3, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	created, err := f.SQS("eu-west-1").CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(awstest.UniqueName(t, "retries"))})
	if err != nil {
		t.Fatalf("create queue: %v", err)
	}
	proxy.Inject(awstest.MatchOperation("GetQueueAttributes"), awstest.Fault{Kind: awstest.FaultThrottle})
	_, err = get(f, "eu-west-1").GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       created.QueueUrl,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages},
	})
	if got := Classify(err); got != model.ErrClassThrottled {
		t.Fatalf("Classify(%v) = %q, want %q", err, got, model.ErrClassThrottled)
	}
	if got := proxy.Injected(awstest.FaultThrottle); got != 3 {
		t.Errorf("throttled attempts = %d, want 3", got)
	}
	want := `
# HELP checker_aws_requests_total AWS API calls made, by service, operation and outcome (success or the error class).
# TYPE checker_aws_requests_total counter
checker_aws_requests_total{operation="CreateQueue",outcome="success",service="sqs"} 1
checker_aws_requests_total{operation="GetQueueAttributes",outcome="throttled",service="sqs"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "checker_aws_requests_total"); err != nil {
		t.Error(err)
	}
}

func TestFactoriesShareARegistry(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	for i := range 2 {
		if _, err := New(context.Background(), Options{Region: "us-east-1", Registerer: reg}); err != nil {
			t.Fatalf("factory %d: %v", i, err)
		}
	}
}

func TestNewRejectsUnknownProtocol(t *testing.T) {
	t.Parallel()
	if _, err := New(context.Background(), Options{CloudWatchProtocol: "xml"}); err == nil {
		t.Fatal("New accepted CloudWatch protocol \"xml\"")
	}
}

// TestSQSConnectionPoolPerRegion: each region's SQS client has its own
// transport keeping as many idle connections per host as the calls in
// flight allowed per region, so regions served by one endpoint do not
// evict each other's connections.
func TestSQSConnectionPoolPerRegion(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	f, err := New(context.Background(), Options{Region: "us-east-1", EndpointURL: "http://127.0.0.1:1", MaxConnsPerHost: 96})
	if err != nil {
		t.Fatal(err)
	}
	transport := func(region string) *http.Transport {
		t.Helper()
		bc, ok := f.SQS(region).Options().HTTPClient.(*awshttp.BuildableClient)
		if !ok {
			t.Fatalf("%s: HTTP client %T, want a BuildableClient", region, f.SQS(region).Options().HTTPClient)
		}
		return bc.GetTransport()
	}
	east, west := transport("us-east-1"), transport("eu-west-1")
	for name, tr := range map[string]*http.Transport{"us-east-1": east, "eu-west-1": west} {
		if tr.MaxIdleConnsPerHost != 96 || tr.MaxIdleConns < 96 {
			t.Errorf("%s: %d idle connections per host, %d in all; want 96 and at least 96", name, tr.MaxIdleConnsPerHost, tr.MaxIdleConns)
		}
	}
	if f.SQS("us-east-1").Options().HTTPClient == f.SQS("eu-west-1").Options().HTTPClient {
		t.Error("two regions share one SQS HTTP client")
	}
}
