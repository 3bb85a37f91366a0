package keda

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeDecisions is a Decisions whose groups the test sets.
type fakeDecisions struct {
	mu     sync.Mutex
	groups map[string]readmodel.Latest
}

func (f *fakeDecisions) Latest(g string) (readmodel.Latest, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.groups[g]
	return l, ok
}

func (f *fakeDecisions) set(g string, l readmodel.Latest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups[g] = l
}

func decided(n int, held bool) readmodel.Latest {
	return readmodel.Latest{Held: true, Decision: &model.Decision{DesiredWorkers: n, Held: held}}
}

// serve starts the scaler on a loopback port and returns a client of it.
func serve(t testing.TB, src Decisions, poll time.Duration) pb.ExternalScalerClient {
	t.Helper()
	srv, err := NewServer(New(src, poll, 0), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return serveServer(t, srv)
}

// serveServer serves srv on a loopback port and returns a client of it.
func serveServer(t testing.TB, srv *grpc.Server) pb.ExternalScalerClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", srv, func(a net.Addr) { addr <- a }) }()
	var a net.Addr
	select {
	case a = <-addr:
	case err := <-done:
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(a.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return pb.NewExternalScalerClient(conn)
}

func ref(group string) *pb.ScaledObjectRef {
	md := map[string]string{"scalerAddress": "checker:9103"}
	if group != "" {
		md[GroupKey] = group
	}
	return &pb.ScaledObjectRef{Name: "workers", Namespace: "jobs", ScalerMetadata: md}
}

// TestHPALandsOnTheDecidedCount: for each decided count, the HPA's rule
// for an AverageValue external metric, ceil(value ÷ target), applied to
// the scaler's GetMetricSpec and GetMetrics answers gives that count from
// zero replicas, and IsActive is whether it is above zero.
func TestHPALandsOnTheDecidedCount(t *testing.T) {
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": {Held: true}}}
	c := serve(t, src, 0)
	ctx := context.Background()
	spec, err := c.GetMetricSpec(ctx, ref("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(spec.MetricSpecs) != 1 || spec.MetricSpecs[0].TargetSizeFloat != 1 || spec.MetricSpecs[0].MetricName != "queue-checker-jobs" {
		t.Fatalf("GetMetricSpec = %v, want one metric queue-checker-jobs with targetSizeFloat 1", spec)
	}
	target := spec.MetricSpecs[0].TargetSizeFloat
	for _, n := range []int{0, 1, 2, 7, 23, 480, 5000} {
		src.set("jobs", decided(n, false))
		m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("jobs"), MetricName: "s0-queue-checker-jobs"})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.MetricValues) != 1 || m.MetricValues[0].MetricName != "s0-queue-checker-jobs" {
			t.Fatalf("GetMetrics = %v, want one value named as asked", m)
		}
		v := m.MetricValues[0]
		if got := ReplicasFor([]float64{v.MetricValueFloat}, target, 0); got != n {
			t.Errorf("decided %d: HPA ceil(%v / %v) = %d", n, v.MetricValueFloat, target, got)
		}
		if v.MetricValue != int64(n) {
			t.Errorf("decided %d: metricValue (deprecated int) = %d", n, v.MetricValue)
		}
		a, err := c.IsActive(ctx, ref("jobs"))
		if err != nil {
			t.Fatal(err)
		}
		if a.Result != (n > 0) {
			t.Errorf("decided %d: IsActive = %v", n, a.Result)
		}
	}
}

// TestReplicasForTolerance: the HPA keeps its count within 10 % of the
// target, so a decided count close to the current one at large counts is
// not applied; this is the HPA's rule, documented in docs/kubernetes.md.
func TestReplicasForTolerance(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		value          float64
		current, wants int
	}{
		{0, 0, 0}, {3, 0, 3}, {3, 1, 3}, {10, 10, 10}, {21, 20, 20}, {23, 20, 23}, {19, 20, 20}, {17, 20, 17}, {2.5, 1, 3},
	} {
		if got := ReplicasFor([]float64{tc.value}, 1, tc.current); got != tc.wants {
			t.Errorf("value %v, current %d: %d replicas, want %d", tc.value, tc.current, got, tc.wants)
		}
	}
}

// TestHeldDecisionKeepsTheCount: a held decision (stale or missing data)
// answers the count it holds, never a drop.
func TestHeldDecisionKeepsTheCount(t *testing.T) {
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(12, false)}}
	c := serve(t, src, 0)
	src.set("jobs", decided(12, true))
	m, err := c.GetMetrics(context.Background(), &pb.GetMetricsRequest{ScaledObjectRef: ref("jobs")})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.MetricValues[0].MetricValueFloat; got != 12 {
		t.Errorf("held decision: GetMetrics = %v, want the held 12", got)
	}
	if got := m.MetricValues[0].MetricName; got != "queue-checker-jobs" {
		t.Errorf("metric name without one asked = %q", got)
	}
}

// TestScalerErrors: each way a request can be wrong gets its gRPC code and
// a message naming what is at fault.
func TestScalerErrors(t *testing.T) {
	src := &fakeDecisions{groups: map[string]readmodel.Latest{
		"starting":  {Held: true},
		"elsewhere": {Held: false, Owner: "checker-b"},
		"unowned":   {Held: false},
	}}
	huge := strings.Repeat("g", 3<<20)
	c := serve(t, src, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		call  func() error
		code  codes.Code
		words string
	}{
		{"no metadata", func() error { _, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("")}); return err }, codes.InvalidArgument, "scalerMetadata.group: required"},
		{"no ref", func() error { _, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{}); return err }, codes.InvalidArgument, "scaledObjectRef"},
		{"spec, no metadata", func() error { _, err := c.GetMetricSpec(ctx, ref("")); return err }, codes.InvalidArgument, "scalerMetadata.group"},
		{"active, no metadata", func() error { _, err := c.IsActive(ctx, ref("")); return err }, codes.InvalidArgument, "scalerMetadata.group"},
		{"unknown group", func() error {
			_, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("nope")})
			return err
		}, codes.NotFound, `no group named "nope"`},
		{"spec, unknown group", func() error { _, err := c.GetMetricSpec(ctx, ref("nope")); return err }, codes.NotFound, `"nope"`},
		{"no decision yet", func() error {
			_, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("starting")})
			return err
		}, codes.Unavailable, "no decision yet"},
		{"held elsewhere", func() error { _, err := c.IsActive(ctx, ref("elsewhere")); return err }, codes.Unavailable, "checker-b"},
		{"held by nobody", func() error { _, err := c.IsActive(ctx, ref("unowned")); return err }, codes.Unavailable, `group "unowned" is not held by any checker yet`},
		{"a 3 MB name", func() error { _, err := c.IsActive(ctx, ref(huge)); return err }, codes.NotFound, fmt.Sprintf(`"%s"… (%d bytes)`, huge[:128], len(huge))},
	} {
		err := tc.call()
		if status.Code(err) != tc.code || !strings.Contains(status.Convert(err).Message(), tc.words) {
			t.Errorf("%s: got %.300v, want code %s with %.300q", tc.name, err, tc.code, tc.words)
		}
		if n := len(status.Convert(err).Message()); n > 512 {
			t.Errorf("%s: the error is %d bytes long, want the input cut short", tc.name, n)
		}
	}
	// The spec needs no decision: KEDA asks for it when it makes the HPA.
	if _, err := c.GetMetricSpec(ctx, ref("starting")); err != nil {
		t.Errorf("GetMetricSpec before the first decision: %v", err)
	}
}

// TestStreamsAreBounded: streams beyond the most open at once are refused
// with ResourceExhausted; one closed makes room for another.
func TestStreamsAreBounded(t *testing.T) {
	const most = 3
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(2, false)}}
	srv, err := NewServer(New(src, 10*time.Millisecond, most), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := serveServer(t, srv)
	open := func() (context.CancelFunc, error) {
		ctx, cancel := context.WithCancel(context.Background())
		stream, err := c.StreamIsActive(ctx, ref("jobs"))
		if err != nil {
			cancel()
			return nil, err
		}
		if _, err := stream.Recv(); err != nil {
			cancel()
			return nil, err
		}
		return cancel, nil
	}
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i := range most {
		cancel, err := open()
		if err != nil {
			t.Fatalf("stream %d of %d: %v", i+1, most, err)
		}
		cancels = append(cancels, cancel)
	}
	if _, err := open(); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("stream %d beyond %d: %v, want ResourceExhausted", most+1, most, err)
	}
	cancels[0]()
	cancels = cancels[1:]
	var err2 error
	for range 100 { // the server sees the close within a moment
		var cancel context.CancelFunc
		if cancel, err2 = open(); err2 == nil {
			cancels = append(cancels, cancel)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err2 != nil {
		t.Errorf("a stream after one closed: %v", err2)
	}
}

// TestStreamIsActivePushesChanges: the stream sends the state at once,
// then each change within the poll period, and nothing while it stays.
func TestStreamIsActivePushesChanges(t *testing.T) {
	const poll = 20 * time.Millisecond
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": {Held: true}}}
	c := serve(t, src, poll)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.StreamIsActive(ctx, ref("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan bool, 16)
	go func() {
		for {
			r, err := stream.Recv()
			if err != nil {
				close(got)
				return
			}
			got <- r.Result
		}
	}()
	expect := func(want bool, within time.Duration) time.Duration {
		t.Helper()
		start := time.Now()
		select {
		case v, ok := <-got:
			if !ok || v != want {
				t.Fatalf("stream sent %v (open %v), want %v", v, ok, want)
			}
		case <-time.After(within):
			t.Fatalf("stream sent nothing within %s, want %v", within, want)
		}
		return time.Since(start)
	}
	time.Sleep(3 * poll) // no decision yet: nothing is sent
	src.set("jobs", decided(0, false))
	expect(false, time.Second)
	src.set("jobs", decided(4, false))
	t.Logf("0 -> 4 pushed after %s", expect(true, time.Second))
	src.set("jobs", decided(9, false)) // still active: nothing new
	select {
	case v := <-got:
		t.Fatalf("stream sent %v for 4 -> 9, want nothing", v)
	case <-time.After(5 * poll):
	}
	src.set("jobs", decided(0, true))
	expect(false, time.Second)
	cancel()
	for range got {
	}
}

// TestStreamMetricSpec: the stream sends GetMetricSpec's answer at once,
// then nothing, and stays open until the client leaves; an unknown group
// ends it with NotFound.
func TestStreamMetricSpec(t *testing.T) {
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(3, false)}}
	c := serve(t, src, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := c.StreamMetricSpec(ctx, ref("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.GetMetricSpec(ctx, ref("jobs"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.MetricSpecs) != 1 || got.MetricSpecs[0].MetricName != want.MetricSpecs[0].MetricName ||
		got.MetricSpecs[0].TargetSizeFloat != 1 || got.MetricSpecs[0].MetricName != "queue-checker-jobs" {
		t.Errorf("streamed %v, GetMetricSpec %v", got, want)
	}
	more := make(chan error, 1)
	go func() { _, err := stream.Recv(); more <- err }()
	select {
	case err := <-more:
		t.Fatalf("the stream sent again or ended: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	if err := <-more; status.Code(err) != codes.Canceled {
		t.Errorf("after the client left: %v, want Canceled", err)
	}

	bad, err := c.StreamMetricSpec(context.Background(), ref("nope"))
	if err == nil {
		_, err = bad.Recv()
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown group: %v, want NotFound", err)
	}
}
