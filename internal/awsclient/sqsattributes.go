package awsclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// QueueAttributes makes the one SQS call the poller repeats for every
// queue every interval, GetQueueAttributes, without the SDK's per-call
// middleware stack. At 10,000 queues that stack is most of the checker's
// CPU: about 290 allocations and 45 µs a call before any network work.
//
// What decides where requests go and how failures are handled is the
// SDK's and is taken from the region's SQS client, so the two cannot
// drift apart: the endpoint (BaseEndpoint, AWS_ENDPOINT_URL*, FIPS and
// dual-stack settings, through the client's endpoint resolver), the
// credentials provider, the HTTP client's TLS settings, dialer and proxy,
// and the retryer that decides which failures are retried and how long to
// wait. The request is signed by requestSigner, which a test holds to the
// SDK's Signature Version 4 signer (the SDK's signs endpoints with paths
// that need escaping), and sent by wire: a fasthttp keep-alive pool, or
// the HTTP client itself when it is not the SDK's or a proxy applies. At
// 10,000 queues those two are a third of the CPU the SDK's signer and
// net/http took. Requests are AWS JSON 1.0 in query-compatible mode, as the SDK
// sends them; errors come back as the SDK's error types (an
// *smithy.OperationError around an *awshttp.ResponseError around a
// smithy.APIError), so Classify and errors.As see them as they see the
// SDK's. Each call, retries included, is one observation in the request
// metrics.
//
// Like the SDK's client it corrects for a host clock that is off: when
// SQS refuses a signature as expired or not yet current, the server's
// time is taken from the answer's Date header, the offset is kept for
// every later request of the region and the call is retried at once,
// signed at the corrected time.
type QueueAttributes struct {
	opts      sqs.Options   // the region's SQS client's: region, credentials, HTTP client, retryer, endpoint
	signer    *v4.Signer    // for the endpoints requestSigner leaves to it
	observer  *callObserver // nil without a registry
	userAgent string

	// now is the clock requests are signed by; skew, in nanoseconds, is
	// added to it: the server's clock minus now, as last measured on a
	// refused signature.
	now  func() time.Time
	skew atomic.Int64

	once        sync.Once
	endpoint    string
	wire        *wire          // how requests go out
	reqSigner   *requestSigner // nil: the SDK's signer signs
	endpointErr error
}

const (
	sqsSigningName = "sqs"
	sqsTarget      = "AmazonSQS.GetQueueAttributes"
	sqsContentType = "application/x-amz-json-1.0"
	// productName opens the User-Agent.
	productName = "queue-checker"
	// skewThreshold: a refused signature whose signing time was more than
	// this from the server's clock is taken for a clock that is off. SQS
	// refuses signatures more than 5 minutes off; the SDK's clients use
	// the same 4 minutes.
	skewThreshold = 4 * time.Minute
	// maxTrustedRoundTrip bounds the round trip whose Date header is
	// trusted as the server's time.
	maxTrustedRoundTrip = time.Minute
	// errorBodyLimit bounds how much of an error answer is read.
	errorBodyLimit = 64 << 10
	// answerLimit bounds how much of a GetQueueAttributes answer is read:
	// the attributes the checker asks for fit in well under a kilobyte.
	answerLimit = 1 << 20
)

// SQSAttributes returns the direct GetQueueAttributes caller of a region,
// made from the region's SQS client on first use and kept.
func (f *Factory) SQSAttributes(region string) *QueueAttributes {
	client := f.SQS(region) // before cached, which holds the factory's lock
	return cached(f, f.attrs, region, func(string) *QueueAttributes {
		return newQueueAttributes(client.Options(), f.metrics, f.version)
	})
}

// QueueAttributesAPI is GetQueueAttributes, as both the SDK's SQS client
// and the direct caller serve it.
type QueueAttributesAPI interface {
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

var (
	_ QueueAttributesAPI = (*sqs.Client)(nil)
	_ QueueAttributesAPI = (*QueueAttributes)(nil)
)

// QueueAttributesClient returns the GetQueueAttributes caller of a region
// that Options.SQSClient chose: the direct caller (SQSClientDirect, the
// default) or the SDK's client (SQSClientSDK).
func (f *Factory) QueueAttributesClient(region string) QueueAttributesAPI {
	if f.sqsClient == SQSClientSDK {
		return f.SQS(region)
	}
	return f.SQSAttributes(region)
}

func newQueueAttributes(o sqs.Options, m *requestMetrics, version string) *QueueAttributes {
	if o.Retryer == nil {
		o.Retryer = aws.NopRetryer{}
	}
	return &QueueAttributes{opts: o, signer: v4.NewSigner(), observer: m.observer("sqs", "GetQueueAttributes"), userAgent: directUserAgent(version, sdkUserAgent(o)), now: time.Now}
}

// resolveEndpoint asks the SQS client's endpoint resolver once, with the
// parameters the client itself would bind.
func (c *QueueAttributes) resolveEndpoint(ctx context.Context) (string, error) {
	c.once.Do(func() {
		if c.opts.EndpointResolverV2 == nil {
			c.endpointErr = errors.New("the SQS client has no endpoint resolver")
			return
		}
		ep, err := c.opts.EndpointResolverV2.ResolveEndpoint(ctx, sqs.EndpointParameters{
			Region:       aws.String(c.opts.Region),
			Endpoint:     c.opts.BaseEndpoint,
			UseDualStack: aws.Bool(c.opts.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled),
			UseFIPS:      aws.Bool(c.opts.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
		})
		if err != nil {
			c.endpointErr = fmt.Errorf("resolve the SQS endpoint of %s: %w", c.opts.Region, err)
			return
		}
		u := ep.URI
		if u.Path == "" {
			u.Path = "/"
		}
		c.endpoint = u.String()
		c.wire = newWire(c.opts.HTTPClient, c.endpoint)
		c.reqSigner, _ = newRequestSigner(c.endpoint, c.opts.Region, sqsSigningName)
	})
	return c.endpoint, c.endpointErr
}

// errPerCallOptions refuses per-call option functions, which the direct
// caller cannot apply.
var errPerCallOptions = errors.New("per-call options are not supported by the direct GetQueueAttributes caller (aws.sqs_client: sdk takes them)")

// GetQueueAttributes asks for the named attributes of one queue. It has
// the SDK client's signature so that either can serve the poller; it
// refuses per-call option functions, which it cannot apply, with an
// error and without a request.
func (c *QueueAttributes) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	if len(optFns) > 0 {
		return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "GetQueueAttributes", Err: errPerCallOptions}
	}
	start := time.Now()
	out, err := c.call(ctx, in)
	c.observer.observe(start, err)
	if err != nil {
		return nil, &smithy.OperationError{ServiceID: "SQS", OperationName: "GetQueueAttributes", Err: err}
	}
	return out, nil
}

// call makes the attempts the retryer allows.
func (c *QueueAttributes) call(ctx context.Context, in *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
	if in == nil || in.QueueUrl == nil {
		return nil, &smithy.SerializationError{Err: errors.New("GetQueueAttributes needs a QueueUrl")}
	}
	endpoint, err := c.resolveEndpoint(ctx)
	if err != nil {
		return nil, err
	}
	buf := bodyBuffers.Get().(*[]byte)
	body := appendRequestBody((*buf)[:0], in)
	defer func() { *buf = body; bodyBuffers.Put(buf) }()
	sum := sha256.Sum256(body)
	var hashHex [2 * sha256.Size]byte
	hex.Encode(hashHex[:], sum[:])
	payloadHash := hashHex[:]
	maxAttempts := max(c.opts.Retryer.MaxAttempts(), 1)
	skewRetried := false
	for attempt := 1; ; attempt++ {
		out, err := c.attempt(ctx, endpoint, body, payloadHash)
		// A signature refused for a clock that is off is signed again at
		// the server's time and sent at once, once per call; that retry
		// is not one of the retryer's attempts.
		if !skewRetried && err != nil && ctx.Err() == nil && c.correctSkew(err) {
			skewRetried = true
			attempt--
			continue
		}
		if err == nil || attempt >= maxAttempts || ctx.Err() != nil || !c.opts.Retryer.IsErrorRetryable(err) {
			return out, err
		}
		delay, derr := c.opts.Retryer.RetryDelay(attempt, err)
		if derr != nil {
			return nil, err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, &smithy.CanceledError{Err: ctx.Err()}
		case <-t.C:
		}
	}
}

// attempt sends the request once and reads its answer.
func (c *QueueAttributes) attempt(ctx context.Context, endpoint string, body, payloadHash []byte) (*sqs.GetQueueAttributesOutput, error) {
	creds, err := c.opts.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("retrieve credentials: %w", err)
	}
	skew := time.Duration(c.skew.Load())
	out := outgoing{endpoint: endpoint, body: body, userAgent: c.userAgent}
	if c.reqSigner != nil {
		out.sig = c.reqSigner.sign(creds, directRequest, len(body), payloadHash, c.now().Add(skew))
	} else if out.sig, err = c.signWithSDK(ctx, creds, endpoint, body, payloadHash, c.now().Add(skew)); err != nil {
		return nil, fmt.Errorf("sign the request: %w", err)
	}
	sent := c.now()
	var x exchange
	if err := c.wire.roundTrip(ctx, &out, &x); err != nil {
		return nil, err
	}
	defer x.release()
	if x.status < 200 || x.status >= 300 {
		err := decodeError(x.header, x.status, x.body)
		var apiErr smithy.APIError
		if errors.As(err, &apiErr) && skewCodes[apiErr.ErrorCode()] {
			if server, ok := serverOffset(x.header, sent, c.now()); ok && (server-skew).Abs() > skewThreshold {
				err = &clockSkewError{APIError: apiErr, offset: server}
			}
		}
		return nil, x.responseError(err)
	}
	attrs, err := decodeAttributes(x.body)
	if err != nil {
		return nil, x.responseError(&smithy.DeserializationError{Err: fmt.Errorf("decode the GetQueueAttributes answer: %w", err)})
	}
	return &sqs.GetQueueAttributesOutput{Attributes: attrs}, nil
}

// responseError is err about the answer x, as the SDK reports one: an
// *awshttp.ResponseError with the answer's status, headers, body and
// request ID.
func (x *exchange) responseError(err error) error {
	resp := &http.Response{
		Status: fmt.Sprintf("%d %s", x.status, http.StatusText(x.status)), StatusCode: x.status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: x.header,
		Body: io.NopCloser(bytes.NewReader(bytes.Clone(x.body))), ContentLength: int64(len(x.body)),
	}
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: err},
		RequestID:     x.header.Get("X-Amzn-Requestid"),
	}
}

// bodyBuffers hold request bodies for the length of a call.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// directRequest is what the signature of a GetQueueAttributes request
// covers besides the body.
var directRequest = signedRequest{contentType: sqsContentType, target: sqsTarget, queryMode: "true"}

// signWithSDK signs with the SDK's signer, for an endpoint whose path
// needs its escaping.
func (c *QueueAttributes) signWithSDK(ctx context.Context, creds aws.Credentials, endpoint string, body, payloadHash []byte, t time.Time) (signature, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return signature{}, err
	}
	req.Header = http.Header{
		"Content-Type":      {directRequest.contentType},
		"X-Amz-Target":      {directRequest.target},
		"X-Amzn-Query-Mode": {directRequest.queryMode},
	}
	if err := c.signer.SignHTTP(ctx, creds, req, string(payloadHash), sqsSigningName, c.opts.Region, t); err != nil {
		return signature{}, err
	}
	return signature{host: cmp.Or(req.Host, req.URL.Host), amzDate: req.Header.Get("X-Amz-Date"), securityToken: req.Header.Get("X-Amz-Security-Token"), authorization: req.Header.Get("Authorization")}, nil
}

// readError is a failure to read an answer's body: the deadline, or the
// connection.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &smithy.CanceledError{Err: err}
	}
	return &smithyhttp.RequestSendError{Err: err}
}
