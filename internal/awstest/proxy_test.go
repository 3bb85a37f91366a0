package awstest

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// backend is an upstream that answers every request with "upstream:" and
// the request body, and counts what reached it.
type backend struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func newBackend(t *testing.T) *backend {
	t.Helper()
	b := &backend{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "upstream:"+string(body))
	}))
	t.Cleanup(b.srv.Close)
	return b
}

const (
	queueA = "http://127.0.0.1:5000/123456789012/queue-a"
	queueB = "http://127.0.0.1:5000/123456789012/queue-b"
)

type call struct {
	status int
	header http.Header
	body   string
	err    error
}

// sqsCall sends what an SQS client sends for GetQueueAttributes of queue.
func sqsCall(t *testing.T, client *http.Client, url, queue string) call {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"QueueUrl": queue, "AttributeNames": []string{"ApproximateNumberOfMessages"}})
	return send(t, client, url, "application/x-amz-json-1.0", "AmazonSQS.GetQueueAttributes", string(body))
}

func send(t *testing.T, client *http.Client, url, contentType, target, body string) call {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if target != "" {
		req.Header.Set("X-Amz-Target", target)
	}
	resp, err := client.Do(req)
	if err != nil {
		return call{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return call{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func TestProxyFaults(t *testing.T) {
	t.Parallel()
	type check func(t *testing.T, c call)
	wantStatus := func(code int) check {
		return func(t *testing.T, c call) {
			t.Helper()
			if c.err != nil {
				t.Fatalf("request failed: %v", c.err)
			}
			if c.status != code {
				t.Fatalf("status %d, want %d (body %q)", c.status, code, c.body)
			}
		}
	}
	jsonType := func(want string) check {
		return func(t *testing.T, c call) {
			t.Helper()
			var e struct {
				Type string `json:"__type"`
			}
			if err := json.Unmarshal([]byte(c.body), &e); err != nil {
				t.Fatalf("error body %q is not JSON: %v", c.body, err)
			}
			if e.Type != want {
				t.Fatalf("__type %q, want %q", e.Type, want)
			}
		}
	}
	header := func(name, want string) check {
		return func(t *testing.T, c call) {
			t.Helper()
			if got := c.header.Get(name); got != want {
				t.Fatalf("header %s = %q, want %q", name, got, want)
			}
		}
	}
	tests := []struct {
		name        string
		fault       Fault
		contentType string
		target      string
		body        string
		checks      []check
		wantUpHits  int64
	}{
		{
			name:        "throttle sqs json",
			fault:       Fault{Kind: FaultThrottle},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{}`,
			checks: []check{wantStatus(400), jsonType("com.amazonaws.sqs#RequestThrottled"),
				header("X-Amzn-Query-Error", "AWS.SimpleQueueService.RequestThrottled;Sender"),
				header("Content-Type", "application/x-amz-json-1.0")},
		},
		{
			name:        "throttle with chosen code",
			fault:       Fault{Kind: FaultThrottle, Code: "ThrottlingException"},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{}`,
			checks: []check{wantStatus(400), jsonType("ThrottlingException"),
				header("X-Amzn-Query-Error", "ThrottlingException;Sender")},
		},
		{
			name:        "throttle other json service",
			fault:       Fault{Kind: FaultThrottle},
			contentType: "application/x-amz-json-1.1", target: "AmazonEC2ContainerServiceV20141113.DescribeServices", body: `{}`,
			checks: []check{wantStatus(400), jsonType("ThrottlingException"), header("X-Amzn-Query-Error", "")},
		},
		{
			name:        "throttle query protocol",
			fault:       Fault{Kind: FaultThrottle},
			contentType: "application/x-www-form-urlencoded", body: "Action=DescribeAutoScalingGroups&Version=2011-01-01",
			checks: []check{wantStatus(400), func(t *testing.T, c call) {
				var e struct {
					Error struct{ Code, Type string }
				}
				if err := xml.Unmarshal([]byte(c.body), &e); err != nil {
					t.Fatalf("error body %q is not XML: %v", c.body, err)
				}
				if e.Error.Code != "Throttling" || e.Error.Type != "Sender" {
					t.Fatalf("error %+v, want Throttling/Sender", e.Error)
				}
			}},
		},
		{
			name:        "server error",
			fault:       Fault{Kind: FaultServerError},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{}`,
			checks: []check{wantStatus(500), jsonType("InternalFailure"), header("X-Amzn-Query-Error", "InternalFailure;Receiver")},
		},
		{
			name:        "malformed json",
			fault:       Fault{Kind: FaultMalformed},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{}`,
			checks: []check{wantStatus(200), func(t *testing.T, c call) {
				var v any
				if err := json.Unmarshal([]byte(c.body), &v); err == nil {
					t.Fatalf("body %q parses, want a malformed one", c.body)
				}
			}},
		},
		{
			name:        "malformed with a chosen body",
			fault:       Fault{Kind: FaultMalformed, Body: `{"Attributes":{}}`},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{}`,
			checks: []check{wantStatus(200), header("Content-Type", "application/x-amz-json-1.0"), func(t *testing.T, c call) {
				if c.body != `{"Attributes":{}}` {
					t.Fatalf("body %q, want the chosen one", c.body)
				}
			}},
		},
		{
			name:        "malformed xml",
			fault:       Fault{Kind: FaultMalformed},
			contentType: "application/x-www-form-urlencoded", body: "Action=DescribeAutoScalingGroups",
			checks: []check{wantStatus(200), func(t *testing.T, c call) {
				var v struct{}
				if err := xml.Unmarshal([]byte(c.body), &v); err == nil {
					t.Fatalf("body %q parses, want a malformed one", c.body)
				}
			}},
		},
		{
			name:        "reset",
			fault:       Fault{Kind: FaultReset},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{}`,
			checks: []check{func(t *testing.T, c call) {
				if c.err == nil {
					t.Fatalf("request answered %d, want a broken connection", c.status)
				}
			}},
		},
		{
			name:        "answer lost after the upstream acted",
			fault:       Fault{Kind: FaultLoseAnswer},
			contentType: "application/x-amz-json-1.0", target: "DynamoDB_20120810.UpdateItem", body: `{}`,
			checks: []check{func(t *testing.T, c call) {
				if c.err == nil {
					t.Fatalf("request answered %d, want a broken connection", c.status)
				}
			}},
			wantUpHits: 1,
		},
		{
			name:        "slow but within the client's patience",
			fault:       Fault{Kind: FaultSlow, Delay: 20 * time.Millisecond},
			contentType: "application/x-amz-json-1.0", target: "AmazonSQS.GetQueueAttributes", body: `{"x":1}`,
			checks: []check{wantStatus(200), func(t *testing.T, c call) {
				if c.body != `upstream:{"x":1}` {
					t.Fatalf("body %q, want the upstream's answer", c.body)
				}
			}},
			wantUpHits: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newBackend(t)
			p := NewProxy(t, b.srv.URL)
			p.Inject(MatchAll(), tc.fault)
			c := send(t, &http.Client{}, p.URL, tc.contentType, tc.target, tc.body)
			for _, chk := range tc.checks {
				chk(t, c)
			}
			if got := b.hits.Load(); got != tc.wantUpHits {
				t.Errorf("upstream saw %d requests, want %d", got, tc.wantUpHits)
			}
			if got := p.Injected(tc.fault.Kind); got != 1 {
				t.Errorf("Injected(%v) = %d, want 1", tc.fault.Kind, got)
			}
		})
	}
}

func TestProxySlowPastDeadline(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	p := NewProxy(t, b.srv.URL)
	p.Inject(MatchAll(), Fault{Kind: FaultSlow, Delay: time.Hour})
	client := &http.Client{Timeout: 50 * time.Millisecond}
	c := sqsCall(t, client, p.URL, queueA)
	var te interface{ Timeout() bool }
	if !errors.As(c.err, &te) || !te.Timeout() {
		t.Fatalf("err = %v, want a client timeout", c.err)
	}
	if got := b.hits.Load(); got != 0 {
		t.Fatalf("upstream saw %d requests, want 0: the client gave up first", got)
	}
}

func TestProxySelectsAndSwitches(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	p := NewProxy(t, b.srv.URL)
	client := &http.Client{}

	// Only queue A fails; B passes through.
	remove := p.Inject(MatchQueue(queueA), Fault{Kind: FaultServerError})
	if c := sqsCall(t, client, p.URL, queueA); c.status != 500 {
		t.Fatalf("queue A: status %d, want 500", c.status)
	}
	if c := sqsCall(t, client, p.URL, queueB); c.status != 200 || !strings.HasPrefix(c.body, "upstream:") {
		t.Fatalf("queue B: status %d body %q, want the upstream's answer", c.status, c.body)
	}

	// Removing the fault lets A recover.
	remove()
	if c := sqsCall(t, client, p.URL, queueA); c.status != 200 {
		t.Fatalf("queue A after removal: status %d, want 200", c.status)
	}

	// A bounded fault affects only its first uses.
	p.Inject(And(MatchOperation("GetQueueAttributes"), MatchQueue(queueB)), Fault{Kind: FaultThrottle, Times: 2})
	var statuses []int
	for range 3 {
		statuses = append(statuses, sqsCall(t, client, p.URL, queueB).status)
	}
	if statuses[0] != 400 || statuses[1] != 400 || statuses[2] != 200 {
		t.Fatalf("statuses %v, want [400 400 200]", statuses)
	}

	// A predicate over the request, then Clear.
	p.Inject(func(r *Request) bool { return r.Protocol() == "json" }, Fault{Kind: FaultServerError})
	if c := sqsCall(t, client, p.URL, queueB); c.status != 500 {
		t.Fatalf("predicate fault: status %d, want 500", c.status)
	}
	p.Clear()
	if c := sqsCall(t, client, p.URL, queueB); c.status != 200 {
		t.Fatalf("after Clear: status %d, want 200", c.status)
	}

	if got, want := p.Calls("GetQueueAttributes"), 8; got != want {
		t.Errorf("Calls(GetQueueAttributes) = %d, want %d", got, want)
	}
	if got, want := b.hits.Load(), int64(4); got != want {
		t.Errorf("upstream saw %d requests, want %d", got, want)
	}
	p.ResetCounts()
	if got := p.Calls(""); got != 0 {
		t.Errorf("Calls after ResetCounts = %d, want 0", got)
	}
}

func TestProxyObserve(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	p := NewProxy(t, b.srv.URL)
	client := &http.Client{}

	type seen struct {
		op    string
		queue string
		at    time.Time
	}
	var mu sync.Mutex
	var got []seen
	remove := p.Observe(func(r *Request, at time.Time) {
		var in struct {
			QueueURL string `json:"QueueUrl"`
		}
		_ = json.Unmarshal(r.Body, &in)
		mu.Lock()
		got = append(got, seen{op: r.Operation(), queue: in.QueueURL, at: at})
		mu.Unlock()
	})

	// Observers see faulted requests as well as forwarded ones.
	p.Inject(MatchQueue(queueA), Fault{Kind: FaultServerError})
	before := time.Now()
	if c := sqsCall(t, client, p.URL, queueA); c.status != 500 {
		t.Fatalf("queue A: status %d, want 500", c.status)
	}
	if c := sqsCall(t, client, p.URL, queueB); c.status != 200 {
		t.Fatalf("queue B: status %d, want 200", c.status)
	}
	after := time.Now()
	remove()
	if c := sqsCall(t, client, p.URL, queueB); c.status != 200 {
		t.Fatalf("queue B after remove: status %d, want 200", c.status)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("observed %d requests, want 2 (none after remove): %+v", len(got), got)
	}
	for i, want := range []string{queueA, queueB} {
		if got[i].op != "GetQueueAttributes" || got[i].queue != want {
			t.Errorf("request %d: %s of %q, want GetQueueAttributes of %q", i, got[i].op, got[i].queue, want)
		}
		if got[i].at.Before(before) || got[i].at.After(after) {
			t.Errorf("request %d: seen at %s, outside the calls (%s to %s)", i, got[i].at, before, after)
		}
	}
}

func TestRequestOperation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		req    Request
		wantOp string
		wantPr string
	}{
		{"json target", Request{Header: http.Header{"X-Amz-Target": {"AmazonSQS.GetQueueAttributes"},
			"Content-Type": {"application/x-amz-json-1.0"}}}, "GetQueueAttributes", "json"},
		{"query form", Request{Header: http.Header{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}},
			Body: []byte("Action=DescribeAutoScalingGroups&Version=2011-01-01")}, "DescribeAutoScalingGroups", "query"},
		{"cbor path", Request{Path: "/service/GraniteServiceVersion20100801/operation/GetMetricData",
			Header: http.Header{"Smithy-Protocol": {"rpc-v2-cbor"}}}, "GetMetricData", "cbor"},
		{"unknown", Request{Header: http.Header{}}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.req.Operation(); got != tc.wantOp {
				t.Errorf("Operation() = %q, want %q", got, tc.wantOp)
			}
			if got := tc.req.Protocol(); got != tc.wantPr {
				t.Errorf("Protocol() = %q, want %q", got, tc.wantPr)
			}
		})
	}
}

// TestProxyAnswered counts the calls the target answered to a waiting
// client: not a faulted one, nor one whose client gave up while a slow fault
// held it or while the target took its time, but a slow one answered in
// time.
func TestProxyAnswered(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	p := NewProxy(t, b.srv.URL)
	client := &http.Client{Timeout: 5 * time.Second}
	// ObserveAnswers is told of the same requests Answered counts, each
	// the value Observe was given.
	var mu sync.Mutex
	seen := map[*Request]bool{}
	var told []*Request
	p.Observe(func(r *Request, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		seen[r] = true
	})
	stop := p.ObserveAnswers(func(r *Request, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, r)
	})

	if c := sqsCall(t, client, p.URL, queueA); c.status != 200 {
		t.Fatalf("plain call: status %d, want 200", c.status)
	}
	remove := p.Inject(MatchAll(), Fault{Kind: FaultServerError, Times: 1})
	if c := sqsCall(t, client, p.URL, queueA); c.status != 500 {
		t.Fatalf("faulted call: status %d, want 500", c.status)
	}
	remove()
	remove = p.Inject(MatchAll(), Fault{Kind: FaultSlow, Delay: 50 * time.Millisecond, Times: 1})
	if c := sqsCall(t, client, p.URL, queueA); c.status != 200 {
		t.Fatalf("slow call answered in time: status %d, want 200", c.status)
	}
	remove()
	p.Inject(MatchAll(), Fault{Kind: FaultSlow, Delay: time.Hour, Times: 1})
	impatient := &http.Client{Timeout: 50 * time.Millisecond}
	if c := sqsCall(t, impatient, p.URL, queueA); c.err == nil {
		t.Fatalf("call held an hour: status %d, want a client timeout", c.status)
	}

	if got := p.Calls("GetQueueAttributes"); got != 4 {
		t.Errorf("Calls = %d, want 4", got)
	}
	if got := p.Answered("GetQueueAttributes"); got != 2 {
		t.Errorf("Answered = %d, want 2: the plain call and the slow one answered in time", got)
	}
	if got := p.Answered("SendMessage"); got != 0 {
		t.Errorf("Answered(SendMessage) = %d, want 0", got)
	}
	if got := p.Answered(""); got != 2 {
		t.Errorf(`Answered("") = %d, want 2`, got)
	}
	mu.Lock()
	if len(told) != 2 {
		t.Errorf("ObserveAnswers told of %d answers, want 2", len(told))
	}
	for _, r := range told {
		if !seen[r] || r.Operation() != "GetQueueAttributes" {
			t.Errorf("ObserveAnswers told of %s, not a request Observe saw", r.Operation())
		}
	}
	mu.Unlock()
	stop()
	if c := sqsCall(t, client, p.URL, queueA); c.status != 200 {
		t.Fatalf("call after the observer stopped: status %d, want 200", c.status)
	}
	mu.Lock()
	if len(told) != 2 {
		t.Errorf("ObserveAnswers told of %d answers after it was stopped, want 2", len(told))
	}
	mu.Unlock()
	if got := p.Answered(""); got != 3 {
		t.Errorf(`Answered("") = %d after one more call, want 3`, got)
	}
	p.ResetCounts()
	if got := p.Answered("GetQueueAttributes"); got != 0 {
		t.Errorf("Answered after ResetCounts = %d, want 0", got)
	}

	// A target slower than the client: forwarded, never answered.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	ps := NewProxy(t, slow.URL)
	if c := sqsCall(t, impatient, ps.URL, queueA); c.err == nil {
		t.Fatalf("call to a target that does not answer: status %d, want a client timeout", c.status)
	}
	// The proxy's handler ends just after the client gives up.
	deadline := time.Now().Add(5 * time.Second)
	for ps.Calls("GetQueueAttributes") != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if got := ps.Answered("GetQueueAttributes"); got != 0 {
		t.Errorf("Answered = %d for a call the client gave up on while the target took its time, want 0", got)
	}
}
