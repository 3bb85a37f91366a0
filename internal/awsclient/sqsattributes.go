package awsclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

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

// directUserAgent is the direct caller's User-Agent: the checker and its
// version, then the parts sdkAgent, the User-Agent of the region's SQS
// client, has (SDK version, user-agent format, OS, Go version,
// architecture, the SQS module's version), less its per-call feature
// list (m/...). Without sdkAgent the parts the binary knows stand in.
func directUserAgent(version, sdkAgent string) string {
	parts := []string{productName + "/" + userAgentToken(cmp.Or(version, "dev"))}
	for _, p := range strings.Fields(sdkAgent) {
		if !strings.HasPrefix(p, "m/") && !strings.HasPrefix(p, productName+"/") {
			parts = append(parts, p)
		}
	}
	if len(parts) == 1 {
		parts = append(parts, aws.SDKName+"/"+aws.SDKVersion, "ua/2.1",
			"lang/go#"+userAgentToken(strings.TrimPrefix(runtime.Version(), "go")),
			"md/GOOS#"+runtime.GOOS, "md/GOARCH#"+runtime.GOARCH)
	}
	return strings.Join(parts, " ")
}

// sdkUserAgent is the User-Agent the SQS client of o sends, read by taking
// one GetQueueAttributes through its middleware up to the HTTP client,
// which sends nothing: signed with a made-up key, unretried and
// unrecorded. "" when the stack stops before (an endpoint that does not
// resolve).
func sdkUserAgent(o sqs.Options) string {
	var agent string
	capture := captureClient(func(r *http.Request) { agent = r.Header.Get("User-Agent") })
	_, _ = sqs.New(o).GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String("https://sqs.invalid/0/user-agent")},
		func(o *sqs.Options) {
			o.HTTPClient = capture
			o.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: "user-agent", SecretAccessKey: "user-agent"}, nil
			})
			o.Retryer = aws.NopRetryer{}
			o.APIOptions = nil // the request metrics, and the checker's own part
		})
	return agent
}

// captureClient is an HTTP client that shows each request to the function
// and sends none.
type captureClient func(*http.Request)

var errNotSent = errors.New("not sent")

func (c captureClient) Do(r *http.Request) (*http.Response, error) {
	c(r)
	return nil, errNotSent
}

// userAgentToken makes s fit in a User-Agent part: every character
// outside letters, digits and !#$%&'*+-.^_`|~ becomes '-'.
func userAgentToken(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', strings.ContainsRune("!#$%&'*+-.^_`|~", r):
			return r
		}
		return '-'
	}, s)
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

// clockSkewError is a signature SQS refused because the signing time was
// more than skewThreshold from the server's; offset is the server's clock
// minus the caller's, as the answer's Date header gave it.
type clockSkewError struct {
	smithy.APIError
	offset time.Duration
}

func (e *clockSkewError) Unwrap() error { return e.APIError }

// correctSkew keeps the offset of a refusal for a clock that is off and
// reports whether err was one.
func (c *QueueAttributes) correctSkew(err error) bool {
	var skewErr *clockSkewError
	if !errors.As(err, &skewErr) {
		return false
	}
	c.skew.Store(int64(skewErr.offset))
	return true
}

// skewCodes are the error codes of a signature refused, which a clock that
// is off explains when the answer's Date is far from the signing time.
// They are also the codes of a wrong secret or a malformed request, so
// the code alone does not tell.
var skewCodes = map[string]bool{
	"SignatureDoesNotMatch":     true,
	"InvalidSignatureException": true,
	"RequestExpired":            true,
	"RequestTimeTooSkewed":      true,
	"RequestInTheFuture":        true,
	"AuthFailure":               true,
}

// serverOffset is the server's clock minus the caller's: the answer's Date
// against the time it arrived. It is unknown without a Date, for an answer
// from a cache (an Age header) and when the round trip took too long for
// the Date to be trusted.
func serverOffset(h http.Header, sent, received time.Time) (time.Duration, bool) {
	date := h.Get("Date")
	if date == "" || h.Get("Age") != "" || received.Sub(sent) > maxTrustedRoundTrip {
		return 0, false
	}
	server, err := http.ParseTime(date)
	if err != nil {
		return 0, false
	}
	return server.Sub(received), true
}

// readError is a failure to read an answer's body: the deadline, or the
// connection.
func readError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return &smithy.CanceledError{Err: err}
	}
	return &smithyhttp.RequestSendError{Err: err}
}

// decodeError turns an error answer into the API error the SDK would
// return. SQS answers AWS JSON 1.0 in query-compatible mode: the
// x-amzn-query-error header carries the query protocol's code and fault
// ("AWS.SimpleQueueService.NonExistentQueue;Sender"), which the SDK
// reports in place of the JSON shape name. An answer in XML (the query
// protocol's error document, as a proxy or an emulator may send for a
// refused signature) is read too; a body that is neither keeps its HTTP
// status as the code, so that the failure is still a client or a server
// error rather than a malformed answer.
func decodeError(h http.Header, status int, body []byte) error {
	var info struct {
		Type         string `json:"__type"`
		Code         string `json:"code"`
		Message      string `json:"message"`
		MessageUpper string `json:"Message"`
	}
	trimmed := bytes.TrimSpace(body)
	switch {
	case len(trimmed) == 0:
	case trimmed[0] == '{':
		if err := json.Unmarshal(trimmed, &info); err != nil {
			return &smithy.DeserializationError{Err: fmt.Errorf("decode the error answer (HTTP %d): %w", status, err), Snapshot: body}
		}
	case trimmed[0] == '<':
		var doc struct { // <ErrorResponse><Error> or <Response><Errors><Error>
			Code        string `xml:"Error>Code"`
			Message     string `xml:"Error>Message"`
			ListCode    string `xml:"Errors>Error>Code"`
			ListMessage string `xml:"Errors>Error>Message"`
		}
		if xml.Unmarshal(trimmed, &doc) == nil {
			info.Code, info.Message = cmp.Or(doc.Code, doc.ListCode), cmp.Or(doc.Message, doc.ListMessage)
		}
	}
	code := h.Get("X-Amzn-Errortype")
	if info.Code != "" {
		code = info.Code
	}
	if info.Type != "" {
		code = info.Type
	}
	code = sanitizeErrorCode(code)
	msg := info.Message
	if msg == "" {
		msg = info.MessageUpper
	}
	fault := smithy.FaultUnknown
	if q := h.Get("X-Amzn-Query-Error"); q != "" {
		qcode, qfault, _ := strings.Cut(q, ";")
		if qcode != "" {
			code = qcode
		}
		switch qfault {
		case "Sender":
			fault = smithy.FaultClient
		case "Receiver":
			fault = smithy.FaultServer
		}
	}
	if code == "" {
		code = fmt.Sprintf("HTTP %d", status)
		if msg == "" && len(trimmed) > 0 {
			msg = string(trimmed[:min(len(trimmed), 200)])
		}
	}
	if fault == smithy.FaultUnknown {
		switch {
		case status >= 500:
			fault = smithy.FaultServer
		case status >= 400:
			fault = smithy.FaultClient
		}
	}
	return &smithy.GenericAPIError{Code: code, Message: msg, Fault: fault}
}

// sanitizeErrorCode keeps the shape name of a JSON error type:
// "com.amazonaws.sqs#QueueDoesNotExist:http://..." is QueueDoesNotExist.
func sanitizeErrorCode(code string) string {
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return code
}

// appendRequestBody appends the JSON body of a GetQueueAttributes request.
func appendRequestBody(b []byte, in *sqs.GetQueueAttributesInput) []byte {
	b = append(b, `{"QueueUrl":`...)
	b = appendJSONString(b, *in.QueueUrl)
	if len(in.AttributeNames) > 0 {
		b = append(b, `,"AttributeNames":[`...)
		for i, n := range in.AttributeNames {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, string(n))
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
