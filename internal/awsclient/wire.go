package awsclient

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/valyala/fasthttp"
)

// wire puts the direct caller's signed requests on the network and reads
// the answers whole.
//
// With the SDK's own HTTP client (the default) and no proxy for the
// endpoint it is a fasthttp host client: each call writes and reads on
// its own goroutine over a pooled keep-alive connection, where net/http
// hands every request and answer between three goroutines. At 10,000
// queues that hand-over, not the network, was most of the checker's CPU.
// The host client takes the SDK client's TLS settings (the CA bundle of
// AWS_CA_BUNDLE among them), dialer, idle timeout and idle pool size, and
// speaks HTTP/1.1, as SQS does.
//
// The host client knows deadlines, not contexts: a call is not started
// once its context is done, and one in flight ends at its context's
// deadline (every poller call has one) rather than at its cancellation.
//
// Any other HTTP client (one an embedding program configured, or a proxy
// from HTTPS_PROXY) is used as it is, through its Do.
type wire struct {
	fast   *fasthttp.HostClient // nil: client.Do
	uri    *fasthttp.URI        // the endpoint, parsed once for the host client
	client aws.HTTPClient
}

// exchange is one answer, read whole: its status, its headers (every
// header on the net/http path; on the fast path, the headers for an
// error status only) and its body, which is valid until release.
type exchange struct {
	status int
	header http.Header
	body   []byte

	resp *fasthttp.Response
	buf  *bytes.Buffer
}

func (x *exchange) release() {
	if x.resp != nil {
		fasthttp.ReleaseResponse(x.resp)
		x.resp = nil
	}
	if x.buf != nil {
		answerBuffers.Put(x.buf)
		x.buf = nil
	}
	x.body = nil
}

// newWire chooses how requests to endpoint go out on client.
func newWire(client aws.HTTPClient, endpoint string) *wire {
	w := &wire{client: client}
	bc, ok := client.(*awshttp.BuildableClient)
	if !ok {
		return w
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return w
	}
	tr := bc.GetTransport()
	if tr.Proxy != nil {
		if p, err := tr.Proxy(&http.Request{Method: http.MethodPost, URL: u, Header: http.Header{}}); err != nil || p != nil {
			return w
		}
	}
	w.uri = fasthttp.AcquireURI()
	if err := w.uri.Parse(nil, []byte(endpoint)); err != nil {
		return w
	}
	w.fast = newHostClient(u, tr, bc.GetDialer())
	return w
}

// hostClientMinConns is the fewest connections the host client may open:
// the poller's own concurrency ceiling keeps it well below.
const hostClientMinConns = 512

func newHostClient(u *url.URL, tr *http.Transport, dialer *net.Dialer) *fasthttp.HostClient {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	var tlsConfig *tls.Config
	if tr.TLSClientConfig != nil {
		tlsConfig = tr.TLSClientConfig.Clone()
	} else {
		tlsConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if tlsConfig.ServerName == "" {
		tlsConfig.ServerName = host
	}
	tlsConfig.NextProtos = []string{"http/1.1"}
	d := *dialer
	return &fasthttp.HostClient{
		Addr:      net.JoinHostPort(host, port),
		IsTLS:     u.Scheme == "https",
		TLSConfig: tlsConfig,
		DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
			dd := d
			if dd.Timeout <= 0 || timeout < dd.Timeout {
				dd.Timeout = timeout
			}
			return dd.Dial("tcp", addr)
		},
		MaxConns:                 max(hostClientMinConns, 2*tr.MaxIdleConnsPerHost),
		MaxConnWaitTimeout:       time.Second,
		MaxIdleConnDuration:      cmp.Or(max(tr.IdleConnTimeout, 0), 90*time.Second),
		MaxResponseBodySize:      answerLimit,
		NoDefaultUserAgentHeader: true,
		DisablePathNormalizing:   true,
		// A keep-alive connection that fails before the first byte of the
		// answer (the server closed it while it was idle) is tried once
		// more on a new one: GetQueueAttributes only reads.
		MaxIdemponentCallAttempts: 2,
		RetryIfErr: func(_ *fasthttp.Request, attempts int, _ error) (bool, bool) {
			return false, attempts < 2
		},
	}
}

// outgoing is a signed request.
type outgoing struct {
	endpoint  string
	body      []byte
	sig       signature
	userAgent string
}

// each calls set with every header of the request but Host and
// Content-Length.
func (o *outgoing) each(set func(k, v string)) {
	set("Content-Type", directRequest.contentType)
	set("X-Amz-Target", directRequest.target)
	set("X-Amzn-Query-Mode", directRequest.queryMode)
	set("X-Amz-Date", o.sig.amzDate)
	if o.sig.securityToken != "" {
		set("X-Amz-Security-Token", o.sig.securityToken)
	}
	set("Authorization", o.sig.authorization)
	set("User-Agent", o.userAgent)
}

// roundTrip sends o and reads the answer whole: up to answerLimit for a
// success, errorBodyLimit for an error. Errors are the SDK's: a canceled
// call is a *smithy.CanceledError, any other failure to send or read a
// *smithyhttp.RequestSendError.
func (w *wire) roundTrip(ctx context.Context, o *outgoing, x *exchange) error {
	if w.fast == nil {
		return w.viaClient(ctx, o, x)
	}
	if err := ctx.Err(); err != nil {
		return &smithy.CanceledError{Err: err}
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.DisableNormalizing()
	req.Header.SetMethod(http.MethodPost)
	req.SetURI(w.uri)
	req.Header.SetHost(o.sig.host)
	o.each(req.Header.Set)
	req.SetBodyRaw(o.body)
	resp := fasthttp.AcquireResponse()
	var err error
	if deadline, ok := ctx.Deadline(); ok {
		err = w.fast.DoDeadline(req, resp, deadline)
	} else {
		err = w.fast.Do(req, resp)
	}
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		if ctx.Err() != nil || errors.Is(err, fasthttp.ErrTimeout) {
			return &smithy.CanceledError{Err: errors.Join(err, cmp.Or(ctx.Err(), context.DeadlineExceeded))}
		}
		return &smithyhttp.RequestSendError{Err: err}
	}
	x.status, x.resp, x.body = resp.StatusCode(), resp, resp.Body()
	if x.status < 200 || x.status >= 300 {
		x.header = http.Header{}
		for k, v := range resp.Header.All() {
			x.header.Add(string(k), string(v))
		}
		if len(x.body) > errorBodyLimit {
			x.body = x.body[:errorBodyLimit]
		}
	}
	return nil
}

// viaClient sends o through the HTTP client's Do.
func (w *wire) viaClient(ctx context.Context, o *outgoing, x *exchange) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.endpoint, bytes.NewReader(o.body))
	if err != nil {
		return &smithy.SerializationError{Err: err}
	}
	req.Host = o.sig.host
	o.each(req.Header.Set)
	resp, err := w.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return &smithy.CanceledError{Err: err}
		}
		return &smithyhttp.RequestSendError{Err: err}
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyLimit))
		_ = resp.Body.Close()
	}()
	limit := int64(answerLimit)
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		limit = errorBodyLimit
	}
	buf := answerBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	x.buf = buf
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, limit)); err != nil {
		return readError(ctx, err)
	}
	x.status, x.header, x.body = resp.StatusCode, resp.Header, buf.Bytes()
	return nil
}

// answerBuffers hold answers read through an HTTP client's Do while they
// are decoded: one read of the body, no buffer made per call.
var answerBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
