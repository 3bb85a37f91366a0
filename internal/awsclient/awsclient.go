// Package awsclient makes the SDK clients the checker uses: the default
// credentials chain loaded once, explicit retry settings, and one client per
// service and region, made on first use and kept.
package awsclient

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwschemas "github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"
	"github.com/prometheus/client_golang/prometheus"
)

// CloudWatch wire protocols. The SDK's default is rpc-v2-cbor; CloudWatch
// also serves AWS JSON 1.0 and the query protocol, and emulators such as
// moto serve only those.
const (
	ProtocolDefault = "default"
	ProtocolJSON    = "json"
	ProtocolQuery   = "query"
)

// SQS clients of GetQueueAttributes, the call repeated for every queue.
const (
	// SQSClientDirect is the direct caller (QueueAttributes), the default.
	SQSClientDirect = "direct"
	// SQSClientSDK is the SDK's SQS client, with its full middleware stack.
	SQSClientSDK = "sdk"
)

// Options are the settings shared by every client.
type Options struct {
	Region             string // default region; empty means the SDK's (AWS_REGION, profile)
	EndpointURL        string // one endpoint for every service; empty means the SDK's resolution
	CloudWatchProtocol string // ProtocolDefault, ProtocolJSON or ProtocolQuery
	// SQSClient chooses the GetQueueAttributes caller: SQSClientDirect
	// (also when empty) or SQSClientSDK.
	SQSClient string
	// Version is the checker's version, sent in every request's
	// User-Agent as queue-checker/<version>; empty means "dev".
	Version     string
	MaxAttempts int // retryer attempts per call, the first included; 0 means 3
	// MaxConnsPerHost is the idle connections kept per endpoint, and per
	// region for SQS, whose clients each have their own connection pool:
	// at least the calls in flight per region, so that a round of calls
	// reuses its connections. 0 means 32.
	MaxConnsPerHost int
	// Registerer, when set, receives checker_aws_requests_total and
	// checker_aws_request_duration_seconds, recorded for every call of every
	// client the factory makes.
	Registerer prometheus.Registerer
}

// Factory hands out one client per service and region.
type Factory struct {
	base      aws.Config
	endpoint  string
	protocol  string
	sqsClient string
	version   string
	conns     int
	metrics   *requestMetrics // nil without a registry

	mu    sync.Mutex
	attrs map[string]*QueueAttributes
	sqs   map[string]*sqs.Client
	cw    map[string]*cloudwatch.Client
	asg   map[string]*autoscaling.Client
	ecs   map[string]*ecs.Client
	ddb   map[string]*dynamodb.Client
}

// New loads the SDK's default configuration once (credentials chain, shared
// config files, AWS_* environment) with the given retry settings.
func New(ctx context.Context, o Options) (*Factory, error) {
	switch o.CloudWatchProtocol {
	case "", ProtocolDefault, ProtocolJSON, ProtocolQuery:
	default:
		return nil, fmt.Errorf("unknown CloudWatch protocol %q (want default, json or query)", o.CloudWatchProtocol)
	}
	switch o.SQSClient {
	case "", SQSClientDirect, SQSClientSDK:
	default:
		return nil, fmt.Errorf("unknown SQS client %q (want direct or sdk)", o.SQSClient)
	}
	version := userAgentToken(cmp.Or(o.Version, "dev"))
	attempts := o.MaxAttempts
	if attempts <= 0 {
		attempts = 3
	}
	conns := o.MaxConnsPerHost
	if conns <= 0 {
		conns = 32
	}
	opts := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(newHTTPClient(conns)),
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = attempts
				so.MaxBackoff = 2 * time.Second
				// The checker bounds its own calls per interval; the client-side
				// retry token bucket would only turn a bad minute into refusals.
				so.RateLimiter = ratelimit.None
				// SQS speaks JSON but reports its query-protocol codes; the SDK's
				// lists do not know its throttling code, so it would neither
				// retry it nor back off as for a throttle.
				codes := make(map[string]struct{}, len(throttleCodes))
				for c := range throttleCodes {
					codes[c] = struct{}{}
				}
				so.Retryables = append(append([]retry.IsErrorRetryable{}, so.Retryables...), retry.RetryableErrorCode{Codes: codes})
				so.Throttles = append(append([]retry.IsErrorThrottle{}, so.Throttles...), retry.ThrottleErrorCode{Codes: codes})
			})
		}),
	}
	if o.Region != "" {
		opts = append(opts, awsconfig.WithRegion(o.Region))
	}
	// Every SDK client's User-Agent names the checker and its version too.
	apiOptions := []func(*middleware.Stack) error{awsmiddleware.AddUserAgentKeyValue(productName, version)}
	var m *requestMetrics
	if o.Registerer != nil {
		var err error
		if m, err = newRequestMetrics(o.Registerer); err != nil {
			return nil, err
		}
		apiOptions = append(apiOptions, m.addTo)
	}
	opts = append(opts, awsconfig.WithAPIOptions(apiOptions))
	base, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	return &Factory{
		base:      base,
		endpoint:  o.EndpointURL,
		protocol:  o.CloudWatchProtocol,
		sqsClient: o.SQSClient,
		version:   version,
		conns:     conns,
		metrics:   m,
		attrs:     map[string]*QueueAttributes{},
		sqs:       map[string]*sqs.Client{},
		cw:        map[string]*cloudwatch.Client{},
		asg:       map[string]*autoscaling.Client{},
		ecs:       map[string]*ecs.Client{},
		ddb:       map[string]*dynamodb.Client{},
	}, nil
}

// newHTTPClient is the SDK's HTTP client keeping up to conns idle
// connections per host, and as many in all (Go's default keeps 100 in all).
func newHTTPClient(conns int) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConnsPerHost = conns
		t.MaxIdleConns = max(conns, t.MaxIdleConns)
	})
}

// regionHTTPClient is a copy of the base HTTP client with a connection
// pool of its own. A copy keeps what loading the configuration set on the
// base client, such as the CA bundle of AWS_CA_BUNDLE.
func (f *Factory) regionHTTPClient() aws.HTTPClient {
	if bc, ok := f.base.HTTPClient.(*awshttp.BuildableClient); ok {
		return bc.WithTransportOptions(func(*http.Transport) {})
	}
	return newHTTPClient(f.conns)
}

// DefaultRegion is the region used where a resource names none.
func (f *Factory) DefaultRegion() string { return f.base.Region }

func (f *Factory) region(r string) string {
	if r == "" {
		return f.base.Region
	}
	return r
}

func (f *Factory) endpointFor() *string {
	if f.endpoint == "" {
		return nil
	}
	return aws.String(f.endpoint)
}

// cached returns the client of a region from m, making it with mk on first use.
func cached[C any](f *Factory, m map[string]*C, region string, mk func(region string) *C) *C {
	region = f.region(region)
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := m[region]
	if !ok {
		c = mk(region)
		m[region] = c
	}
	return c
}

// SQS returns the SQS client of a region. Each region's client has its own
// connection pool, so that regions served by one endpoint (an emulator, a
// proxy) do not take each other's idle connections.
func (f *Factory) SQS(region string) *sqs.Client {
	return cached(f, f.sqs, region, func(region string) *sqs.Client {
		return sqs.NewFromConfig(f.base, func(o *sqs.Options) {
			o.Region = region
			o.HTTPClient = f.regionHTTPClient()
			if ep := f.endpointFor(); ep != nil {
				o.BaseEndpoint = ep
			}
		})
	})
}

// CloudWatch returns the CloudWatch client of a region, speaking the
// configured protocol.
func (f *Factory) CloudWatch(region string) *cloudwatch.Client {
	return cached(f, f.cw, region, func(region string) *cloudwatch.Client {
		return cloudwatch.NewFromConfig(f.base, func(o *cloudwatch.Options) {
			o.Region = region
			if ep := f.endpointFor(); ep != nil {
				o.BaseEndpoint = ep
			}
			switch f.protocol {
			case ProtocolJSON:
				o.Protocol = awsjson.New10(cwschemas.GraniteServiceVersion20100801)
			case ProtocolQuery:
				o.Protocol = awsquery.New(cwschemas.GraniteServiceVersion20100801)
			}
		})
	})
}

// AutoScaling returns the EC2 Auto Scaling client of a region.
func (f *Factory) AutoScaling(region string) *autoscaling.Client {
	return cached(f, f.asg, region, func(region string) *autoscaling.Client {
		return autoscaling.NewFromConfig(f.base, func(o *autoscaling.Options) {
			o.Region = region
			if ep := f.endpointFor(); ep != nil {
				o.BaseEndpoint = ep
			}
		})
	})
}

// ECS returns the ECS client of a region.
func (f *Factory) ECS(region string) *ecs.Client {
	return cached(f, f.ecs, region, func(region string) *ecs.Client {
		return ecs.NewFromConfig(f.base, func(o *ecs.Options) {
			o.Region = region
			if ep := f.endpointFor(); ep != nil {
				o.BaseEndpoint = ep
			}
		})
	})
}

// DynamoDB returns the DynamoDB client of a region.
func (f *Factory) DynamoDB(region string) *dynamodb.Client {
	return cached(f, f.ddb, region, func(region string) *dynamodb.Client {
		return dynamodb.NewFromConfig(f.base, func(o *dynamodb.Options) {
			o.Region = region
			if ep := f.endpointFor(); ep != nil {
				o.BaseEndpoint = ep
			}
		})
	})
}
