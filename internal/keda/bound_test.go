package keda

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// listen serves srv on a loopback port until the test ends and returns its
// address.
func listen(t testing.TB, srv *grpc.Server) string {
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
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return a.String()
}

// dial opens a connection of its own to addr.
func dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// openStream opens one stream of the given kind and waits for its first
// answer (or its refusal); close ends it.
func openStream(c pb.ExternalScalerClient, conn *grpc.ClientConn, kind string) (closeIt context.CancelFunc, err error) {
	ctx, cancel := context.WithCancel(context.Background())
	switch kind {
	case "is_active":
		var s pb.ExternalScaler_StreamIsActiveClient
		if s, err = c.StreamIsActive(ctx, ref("jobs")); err == nil {
			_, err = s.Recv()
		}
	case "metric_spec":
		var s pb.ExternalScaler_StreamMetricSpecClient
		if s, err = c.StreamMetricSpec(ctx, ref("jobs")); err == nil {
			_, err = s.Recv()
		}
	case "reflection":
		var s reflectionpb.ServerReflection_ServerReflectionInfoClient
		if s, err = reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx); err == nil {
			if err = s.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err == nil {
				_, err = s.Recv()
			}
		}
	default:
		panic(kind)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return cancel, nil
}

// TestEveryStreamIsBounded: the streams of every streaming method share
// one bound; past it each method is refused with ResourceExhausted, the
// unary calls still answer, and a stream closed makes room again.
func TestEveryStreamIsBounded(t *testing.T) {
	const most = 4
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(2, false)}}
	srv, err := NewServer(New(src, 10*time.Millisecond, most), ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, listen(t, srv))
	c := pb.NewExternalScalerClient(conn)
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i, kind := range []string{"metric_spec", "metric_spec", "is_active", "reflection"} {
		cancel, err := openStream(c, conn, kind)
		if err != nil {
			t.Fatalf("stream %d (%s) of %d: %v", i+1, kind, most, err)
		}
		cancels = append(cancels, cancel)
	}
	for _, kind := range []string{"metric_spec", "is_active", "reflection"} {
		if _, err := openStream(c, conn, kind); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("%s beyond %d streams: %v, want ResourceExhausted", kind, most, err)
		} else if !strings.Contains(err.Error(), "keda.max_streams") {
			t.Errorf("%s refused with %q, want it to name keda.max_streams", kind, err)
		}
	}
	if r, err := c.GetMetrics(context.Background(), &pb.GetMetricsRequest{ScaledObjectRef: ref("jobs")}); err != nil || r.MetricValues[0].MetricValueFloat != 2 {
		t.Errorf("GetMetrics with every stream taken: %v, %v; want 2", r, err)
	}
	cancels[0]() // a StreamMetricSpec closed makes room for a StreamIsActive
	cancels = cancels[1:]
	var again error
	for range 100 { // the server sees the close within a moment
		var cancel context.CancelFunc
		if cancel, again = openStream(c, conn, "is_active"); again == nil {
			cancels = append(cancels, cancel)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if again != nil {
		t.Errorf("a stream after one closed: %v", again)
	}
}

// TestConnectionStreamLimit: the server announces its per-connection
// limit (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS), so a client's streams
// beyond it on one connection wait on the client's side and never reach
// the server, while another connection's are served; one closed lets the
// waiting one through.
func TestConnectionStreamLimit(t *testing.T) {
	const perConn = 2
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(1, false)}}
	s := New(src, 10*time.Millisecond, 10)
	srv, err := NewServer(s, ServerOptions{MaxConnStreams: perConn})
	if err != nil {
		t.Fatal(err)
	}
	addr := listen(t, srv)
	connA := dial(t, addr)
	a := pb.NewExternalScalerClient(connA)
	var cancels []context.CancelFunc
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	for i := range perConn {
		cancel, err := openStream(a, connA, "metric_spec")
		if err != nil {
			t.Fatalf("stream %d of %d on one connection: %v", i+1, perConn, err)
		}
		cancels = append(cancels, cancel)
	}
	waiting := make(chan error, 1)
	go func() {
		cancel, err := openStream(a, connA, "metric_spec")
		if err == nil {
			cancels = append(cancels, cancel) // read after <-waiting below
		}
		waiting <- err
	}()
	connB := dial(t, addr)
	cancel, err := openStream(pb.NewExternalScalerClient(connB), connB, "metric_spec")
	if err != nil {
		t.Fatalf("a stream on another connection: %v", err)
	}
	cancels = append(cancels, cancel)
	select {
	case err := <-waiting:
		t.Fatalf("stream %d on one connection answered (%v), want it to wait for the connection's limit of %d", perConn+1, err, perConn)
	case <-time.After(200 * time.Millisecond):
	}
	if n := len(s.streams); n != perConn+1 {
		t.Errorf("streams open on the server = %d, want %d (%d on one connection, 1 on the other)", n, perConn+1, perConn)
	}
	cancels[0]()
	if err := <-waiting; err != nil {
		t.Errorf("the waiting stream, once one closed: %v", err)
	}
}

// rssBytes is the process's resident set (Linux /proc/self/status VmRSS);
// 0 where unknown.
func rssBytes() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// TestFiftyThousandStreams is the hostile client: 50,000 StreamMetricSpec
// streams over 50 connections, every one kept open that is answered.
// Exactly DefaultMaxStreams are served and the rest refused with
// ResourceExhausted; the memory the process (client and server both)
// holds with them all open is logged.
func TestFiftyThousandStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("50,000 streams: not in -short")
	}
	const conns, perConn = 50, 1000
	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(3, false)}}
	s := New(src, 0, 0)
	srv, err := NewServer(s, ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	addr := listen(t, srv)
	clients := make([]*grpc.ClientConn, conns)
	for i := range clients {
		clients[i] = dial(t, addr)
	}
	// Warm the connections up before measuring.
	for _, conn := range clients {
		if _, err := pb.NewExternalScalerClient(conn).GetMetricSpec(context.Background(), ref("jobs")); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	rss0, g0 := rssBytes(), runtime.NumGoroutine()

	var (
		mu              sync.Mutex
		served, refused int
		other           []error
		cancels         []context.CancelFunc
		wg              sync.WaitGroup
	)
	for _, conn := range clients {
		wg.Go(func() {
			c := pb.NewExternalScalerClient(conn)
			for range perConn {
				cancel, err := openStream(c, conn, "metric_spec")
				mu.Lock()
				switch {
				case err == nil:
					served++
					cancels = append(cancels, cancel)
				case status.Code(err) == codes.ResourceExhausted:
					refused++
				default:
					if len(other) < 5 {
						other = append(other, err)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	rss1, g1 := rssBytes(), runtime.NumGoroutine()
	for _, c := range cancels {
		c()
	}
	if len(other) > 0 {
		t.Fatalf("streams failed otherwise than refused: %v", other)
	}
	if served != DefaultMaxStreams || refused != conns*perConn-DefaultMaxStreams {
		t.Errorf("served %d, refused %d of %d; want %d served, %d refused", served, refused, conns*perConn, DefaultMaxStreams, conns*perConn-DefaultMaxStreams)
	}
	mb := func(a, b uint64) string { return fmt.Sprintf("%+.1f MB", (float64(b)-float64(a))/(1<<20)) }
	t.Logf("%d streams asked, %d served, %d refused; with the served ones open: goroutines %d -> %d, heap in use %s, stacks %s, RSS %.1f -> %.1f MB (%s)",
		conns*perConn, served, refused, g0, g1, mb(before.HeapInuse, after.HeapInuse), mb(before.StackInuse, after.StackInuse),
		float64(rss0)/(1<<20), float64(rss1)/(1<<20), mb(rss0, rss1))
}
