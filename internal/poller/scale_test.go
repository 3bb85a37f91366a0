package poller

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// loadServer is an in-process endpoint for load: it answers every SQS
// GetQueueAttributes (AWS JSON 1.0) with the same counts and every Auto
// Scaling DescribeAutoScalingGroups (query protocol) with the groups asked
// for, and counts the calls per operation. It checks nothing; correctness
// is tested against moto.
type loadServer struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls map[string]int
}

const loadAttributes = `{"Attributes":{"ApproximateNumberOfMessages":"5",` +
	`"ApproximateNumberOfMessagesNotVisible":"2","ApproximateNumberOfMessagesDelayed":"1"}}`

func newLoadServer(tb testing.TB) *loadServer {
	tb.Helper()
	s := &loadServer{calls: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	return s
}

func (s *loadServer) count(op string) {
	s.mu.Lock()
	s.calls[op]++
	s.mu.Unlock()
}

func (s *loadServer) reset() {
	s.mu.Lock()
	clear(s.calls)
	s.mu.Unlock()
}

func (s *loadServer) get(op string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if op != "" {
		return s.calls[op]
	}
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

func (s *loadServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		op := target[strings.LastIndex(target, ".")+1:]
		s.count(op)
		if op != "GetQueueAttributes" {
			http.Error(w, `{"__type":"UnknownOperationException"}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = io.WriteString(w, loadAttributes)
		return
	}
	form, _ := url.ParseQuery(string(body))
	op := form.Get("Action")
	s.count(op)
	if op != "DescribeAutoScalingGroups" {
		http.Error(w, "unknown action", http.StatusBadRequest)
		return
	}
	var b strings.Builder
	b.WriteString(`<DescribeAutoScalingGroupsResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/">` +
		`<DescribeAutoScalingGroupsResult><AutoScalingGroups>`)
	for i := 1; ; i++ {
		name := form.Get(fmt.Sprintf("AutoScalingGroupNames.member.%d", i))
		if name == "" {
			break
		}
		fmt.Fprintf(&b, `<member><AutoScalingGroupName>%s</AutoScalingGroupName><MinSize>1</MinSize><MaxSize>10</MaxSize>`+
			`<DesiredCapacity>2</DesiredCapacity><Instances><member><InstanceId>i-1</InstanceId>`+
			`<LifecycleState>InService</LifecycleState></member></Instances></member>`, name)
	}
	b.WriteString(`</AutoScalingGroups></DescribeAutoScalingGroupsResult>` +
		`<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></DescribeAutoScalingGroupsResponse>`)
	w.Header().Set("Content-Type", "text/xml")
	_, _ = io.WriteString(w, b.String())
}

var scaleRegions = []string{"us-east-1", "eu-west-1", "ap-southeast-2", "us-west-2"}

// scaleConfig spreads nQueues queues over the four regions in groups of
// perGroup; with fleets, each group has an Auto Scaling group in its first
// queue's region.
func scaleConfig(nQueues, perGroup int, fleets bool) config.Config {
	var groups []config.Group
	for first := 0; first < nQueues; first += perGroup {
		g := config.Group{Name: fmt.Sprintf("g%05d", first/perGroup), Count: config.Count{InFlight: true}}
		for i := first; i < min(first+perGroup, nQueues); i++ {
			g.Queues = append(g.Queues, config.Queue{URL: queueURL(scaleRegions[i%len(scaleRegions)], fmt.Sprintf("q%05d", i))})
		}
		if fleets {
			g.Fleet.AutoScalingGroup = &config.AutoScalingGroup{
				Name: fmt.Sprintf("w%05d", first/perGroup), Region: scaleRegions[first%len(scaleRegions)],
			}
		}
		groups = append(groups, g)
	}
	return config.Config{
		Interval: time.Minute,
		AWS:      config.AWS{Region: "us-east-1", CallTimeout: time.Minute, ConcurrencyPerRegion: 16},
		Groups:   groups,
	}
}

func scaleFactory(tb testing.TB, endpoint string, reg prometheus.Registerer) *awsclient.Factory {
	tb.Helper()
	tb.Setenv("AWS_ACCESS_KEY_ID", "testing")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return awsclienttest.Factory(tb, endpoint, awsclienttest.MaxAttempts(1), awsclienttest.Registerer(reg),
		func(o *awsclient.Options) {
			o.CloudWatchProtocol = awsclient.ProtocolDefault // the SDK's own protocol
			o.MaxConnsPerHost = 16 * len(scaleRegions)
		})
}

// TestCallsPerObserveAtScale counts, at the endpoint, the calls of two
// Observes of 2,000 queues in 4 regions and 400 groups with an Auto
// Scaling group each: one GetQueueAttributes per queue, and one
// DescribeAutoScalingGroups per 50 groups per region.
func TestCallsPerObserveAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of calls")
	}
	srv := newLoadServer(t)
	const nQueues, perGroup = 2_000, 5
	cfg := scaleConfig(nQueues, perGroup, true)
	reg := prometheus.NewRegistry()
	p, err := New(cfg, scaleFactory(t, srv.srv.URL, reg), reg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	nGroups := len(cfg.Groups)
	wantFleetCalls := len(scaleRegions) * ((nGroups/len(scaleRegions) + 49) / 50)
	for round := range 2 {
		srv.reset()
		obs, err := p.Observe(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		answered := 0
		for _, o := range obs {
			answered += o.Sample.Answered
			if !o.Fleet.Known || o.Fleet.Desired != 2 {
				t.Fatalf("round %d: fleet %+v, want known with desired 2", round, o.Fleet)
			}
		}
		if answered != nQueues {
			t.Fatalf("round %d: %d queues answered, want %d", round, answered, nQueues)
		}
		if got := srv.get("GetQueueAttributes"); got != nQueues {
			t.Errorf("round %d: GetQueueAttributes calls = %d, want %d", round, got, nQueues)
		}
		if got := srv.get("DescribeAutoScalingGroups"); got != wantFleetCalls {
			t.Errorf("round %d: DescribeAutoScalingGroups calls = %d, want %d (%d groups in %d regions, 50 per call)",
				round, got, wantFleetCalls, nGroups, len(scaleRegions))
		}
		if got := srv.get(""); got != nQueues+wantFleetCalls {
			t.Errorf("round %d: calls = %d, want %d", round, got, nQueues+wantFleetCalls)
		}
	}
}

// BenchmarkObserve10kQueues measures one Observe of 10,000 queues in 4
// regions against the in-process endpoint. Reported per queue: CPU time
// of the whole process (the endpoint's share included), allocations and
// bytes allocated per Observe, and the heap held by the poller once built
// and warmed by one Observe.
func BenchmarkObserve10kQueues(b *testing.B) {
	srv := newLoadServer(b)
	const nQueues, perGroup = 10_000, 10
	cfg := scaleConfig(nQueues, perGroup, false)
	reg := prometheus.NewRegistry()
	f := scaleFactory(b, srv.srv.URL, reg)
	ctx := context.Background()

	// A JSON logger as in production, writing nowhere.
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zap.InfoLevel))

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := New(cfg, f, reg, log)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Observe(ctx, time.Now()); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := float64(after.HeapAlloc) - float64(before.HeapAlloc)

	runtime.ReadMemStats(&before)
	cpu0 := processCPU()
	b.ResetTimer()
	for b.Loop() {
		obs, err := p.Observe(ctx, time.Now())
		if err != nil {
			b.Fatal(err)
		}
		if obs[0].Sample.Answered != perGroup {
			b.Fatalf("answered %d of %d", obs[0].Sample.Answered, perGroup)
		}
	}
	b.StopTimer()
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&after)
	n := float64(b.N) * nQueues
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "wall-ns/queue")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/queue")
	}
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/queue")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/queue")
	b.ReportMetric(held/nQueues, "held-B/queue")
}

// BenchmarkScrape10kQueues measures one /metrics scrape of the poller's
// registry (its series and the AWS request series) after an Observe of
// 10,000 queues in 100 groups, with per-queue series on, off and for
// failed queues only (none fail here). Reported: CPU per scrape (the
// whole process; nothing else runs meanwhile), series and bytes.
func BenchmarkScrape10kQueues(b *testing.B) {
	srv := newLoadServer(b)
	for _, mode := range []config.PerQueue{config.PerQueueAll, config.PerQueueOff, config.PerQueueFailedOnly} {
		b.Run("per_queue="+string(mode), func(b *testing.B) {
			cfg := scaleConfig(10_000, 100, false)
			cfg.Metrics.PerQueue = mode
			reg := prometheus.NewRegistry()
			p, err := New(cfg, scaleFactory(b, srv.srv.URL, reg), reg, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			if _, err := p.Observe(context.Background(), time.Now()); err != nil {
				b.Fatal(err)
			}
			h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			var size int
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("scrape: %d", rec.Code)
				}
				size = rec.Body.Len()
			}
			b.StopTimer()
			if cpu := processCPU() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/scrape")
			}
			families, err := reg.Gather()
			if err != nil {
				b.Fatal(err)
			}
			series := 0
			for _, f := range families {
				series += len(f.GetMetric())
			}
			b.ReportMetric(float64(series), "series")
			b.ReportMetric(float64(size), "bytes")
		})
	}
}
