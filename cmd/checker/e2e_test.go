package main

// End-to-end tests: the checker's commands against moto's server, through
// the real SDK, with resources set up in moto and read back from it.

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(awstest.M(m), awstest.TransportGoroutines...) }

// decisionKeys are the JSON keys of a decision: the contract `checker once
// --output json` prints.
var decisionKeys = []string{
	"group", "at", "visible", "in_flight", "delayed", "backlog",
	"current_workers", "in_service_workers", "pending_workers", "draining_workers", "arrival_rate",
	"backlog_per_worker", "backlog_per_in_service_worker", "target_backlog_per_worker", "floors",
	"recommended_workers", "desired_workers", "capped", "held", "hold_reason",
	"partial", "diagnosis", "reasons", "utilization", "drain_seconds", "oldest_age_seconds", "oldest_age_at",
	"forecast", "plan", "measured", "need_without_forecast", "bursts", "held_messages", "not_acted",
	"paused", "paused_by", "paused_since", "scale_in_off", "pinned", "warnings", "switch_problems",
}

// cloudWatchMetrics are the names `once --apply` publishes on a group's
// first cycle: ArrivalRate needs a second sample, OldestMessageAge a
// CloudWatch reading.
var cloudWatchMetrics = []string{"Backlog", "BacklogPerWorker", "BacklogPerWorkerRatio", "DesiredWorkers", "TargetBacklogPerWorker"}

// runOnce runs `checker once --output json` with extra arguments and returns
// the exit code, the decisions as parsed both ways, and stderr.
func runOnce(t *testing.T, path string, extra ...string) (int, []model.Decision, []map[string]any, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	args := append([]string{"once", "--output", "json", "--config", path}, extra...)
	code := run(context.Background(), args, &stdout, &stderr)
	if code != 0 {
		return code, nil, nil, stderr.String()
	}
	var typed struct {
		Decisions []model.Decision `json:"decisions"`
	}
	var raw struct {
		Decisions []map[string]any `json:"decisions"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &typed); err != nil {
		t.Fatalf("once output is not JSON: %v\n%s", err, stdout.String())
	}
	if err := json.Unmarshal([]byte(stdout.String()), &raw); err != nil {
		t.Fatalf("once output is not JSON: %v\n%s", err, stdout.String())
	}
	return code, typed.Decisions, raw.Decisions, stderr.String()
}

func byGroup(ds []model.Decision) map[string]model.Decision {
	m := make(map[string]model.Decision, len(ds))
	for _, d := range ds {
		m[d.Group] = d
	}
	return m
}

// firstCycleWorkers is what the model policy recommends on a group's first
// sample, computed here from the planner's formulas (docs/model.md): the arrival rate is not
// known yet, so λ = 0 and the count is the larger of the drain floor,
// ceil(backlog ÷ drain_time ÷ μ), and the latency floor, ceil(visible ÷
// latency ÷ μ), with μ = concurrency ÷ service_time.
func firstCycleWorkers(visible, backlog int, serviceTime, latency, drainTime time.Duration) int {
	mu := 1 / serviceTime.Seconds()
	drain := math.Ceil(float64(backlog) / drainTime.Seconds() / mu)
	late := math.Ceil(float64(visible) / latency.Seconds() / mu)
	return int(max(drain, late))
}

func TestE2EDecisionKeysCoverTheModel(t *testing.T) {
	t.Parallel()
	var tags []string
	typ := reflect.TypeFor[model.Decision]()
	for i := range typ.NumField() {
		tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		tags = append(tags, tag)
	}
	want := slices.Clone(decisionKeys)
	sort.Strings(tags)
	sort.Strings(want)
	if !slices.Equal(tags, want) {
		t.Fatalf("model.Decision has JSON keys %v; the end-to-end tests check %v: update decisionKeys", tags, want)
	}
}

// TestE2EOnceApply runs `checker once --apply` once over six groups that
// share two queues in two regions, and checks what it printed, what it set
// in Auto Scaling and ECS, and what it published to CloudWatch.
func TestE2EOnceApply(t *testing.T) {
	t.Parallel()
	f := direct(t)
	moto := awstest.Shared(t)

	// 30 + 20 visible, 4 + 6 in flight, 2 + 3 delayed; the backlog counts
	// the visible and in-flight messages.
	queues := []testQueue{
		makeQueue(t, f, queueSpec{region: east, visible: 30, inFlight: 4, delayed: 2}),
		makeQueue(t, f, queueSpec{region: west, visible: 20, inFlight: 6, delayed: 3}),
	}
	const visible, inFlight, delayed = 50, 10, 5
	const backlog = visible + inFlight
	namespace := awstest.UniqueName(t, "ns")

	// Every group starts at 1 worker of μ = 1 msg/s. A 5 s latency needs
	// ceil(50 ÷ 5) = 10 workers (the drain floor over 1m is ceil(60 ÷ 60) =
	// 1), more than any max here; a 30 s latency needs ceil(50 ÷ 30) = 2
	// (the drain floor over 15m is 1).
	svc := makeService(t, f, 1)
	tests := []struct {
		name        string
		asgMax      int32 // the Auto Scaling group's own MaxSize; 0 for the ECS service
		latency     time.Duration
		drainTime   time.Duration
		max, cap    int
		wantDesired int
		wantCapped  bool
	}{
		// moto accepts any desired count: a 5 is the checker's clamp (to the
		// configured max and the group's own, both 5 here; the next cases
		// tell them apart).
		{name: "clamped-to-max", asgMax: 5, latency: 5 * time.Second, drainTime: time.Minute, max: 5, wantDesired: 5, wantCapped: true},
		{name: "clamped-to-configured-max", asgMax: 10, latency: 5 * time.Second, drainTime: time.Minute, max: 4, wantDesired: 4, wantCapped: true},
		{name: "clamped-to-cap", asgMax: 5, latency: 5 * time.Second, drainTime: time.Minute, max: 5, cap: 3, wantDesired: 3, wantCapped: true},
		{name: "clamped-to-groups-own-max", asgMax: 5, latency: 5 * time.Second, drainTime: time.Minute, max: 10, wantDesired: 5, wantCapped: true},
		{name: "within-bounds", asgMax: 5, latency: 30 * time.Second, drainTime: 15 * time.Minute, max: 5, wantDesired: 2},
		{name: "ecs-clamped-to-max", latency: 5 * time.Second, drainTime: time.Minute, max: 4, wantDesired: 4, wantCapped: true},
	}
	// One cycle, whose calls get 80 % of the interval: 10 s, so that a
	// loaded emulator's slow answer is not a held decision.
	cfg := e2eConfig{endpoint: moto.URL, interval: 10 * time.Second}
	asgs := map[string]string{}
	for _, tt := range tests {
		g := e2eGroup{
			name: tt.name, queues: queues, serviceTime: time.Second, latency: tt.latency, drainTime: tt.drainTime,
			min: 1, max: tt.max, cap: tt.cap, namespace: namespace,
		}
		if tt.asgMax > 0 {
			g.asg = makeASG(t, f, 1, tt.asgMax, 1)
			asgs[tt.name] = g.asg
		} else {
			g.service = &svc
		}
		cfg.groups = append(cfg.groups, g)
	}

	code, decisions, raw, stderr := runOnce(t, writeConfig(t, cfg), "--apply")
	if code != 0 {
		t.Fatalf("once --apply: exit %d, want 0\n%s", code, stderr)
	}
	if len(decisions) != len(tests) {
		t.Fatalf("%d decisions, want %d", len(decisions), len(tests))
	}
	for i, d := range raw {
		for _, k := range decisionKeys {
			if _, ok := d[k]; !ok {
				t.Errorf("decision %d lacks key %q", i, k)
			}
		}
	}
	ds := byGroup(decisions)

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := ds[tt.name]
			if !ok {
				t.Fatalf("no decision for group %s", tt.name)
			}
			if d.Visible != visible || d.InFlight != inFlight || d.Delayed != delayed || d.Backlog != backlog {
				t.Errorf("visible, in flight, delayed, backlog = %d, %d, %d, %d; want %d, %d, %d, %d (summed over both regions)",
					d.Visible, d.InFlight, d.Delayed, d.Backlog, visible, inFlight, delayed, backlog)
			}
			if d.CurrentWorkers != 1 {
				t.Errorf("current workers = %d, want 1", d.CurrentWorkers)
			}
			wantRec := firstCycleWorkers(visible, backlog, time.Second, tt.latency, tt.drainTime)
			if d.RecommendedWorkers != wantRec {
				t.Errorf("recommended = %d, want %d; reasons %q", d.RecommendedWorkers, wantRec, d.Reasons)
			}
			if d.DesiredWorkers != tt.wantDesired || d.Capped != tt.wantCapped || d.Held {
				t.Errorf("desired %d capped %t held %t, want %d, %t, false; reasons %q",
					d.DesiredWorkers, d.Capped, d.Held, tt.wantDesired, tt.wantCapped, d.Reasons)
			}
			if want := tt.latency.Seconds() / time.Second.Seconds(); d.TargetBacklogPerWorker != want {
				t.Errorf("target backlog per worker = %v, want %v (latency ÷ service time)", d.TargetBacklogPerWorker, want)
			}

			var got int
			if name, ok := asgs[tt.name]; ok {
				got = asgDesired(t, f, name)
			} else {
				got = serviceDesired(t, f, svc)
			}
			if got != d.DesiredWorkers || got != tt.wantDesired {
				t.Errorf("desired count read back = %d; the decision says %d, the test predicts %d", got, d.DesiredWorkers, tt.wantDesired)
			}

			// The group's CloudWatch metrics, one datapoint each.
			target := tt.latency.Seconds()
			want := map[string]float64{
				"Backlog":                backlog,
				"BacklogPerWorker":       backlog / 1.0, // one current worker
				"TargetBacklogPerWorker": target,
				"BacklogPerWorkerRatio":  backlog / target,
				"DesiredWorkers":         float64(tt.wantDesired),
			}
			consistent := map[string]float64{
				"Backlog": float64(d.Backlog), "BacklogPerWorker": d.BacklogPerWorker,
				"TargetBacklogPerWorker": d.TargetBacklogPerWorker,
				"BacklogPerWorkerRatio":  d.BacklogPerWorker / d.TargetBacklogPerWorker,
				"DesiredWorkers":         float64(d.DesiredWorkers),
			}
			for _, metric := range cloudWatchMetrics {
				points := metricMaxima(t, f, namespace, tt.name, metric)
				if len(points) != 1 {
					t.Errorf("%s: %d datapoints, want 1: %v", metric, len(points), points)
					continue
				}
				if math.Abs(points[0]-want[metric]) > 1e-9 || math.Abs(points[0]-consistent[metric]) > 1e-9 {
					t.Errorf("%s = %v; the test predicts %v, the decision gives %v", metric, points[0], want[metric], consistent[metric])
				}
			}
		})
	}

	var wantNames []string
	for _, tt := range tests {
		for _, m := range cloudWatchMetrics {
			wantNames = append(wantNames, tt.name+"/"+m)
		}
	}
	slices.Sort(wantNames)
	if got := metricNames(t, f, namespace); !slices.Equal(got, wantNames) {
		t.Errorf("metrics in %s:\n got %v\nwant %v", namespace, got, wantNames)
	}
}

// TestE2EOnceChangesNothing: without --apply, or under dry_run, `once`
// decides and prints but sets no count and publishes no metric.
func TestE2EOnceChangesNothing(t *testing.T) {
	t.Parallel()
	f := direct(t)
	moto := awstest.Shared(t)
	q := makeQueue(t, f, queueSpec{region: west, visible: 50})

	tests := []struct {
		name   string
		dryRun bool
		args   []string
	}{
		{name: "without-apply"},
		{name: "dry-run-with-apply", dryRun: true, args: []string{"--apply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			asg, svc := makeASG(t, f, 1, 5, 1), makeService(t, f, 1)
			namespace := awstest.UniqueName(t, "ns")
			// 50 visible messages at 1 msg/s per worker and a 5 s latency
			// need 10 workers: both fleets would change from 1.
			common := e2eGroup{queues: []testQueue{q}, serviceTime: time.Second, latency: 5 * time.Second,
				drainTime: time.Minute, min: 1, namespace: namespace}
			onASG, onECS := common, common
			onASG.name, onASG.asg, onASG.max = "asg", asg, 5
			onECS.name, onECS.service, onECS.max = "ecs", &svc, 4
			// One cycle; 10 s gives its calls 8 s on a loaded emulator.
			path := writeConfig(t, e2eConfig{endpoint: moto.URL, interval: 10 * time.Second, dryRun: tt.dryRun,
				groups: []e2eGroup{onASG, onECS}})

			code, decisions, _, stderr := runOnce(t, path, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, stderr)
			}
			ds := byGroup(decisions)
			if ds["asg"].DesiredWorkers != 5 || ds["ecs"].DesiredWorkers != 4 {
				t.Fatalf("decisions want %d and %d workers, want 5 and 4: the case would not tell a change from none",
					ds["asg"].DesiredWorkers, ds["ecs"].DesiredWorkers)
			}
			if got := asgDesired(t, f, asg); got != 1 {
				t.Errorf("Auto Scaling group's desired capacity = %d, want 1 (unchanged)", got)
			}
			if got := serviceDesired(t, f, svc); got != 1 {
				t.Errorf("ECS service's desired count = %d, want 1 (unchanged)", got)
			}
			if got := metricNames(t, f, namespace); len(got) != 0 {
				t.Errorf("metrics published to %s: %v, want none", namespace, got)
			}
			if n := strings.Count(stderr, `"msg":"dry run: would set desired count"`); n != 2 {
				t.Errorf("%d dry-run lines logged, want 2 (one per group):\n%s", n, stderr)
			}
		})
	}
}

// TestE2EInvalidConfig: `run` and `once` refuse an invalid configuration
// with exit 2, naming the YAML path of every problem, before touching AWS.
func TestE2EInvalidConfig(t *testing.T) {
	t.Parallel()
	const configTestdata = "../../internal/config/testdata"
	tests := []struct {
		name string
		file string
		// want are the texts stderr must contain; nil means the YAML paths
		// of the file's .want beside it.
		want []string
	}{
		{name: "unknown-keys", file: filepath.Join(configTestdata, "unknown-nested.bad.yaml")},
		{name: "many-problems", file: filepath.Join(configTestdata, "many.bad.yaml")},
		{name: "fleet-bounds", file: "testdata/e2e/fleet-bounds.bad.yaml", want: []string{
			"groups[0].fleet.max:", "groups[0].fleet.cap:", "groups[1].actions.set_desired_capacity:",
			"groups[1].target.latency:",
		}},
		{name: "missing-file", file: "testdata/e2e/no-such-file.yaml", want: []string{"testdata/e2e/no-such-file.yaml"}},
	}
	for _, tt := range tests {
		want := tt.want
		if want == nil {
			golden, err := os.ReadFile(strings.TrimSuffix(tt.file, ".yaml") + ".want")
			if err != nil {
				t.Fatal(err)
			}
			for line := range strings.Lines(string(golden)) {
				path, _, ok := strings.Cut(line, ": ")
				if !ok {
					t.Fatalf("%s: line %q names no path", tt.file, line)
				}
				want = append(want, path+":")
			}
		}
		for _, command := range []string{"run", "once"} {
			t.Run(tt.name+"/"+command, func(t *testing.T) {
				t.Parallel()
				var stdout, stderr strings.Builder
				code := run(context.Background(), []string{command, "--config", tt.file}, &stdout, &stderr)
				if code != 2 {
					t.Fatalf("exit %d, want 2\nstderr: %s", code, stderr.String())
				}
				for _, w := range want {
					if !strings.Contains(stderr.String(), w) {
						t.Errorf("stderr does not name %q:\n%s", w, stderr.String())
					}
				}
				if stdout.Len() != 0 {
					t.Errorf("stdout = %q, want nothing", stdout.String())
				}
			})
		}
	}
}

// daemon is `checker run` started in-process.
type daemon struct {
	addr   string
	logs   *syncBuffer
	cancel context.CancelFunc
	done   chan int
	once   sync.Once
	code   int
}

// startDaemon starts `checker run --config path` and waits for its
// "listening" line. The daemon is stopped when the test ends.
func startDaemon(t *testing.T, path string) *daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{logs: &syncBuffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() { d.done <- run(ctx, []string{"run", "--config", path}, io.Discard, d.logs) }()
	t.Cleanup(func() { d.stop(t) })
	d.addr = listenAddr(t, d.logs, 30*time.Second)
	return d
}

// stop cancels the daemon's context and returns its exit code.
func (d *daemon) stop(t *testing.T) int {
	t.Helper()
	d.once.Do(func() {
		d.cancel()
		select {
		case d.code = <-d.done:
		case <-time.After(15 * time.Second):
			d.code = -1
			t.Errorf("the daemon did not stop within 15 s of its context's end")
		}
	})
	return d.code
}

func (d *daemon) get(t *testing.T, path string) (int, string) {
	t.Helper()
	return get(t, "http://"+d.addr+path)
}

// eventually polls cond every 100 ms until it holds or within has passed.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !pollUntil(within, 100*time.Millisecond, cond) {
		t.Fatalf("%s: not within %s", what, within)
	}
}

// pollUntil calls cond every period until it holds, for at most within (at
// least once), and reports whether it held: for the checks whose failure
// says more than eventually's, or reads what cond saw last.
func pollUntil(within, period time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(period)
	}
	return true
}

// isSQS selects the requests to SQS.
func isSQS(r *awstest.Request) bool {
	return strings.HasPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS.")
}

// scaling is one SetDesiredCapacity call seen by the proxy, with the
// fleet reads (DescribeAutoScalingGroups) it had answered by then.
type scaling struct {
	at         time.Time
	group      string
	desired    int
	fleetReads int
}

// scalingLog records the SetDesiredCapacity calls passing through a proxy.
type scalingLog struct {
	mu    sync.Mutex
	calls []scaling
}

func watchScaling(p *awstest.Proxy) *scalingLog {
	l := &scalingLog{}
	p.Observe(func(r *awstest.Request, at time.Time) {
		if r.Operation() != "SetDesiredCapacity" {
			return
		}
		form, err := url.ParseQuery(string(r.Body))
		if err != nil {
			return
		}
		n, err := strconv.Atoi(form.Get("DesiredCapacity"))
		if err != nil {
			n = -1
		}
		reads := p.Answered("DescribeAutoScalingGroups")
		l.mu.Lock()
		l.calls = append(l.calls, scaling{at: at, group: form.Get("AutoScalingGroupName"), desired: n, fleetReads: reads})
		l.mu.Unlock()
	})
	return l
}

// since returns the calls seen at or after t.
func (l *scalingLog) since(t time.Time) []scaling {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []scaling
	for _, c := range l.calls {
		if !c.at.Before(t) {
			out = append(out, c)
		}
	}
	return out
}

// TestE2ERunHoldsWhileSQSFails runs the daemon through a proxy in front of
// moto. It scales out on a backlog; then every SQS call fails while the
// queue is emptied behind the proxy's back: the daemon must hold its count
// (an empty answer it cannot see is not an empty queue), turn unhealthy and
// say it holds. When SQS answers again it scales in, but only after the
// stabilisation window.
func TestE2ERunHoldsWhileSQSFails(t *testing.T) {
	t.Parallel()
	f := direct(t)
	moto := awstest.Shared(t)
	proxy := awstest.NewProxy(t, moto.URL)
	scalings := watchScaling(proxy)

	// 40 visible at μ = 1 msg/s and a 5 s latency need ceil(40 ÷ 5) = 8
	// workers, clamped to 5. The in-flight messages keep the diagnosis off
	// not_consuming (which would hold the group before the fault).
	q := makeQueue(t, f, queueSpec{region: east, visible: 40, inFlight: 5})
	asg := makeASG(t, f, 1, 5, 1)
	const stabilization = 3 * time.Second
	path := writeConfig(t, e2eConfig{endpoint: proxy.URL, interval: time.Second, maxAttempts: 1, groups: []e2eGroup{{
		name: "resilient", queues: []testQueue{q}, serviceTime: time.Second, latency: 5 * time.Second, drainTime: time.Minute,
		forecastOff: true, arrivalSmoothing: time.Second,
		asg: asg, min: 1, max: 5, scaleInStabilization: stabilization,
	}}})
	d := startDaemon(t, path)

	eventually(t, 30*time.Second, "scale out to 5", func() bool { return asgDesired(t, f, asg) == 5 })
	// Before the fault the group is not held. A loaded machine may make a
	// cycle's calls miss its deadline (0.9 s here), and the checker then
	// rightly holds on the data it lacks; the next cycle that reads
	// everything in time lifts the hold.
	var held float64
	var seen bool
	if !pollUntil(20*time.Second, 100*time.Millisecond, func() bool {
		_, metrics := d.get(t, "/metrics")
		held, seen = metricValue(metrics, "checker_group_held", map[string]string{"group": "resilient"})
		return seen && held == 0
	}) {
		t.Fatalf("checker_group_held before the fault = %v (exported: %v), want 0 within 20 s; the checker's log:\n%s", held, seen, d.logs.String())
	}

	// Fail SQS, then empty the queue directly in moto.
	faultAt := time.Now()
	remove := proxy.Inject(isSQS, awstest.Fault{Kind: awstest.FaultServerError})
	purge(t, f, q)

	// Over at least six intervals the count stays at 5, and /healthz turns
	// 503 once the last good cycle is three intervals old.
	var unhealthyAfter time.Duration
	for time.Since(faultAt) < 6*time.Second || unhealthyAfter == 0 {
		if got := asgDesired(t, f, asg); got != 5 {
			t.Fatalf("%s after SQS began to fail, desired capacity = %d, want 5 (held)", time.Since(faultAt).Round(time.Millisecond), got)
		}
		if code, _ := d.get(t, "/healthz"); code == http.StatusServiceUnavailable && unhealthyAfter == 0 {
			unhealthyAfter = time.Since(faultAt)
		}
		if time.Since(faultAt) > 30*time.Second {
			t.Fatal("/healthz did not turn 503 within 30 s of SQS failing")
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("/healthz turned 503 %s after SQS began to fail (3 intervals after the last good cycle, which came before)", unhealthyAfter.Round(time.Millisecond))
	if proxy.Injected(awstest.FaultServerError) == 0 {
		t.Fatal("the proxy failed no request: the daemon stopped asking SQS")
	}
	_, metrics := d.get(t, "/metrics")
	if v, ok := metricValue(metrics, "checker_group_held", map[string]string{"group": "resilient"}); !ok || v != 1 {
		t.Errorf("checker_group_held while SQS fails = %v (found %t), want 1", v, ok)
	}
	if v, ok := metricValue(metrics, "checker_aws_requests_total",
		map[string]string{"service": "sqs", "operation": "GetQueueAttributes", "outcome": "server_error"}); !ok || v < 1 {
		t.Errorf("checker_aws_requests_total{service=sqs,operation=GetQueueAttributes,outcome=server_error} = %v (found %t), want >= 1", v, ok)
	}
	if v, ok := metricValue(metrics, "checker_aws_requests_total",
		map[string]string{"service": "sqs", "operation": "GetQueueAttributes", "outcome": "success"}); !ok || v < 1 {
		t.Errorf("checker_aws_requests_total{...,outcome=success} = %v (found %t), want the calls before the fault counted", v, ok)
	}

	// SQS answers again: the empty queue is seen, and the group goes to
	// its min once the stabilisation window has passed.
	healAt := time.Now()
	remove()
	eventually(t, 30*time.Second, "scale in to 1 after SQS recovers", func() bool { return asgDesired(t, f, asg) == 1 })
	eventually(t, 10*time.Second, "/healthz 200 after SQS recovers", func() bool {
		code, _ := d.get(t, "/healthz")
		return code == http.StatusOK
	})

	for _, s := range scalings.since(faultAt) {
		switch {
		case s.at.Before(healAt):
			t.Errorf("SetDesiredCapacity %d %s after SQS began to fail, before it recovered", s.desired, s.at.Sub(faultAt))
		case s.desired < 5 && s.at.Sub(healAt) < stabilization:
			t.Errorf("scaled in to %d %s after SQS recovered, within the %s stabilisation window", s.desired, s.at.Sub(healAt), stabilization)
		}
	}
	if in := scalings.since(healAt); len(in) > 0 {
		t.Logf("scaled in to %d %s after SQS recovered (window %s)", in[0].desired, in[0].at.Sub(healAt).Round(time.Millisecond), stabilization)
	}
	if code := d.stop(t); code != 0 {
		t.Errorf("run exited %d after its context ended, want 0\n%s", code, d.logs.String())
	}
}

// process is `checker run` started as a separate program.
type process struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
	addr string
}

// startProcess starts the built binary on a configuration and waits for its
// "listening" line and for /livez to answer 200 (the first cycle has run).
// It is killed, if still running, when the test ends.
func startProcess(t *testing.T, bin, path string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, "run", "--config", path), logs: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = os.Environ() // with the emulator's credentials and region
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.exited() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	p.addr = listenAddr(t, p.logs, 60*time.Second)
	eventually(t, 30*time.Second, "/livez 200", func() bool {
		code, _ := get(t, "http://"+p.addr+"/livez")
		return code == http.StatusOK
	})
	return p
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("send %s: %v", sig, err)
	}
}

// terminate sends SIGTERM and expects exit code 0 within 5 s.
func (p *process) terminate(t *testing.T) {
	t.Helper()
	sent := time.Now()
	p.signal(t, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5 s after SIGTERM\n%s", p.logs.String())
	}
	t.Logf("exited %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0\n%s", code, p.logs.String())
	}
	if msgs := logMessages(p.logs.String()); !slices.Contains(msgs, "stopped") {
		t.Errorf("no \"stopped\" line logged: %q", msgs)
	}
}

// waitForLog waits until a JSON log line with message msg has been written
// n times.
func waitForLog(t *testing.T, logs *syncBuffer, msg string, n int) {
	t.Helper()
	eventually(t, 15*time.Second, "log line "+strconv.Quote(msg), func() bool {
		count := 0
		for _, m := range logMessages(logs.String()) {
			if m == msg {
				count++
			}
		}
		return count >= n
	})
}

// TestE2ESignals runs the built binary as a separate process: SIGTERM stops
// it cleanly, SIGHUP reloads its configuration or keeps the running one.
func TestE2ESignals(t *testing.T) {
	t.Parallel()
	f := direct(t)
	moto := awstest.Shared(t)
	bin := buildChecker(t)

	t.Run("SIGTERM", func(t *testing.T) {
		t.Parallel()
		q := makeQueue(t, f, queueSpec{region: east, visible: 3})
		path := writeConfig(t, e2eConfig{endpoint: moto.URL, interval: time.Second, groups: []e2eGroup{{
			name: "terminated", queues: []testQueue{q}, serviceTime: time.Second, latency: 30 * time.Second,
			asg: makeASG(t, f, 1, 5, 1), min: 1, max: 5,
		}}})
		p := startProcess(t, bin, path)
		p.terminate(t)
	})

	t.Run("SIGHUP", func(t *testing.T) {
		t.Parallel()
		// 40 visible at μ = 1 msg/s and a 5 s latency need 8 workers: the
		// group sits at its max, 5, then at the 3 of the new configuration.
		q := makeQueue(t, f, queueSpec{region: east, visible: 40, inFlight: 5})
		asg := makeASG(t, f, 1, 5, 1)
		cfg := e2eConfig{endpoint: moto.URL, interval: time.Second, groups: []e2eGroup{{
			name: "reloaded", queues: []testQueue{q}, serviceTime: time.Second, latency: 5 * time.Second,
			drainTime: time.Minute, asg: asg, min: 1, max: 5,
		}}}
		path := writeConfig(t, cfg)
		p := startProcess(t, bin, path)
		eventually(t, 30*time.Second, "scale out to 5", func() bool { return asgDesired(t, f, asg) == 5 })

		writeFile(t, path, "interval: 1s\ngroups:\n  - name: reloaded\n    fleet: {max: two}\n")
		p.signal(t, syscall.SIGHUP)
		waitForLog(t, p.logs, "reload failed; keeping the running configuration", 1)
		time.Sleep(2 * time.Second) // two more cycles on the old configuration
		if p.exited() {
			t.Fatalf("exited after a SIGHUP with an invalid configuration\n%s", p.logs.String())
		}
		// The running configuration keeps cycling: /healthz answers 200
		// (within 20 s: on a loaded machine a cycle whose SQS call misses
		// its 0.9 s deadline is rightly unhealthy until the next one).
		var code int
		var body string
		if !pollUntil(20*time.Second, 200*time.Millisecond, func() bool {
			code, body = get(t, "http://"+p.addr+"/healthz")
			return code == http.StatusOK
		}) {
			t.Errorf("/healthz after a failed reload = %d %q, want 200 within 20 s", code, body)
		}
		if got := asgDesired(t, f, asg); got != 5 {
			t.Errorf("desired capacity after a failed reload = %d, want 5", got)
		}

		cfg.groups[0].max = 3
		writeFile(t, path, cfg.yaml())
		p.signal(t, syscall.SIGHUP)
		waitForLog(t, p.logs, "configuration reloaded", 1)
		eventually(t, 15*time.Second, "desired capacity 3 under the reloaded max", func() bool { return asgDesired(t, f, asg) == 3 })
		p.terminate(t)
	})
}

// TestE2EBacklogToScaleLatency measures, at a 1 s interval, the time from a
// backlog jump (ten messages sent in one call to an empty queue) to the
// SetDesiredCapacity request the daemon sends for it, as seen by a proxy in
// front of moto. It reports the figures; the goal is within one interval
// plus the calls' own latency. It runs alone, not in parallel with the other
// tests, so that they do not take its processor time.
func TestE2EBacklogToScaleLatency(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	proxy := awstest.NewProxy(t, moto.URL)
	scalings := watchScaling(proxy)
	var mu sync.Mutex
	var polls []time.Time // GetQueueAttributes requests
	proxy.Observe(func(r *awstest.Request, at time.Time) {
		if r.Operation() == "GetQueueAttributes" {
			mu.Lock()
			polls = append(polls, at)
			mu.Unlock()
		}
	})
	// lastPoll is the latest GetQueueAttributes request before t: for a
	// SetDesiredCapacity call, the sample of the cycle that made it.
	lastPoll := func(before time.Time) (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		for i := len(polls) - 1; i >= 0; i-- {
			if polls[i].Before(before) {
				return polls[i], true
			}
		}
		return time.Time{}, false
	}

	const interval = time.Second
	q := makeQueue(t, f, queueSpec{region: east})
	asg := makeASG(t, f, 1, 20, 1)
	path := writeConfig(t, e2eConfig{endpoint: proxy.URL, interval: interval, groups: []e2eGroup{{
		name: "measured", queues: []testQueue{q}, serviceTime: time.Second, latency: 5 * time.Second,
		drainTime: time.Minute, forecastOff: true, arrivalSmoothing: time.Second,
		asg: asg, min: 1, max: 20, scaleInStabilization: 2 * interval,
	}}})
	d := startDaemon(t, path)
	// Past the first cycles, so that every jump meets a settled arrival
	// estimate.
	eventually(t, 30*time.Second, "/livez 200", func() bool {
		code, _ := d.get(t, "/livez")
		return code == http.StatusOK
	})
	time.Sleep(3 * interval)

	const jumps = 7
	var total, toPoll, pollToCall []time.Duration
	for i := range jumps {
		eventually(t, 60*time.Second, "back at 1 worker", func() bool { return asgDesired(t, f, asg) == 1 })
		// A settled group (no scale-in call still on its way), and a jump
		// at a random point of the interval, as a real one would be.
		time.Sleep(interval/5 + rand.N(interval))
		start := time.Now()
		sendMessages(t, f, q, 10, 0)
		jumped := time.Now()
		var call scaling
		eventually(t, 20*time.Second, "SetDesiredCapacity after the jump", func() bool {
			s := scalings.since(start)
			if len(s) > 0 {
				call = s[0]
			}
			return len(s) > 0
		})
		// 10 visible messages at μ = 1 msg/s and a 5 s latency need at
		// least ceil(10 ÷ 5) = 2 workers.
		if call.group != asg || call.desired < 2 {
			t.Errorf("jump %d: SetDesiredCapacity of %q to %d, want %q to 2 or more", i, call.group, call.desired, asg)
		}
		poll, ok := lastPoll(call.at)
		if !ok {
			t.Fatalf("jump %d: no GetQueueAttributes request before the SetDesiredCapacity call", i)
		}
		total = append(total, call.at.Sub(jumped))
		toPoll = append(toPoll, poll.Sub(jumped))
		pollToCall = append(pollToCall, call.at.Sub(poll))
		// The sample that saw the jump can come while the send's answer is
		// still on its way back: then it is "before" the jump by a little.
		t.Logf("jump %d: SetDesiredCapacity(%d) %s after the messages were sent (its cycle's poll after %s, then %s to the call; the send took %s)",
			i, call.desired, total[i].Round(time.Millisecond), toPoll[i].Round(time.Millisecond),
			pollToCall[i].Round(time.Millisecond), jumped.Sub(start).Round(time.Millisecond))
		purge(t, f, q)
	}
	t.Logf("backlog jump to SetDesiredCapacity at a %s interval, %d jumps: median %s (max %s); jump to the poll that saw it, median %s; poll to call, median %s",
		interval, jumps, median(total).Round(time.Millisecond), slices.Max(total).Round(time.Millisecond),
		median(toPoll).Round(time.Millisecond), median(pollToCall).Round(time.Millisecond))
	if code := d.stop(t); code != 0 {
		t.Errorf("run exited %d, want 0", code)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
