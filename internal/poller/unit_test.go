package poller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
)

func TestParseAttributes(t *testing.T) {
	t.Parallel()
	full := map[string]string{attrVisible: "12", attrInFlight: "3", attrDelayed: "0", attrArn: "arn:aws:sqs:us-east-1:1:q"}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for kk, v := range full {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	with := func(k, v string) map[string]string {
		m := without(k)
		m[k] = v
		return m
	}
	tests := []struct {
		name    string
		attrs   map[string]string
		want    counts
		wantErr string
	}{
		{name: "all three", attrs: full, want: counts{Visible: 12, InFlight: 3, Delayed: 0}},
		{name: "large", attrs: with(attrVisible, "120000000"), want: counts{Visible: 120000000, InFlight: 3}},
		{name: "nil map", attrs: nil, wantErr: "ApproximateNumberOfMessages missing"},
		{name: "visible missing", attrs: without(attrVisible), wantErr: "ApproximateNumberOfMessages missing"},
		{name: "in-flight missing", attrs: without(attrInFlight), wantErr: "ApproximateNumberOfMessagesNotVisible missing"},
		{name: "delayed missing", attrs: without(attrDelayed), wantErr: "ApproximateNumberOfMessagesDelayed missing"},
		{name: "empty value", attrs: with(attrVisible, ""), wantErr: "not a whole number"},
		{name: "not a number", attrs: with(attrInFlight, "many"), wantErr: "not a whole number"},
		{name: "fraction", attrs: with(attrDelayed, "1.5"), wantErr: "not a whole number"},
		{name: "negative", attrs: with(attrVisible, "-1"), wantErr: "negative"},
		{name: "overflow", attrs: with(attrVisible, "99999999999999999999"), wantErr: "not a whole number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseAttributes(tc.attrs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseAttributes() = %+v, %v; want an error containing %q", got, err, tc.wantErr)
				}
				if got != (counts{}) {
					t.Fatalf("parseAttributes() returned counts %+v with its error", got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseAttributes() = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// FuzzParseAttributes checks that counts are returned only when every
// attribute is present and is the number it says.
func FuzzParseAttributes(f *testing.F) {
	f.Add("1", "2", "3", true)
	f.Add("", "0", "x", false)
	f.Add("-5", "1e3", " 7", true)
	f.Fuzz(func(t *testing.T, v, n, d string, withDelayed bool) {
		attrs := map[string]string{attrVisible: v, attrInFlight: n}
		if withDelayed {
			attrs[attrDelayed] = d
		}
		got, err := parseAttributes(attrs)
		if err != nil {
			return
		}
		if !withDelayed {
			t.Fatalf("counts %+v without %s", got, attrDelayed)
		}
		for name, pair := range map[string]struct {
			raw string
			got int64
		}{"visible": {v, got.Visible}, "in_flight": {n, got.InFlight}, "delayed": {d, got.Delayed}} {
			want, perr := strconv.ParseInt(pair.raw, 10, 64)
			if perr != nil || want < 0 || want != pair.got {
				t.Fatalf("%s: %q read as %d", name, pair.raw, pair.got)
			}
		}
	})
}

// Fakes of the poller's own narrow interfaces.
type (
	fakeSQS struct {
		fn func(ctx context.Context, in *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error)
	}
	fakeCW struct {
		fn func(ctx context.Context, in *cloudwatch.GetMetricDataInput) (*cloudwatch.GetMetricDataOutput, error)
	}
	fakeASG struct {
		fn func(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
	}
	// fakeECS answers DescribeServices with fn, and ListTasks and
	// DescribeTasks with list and describe: no task when they are nil.
	fakeECS struct {
		fn       func(ctx context.Context, in *ecs.DescribeServicesInput) (*ecs.DescribeServicesOutput, error)
		list     func(ctx context.Context, in *ecs.ListTasksInput) (*ecs.ListTasksOutput, error)
		describe func(ctx context.Context, in *ecs.DescribeTasksInput) (*ecs.DescribeTasksOutput, error)
	}
	fakeClients struct {
		sqsFn  func(region string) sqsAPI
		cwFn   func(region string) cloudWatchAPI
		asgFn  func(region string) autoScalingAPI
		ecsFn  func(region string) ecsAPI
		region string
	}
)

func (f fakeSQS) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	return f.fn(ctx, in)
}

func (f fakeCW) GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	return f.fn(ctx, in)
}

func (f fakeASG) DescribeAutoScalingGroups(ctx context.Context, in *autoscaling.DescribeAutoScalingGroupsInput, _ ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
	return f.fn(ctx, in)
}

func (f fakeECS) DescribeServices(ctx context.Context, in *ecs.DescribeServicesInput, _ ...func(*ecs.Options)) (*ecs.DescribeServicesOutput, error) {
	return f.fn(ctx, in)
}

func (f fakeECS) ListTasks(ctx context.Context, in *ecs.ListTasksInput, _ ...func(*ecs.Options)) (*ecs.ListTasksOutput, error) {
	if f.list == nil {
		return &ecs.ListTasksOutput{}, nil
	}
	return f.list(ctx, in)
}

func (f fakeECS) DescribeTasks(ctx context.Context, in *ecs.DescribeTasksInput, _ ...func(*ecs.Options)) (*ecs.DescribeTasksOutput, error) {
	if f.describe == nil {
		return nil, errors.New("DescribeTasks called with no task to describe")
	}
	return f.describe(ctx, in)
}

func (c fakeClients) sqs(r string) sqsAPI                 { return c.sqsFn(r) }
func (c fakeClients) cloudWatch(r string) cloudWatchAPI   { return c.cwFn(r) }
func (c fakeClients) autoScaling(r string) autoScalingAPI { return c.asgFn(r) }
func (c fakeClients) ecs(r string) ecsAPI                 { return c.ecsFn(r) }
func (c fakeClients) defaultRegion() string               { return c.region }

// answering is an SQS fake that answers every queue with fixed counts.
func answering(visible, inFlight, delayed int) fakeSQS {
	return fakeSQS{fn: func(context.Context, *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
		return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{
			attrVisible: strconv.Itoa(visible), attrInFlight: strconv.Itoa(inFlight), attrDelayed: strconv.Itoa(delayed),
		}}, nil
	}}
}

func clientsWith(s sqsAPI, cw cloudWatchAPI, asg autoScalingAPI, e ecsAPI) fakeClients {
	return fakeClients{
		sqsFn: func(string) sqsAPI { return s }, cwFn: func(string) cloudWatchAPI { return cw },
		asgFn: func(string) autoScalingAPI { return asg }, ecsFn: func(string) ecsAPI { return e },
		region: east,
	}
}

func queueURL(region, name string) string {
	return fmt.Sprintf("https://sqs.%s.amazonaws.com/123456789012/%s", region, name)
}

func TestNewRegions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		queue         config.Queue
		fleet         config.Fleet
		defaultRegion string
		wantRegion    string
		wantErr       string
	}{
		{name: "from the URL", queue: config.Queue{URL: queueURL(west, "a")}, wantRegion: west},
		{name: "legacy URL", queue: config.Queue{URL: "https://ap-south-1.queue.amazonaws.com/1/a"}, wantRegion: "ap-south-1"},
		{name: "field wins over URL", queue: config.Queue{URL: queueURL(west, "a"), Region: east}, wantRegion: east},
		{name: "emulator URL with field", queue: config.Queue{URL: "http://127.0.0.1:4566/000000000000/a", Region: west}, wantRegion: west},
		{name: "emulator URL without field", queue: config.Queue{URL: "http://127.0.0.1:4566/000000000000/a"}, wantErr: "names no region"},
		{name: "bad URL", queue: config.Queue{URL: "ftp://x/1/a"}, wantErr: "groups[0].queues[0]"},
		{name: "fleet without any region", queue: config.Queue{URL: queueURL(west, "a")},
			fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: "w"}}, wantErr: "groups[0].fleet.autoscaling_group"},
		{name: "fleet in the default region", queue: config.Queue{URL: queueURL(west, "a")}, defaultRegion: east,
			fleet: config.Fleet{ECSService: &config.ECSService{Cluster: "c", Service: "s"}}, wantRegion: west},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var asked []string
			var mu sync.Mutex
			c := clientsWith(answering(0, 0, 0), nil, nil, nil)
			c.region = tc.defaultRegion
			c.sqsFn = func(r string) sqsAPI {
				mu.Lock()
				defer mu.Unlock()
				asked = append(asked, r)
				return answering(0, 0, 0)
			}
			cfg := baseConfig(config.Group{Name: "g", Queues: []config.Queue{tc.queue}, Fleet: tc.fleet})
			cfg.AWS.Region = ""
			p, err := newPoller(cfg, c, prometheus.NewRegistry(), zaptest.NewLogger(t))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("newPoller() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := p.groups[0].queues[0].region; got != tc.wantRegion {
				t.Errorf("queue region = %q, want %q", got, tc.wantRegion)
			}
			if !slices.Equal(asked, []string{tc.wantRegion}) {
				t.Errorf("SQS clients asked for %v, want [%s]", asked, tc.wantRegion)
			}
		})
	}
}

func TestNewCallTimeoutAndConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		interval    time.Duration
		timeout     time.Duration
		concurrency int
		wantTimeout time.Duration
		wantLimit   int
	}{
		{"defaults", 5 * time.Second, 0, 0, 4 * time.Second, config.DefaultConcurrencyPerRegion},
		{"as configured", 10 * time.Second, 3 * time.Second, 2, 3 * time.Second, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := baseConfig(config.Group{Name: "g", Queues: []config.Queue{{URL: queueURL(east, "a")}}})
			cfg.Interval, cfg.AWS.CallTimeout, cfg.AWS.ConcurrencyPerRegion = tc.interval, tc.timeout, tc.concurrency
			p, err := newPoller(cfg, clientsWith(answering(0, 0, 0), nil, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			if p.callTimeout != tc.wantTimeout || p.limit != tc.wantLimit {
				t.Errorf("call timeout %v, limit %d; want %v, %d", p.callTimeout, p.limit, tc.wantTimeout, tc.wantLimit)
			}
		})
	}
}

// TestQueueIdentityAskedOnce checks that QueueArn and FifoQueue are asked
// for on the first call only, and the counts on every call.
func TestQueueIdentityAskedOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked [][]string
	s := fakeSQS{fn: func(_ context.Context, in *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		var names []string
		for _, n := range in.AttributeNames {
			names = append(names, string(n))
		}
		asked = append(asked, names)
		return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{
			attrVisible: "1", attrInFlight: "2", attrDelayed: "3", attrArn: "arn:aws:sqs:us-east-1:1:a.fifo", attrFifo: "true",
		}}, nil
	}}
	cfg := baseConfig(config.Group{Name: "g", Queues: []config.Queue{{URL: queueURL(east, "a.fifo")}}})
	p, err := newPoller(cfg, clientsWith(s, nil, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := range 3 {
		if _, err := p.Observe(context.Background(), now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	counts := []string{attrVisible, attrInFlight, attrDelayed}
	want := [][]string{append(slices.Clone(counts), attrArn, attrFifo), counts, counts}
	if len(asked) != len(want) {
		t.Fatalf("%d calls, want %d", len(asked), len(want))
	}
	for i := range want {
		if !slices.Equal(asked[i], want[i]) {
			t.Errorf("call %d asked for %v, want %v", i, asked[i], want[i])
		}
	}
	q := p.groups[0].queues[0]
	if q.arn != "arn:aws:sqs:us-east-1:1:a.fifo" || !q.fifo {
		t.Errorf("identity = %q fifo %v, want the ARN and fifo", q.arn, q.fifo)
	}
}

// TestDeadlineAndConcurrencyBound checks that every call carries the call
// deadline, that a queue that never answers is cut off by it without
// holding up the others, and that no region ever has more calls in flight
// than the bound.
func TestDeadlineAndConcurrencyBound(t *testing.T) {
	t.Parallel()
	const limit = 3
	inFlight := map[string]*atomic.Int64{east: {}, west: {}}
	maxSeen := map[string]*atomic.Int64{east: {}, west: {}}
	var noDeadline atomic.Int64
	release := make(chan struct{})
	c := clientsWith(nil, nil, nil, nil)
	c.sqsFn = func(region string) sqsAPI {
		return fakeSQS{fn: func(ctx context.Context, in *sqs.GetQueueAttributesInput) (*sqs.GetQueueAttributesOutput, error) {
			n := inFlight[region].Add(1)
			defer inFlight[region].Add(-1)
			for {
				m := maxSeen[region].Load()
				if n <= m || maxSeen[region].CompareAndSwap(m, n) {
					break
				}
			}
			if _, ok := ctx.Deadline(); !ok {
				noDeadline.Add(1)
			}
			if strings.HasSuffix(aws.ToString(in.QueueUrl), "/stuck") {
				<-ctx.Done()
				return nil, fmt.Errorf("send request: %w", ctx.Err())
			}
			select { // let calls overlap
			case <-release:
			case <-time.After(time.Millisecond):
			}
			return answering(1, 0, 0).fn(ctx, in)
		}}
	}
	var queues []config.Queue
	for i := range 40 {
		queues = append(queues, config.Queue{URL: queueURL([]string{east, west}[i%2], fmt.Sprintf("q%d", i))})
	}
	queues = append(queues, config.Queue{URL: queueURL(east, "stuck")})
	cfg := baseConfig(config.Group{Name: "g", Queues: queues})
	cfg.AWS.CallTimeout, cfg.AWS.ConcurrencyPerRegion = 2*time.Second, limit
	p, err := newPoller(cfg, c, prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := p.Observe(context.Background(), time.Now())
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	s := obs[0].Sample
	if s.Answered != 40 || s.Visible != 40 || len(s.Failures) != 1 {
		t.Fatalf("answered %d, visible %d, failures %+v; want 40, 40, the stuck queue", s.Answered, s.Visible, s.Failures)
	}
	if f := s.Failures[0]; f.Queue != "stuck" || f.Class != model.ErrClassTimeout {
		t.Errorf("failure %+v, want stuck/timeout", f)
	}
	// Every queue was asked: one the service does not answer is its own
	// failure, not a round that does not fit.
	if len(s.Polling.Notices) != 0 {
		t.Errorf("notices %q for one stuck queue, want none", s.Polling.Notices)
	}
	for r, m := range maxSeen {
		if got := m.Load(); got > limit {
			t.Errorf("%s: %d calls in flight at once, bound is %d", r, got, limit)
		}
	}
	if n := noDeadline.Load(); n != 0 {
		t.Errorf("%d calls without a deadline", n)
	}
}

func TestObserveCanceled(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(config.Group{Name: "g", Queues: []config.Queue{{URL: queueURL(east, "a")}}})
	p, err := newPoller(cfg, clientsWith(answering(1, 1, 1), nil, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if obs, err := p.Observe(ctx, time.Now()); !errors.Is(err, context.Canceled) || obs != nil {
		t.Fatalf("Observe(canceled) = %v, %v; want nil, context.Canceled", obs, err)
	}
}

// TestCloudWatchBatches puts 400 queues of one region in CloudWatch
// groups: three calls of at most 500 queries, every queue read back as
// its own, with pages followed.
func TestCloudWatchBatches(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC)
	at := now.Truncate(time.Minute).Add(-2 * time.Minute)
	var mu sync.Mutex
	var sizes []int
	names := map[string]string{} // query ID -> queue name, as sent
	cw := fakeCW{fn: func(_ context.Context, in *cloudwatch.GetMetricDataInput) (*cloudwatch.GetMetricDataOutput, error) {
		mu.Lock()
		defer mu.Unlock()
		if in.NextToken == nil {
			sizes = append(sizes, len(in.MetricDataQueries))
		}
		if !in.EndTime.Equal(now.Truncate(time.Minute)) || in.StartTime.After(at) {
			return nil, fmt.Errorf("window %v..%v does not hold %v", in.StartTime, in.EndTime, at)
		}
		out := &cloudwatch.GetMetricDataOutput{}
		for i, q := range in.MetricDataQueries {
			// Answer the first half now and the rest on a second page.
			if (in.NextToken == nil) != (i < len(in.MetricDataQueries)/2) {
				continue
			}
			name := aws.ToString(q.MetricStat.Metric.Dimensions[0].Value)
			names[aws.ToString(q.Id)] = name
			n, _ := strconv.Atoi(strings.TrimPrefix(name, "q"))
			v := float64(n)
			if aws.ToString(q.MetricStat.Metric.MetricName) != "ApproximateAgeOfOldestMessage" {
				v *= 60
			}
			out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{
				Id: q.Id, Values: []float64{v - 1, v}, Timestamps: []time.Time{at.Add(-time.Minute), at},
			})
		}
		if in.NextToken == nil {
			out.NextToken = aws.String("page-2")
		}
		return out, nil
	}}
	var groups []config.Group
	for i := range 400 {
		groups = append(groups, config.Group{Name: fmt.Sprintf("g%d", i),
			Queues: []config.Queue{{URL: queueURL(east, fmt.Sprintf("q%d", i))}}, OldestAge: config.OldestAge{CloudWatch: true}})
	}
	p, err := newPoller(baseConfig(groups...), clientsWith(answering(0, 0, 0), cw, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := p.Observe(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{204, 498, 498}) {
		t.Errorf("query counts per call = %v, want [204 498 498]", sizes)
	}
	for i, o := range obs {
		s := o.Sample
		if s.OldestAge == nil || s.Sent == nil || s.Deleted == nil {
			t.Fatalf("group %d: readings %+v %+v %+v, want all three", i, s.OldestAge, s.Sent, s.Deleted)
		}
		if s.OldestAge.Value != float64(i) || s.Sent.Value != float64(i) || s.Deleted.Value != float64(i) || !s.OldestAge.At.Equal(at) {
			t.Fatalf("group %d: age %v sent %v deleted %v at %v, want %d each at %v",
				i, s.OldestAge.Value, s.Sent.Value, s.Deleted.Value, s.OldestAge.At, i, at)
		}
	}
}

// TestCloudWatchFailureKeepsReadings checks that a failed round leaves
// the last readings, with their old timestamps, and is retried a minute
// later, not at the next interval.
func TestCloudWatchFailureKeepsReadings(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC)
	at := now.Truncate(time.Minute).Add(-time.Minute)
	var calls atomic.Int64
	fail := atomic.Bool{}
	cw := fakeCW{fn: func(_ context.Context, in *cloudwatch.GetMetricDataInput) (*cloudwatch.GetMetricDataOutput, error) {
		calls.Add(1)
		if fail.Load() {
			return nil, errors.New("connection refused")
		}
		out := &cloudwatch.GetMetricDataOutput{}
		for _, q := range in.MetricDataQueries {
			out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, Values: []float64{42}, Timestamps: []time.Time{at}})
		}
		return out, nil
	}}
	cfg := baseConfig(config.Group{Name: "g", Queues: []config.Queue{{URL: queueURL(east, "a")}}, OldestAge: config.OldestAge{CloudWatch: true}})
	p, err := newPoller(cfg, clientsWith(answering(0, 0, 0), cw, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		offset    time.Duration
		fail      bool
		wantCalls int64
	}{
		{0, false, 1},
		{5 * time.Second, true, 1},  // cached: no call
		{60 * time.Second, true, 2}, // due: the call fails
		{65 * time.Second, false, 2},
		{120 * time.Second, false, 3},
	}
	for _, st := range steps {
		fail.Store(st.fail)
		obs, err := p.Observe(context.Background(), now.Add(st.offset))
		if err != nil {
			t.Fatal(err)
		}
		if got := calls.Load(); got != st.wantCalls {
			t.Errorf("at +%v: %d GetMetricData calls, want %d", st.offset, got, st.wantCalls)
		}
		r := obs[0].Sample.OldestAge
		if r == nil || r.Value != 42 || !r.At.Equal(at) {
			t.Errorf("at +%v: oldest age %+v, want 42 at %v", st.offset, r, at)
		}
	}
}

func TestPendingState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		state asgtypes.LifecycleState
		want  bool
	}{
		{asgtypes.LifecycleStatePending, true},
		{asgtypes.LifecycleStatePendingWait, true},
		{asgtypes.LifecycleStatePendingProceed, true},
		{asgtypes.LifecycleStateWarmedPending, true},
		{asgtypes.LifecycleStateWarmedRunning, true},
		{asgtypes.LifecycleStateWarmedTerminating, false},
		{asgtypes.LifecycleStateInService, false},
		{asgtypes.LifecycleStateTerminating, false},
		{asgtypes.LifecycleStateStandby, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.state), func(t *testing.T) {
			t.Parallel()
			if got := pendingState(tc.state); got != tc.want {
				t.Errorf("pendingState(%s) = %v, want %v", tc.state, got, tc.want)
			}
		})
	}
}

func TestDrainingState(t *testing.T) {
	t.Parallel()
	for _, s := range asgtypes.LifecycleState("").Values() {
		want := s == asgtypes.LifecycleStateTerminating || s == asgtypes.LifecycleStateTerminatingWait ||
			s == asgtypes.LifecycleStateTerminatingProceed
		if got := drainingState(s); got != want {
			t.Errorf("drainingState(%s) = %v, want %v", s, got, want)
		}
		if drainingState(s) && (pendingState(s) || s == asgtypes.LifecycleStateInService) {
			t.Errorf("%s is counted as draining and as capacity", s)
		}
	}
}

// An ECS deployment's running tasks above its desired count are being
// stopped: draining, and taken out of the running count. Tasks ListTasks
// and DescribeTasks found being stopped are draining too: those still
// RUNNING leave the running count (counted once with the deployments'
// surplus), those DEACTIVATING or STOPPING are in no count and are added.
func TestECSDraining(t *testing.T) {
	t.Parallel()
	dep := func(desired, running, pending int32) ecstypes.Deployment {
		return ecstypes.Deployment{DesiredCount: desired, RunningCount: running, PendingCount: pending}
	}
	tests := []struct {
		name                        string
		svc                         ecstypes.Service
		tasks                       stoppingTasks
		inService, pending, drained int
	}{
		{"steady", ecstypes.Service{DesiredCount: 4, RunningCount: 4, Deployments: []ecstypes.Deployment{dep(4, 4, 0)}}, stoppingTasks{}, 4, 0, 0},
		{"scaled in from 6 to 4, two still running",
			ecstypes.Service{DesiredCount: 4, RunningCount: 6, Deployments: []ecstypes.Deployment{dep(4, 6, 0)}}, stoppingTasks{}, 4, 0, 2},
		{"rolling deployment, old tasks being replaced",
			ecstypes.Service{DesiredCount: 4, RunningCount: 6, PendingCount: 1,
				Deployments: []ecstypes.Deployment{dep(4, 3, 1), dep(1, 3, 0)}}, stoppingTasks{}, 4, 1, 2},
		{"scaling out", ecstypes.Service{DesiredCount: 6, RunningCount: 4, PendingCount: 2,
			Deployments: []ecstypes.Deployment{dep(6, 4, 2)}}, stoppingTasks{}, 4, 2, 0},
		{"no deployments (external controller)", ecstypes.Service{DesiredCount: 3, RunningCount: 3}, stoppingTasks{}, 3, 0, 0},
		{"deployments disagree with the service's count",
			ecstypes.Service{DesiredCount: 1, RunningCount: 1, Deployments: []ecstypes.Deployment{dep(0, 3, 0)}}, stoppingTasks{}, 0, 0, 1},
		{"scaled in from 6 to 4: the two running tasks listed are the surplus, counted once",
			ecstypes.Service{DesiredCount: 4, RunningCount: 6, Deployments: []ecstypes.Deployment{dep(4, 6, 0)}}, stoppingTasks{running: 2}, 4, 0, 2},
		{"three tasks STOPPING, in no running count",
			ecstypes.Service{DesiredCount: 4, RunningCount: 4, Deployments: []ecstypes.Deployment{dep(4, 4, 0)}}, stoppingTasks{stopping: 3}, 4, 0, 3},
		{"a task stopped by hand while its replacement is pending",
			ecstypes.Service{DesiredCount: 4, RunningCount: 4, PendingCount: 1, Deployments: []ecstypes.Deployment{dep(4, 4, 1)}},
			stoppingTasks{running: 1, stopping: 1}, 3, 1, 2},
		{"more listed running than the service counts",
			ecstypes.Service{DesiredCount: 2, RunningCount: 2, Deployments: []ecstypes.Deployment{dep(2, 2, 0)}}, stoppingTasks{running: 5}, 0, 0, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var fl model.Fleet
			fromService(&fl, &tc.svc, tc.tasks)
			if fl.InService != tc.inService || fl.Pending != tc.pending || fl.Draining != tc.drained {
				t.Errorf("in service %d, pending %d, draining %d; want %d, %d, %d",
					fl.InService, fl.Pending, fl.Draining, tc.inService, tc.pending, tc.drained)
			}
			if got := fl.InService + fl.Draining; got != int(tc.svc.RunningCount)+tc.tasks.stopping {
				t.Errorf("in service + draining = %d, want the %d running tasks counted once and the %d stopping",
					got, tc.svc.RunningCount, tc.tasks.stopping)
			}
		})
	}
}

// TestAutoScalingFleets batches 120 groups of one region into calls of 50
// and follows each group's pending instances across intervals.
func TestAutoScalingFleets(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var batchSizes []int
	round := atomic.Int64{}
	asg := fakeASG{fn: func(_ context.Context, in *autoscaling.DescribeAutoScalingGroupsInput) (*autoscaling.DescribeAutoScalingGroupsOutput, error) {
		mu.Lock()
		batchSizes = append(batchSizes, len(in.AutoScalingGroupNames))
		mu.Unlock()
		out := &autoscaling.DescribeAutoScalingGroupsOutput{}
		for _, name := range in.AutoScalingGroupNames {
			if name == "w-missing" {
				continue
			}
			inst := []asgtypes.Instance{
				{InstanceId: aws.String("i-1"), LifecycleState: asgtypes.LifecycleStateInService},
				{InstanceId: aws.String("i-2"), LifecycleState: asgtypes.LifecycleStatePending},
				{InstanceId: aws.String("i-3"), LifecycleState: asgtypes.LifecycleStateWarmedPending},
				{InstanceId: aws.String("i-4"), LifecycleState: asgtypes.LifecycleStateTerminating},
			}
			if round.Load() == 1 { // i-2 came into service, i-5 started
				inst[1].LifecycleState = asgtypes.LifecycleStateInService
				inst = append(inst, asgtypes.Instance{InstanceId: aws.String("i-5"), LifecycleState: asgtypes.LifecycleStatePendingWait})
			}
			out.AutoScalingGroups = append(out.AutoScalingGroups, asgtypes.AutoScalingGroup{
				AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(4), MinSize: aws.Int32(1), MaxSize: aws.Int32(9),
				Instances: inst,
			})
		}
		return out, nil
	}}
	var groups []config.Group
	for i := range 120 {
		name := fmt.Sprintf("w-%03d", i)
		if i == 7 {
			name = "w-missing"
		}
		groups = append(groups, config.Group{Name: fmt.Sprintf("g%d", i), Queues: []config.Queue{{URL: queueURL(east, "a")}},
			Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: name}}})
	}
	p, err := newPoller(baseConfig(groups...), clientsWith(answering(0, 0, 0), nil, asg, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	t1 := t0.Add(5 * time.Second)
	obs0, err := p.Observe(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	round.Store(1)
	obs1, err := p.Observe(context.Background(), t1)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(batchSizes)
	if !slices.Equal(batchSizes, []int{20, 20, 50, 50, 50, 50}) {
		t.Errorf("names per call over two rounds = %v, want 50, 50, 20 per round", batchSizes)
	}
	for i := range groups {
		f0, f1 := obs0[i].Fleet, obs1[i].Fleet
		if i == 7 {
			if f0.Known || f0.Err == nil || !errors.Is(f0.Err, errFleetNotFound) {
				t.Errorf("missing group: %+v, want unknown, not found", f0)
			}
			continue
		}
		if !f0.Known || f0.Desired != 4 || f0.Min != 1 || f0.Max != 9 || f0.InService != 1 || f0.Pending != 2 ||
			!slices.EqualFunc(f0.PendingSince, []time.Time{t0, t0}, time.Time.Equal) {
			t.Fatalf("group %d round 0: %+v, want 1 in service, 2 pending since t0", i, f0)
		}
		if f0.Draining != 1 || f1.Draining != 1 {
			t.Fatalf("group %d: draining %d then %d, want the terminating instance once each round", i, f0.Draining, f1.Draining)
		}
		if f1.InService != 2 || f1.Pending != 2 || !slices.EqualFunc(f1.PendingSince, []time.Time{t0, t1}, time.Time.Equal) {
			t.Fatalf("group %d round 1: %+v, want 2 in service, pending since t0 and t1", i, f1)
		}
	}
}

// TestECSFleets batches 25 services of one cluster into calls of 10, by
// name or ARN, and reports those ECS says are missing or inactive.
func TestECSFleets(t *testing.T) {
	t.Parallel()
	created := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	var batchSizes []int
	e := fakeECS{fn: func(_ context.Context, in *ecs.DescribeServicesInput) (*ecs.DescribeServicesOutput, error) {
		mu.Lock()
		batchSizes = append(batchSizes, len(in.Services))
		mu.Unlock()
		if aws.ToString(in.Cluster) != "jobs" {
			return nil, fmt.Errorf("cluster %q", aws.ToString(in.Cluster))
		}
		out := &ecs.DescribeServicesOutput{}
		for _, s := range in.Services {
			name := serviceKey(s)
			switch name {
			case "gone":
				out.Failures = append(out.Failures, ecstypes.Failure{Arn: aws.String("arn:aws:ecs:us-east-1:1:service/jobs/gone"), Reason: aws.String("MISSING")})
				continue
			case "old":
				out.Services = append(out.Services, ecstypes.Service{ServiceName: aws.String(name), Status: aws.String("INACTIVE")})
				continue
			}
			out.Services = append(out.Services, ecstypes.Service{
				ServiceName: aws.String(name), Status: aws.String("ACTIVE"),
				DesiredCount: 5, RunningCount: 3, PendingCount: 2,
				Deployments: []ecstypes.Deployment{
					{CreatedAt: aws.Time(created), PendingCount: 1},
					{CreatedAt: aws.Time(created.Add(time.Minute)), PendingCount: 1},
					{CreatedAt: aws.Time(created.Add(-time.Hour)), PendingCount: 0},
				},
			})
		}
		return out, nil
	}}
	var groups []config.Group
	for i := range 25 {
		svc := fmt.Sprintf("s%02d", i)
		switch i {
		case 3:
			svc = "arn:aws:ecs:us-east-1:123456789012:service/jobs/s03"
		case 4:
			svc = "gone"
		case 5:
			svc = "old"
		}
		groups = append(groups, config.Group{Name: fmt.Sprintf("g%d", i), Queues: []config.Queue{{URL: queueURL(east, "a")}},
			Fleet: config.Fleet{ECSService: &config.ECSService{Cluster: "jobs", Service: svc}}})
	}
	p, err := newPoller(baseConfig(groups...), clientsWith(answering(0, 0, 0), nil, nil, e), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	obs, err := p.Observe(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(batchSizes)
	if !slices.Equal(batchSizes, []int{5, 10, 10}) {
		t.Errorf("services per call = %v, want 10, 10, 5", batchSizes)
	}
	for i, o := range obs {
		f := o.Fleet
		switch i {
		case 4, 5:
			if f.Known || !errors.Is(f.Err, errFleetNotFound) || f.Desired != 0 {
				t.Errorf("service %d: %+v, want unknown, not found", i, f)
			}
		default:
			if !f.Known || f.Kind != KindECS || f.Desired != 5 || f.InService != 3 || f.Pending != 2 || f.Min != 0 || f.Max != 0 ||
				!slices.EqualFunc(f.PendingSince, []time.Time{created, created.Add(time.Minute)}, time.Time.Equal) {
				t.Errorf("service %d: %+v, want desired 5, 3 running, 2 pending since the deployments", i, f)
			}
		}
	}
}
