package poller

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
)

// TestObserveSumsQueuesAcrossRegions reads two queues in two regions, each
// holding visible, in-flight and delayed messages, into groups that differ
// only in their counting switches.
func TestObserveSumsQueuesAcrossRegions(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	qEast := makeQueue(t, d, queueSpec{region: east, visible: 3, inFlight: 2, delayed: 1})
	qWest := makeQueue(t, d, queueSpec{region: west, visible: 5, inFlight: 1, delayed: 4})

	tests := []struct {
		name        string
		count       config.Count
		wantBacklog int64
	}{
		{"visible only", config.Count{}, 8},
		{"with in-flight", config.Count{InFlight: true}, 8 + 3},
		{"with delayed", config.Count{Delayed: true}, 8 + 5},
		{"with both", config.Count{InFlight: true, Delayed: true}, 8 + 3 + 5},
	}
	var groups []config.Group
	for _, tc := range tests {
		groups = append(groups, config.Group{Name: strings.ReplaceAll(tc.name, " ", "_"),
			Queues: []config.Queue{qEast, qWest}, Count: tc.count})
	}
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(groups...), factory(t, moto.URL, reg), reg)
	now := time.Now()
	obs, err := p.Observe(context.Background(), now)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if len(obs) != len(tests) {
		t.Fatalf("got %d observations, want %d", len(obs), len(tests))
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := obs[i].Sample
			if s.Group != groups[i].Name || !s.At.Equal(now) {
				t.Errorf("group %q at %v, want %q at %v", s.Group, s.At, groups[i].Name, now)
			}
			if s.Visible != 8 || s.InFlight != 3 || s.Delayed != 5 {
				t.Errorf("visible/in-flight/delayed = %d/%d/%d, want 8/3/5", s.Visible, s.InFlight, s.Delayed)
			}
			if s.Backlog != tc.wantBacklog {
				t.Errorf("backlog = %d, want %d", s.Backlog, tc.wantBacklog)
			}
			if s.Queues != 2 || s.Answered != 2 || len(s.Failures) != 0 || s.Partial() || s.Missing() {
				t.Errorf("queues %d answered %d failures %v, want 2, 2, none", s.Queues, s.Answered, s.Failures)
			}
			if s.OldestAge != nil || s.Sent != nil || s.Deleted != nil {
				t.Errorf("CloudWatch readings set for a group without CloudWatch: %+v %+v %+v", s.OldestAge, s.Sent, s.Deleted)
			}
			if obs[i].Fleet.Kind != "" || obs[i].Fleet.Known {
				t.Errorf("fleet %+v, want none", obs[i].Fleet)
			}
		})
	}

	// The per-queue gauges of one group.
	var want strings.Builder
	want.WriteString("# HELP checker_queue_messages Messages in a queue at its last good sample, by state (visible, in_flight, delayed). checker_queue_sample_age_seconds says how old that sample is.\n# TYPE checker_queue_messages gauge\n")
	for _, g := range groups {
		for _, q := range []struct {
			cfg  config.Queue
			v    [3]int
			name string
		}{{qEast, [3]int{1, 2, 3}, queueName(qEast)}, {qWest, [3]int{4, 1, 5}, queueName(qWest)}} {
			// Sorted by label value: delayed, in_flight, visible.
			for j, state := range []string{"delayed", "in_flight", "visible"} {
				fmt.Fprintf(&want, "checker_queue_messages{group=%q,queue=%q,region=%q,state=%q} %d\n", g.Name, q.name, q.cfg.Region, state, q.v[j])
			}
		}
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want.String()), "checker_queue_messages"); err != nil {
		t.Error(err)
	}
	for _, g := range groups {
		for _, q := range []config.Queue{qEast, qWest} {
			if got := testutil.ToFloat64(p.metrics.sampleAge.WithLabelValues(g.Name, queueName(q), q.Region)); got != 0 {
				t.Errorf("sample age of %s/%s = %v, want 0", g.Name, queueName(q), got)
			}
		}
	}
	// Every SDK call was counted: 2 queues for each of 4 groups.
	wantCalls := `
# HELP checker_aws_requests_total AWS API calls made, by service, operation and outcome (success or the error class).
# TYPE checker_aws_requests_total counter
checker_aws_requests_total{operation="GetQueueAttributes",outcome="success",service="sqs"} 8
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wantCalls), "checker_aws_requests_total"); err != nil {
		t.Error(err)
	}
}

// TestObserveReadsFleets reads an Auto Scaling group and an ECS service
// back, and reports fleets that do not exist as unknown, never as zeros.
func TestObserveReadsFleets(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	q := makeQueue(t, d, queueSpec{region: east, visible: 1})
	asg := awstest.UniqueName(t, "asg")
	awstest.CreateAutoScalingGroup(t, d.AutoScaling(east), east, asg, 1, 5, 2)
	cluster, svc := awstest.UniqueName(t, "cluster"), awstest.UniqueName(t, "svc")
	awstest.CreateECSService(t, d.ECS(west), cluster, svc, 3)
	created := time.Now()

	groups := []config.Group{
		{Name: "asg", Queues: []config.Queue{q}, Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: asg}}},
		{Name: "ecs", Queues: []config.Queue{q}, Fleet: config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: svc, Region: west}}},
		{Name: "missing-asg", Queues: []config.Queue{q}, Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: asg + "-nope", Region: east}}},
		{Name: "missing-svc", Queues: []config.Queue{q}, Fleet: config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: svc + "-nope", Region: west}}},
		{Name: "none", Queues: []config.Queue{q}},
	}
	proxy := awstest.NewProxy(t, moto.URL)
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(groups...), factory(t, proxy.URL, reg), reg)
	now := time.Now()
	obs, err := p.Observe(context.Background(), now)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}

	got := obs[0].Fleet
	if got.Kind != KindAutoScaling || got.Name != asg || !got.Known || got.Err != nil ||
		got.Desired != 2 || got.Min != 1 || got.Max != 5 || got.InService != 2 || got.Pending != 0 || len(got.PendingSince) != 0 {
		t.Errorf("auto scaling fleet = %+v, want known, desired 2, min 1, max 5, 2 in service, none pending", got)
	}

	got = obs[1].Fleet
	if got.Kind != KindECS || got.Name != cluster+"/"+svc || !got.Known || got.Err != nil ||
		got.Desired != 3 || got.Min != 0 || got.Max != 0 || got.InService != 0 || got.Pending != 3 {
		t.Errorf("ECS fleet = %+v, want known, desired 3, 0 running, 3 pending", got)
	}
	if len(got.PendingSince) != 3 {
		t.Errorf("ECS PendingSince = %v, want 3 times", got.PendingSince)
	}
	for _, ts := range got.PendingSince {
		if ts.Before(created.Add(-time.Minute)) || ts.After(now.Add(time.Minute)) {
			t.Errorf("ECS pending since %v, want the deployment's creation near %v", ts, created)
		}
	}

	for _, i := range []int{2, 3} {
		got := obs[i].Fleet
		if got.Known || got.Err == nil || got.Desired != 0 || got.InService != 0 {
			t.Errorf("%s fleet = %+v, want unknown with an error", groups[i].Name, got)
		}
		if !strings.Contains(got.Err.Error(), "not found") {
			t.Errorf("%s fleet error %q, want it to say not found", groups[i].Name, got.Err)
		}
	}
	if got := obs[4].Fleet; got.Kind != "" || got.Known {
		t.Errorf("fleet of a group without one = %+v, want Kind \"\"", got)
	}

	// One call per region and service: both groups share one batch each.
	if n := proxy.Calls("DescribeAutoScalingGroups"); n != 1 {
		t.Errorf("DescribeAutoScalingGroups calls = %d, want 1", n)
	}
	if n := proxy.Calls("DescribeServices"); n != 1 {
		t.Errorf("DescribeServices calls = %d, want 1", n)
	}
	if n := proxy.Calls("GetQueueAttributes"); n != len(groups) {
		t.Errorf("GetQueueAttributes calls = %d, want %d", n, len(groups))
	}
}

// TestObserveReadsCloudWatch puts SQS datapoints into CloudWatch and reads
// them back through the poller: the newest per queue, the maximum age and
// the summed rates over two regions, with the datapoints' own timestamps,
// and one GetMetricData round per region per minute.
func TestObserveReadsCloudWatch(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	qEast := makeQueue(t, d, queueSpec{region: east, visible: 2})
	qWest := makeQueue(t, d, queueSpec{region: west, visible: 1})

	now := time.Now()
	minute := now.Truncate(time.Minute)
	newest, older := minute.Add(-2*time.Minute), minute.Add(-5*time.Minute)
	for _, p := range []struct {
		q      config.Queue
		metric string
		at     time.Time
		v      float64
	}{
		{qEast, "ApproximateAgeOfOldestMessage", older, 900},
		{qEast, "ApproximateAgeOfOldestMessage", newest.Add(10 * time.Second), 120},
		{qEast, "NumberOfMessagesSent", newest.Add(10 * time.Second), 600},
		{qEast, "NumberOfMessagesDeleted", newest.Add(10 * time.Second), 60},
		{qWest, "ApproximateAgeOfOldestMessage", newest.Add(20 * time.Second), 300},
		{qWest, "NumberOfMessagesSent", newest.Add(20 * time.Second), 120},
		{qWest, "NumberOfMessagesDeleted", older.Add(5 * time.Second), 30},
	} {
		putSQSMetric(t, d, p.q.Region, queueName(p.q), p.metric, p.at, p.v)
	}

	groups := []config.Group{
		{Name: "with-cw", Queues: []config.Queue{qEast, qWest}, OldestAge: config.OldestAge{CloudWatch: true}},
		{Name: "without-cw", Queues: []config.Queue{qEast}},
	}
	proxy := awstest.NewProxy(t, moto.URL)
	reg := prometheus.NewRegistry()
	cfg := baseConfig(groups...)
	cfg.AWS.CloudWatchPricePerThousandMetrics = 0.01 // $0.01 per 1,000 metrics
	p := newTestPoller(t, cfg, factory(t, proxy.URL, reg), reg)

	obs, err := p.Observe(context.Background(), now)
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	s := obs[0].Sample
	wantReading := func(name string, got *model.Reading, value float64, at time.Time) {
		t.Helper()
		if got == nil {
			t.Errorf("%s = nil, want %v at %v", name, value, at)
			return
		}
		if math.Abs(got.Value-value) > 1e-9 || !got.At.Equal(at) {
			t.Errorf("%s = %v at %v, want %v at %v", name, got.Value, got.At, value, at)
		}
	}
	wantReading("OldestAge", s.OldestAge, 300, newest)        // max(120, 300)
	wantReading("Sent", s.Sent, 600.0/60+120.0/60, newest)    // 10 + 2 msg/s
	wantReading("Deleted", s.Deleted, 60.0/60+30.0/60, older) // the older datapoint dates the sum
	if obs[1].Sample.OldestAge != nil || obs[1].Sample.Sent != nil {
		t.Errorf("group without CloudWatch has readings: %+v", obs[1].Sample)
	}
	// Three metrics a queue each minute: 6 for two queues, 6 × 43,200
	// minutes × $0.01 per 1,000 a month; none for the group without.
	if pm, c := s.Polling.CloudWatchMetricsPerMinute, s.Polling.CloudWatchMonthlyCost; pm != 6 || math.Abs(c-6*43800*0.01/1000) > 1e-9 {
		t.Errorf("CloudWatch reads: %v metrics a minute, $%v a month; want 6, $%v", pm, c, 6*43800*0.01/1000)
	}
	if pm := obs[1].Sample.Polling.CloudWatchMetricsPerMinute; pm != 0 {
		t.Errorf("group without CloudWatch reads %v metrics a minute", pm)
	}
	wantAge := fmt.Sprintf(`
# HELP checker_queue_oldest_message_age_seconds ApproximateAgeOfOldestMessage of a queue from CloudWatch (1-minute Maximum, newest datapoint).
# TYPE checker_queue_oldest_message_age_seconds gauge
checker_queue_oldest_message_age_seconds{group="with-cw",queue=%q,region="eu-west-1"} 300
checker_queue_oldest_message_age_seconds{group="with-cw",queue=%q,region="us-east-1"} 120
`, queueName(qWest), queueName(qEast))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(wantAge), "checker_queue_oldest_message_age_seconds"); err != nil {
		t.Error(err)
	}
	if n := proxy.Calls("GetMetricData"); n != 2 {
		t.Fatalf("GetMetricData calls = %d, want 2 (one per region)", n)
	}

	// Within the minute the readings come from the cache.
	obs, err = p.Observe(context.Background(), now.Add(30*time.Second))
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if n := proxy.Calls("GetMetricData"); n != 2 {
		t.Errorf("GetMetricData calls after a second Observe within the minute = %d, want still 2", n)
	}
	wantReading("cached OldestAge", obs[0].Sample.OldestAge, 300, newest)

	// A minute later each region is read again.
	if _, err := p.Observe(context.Background(), now.Add(61*time.Second)); err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if n := proxy.Calls("GetMetricData"); n != 4 {
		t.Errorf("GetMetricData calls a minute later = %d, want 4", n)
	}
}

// TestObserveUnderFaults fails single queues in every way the proxy can
// and checks that each is marked failed with its class, the others are
// counted as usual, nothing failed is summed as zero, and the failure is
// logged once when it starts and once when it ends.
func TestObserveUnderFaults(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	good1 := makeQueue(t, d, queueSpec{region: east, visible: 4, inFlight: 1, delayed: 2})
	good2 := makeQueue(t, d, queueSpec{region: west, visible: 6, inFlight: 2})
	faults := []struct {
		name  string
		fault awstest.Fault
		class string
	}{
		{"throttled", awstest.Fault{Kind: awstest.FaultThrottle}, model.ErrClassThrottled},
		{"server error", awstest.Fault{Kind: awstest.FaultServerError}, model.ErrClassServer},
		{"slow", awstest.Fault{Kind: awstest.FaultSlow, Delay: time.Minute}, model.ErrClassTimeout},
		{"truncated body", awstest.Fault{Kind: awstest.FaultMalformed}, model.ErrClassMalformed},
		{"attribute missing", awstest.Fault{Kind: awstest.FaultMalformed,
			Body: `{"Attributes":{"ApproximateNumberOfMessages":"7","ApproximateNumberOfMessagesNotVisible":"1"}}`}, model.ErrClassMalformed},
		{"reset", awstest.Fault{Kind: awstest.FaultReset}, model.ErrClassNetwork},
	}
	queues := []config.Queue{good1, good2}
	bad := map[string]int{} // queue name -> index into faults
	for i := range faults {
		q := makeQueue(t, d, queueSpec{region: []string{east, west}[i%2], visible: 7, inFlight: 1, delayed: 1})
		queues = append(queues, q)
		bad[queueName(q)] = i
	}
	asg := awstest.UniqueName(t, "asg")
	awstest.CreateAutoScalingGroup(t, d.AutoScaling(east), east, asg, 0, 3, 1)
	groups := []config.Group{{
		Name: "faults", Queues: queues, Count: config.Count{InFlight: true, Delayed: true},
		Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: asg}},
	}}
	cfg := baseConfig(groups...)
	cfg.AWS.CallTimeout = 5 * time.Second

	proxy := awstest.NewProxy(t, moto.URL)
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	p, err := New(cfg, factory(t, proxy.URL, reg), reg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}

	// A first good round, so that every queue has counts to keep.
	now := time.Now()
	if _, err := p.Observe(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	for _, q := range queues[2:] {
		proxy.Inject(awstest.MatchQueue(q.URL), faults[bad[queueName(q)]].fault)
	}
	proxy.Inject(awstest.MatchOperation("DescribeAutoScalingGroups"), awstest.Fault{Kind: awstest.FaultThrottle})

	for round := 1; round <= 2; round++ {
		at := now.Add(time.Duration(round) * 5 * time.Second)
		obs, err := p.Observe(context.Background(), at)
		if err != nil {
			t.Fatalf("round %d: Observe: %v", round, err)
		}
		s := obs[0].Sample
		if s.Answered != 2 || s.Queues != len(queues) || !s.Partial() {
			t.Errorf("round %d: answered %d of %d (partial %v), want 2 of %d, partial", round, s.Answered, s.Queues, s.Partial(), len(queues))
		}
		// Only the good queues are summed.
		if s.Visible != 10 || s.InFlight != 3 || s.Delayed != 2 || s.Backlog != 15 {
			t.Errorf("round %d: visible/in-flight/delayed/backlog = %d/%d/%d/%d, want 10/3/2/15",
				round, s.Visible, s.InFlight, s.Delayed, s.Backlog)
		}
		if len(s.Failures) != len(faults) {
			t.Fatalf("round %d: %d failures, want %d: %+v", round, len(s.Failures), len(faults), s.Failures)
		}
		for _, f := range s.Failures {
			i, ok := bad[f.Queue]
			if !ok {
				t.Errorf("round %d: good queue %s reported failed: %+v", round, f.Queue, f)
				continue
			}
			if f.Class != faults[i].class || f.Message == "" {
				t.Errorf("round %d: %s (%s) failed as %q (%s), want %q", round, f.Queue, faults[i].name, f.Class, f.Message, faults[i].class)
			}
		}
		// The fleet is unknown, not zero.
		if fl := obs[0].Fleet; fl.Known || fl.Err == nil || fl.Desired != 0 {
			t.Errorf("round %d: fleet %+v, want unknown with an error", round, fl)
		}
		// A failing queue keeps its last good counts; its sample age grows.
		for _, q := range queues[2:] {
			age := testutil.ToFloat64(p.metrics.sampleAge.WithLabelValues("faults", queueName(q), q.Region))
			if want := float64(round * 5); age != want {
				t.Errorf("round %d: sample age of %s = %v, want %v", round, faults[bad[queueName(q)]].name, age, want)
			}
			if v := testutil.ToFloat64(p.metrics.messages.WithLabelValues("faults", queueName(q), q.Region, "visible")); v != 7 {
				t.Errorf("round %d: kept visible count of %s = %v, want 7", round, faults[bad[queueName(q)]].name, v)
			}
		}
		if age := testutil.ToFloat64(p.metrics.sampleAge.WithLabelValues("faults", queueName(good1), east)); age != 0 {
			t.Errorf("round %d: sample age of a good queue = %v, want 0", round, age)
		}
	}
	if n := logs.FilterMessageSnippet("queue sample failed").Len(); n != len(faults) {
		t.Errorf("failure logged %d times over two failing rounds, want once per queue (%d)", n, len(faults))
	}
	if n := logs.FilterMessageSnippet("fleet read failed").Len(); n != 1 {
		t.Errorf("fleet failure logged %d times, want 1", n)
	}
	for _, e := range logs.FilterMessageSnippet("queue sample failed").All() {
		if cls, ok := e.ContextMap()["class"].(string); !ok || cls == "" {
			t.Errorf("failure log without a class: %v", e.ContextMap())
		}
	}

	// Recovery.
	proxy.Clear()
	obs, err := p.Observe(context.Background(), now.Add(15*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s := obs[0].Sample
	if s.Answered != len(queues) || len(s.Failures) != 0 || s.Visible != 10+7*int64(len(faults)) {
		t.Errorf("after recovery: answered %d of %d, failures %v, visible %d", s.Answered, len(queues), s.Failures, s.Visible)
	}
	if !obs[0].Fleet.Known || obs[0].Fleet.Desired != 1 {
		t.Errorf("after recovery: fleet %+v, want known with desired 1", obs[0].Fleet)
	}
	if n := logs.FilterMessageSnippet("queue answers again").Len(); n != len(faults) {
		t.Errorf("recovery logged %d times, want %d", n, len(faults))
	}
	if n := logs.FilterMessageSnippet("fleet read answers again").Len(); n != 1 {
		t.Errorf("fleet recovery logged %d times, want 1", n)
	}
}

// TestObserveNeverAnswered checks that a queue that has never answered
// exports no counts and an infinite sample age, and that a group none of
// whose queues answered is reported missing, not empty.
func TestObserveNeverAnswered(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	q := makeQueue(t, d, queueSpec{region: east, visible: 3})
	proxy := awstest.NewProxy(t, moto.URL)
	proxy.Inject(awstest.MatchAll(), awstest.Fault{Kind: awstest.FaultServerError})
	reg := prometheus.NewRegistry()
	cfg := baseConfig(config.Group{Name: "dark", Queues: []config.Queue{q}, OldestAge: config.OldestAge{CloudWatch: true}})
	p := newTestPoller(t, cfg, factory(t, proxy.URL, reg), reg)
	obs, err := p.Observe(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s := obs[0].Sample
	if !s.Missing() || s.Answered != 0 || len(s.Failures) != 1 || s.Failures[0].Class != model.ErrClassServer {
		t.Errorf("sample %+v, want missing with one server_error failure", s)
	}
	if s.OldestAge != nil || s.Sent != nil || s.Deleted != nil {
		t.Errorf("CloudWatch readings after a failed read: %+v %+v %+v", s.OldestAge, s.Sent, s.Deleted)
	}
	if n := testutil.CollectAndCount(p.metrics.messages); n != 0 {
		t.Errorf("%d message series exported for a queue that never answered, want 0", n)
	}
	if age := testutil.ToFloat64(p.metrics.sampleAge.WithLabelValues("dark", queueName(q), east)); !math.IsInf(age, 1) {
		t.Errorf("sample age = %v, want +Inf", age)
	}
}

// TestCallsPerObserve counts the requests that reach the endpoint: one
// GetQueueAttributes per queue, one DescribeAutoScalingGroups per 50
// groups per region.
func TestCallsPerObserve(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	queues := []config.Queue{
		makeQueue(t, d, queueSpec{region: east}), makeQueue(t, d, queueSpec{region: west}),
		makeQueue(t, d, queueSpec{region: south}),
	}
	const nGroups = 120 // 60 fleets in each of two regions: 2 calls each
	var groups []config.Group
	for i := range nGroups {
		region := []string{east, west}[i%2]
		groups = append(groups, config.Group{
			Name:   fmt.Sprintf("g%03d", i),
			Queues: []config.Queue{queues[i%len(queues)]},
			Fleet:  config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: fmt.Sprintf("%s-%03d", awstest.UniqueName(t, "asg"), i), Region: region}},
		})
	}
	proxy := awstest.NewProxy(t, moto.URL)
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(groups...), factory(t, proxy.URL, reg), reg)
	if _, err := p.Observe(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := proxy.Calls("GetQueueAttributes"); got != nGroups {
		t.Errorf("GetQueueAttributes calls = %d, want one per configured queue (%d)", got, nGroups)
	}
	if got := proxy.Calls("DescribeAutoScalingGroups"); got != 4 {
		t.Errorf("DescribeAutoScalingGroups calls = %d, want 4 (60 groups in each of 2 regions, 50 per call)", got)
	}
	if got, want := proxy.Calls(""), nGroups+4; got != want {
		t.Errorf("calls = %d, want %d", got, want)
	}
}
