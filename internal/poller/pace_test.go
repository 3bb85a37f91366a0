package poller

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
)

func TestPaceSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		p       pace
		n       int
		want    int
		wantNed int
	}{
		{"unmeasured starts at 16", pace{floor: 4, ceiling: 64, target: 6 * time.Second}, 2500, 16, 0},
		{"unmeasured under a low ceiling", pace{floor: 4, ceiling: 8, target: 6 * time.Second}, 2500, 8, 0},
		// 2,500 × 60 ms ÷ 6 s = 25.
		{"60 ms in a 10 s interval", pace{floor: 4, ceiling: 64, target: 6 * time.Second, latency: 60 * time.Millisecond}, 2500, 25, 25},
		// 2,500 × 150 ms ÷ 6 s = 62.5 → 63.
		{"150 ms rounds up", pace{floor: 4, ceiling: 64, target: 6 * time.Second, latency: 150 * time.Millisecond}, 2500, 63, 63},
		// 2,500 × 200 ms ÷ 6 s = 83.3 → 84, above the ceiling.
		{"held at the ceiling", pace{floor: 4, ceiling: 64, target: 6 * time.Second, latency: 200 * time.Millisecond}, 2500, 64, 84},
		// 100 × 6 ms ÷ 6 s = 0.1 → 1, below the floor.
		{"held at the floor", pace{floor: 4, ceiling: 64, target: 6 * time.Second, latency: 6 * time.Millisecond}, 100, 4, 1},
		{"nothing due", pace{floor: 4, ceiling: 64, target: 6 * time.Second, latency: 60 * time.Millisecond}, 0, 4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.p.need(tc.n); got != tc.wantNed {
				t.Errorf("need(%d) = %d, want %d", tc.n, got, tc.wantNed)
			}
			if got := tc.p.size(tc.n); got != tc.want || tc.p.limit != tc.want {
				t.Errorf("size(%d) = %d (limit %d), want %d", tc.n, got, tc.p.limit, tc.want)
			}
		})
	}
}

func TestPaceObserve(t *testing.T) {
	t.Parallel()
	var p pace
	p.observe(0)
	if p.latency != 0 {
		t.Fatalf("latency %v after no measurement, want 0", p.latency)
	}
	p.observe(100 * time.Millisecond)
	if p.latency != 100*time.Millisecond {
		t.Fatalf("first measurement: %v, want 100ms", p.latency)
	}
	p.observe(200 * time.Millisecond) // up at once
	if p.latency != 200*time.Millisecond {
		t.Fatalf("after a slower round: %v, want 200ms", p.latency)
	}
	p.observe(100 * time.Millisecond) // down by half the gap: 200 - 50 = 150
	if p.latency != 150*time.Millisecond {
		t.Fatalf("after a faster round: %v, want 150ms", p.latency)
	}
}

// sleepySQS answers every queue with the given counts after a delay,
// recording the most calls in flight at once.
type sleepySQS struct {
	delay             time.Duration
	visible           int
	inFlight, maxSeen atomic.Int64
	calls             atomic.Int64
}

func (s *sleepySQS) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for m := s.maxSeen.Load(); n > m && !s.maxSeen.CompareAndSwap(m, n); m = s.maxSeen.Load() {
	}
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, fmt.Errorf("send request: %w", ctx.Err())
	}
	return answering(s.visible, 0, 0).fn(ctx, in)
}

func manyQueues(n int, region string) []config.Queue {
	qs := make([]config.Queue, n)
	for i := range qs {
		qs[i] = config.Queue{URL: queueURL(region, fmt.Sprintf("q%04d", i))}
	}
	return qs
}

// TestConcurrencyFollowsLatency: 200 queues answering in 30 ms, a 1 s
// interval (rounds sized to 600 ms) and a ceiling of 64. The first round
// starts at 16; later rounds at about 200 × 30 ms ÷ 600 ms = 10 calls in
// flight, and every queue answers.
func TestConcurrencyFollowsLatency(t *testing.T) {
	t.Parallel()
	s := &sleepySQS{delay: 30 * time.Millisecond, visible: 1}
	cfg := baseConfig(config.Group{Name: "g", Queues: manyQueues(200, east)})
	cfg.Interval, cfg.AWS.CallTimeout, cfg.AWS.ConcurrencyPerRegion = time.Second, 800*time.Millisecond, 64
	reg := prometheus.NewRegistry()
	p, err := newPoller(cfg, clientsWith(s, nil, nil, nil), reg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for round := range 3 {
		s.maxSeen.Store(0)
		obs, err := p.Observe(context.Background(), now.Add(time.Duration(round)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		smp := obs[0].Sample
		if smp.Answered != 200 || smp.Visible != 200 || len(smp.Polling.Notices) != 0 {
			t.Fatalf("round %d: answered %d, visible %d, notices %q; want 200, 200, none", round, smp.Answered, smp.Visible, smp.Polling.Notices)
		}
		limit := p.regions[0].pace.limit
		if got := s.maxSeen.Load(); got > int64(limit) {
			t.Fatalf("round %d: %d calls in flight, limit %d", round, got, limit)
		}
		// The latency is at least the 30 ms delay, so the need is at least
		// 10; a loaded machine may slow calls, hence the loose top.
		if limit < 10 || limit > 40 {
			t.Fatalf("round %d at %d calls in flight (latency %v), want about 10", round, limit, p.regions[0].pace.latency)
		}
	}
	if got := testutil.ToFloat64(p.metrics.fits.WithLabelValues(east)); got != 1 {
		t.Errorf("checker_region_cycle_fits = %v, want 1", got)
	}
	if got := testutil.ToFloat64(p.metrics.concurrency.WithLabelValues(east)); got != float64(p.regions[0].pace.limit) {
		t.Errorf("checker_region_concurrency = %v, want %d", got, p.regions[0].pace.limit)
	}
}

// TestRoundThatCannotFit: 100 queues answering in 20 ms with at most 2
// calls in flight take 1 s, past the 500 ms deadline. The region's notice
// names it and why, on the sample, in the failures and in the metric; the
// queues not reached are asked first in the next round.
func TestRoundThatCannotFit(t *testing.T) {
	t.Parallel()
	s := &sleepySQS{delay: 20 * time.Millisecond}
	cfg := baseConfig(config.Group{Name: "g", Queues: manyQueues(100, west)})
	cfg.Interval, cfg.AWS.CallTimeout, cfg.AWS.ConcurrencyPerRegion = time.Second, 500*time.Millisecond, 2
	p, err := newPoller(cfg, clientsWith(s, nil, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	obs, err := p.Observe(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	smp := obs[0].Sample
	if !smp.Partial() || len(smp.Failures) == 0 || smp.Answered+len(smp.Failures) != 100 {
		t.Fatalf("answered %d, %d failures; want a partial sample", smp.Answered, len(smp.Failures))
	}
	if len(smp.Polling.Notices) != 1 || !strings.Contains(smp.Polling.Notices[0], "region "+west) ||
		!strings.Contains(smp.Polling.Notices[0], "aws.concurrency_per_region (2)") {
		t.Fatalf("notices %q, want one naming %s and the ceiling", smp.Polling.Notices, west)
	}
	f := smp.Failures[len(smp.Failures)-1]
	if f.Class != model.ErrClassTimeout || !strings.Contains(f.Message, "did not fit") {
		t.Errorf("failure %+v, want a timeout saying the round did not fit", f)
	}
	if got := testutil.ToFloat64(p.metrics.fits.WithLabelValues(west)); got != 0 {
		t.Errorf("checker_region_cycle_fits = %v, want 0", got)
	}
	if got := testutil.ToFloat64(p.metrics.unanswered.WithLabelValues(west)); got != float64(len(smp.Failures)) {
		t.Errorf("checker_region_unanswered_queues_total = %v, want %d", got, len(smp.Failures))
	}
	unreached := map[string]bool{}
	for _, f := range smp.Failures {
		if strings.Contains(f.Message, "no call started") {
			unreached[f.Queue] = true
		}
	}
	if len(unreached) == 0 {
		t.Fatal("every failure was a call cut off; want some never started")
	}
	p.regions[0].plan(now.Add(time.Second))
	for i, q := range p.regions[0].due[:len(unreached)] {
		if !unreached[q.name] {
			t.Fatalf("next round's call %d is %s, which answered; want the unreached queues first", i, q.name)
		}
	}
}

// fixedSQS answers each queue with the visible count the test sets for
// it, or fails it.
type fixedSQS struct {
	visible map[string]int // by queue URL
	fail    map[string]bool
	asked   map[string]int
}

func (s *fixedSQS) GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	u := aws.ToString(in.QueueUrl)
	s.asked[u]++ // one worker: the tests set concurrency 1
	if s.fail[u] {
		return nil, fmt.Errorf("boom")
	}
	return answering(s.visible[u], 0, 0).fn(ctx, in)
}

// TestIdleQueuesSkipped walks one idle queue and one busy queue through
// simulated intervals of 5 s with idle_sample_interval 30 s, checking
// which calls are made and that a skipped queue counts as answered with
// zero, never as missing.
func TestIdleQueuesSkipped(t *testing.T) {
	t.Parallel()
	idle, busy := queueURL(east, "idle"), queueURL(east, "busy")
	s := &fixedSQS{visible: map[string]int{busy: 4}, fail: map[string]bool{}, asked: map[string]int{}}
	cfg := baseConfig(
		config.Group{Name: "quiet", Queues: []config.Queue{{URL: idle}}, IdleSampleInterval: 30 * time.Second},
		config.Group{Name: "loud", Queues: []config.Queue{{URL: busy}}, IdleSampleInterval: 30 * time.Second},
	)
	cfg.Interval, cfg.AWS.CallTimeout, cfg.AWS.ConcurrencyPerRegion = 5*time.Second, 4*time.Second, 1
	cfg.AWS.SQSPricePerMillionRequests = 0.40
	p, err := newPoller(cfg, clientsWith(s, nil, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	observe := func(sec int) []model.Observation {
		t.Helper()
		obs, err := p.Observe(context.Background(), at(sec))
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	// Idle since 0 s: asked at 0, 5, 10, 20, 40, 70, 100 (gaps 5, 5, 10,
	// 20, 30, 30); the busy queue every 5 s.
	wantAsked := map[int]bool{0: true, 5: true, 10: true, 20: true, 40: true, 70: true, 100: true}
	for sec := 0; sec <= 100; sec += 5 {
		before := s.asked[idle]
		obs := observe(sec)
		asked := s.asked[idle] > before
		if asked != wantAsked[sec] {
			t.Fatalf("at %d s: idle queue asked %v, want %v", sec, asked, wantAsked[sec])
		}
		q := obs[0].Sample
		if q.Answered != 1 || q.Missing() || q.Partial() || len(q.Failures) != 0 || q.Backlog != 0 {
			t.Fatalf("at %d s: quiet sample %+v, want answered with zero", sec, q)
		}
		if got := q.Polling.Asked; (got == 1) != asked {
			t.Fatalf("at %d s: Polling.Asked %d, asked %v", sec, got, asked)
		}
		if l := obs[1].Sample; l.Visible != 4 || l.Polling.Asked != 1 {
			t.Fatalf("at %d s: loud sample %+v, want 4 visible, asked", sec, l)
		}
	}
	if got := s.asked[busy]; got != 21 {
		t.Fatalf("busy queue asked %d times in 21 intervals, want 21", got)
	}
	// At 100 s the last minute (45 s to 100 s and the 5 s before) held
	// the calls at 70 and 100: 2 a minute, 2 × 43,200 minutes × $0.40/1e6.
	obs := observe(105)
	if pm := obs[0].Sample.Polling.RequestsPerMinute; pm != 2 {
		t.Errorf("quiet: %v requests a minute, want 2", pm)
	}
	if c, want := obs[0].Sample.Polling.MonthlyCost, 2*43800*0.40/1e6; math.Abs(c-want) > 1e-12 {
		t.Errorf("quiet: monthly cost %v, want %v", c, want)
	}
	if pm := obs[1].Sample.Polling.RequestsPerMinute; pm != 12 {
		t.Errorf("loud: %v requests a minute, want 12", pm)
	}

	// A message shows: asked every interval from then on.
	s.visible[idle] = 1
	sec := 130 // the next due time after 100 s
	observe(110)
	observe(115)
	observe(120)
	observe(125)
	if got := observe(sec)[0].Sample.Visible; got != 1 {
		t.Fatalf("at %d s: visible %d, want the new message", sec, got)
	}
	for sec += 5; sec <= 150; sec += 5 {
		before := s.asked[idle]
		observe(sec)
		if s.asked[idle] != before+1 {
			t.Fatalf("at %d s: a queue holding a message was not asked", sec)
		}
	}

	// Empty again, then failing: a failing queue is asked every interval
	// and reported as failed, never carried forward.
	s.visible[idle] = 0
	for sec = 155; sec <= 200; sec += 5 {
		observe(sec)
	}
	s.fail[idle] = true
	failedAt := -1
	for sec = 205; sec <= 300; sec += 5 {
		before := s.asked[idle]
		q := observe(sec)[0].Sample
		asked := s.asked[idle] > before
		switch {
		case failedAt < 0 && asked:
			failedAt = sec
			fallthrough
		case failedAt >= 0:
			if !asked || !q.Missing() || len(q.Failures) != 1 {
				t.Fatalf("at %d s: asked %v, sample %+v; want asked and missing with one failure", sec, asked, q)
			}
		default: // not yet due: its last good counts, zero, stand
			if q.Answered != 1 || q.Backlog != 0 {
				t.Fatalf("at %d s: sample %+v before the queue was due", sec, q)
			}
		}
	}
	if failedAt < 0 || failedAt > 205+30 {
		t.Fatalf("first failing call at %d s, want within 30 s of 205 s", failedAt)
	}
}

// TestExpectingLoad: a group that expects load has every queue asked
// every interval, idle or not, until the time given.
func TestExpectingLoad(t *testing.T) {
	t.Parallel()
	idle := queueURL(east, "idle")
	s := &fixedSQS{visible: map[string]int{}, fail: map[string]bool{}, asked: map[string]int{}}
	cfg := baseConfig(config.Group{Name: "quiet", Queues: []config.Queue{{URL: idle}}, IdleSampleInterval: time.Minute})
	cfg.Interval, cfg.AWS.CallTimeout, cfg.AWS.ConcurrencyPerRegion = 5*time.Second, 4*time.Second, 1
	p, err := newPoller(cfg, clientsWith(s, nil, nil, nil), prometheus.NewRegistry(), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	count := func(from, to int) int {
		before := s.asked[idle]
		for sec := from; sec <= to; sec += 5 {
			if _, err := p.Observe(context.Background(), at(sec)); err != nil {
				t.Fatal(err)
			}
		}
		return s.asked[idle] - before
	}
	// Backed off to a minute by 300 s: asked at 0, 5, 10, 20, 40, 80, 140,
	// 200, 260.
	if got := count(0, 300); got != 9 {
		t.Fatalf("idle queue asked %d times in 300 s, want 9", got)
	}
	p.SetExpectingLoad("quiet", at(360))
	p.SetExpectingLoad("no-such-group", at(360))
	if got := count(305, 355); got != 11 {
		t.Fatalf("expecting load: asked %d times in 11 intervals, want 11", got)
	}
	// Expired: back to a minute at once (idle since 0 s).
	if got := count(360, 415); got != 1 {
		t.Fatalf("after expecting load: asked %d times in 12 intervals, want 1", got)
	}
	p.SetExpectingLoad("quiet", at(1000))
	p.SetExpectingLoad("quiet", time.Time{}) // withdrawn
	if got := count(420, 470); got > 1 {
		t.Fatalf("withdrawn: asked %d times in 11 intervals, want at most 1", got)
	}
}

// TestPerQueueSeries counts the per-queue series under each setting of
// metrics.per_queue, with one of three queues failing and then answering.
func TestPerQueueSeries(t *testing.T) {
	t.Parallel()
	urls := []string{queueURL(east, "a"), queueURL(east, "b"), queueURL(east, "c")}
	tests := []struct {
		mode                     config.PerQueue
		ages, messages           int // while c fails
		agesAfter, messagesAfter int // once c answers
	}{
		{config.PerQueueAll, 3, 6, 3, 9}, // c never answered before: no counts until it does
		{"", 3, 6, 3, 9},                 // unset means true
		{config.PerQueueOff, 0, 0, 0, 0},
		{config.PerQueueFailedOnly, 1, 0, 0, 0},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			s := &fixedSQS{visible: map[string]int{}, fail: map[string]bool{urls[2]: true}, asked: map[string]int{}}
			var qs []config.Queue
			for _, u := range urls {
				qs = append(qs, config.Queue{URL: u})
			}
			cfg := baseConfig(config.Group{Name: "g", Queues: qs})
			cfg.AWS.ConcurrencyPerRegion = 1
			cfg.Metrics.PerQueue = tc.mode
			reg := prometheus.NewRegistry()
			p, err := newPoller(cfg, clientsWith(s, nil, nil, nil), reg, zaptest.NewLogger(t))
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			if _, err := p.Observe(context.Background(), now); err != nil {
				t.Fatal(err)
			}
			if a, m := testutil.CollectAndCount(p.metrics.sampleAge), testutil.CollectAndCount(p.metrics.messages); a != tc.ages || m != tc.messages {
				t.Errorf("while failing: %d age and %d message series, want %d and %d", a, m, tc.ages, tc.messages)
			}
			s.fail[urls[2]] = false
			if _, err := p.Observe(context.Background(), now.Add(time.Second)); err != nil {
				t.Fatal(err)
			}
			if a, m := testutil.CollectAndCount(p.metrics.sampleAge), testutil.CollectAndCount(p.metrics.messages); a != tc.agesAfter || m != tc.messagesAfter {
				t.Errorf("answering: %d age and %d message series, want %d and %d", a, m, tc.agesAfter, tc.messagesAfter)
			}
			// Group series stay whatever the setting.
			if n := testutil.CollectAndCount(p.metrics.requestRate); n != 1 {
				t.Errorf("%d requests-per-minute series, want 1", n)
			}
		})
	}
}
