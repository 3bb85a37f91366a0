package awstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// FaultKind is what a Proxy does to a request instead of, or before,
// forwarding it.
type FaultKind int

// The faults a Proxy can inject.
const (
	// FaultServerError answers 500 with an InternalFailure error in the
	// request's protocol.
	FaultServerError FaultKind = iota + 1
	// FaultThrottle answers 400 with a throttling error in the request's
	// protocol: for SQS (AWS JSON 1.0) the RequestThrottled shape with its
	// query-compatible code AWS.SimpleQueueService.RequestThrottled in the
	// x-amzn-query-error header; ThrottlingException for other JSON services;
	// Throttling for the query protocol.
	FaultThrottle
	// FaultSlow holds the request for Fault.Delay, then forwards it. A
	// client that gives up first sees no answer.
	FaultSlow
	// FaultMalformed answers 200 with the protocol's content type and a
	// truncated body that does not parse.
	FaultMalformed
	// FaultReset closes the connection without answering.
	FaultReset
	// FaultLoseAnswer forwards the request, so that the service acts on
	// it, then closes the connection without its answer: a write that
	// landed though its caller saw it fail.
	FaultLoseAnswer
	// FaultSignatureExpired refuses the request's signature for its time,
	// as AWS does when the signing time (X-Amz-Date) is more than 5
	// minutes from its clock: HTTP 400 with the proxy's time in the Date
	// header and, in AWS JSON, the InvalidSignatureException shape with
	// a "Signature expired" or "Signature not yet current" message (in the
	// query protocol, SignatureDoesNotMatch). Select the requests with
	// MatchSignatureSkewed: moto checks a signature against the time the
	// request itself names, never against its clock.
	FaultSignatureExpired
)

// String names the fault kind.
func (k FaultKind) String() string {
	switch k {
	case FaultServerError:
		return "server_error"
	case FaultThrottle:
		return "throttle"
	case FaultSlow:
		return "slow"
	case FaultMalformed:
		return "malformed"
	case FaultReset:
		return "reset"
	case FaultLoseAnswer:
		return "lose_answer"
	case FaultSignatureExpired:
		return "signature_expired"
	}
	return fmt.Sprintf("FaultKind(%d)", int(k))
}

// Fault describes one injected failure.
type Fault struct {
	Kind FaultKind
	// Delay is how long FaultSlow holds a request.
	Delay time.Duration
	// Code replaces the error code of FaultThrottle and FaultServerError.
	Code string
	// Body replaces the answer of FaultMalformed: for example well-formed
	// JSON that lacks a field the caller needs.
	Body string
	// Times bounds how many requests the fault affects; 0 means every
	// matching request until the fault is removed.
	Times int
}

// Request is what a Match sees of an incoming request. Body is the whole
// request body; it is forwarded unchanged.
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Protocol names the AWS wire protocol of the request: "json" (AWS JSON
// 1.0 or 1.1), "query" (form-encoded), "cbor" (RPC v2 CBOR) or "" when
// unknown.
func (r *Request) Protocol() string {
	ct := r.Header.Get("Content-Type")
	switch {
	case strings.HasPrefix(ct, "application/x-amz-json"):
		return "json"
	case strings.HasPrefix(ct, "application/x-www-form-urlencoded"):
		return "query"
	case strings.HasPrefix(ct, "application/cbor") || r.Header.Get("Smithy-Protocol") == "rpc-v2-cbor":
		return "cbor"
	}
	return ""
}

// Operation names the API operation of the request (GetQueueAttributes,
// DescribeAutoScalingGroups, ...), whatever its protocol; "" when unknown.
func (r *Request) Operation() string {
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		return target[strings.LastIndex(target, ".")+1:]
	}
	if r.Protocol() == "query" {
		if form, err := url.ParseQuery(string(r.Body)); err == nil && form.Get("Action") != "" {
			return form.Get("Action")
		}
	}
	if a := r.Query.Get("Action"); a != "" {
		return a
	}
	if i := strings.LastIndex(r.Path, "/operation/"); i >= 0 {
		return r.Path[i+len("/operation/"):]
	}
	return ""
}

// Match selects the requests a fault applies to.
type Match func(*Request) bool

// MatchAll selects every request.
func MatchAll() Match { return func(*Request) bool { return true } }

// MatchOperation selects the requests of one API operation.
func MatchOperation(op string) Match {
	return func(r *Request) bool { return r.Operation() == op }
}

// MatchBody selects the requests whose body contains s.
func MatchBody(s string) Match {
	return func(r *Request) bool { return bytes.Contains(r.Body, []byte(s)) }
}

// MatchQueue selects the requests that name the queue URL, in either the
// JSON or the form-encoded spelling.
func MatchQueue(queueURL string) Match {
	quoted, _ := json.Marshal(queueURL)
	escaped := strings.ReplaceAll(string(quoted), "/", `\/`)
	form := url.QueryEscape(queueURL)
	return func(r *Request) bool {
		return bytes.Contains(r.Body, quoted) || bytes.Contains(r.Body, []byte(escaped)) ||
			bytes.Contains(r.Body, []byte(form))
	}
}

// signatureTimeLimit is how far AWS lets a signing time be from its clock.
const signatureTimeLimit = 5 * time.Minute

// MatchSignatureSkewed selects the requests signed at a time (X-Amz-Date)
// more than 5 minutes from the proxy's clock, as AWS refuses them, and
// those without a readable X-Amz-Date.
func MatchSignatureSkewed() Match {
	return func(r *Request) bool {
		signed, err := time.Parse(amzDateFormat, r.Header.Get("X-Amz-Date"))
		return err != nil || time.Since(signed).Abs() > signatureTimeLimit
	}
}

const amzDateFormat = "20060102T150405Z"

// And selects the requests every one of ms selects.
func And(ms ...Match) Match {
	return func(r *Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}

type rule struct {
	id    int
	match Match
	fault Fault
	used  int
}

// Proxy is a reverse proxy in front of an HTTP endpoint (moto's server)
// that injects faults into the requests it is told to. Faults are added and
// removed while it runs, so a test can fail a service and then let it
// recover. Rules are checked in the order they were added; the first one
// that matches and has uses left applies.
type Proxy struct {
	// URL is the proxy's address, to use as the clients' endpoint.
	URL string

	srv     *httptest.Server
	forward *httputil.ReverseProxy
	closing chan struct{}
	once    sync.Once

	mu        sync.Mutex
	rules     []*rule
	nextID    int
	observers []observer
	// answers are told of each answer counted by Answered.
	answers  []observer
	calls    map[string]int
	answered map[string]int
	injected map[FaultKind]int
}

type observer struct {
	id int
	f  func(*Request, time.Time)
}

// NewProxy starts a proxy to target (for example Shared(t).URL) and stops
// it when the test ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	p, err := StartProxy(target)
	if err != nil {
		t.Fatalf("start fault proxy: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// StartProxy starts a proxy to target on a free loopback port. The caller
// must Close it.
func StartProxy(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("parse proxy target %q: %w", target, err)
	}
	if u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("proxy target %q: want scheme://host[:port]", target)
	}
	p := &Proxy{
		forward:  httputil.NewSingleHostReverseProxy(u),
		closing:  make(chan struct{}),
		calls:    map[string]int{},
		answered: map[string]int{},
		injected: map[FaultKind]int{},
	}
	p.forward.ModifyResponse = p.countAnswer
	p.srv = httptest.NewServer(p)
	p.URL = p.srv.URL
	return p, nil
}

// Close stops the proxy, releasing the requests it is holding.
func (p *Proxy) Close() {
	p.once.Do(func() {
		close(p.closing)
		p.srv.CloseClientConnections()
		p.srv.Close()
	})
}

// Inject adds a fault for the requests m selects and returns a function
// that removes it.
func (p *Proxy) Inject(m Match, f Fault) (remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	id := p.nextID
	p.rules = append(p.rules, &rule{id: id, match: m, fault: f})
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		for i, r := range p.rules {
			if r.id == id {
				p.rules = append(p.rules[:i], p.rules[i+1:]...)
				return
			}
		}
	}
}

// Observe calls f with every request the proxy receives from now on, and
// the time it arrived, before any fault applies; it returns a function that
// stops the calls. f runs on the request's goroutine, possibly on several at
// once; it must not block nor modify the request.
func (p *Proxy) Observe(f func(req *Request, at time.Time)) (remove func()) {
	return p.addObserver(&p.observers, f)
}

// ObserveAnswers calls f with every request the proxy forwards and the
// target answers while its client still waits (those Answered counts), and
// the time the answer came, before the client has it; it returns a
// function that stops the calls. req is the value Observe was given for
// the same request. f runs on the request's goroutine, possibly on several
// at once; it must not block nor modify the request.
func (p *Proxy) ObserveAnswers(f func(req *Request, at time.Time)) (remove func()) {
	return p.addObserver(&p.answers, f)
}

// addObserver adds f to the observers *list (Observe's or
// ObserveAnswers'), and returns the function that removes it.
func (p *Proxy) addObserver(list *[]observer, f func(req *Request, at time.Time)) (remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	id := p.nextID
	*list = append(*list, observer{id: id, f: f})
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		*list = slices.DeleteFunc(*list, func(o observer) bool { return o.id == id })
	}
}

// Clear removes every fault: from now on requests pass through.
func (p *Proxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// Calls reports how many requests of an operation the proxy received
// (forwarded or not); op "" counts every request.
func (p *Proxy) Calls(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return count(p.calls, op)
}

// count is counts[op], or the sum of counts when op is "".
func count(counts map[string]int, op string) int {
	if op != "" {
		return counts[op]
	}
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// Answered reports how many requests of an operation the proxy forwarded
// and answered while their client still waited: calls the client gave up
// on (its deadline passed while a slow fault held them, or while the
// target answered) are not counted, nor faulted ones. op "" counts every
// operation.
func (p *Proxy) Answered(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return count(p.answered, op)
}

// Injected reports how many requests received a fault of kind k.
func (p *Proxy) Injected(k FaultKind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.injected[k]
}

// ResetCounts sets the call and injection counts back to zero.
func (p *Proxy) ResetCounts() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.calls)
	clear(p.answered)
	clear(p.injected)
}

// pick records the request, tells the observers, and returns the fault to
// apply, if any.
func (p *Proxy) pick(req *Request, at time.Time) (Fault, bool) {
	p.mu.Lock()
	observers := slices.Clone(p.observers)
	p.mu.Unlock()
	for _, o := range observers {
		o.f(req, at)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls[req.Operation()]++
	for _, r := range p.rules {
		if r.fault.Times > 0 && r.used >= r.fault.Times {
			continue
		}
		if r.match(req) {
			r.used++
			p.injected[r.fault.Kind]++
			return r.fault, true
		}
	}
	return Fault{}, false
}

// ServeHTTP applies the first matching fault, or forwards the request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read request body: "+err.Error(), http.StatusBadRequest)
		return
	}
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := &Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Header: r.Header, Body: body}

	f, ok := p.pick(req, at)
	if !ok {
		p.pass(w, r, req)
		return
	}
	switch f.Kind {
	case FaultSlow:
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
			p.pass(w, r, req)
		case <-r.Context().Done():
		case <-p.closing:
		}
	case FaultThrottle:
		writeError(w, req, http.StatusBadRequest, f.Code, "Rate exceeded", true)
	case FaultServerError:
		writeError(w, req, http.StatusInternalServerError, f.Code, "injected internal failure", false)
	case FaultMalformed:
		writeMalformed(w, req, f.Body)
	case FaultSignatureExpired:
		writeSignatureExpired(w, req, at)
	case FaultReset:
		reset(w)
	case FaultLoseAnswer:
		p.forward.ServeHTTP(httptest.NewRecorder(), r.WithContext(context.WithoutCancel(r.Context())))
		reset(w)
	default:
		http.Error(w, "unknown fault "+f.Kind.String(), http.StatusInternalServerError)
	}
}

// requestKey carries a forwarded request in its context, for countAnswer.
type requestKey struct{}

// pass forwards a request to the target.
func (p *Proxy) pass(w http.ResponseWriter, r *http.Request, req *Request) {
	p.forward.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestKey{}, req)))
}

// countAnswer counts the target's answer to a forwarded request when its
// client still waits for it, and tells the answers' observers. It runs
// before the answer is passed on, so a client that has its answer finds it
// counted.
func (p *Proxy) countAnswer(resp *http.Response) error {
	ctx := resp.Request.Context()
	if ctx.Err() != nil {
		return nil
	}
	at := time.Now()
	req, _ := ctx.Value(requestKey{}).(*Request)
	op := ""
	if req != nil {
		op = req.Operation()
	}
	p.mu.Lock()
	p.answered[op]++
	answers := slices.Clone(p.answers)
	p.mu.Unlock()
	if req != nil {
		for _, o := range answers {
			o.f(req, at)
		}
	}
	return nil
}

// reset closes the connection of w without an answer.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "connection cannot be reset", http.StatusInternalServerError)
		return
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

// writeError answers with an AWS error in the request's protocol.
func writeError(w http.ResponseWriter, req *Request, status int, code, message string, throttle bool) {
	isSQS := strings.HasPrefix(req.Header.Get("X-Amz-Target"), "AmazonSQS.")
	switch req.Protocol() {
	case "json":
		typ, queryCode, fault := "InternalFailure", "InternalFailure", "Receiver"
		if throttle {
			typ, queryCode, fault = "ThrottlingException", "", "Sender"
			if isSQS {
				typ, queryCode = "com.amazonaws.sqs#RequestThrottled", "AWS.SimpleQueueService.RequestThrottled"
			}
		}
		if code != "" {
			typ, queryCode = code, code
		}
		if isSQS && queryCode != "" {
			w.Header().Set("X-Amzn-Query-Error", queryCode+";"+fault)
		}
		w.Header().Set("Content-Type", jsonContentType(req))
		w.WriteHeader(status)
		body, _ := json.Marshal(map[string]string{"__type": typ, "message": message})
		_, _ = w.Write(body)
	default:
		typ, fault := "InternalFailure", "Receiver"
		if throttle {
			typ, fault = "Throttling", "Sender"
		}
		if code != "" {
			typ = code
		}
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
			`<ErrorResponse><Error><Type>%s</Type><Code>%s</Code><Message>%s</Message></Error>`+
			`<RequestId>injected-fault</RequestId></ErrorResponse>`, fault, typ, message)
	}
}

// writeSignatureExpired refuses the request's signing time against now.
func writeSignatureExpired(w http.ResponseWriter, req *Request, now time.Time) {
	now = now.UTC()
	signed := req.Header.Get("X-Amz-Date")
	msg := fmt.Sprintf("Signature expired: %s is now earlier than %s (%s - 5 min.)",
		signed, now.Add(-signatureTimeLimit).Format(amzDateFormat), now.Format(amzDateFormat))
	if t, err := time.Parse(amzDateFormat, signed); err == nil && t.After(now) {
		msg = fmt.Sprintf("Signature not yet current: %s is still later than %s (%s + 5 min.)",
			signed, now.Add(signatureTimeLimit).Format(amzDateFormat), now.Format(amzDateFormat))
	}
	w.Header().Set("Date", now.Format(http.TimeFormat))
	if req.Protocol() == "json" {
		w.Header().Set("Content-Type", jsonContentType(req))
		w.WriteHeader(http.StatusBadRequest)
		body, _ := json.Marshal(map[string]string{"__type": "com.amazon.coral.service#InvalidSignatureException", "message": msg})
		_, _ = w.Write(body)
		return
	}
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+
		`<ErrorResponse><Error><Type>Sender</Type><Code>SignatureDoesNotMatch</Code><Message>%s</Message></Error>`+
		`<RequestId>injected-fault</RequestId></ErrorResponse>`, msg)
}

// writeMalformed answers 200 with body, or with a body cut off in the
// middle.
func writeMalformed(w http.ResponseWriter, req *Request, body string) {
	if body != "" {
		w.Header().Set("Content-Type", jsonContentType(req))
		if req.Protocol() != "json" {
			w.Header().Set("Content-Type", "text/xml")
		}
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
		return
	}
	switch req.Protocol() {
	case "json":
		w.Header().Set("Content-Type", jsonContentType(req))
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, `{"Attributes": {"ApproximateNumberOfMessages": "1`)
	case "cbor":
		w.Header().Set("Content-Type", "application/cbor")
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte{0xbf, 0x61})
	default:
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusOK)
		_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><%sResponse><%sResult><Broken`,
			req.Operation(), req.Operation())
	}
}

func jsonContentType(req *Request) string {
	if ct := req.Header.Get("Content-Type"); ct != "" {
		return ct
	}
	return "application/x-amz-json-1.0"
}
