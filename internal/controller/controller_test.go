package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/policy/policytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	_ Observer = (*controllertest.Observer)(nil)
	_ Actuator = (*controllertest.Actuator)(nil)
)

// settings are the shared test settings of a group, defaults filled in.
func settings(name string) policy.Settings { return policytest.Settings(name).WithDefaults() }

func observation(group string, at time.Time, visible int64, desired int) model.Observation {
	return model.Observation{
		Sample: model.GroupSample{Group: group, At: at, Visible: visible, Backlog: visible, Queues: 1, Answered: 1},
		Fleet:  model.Fleet{Kind: "autoscaling", Name: group, Known: true, Desired: desired, Min: 0, Max: 100, InService: desired},
	}
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func TestRunOnceDecidesEveryGroupAndActs(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("a", now, 1500, 10), observation("b", now, 0, 2)}, nil
	})
	act := &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("a"), settings("b")}, Observer: obs, Actuator: act, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	if len(ds) != 2 || ds[0].Group != "a" || ds[1].Group != "b" {
		t.Fatalf("decisions = %+v, want groups a then b", ds)
	}
	if ds[0].Backlog != 1500 || ds[0].CurrentWorkers != 10 {
		t.Errorf("group a: backlog %d current %d, want 1500 and 10", ds[0].Backlog, ds[0].CurrentWorkers)
	}
	if !ds[0].At.Equal(t0) {
		t.Errorf("decision time %v, want %v", ds[0].At, t0)
	}
	if n := len(act.Applied()); n != 2 {
		t.Fatalf("actuator got %d decisions, want 2", n)
	}
	if h := c.Health(t0, t0, time.Minute); h.State != HealthOK {
		t.Errorf("Health after a good cycle: %+v, want ok", h)
	}
	views := c.Views().Groups()
	if views[0].Decision == nil || views[0].Decision.Backlog != 1500 || len(views[0].History) != 1 {
		t.Errorf("view of a = %+v", views[0])
	}
}

func TestObserverFailureKeepsLastDecisionAndTurnsUnhealthy(t *testing.T) {
	fail := false
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		if fail {
			return nil, errors.New("credentials expired")
		}
		return []model.Observation{observation("a", now, 100, 3)}, nil
	})
	act := &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs, Actuator: act})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(context.Background(), t0); err != nil {
		t.Fatal(err)
	}
	fail = true
	for i := 1; i <= 4; i++ {
		ds, err := c.RunOnce(context.Background(), t0.Add(time.Duration(i)*5*time.Second))
		if err == nil || ds != nil {
			t.Fatalf("cycle %d: decisions %v, err %v; want none and an error", i, ds, err)
		}
	}
	if n := len(act.Applied()); n != 1 {
		t.Errorf("actuator called %d times, want only the first good cycle", n)
	}
	if got := c.Views().Groups()[0].Decision; got == nil || !got.At.Equal(t0) {
		t.Errorf("last decision = %+v, want the one from the good cycle", got)
	}
	if h := c.Health(t0.Add(10*time.Second), t0, 15*time.Second); h.State != HealthOK {
		t.Errorf("10 s after the last good cycle, limit 15 s: %+v, want ok", h)
	}
	h := c.Health(t0.Add(20*time.Second), t0, 15*time.Second)
	if h.State != HealthUnhealthy || !strings.Contains(h.Detail, "credentials expired") {
		t.Errorf("20 s after the last good cycle: %+v, want unhealthy naming the cause", h)
	}
}

func TestAllGroupsMissingIsNotAGoodCycle(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		o := observation("a", now, 0, 3)
		o.Sample.Answered = 0
		o.Sample.Failures = []model.QueueFailure{{Queue: "q", Class: model.ErrClassTimeout}}
		return []model.Observation{o}, nil
	})
	c, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.RunOnce(context.Background(), t0)
	if err != nil || len(ds) != 1 {
		t.Fatalf("RunOnce = %v, %v", ds, err)
	}
	if !ds[0].Held {
		t.Errorf("decision on missing data not held: %+v", ds[0])
	}
	if h := c.Health(t0, t0, 15*time.Second); h.State != HealthStarting {
		t.Errorf("%+v after a first cycle with no data, want starting: no cycle was good", h)
	}
	if h := c.Health(t0.Add(time.Minute), t0, 15*time.Second); h.State != HealthUnhealthy {
		t.Errorf("%+v a minute into a run that never saw data, want unhealthy", h)
	}
}

func TestActionErrorOfOneGroupDoesNotStopOthers(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("a", now, 100, 3), observation("b", now, 100, 3)}, nil
	})
	act := &controllertest.Actuator{Fail: map[string]error{"a": errors.New("AccessDenied")}}
	reg := prometheus.NewRegistry()
	c, err := New(Options{Groups: []policy.Settings{settings("a"), settings("b")}, Observer: obs, Actuator: act, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.RunOnce(context.Background(), t0)
	if err == nil || !strings.Contains(err.Error(), "group a") || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("err = %v, want group a's failure", err)
	}
	if len(ds) != 2 {
		t.Fatalf("%d decisions, want 2", len(ds))
	}
	if applied := act.Applied(); len(applied) != 1 || applied[0].Decision.Group != "b" {
		t.Errorf("applied = %+v, want only b", applied)
	}
	if got := testutil.ToFloat64(c.metrics.actionErrors.WithLabelValues("a")); got != 1 {
		t.Errorf("checker_action_errors_total{group=a} = %v, want 1", got)
	}
	if v := c.Views().Groups()[0]; !strings.Contains(v.ActionError, "AccessDenied") {
		t.Errorf("view of a: ActionError %q", v.ActionError)
	}
	if h := c.Health(t0.Add(time.Minute), t0, 15*time.Second); h.State != HealthUnhealthy {
		t.Errorf("%+v a minute after the one cycle, want unhealthy: the check itself can fail", h)
	}
	if h := c.Health(t0, t0, 15*time.Second); h.State != HealthOK {
		t.Errorf("%+v: a cycle with data and one failed action should still be good: the data was learned", h)
	}
}

func TestMetricsDescribeTheDecision(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("thumbs", now, 1500, 10)}, nil
	})
	reg := prometheus.NewRegistry()
	c, err := New(Options{Groups: []policy.Settings{settings("thumbs")}, Observer: obs, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	d := ds[0]
	// Target backlog per worker: 10 s / 0.2 s x 1 = 50 messages; 1,500 over 10 workers is 150.
	want := `
# HELP checker_group_backlog_messages Messages the group sizes against: visible, plus in-flight and delayed as configured.
# TYPE checker_group_backlog_messages gauge
checker_group_backlog_messages{group="thumbs"} 1500
# HELP checker_group_backlog_messages_per_worker Backlog divided by the current workers.
# TYPE checker_group_backlog_messages_per_worker gauge
checker_group_backlog_messages_per_worker{group="thumbs"} 150
# HELP checker_group_target_backlog_messages_per_worker Acceptable backlog per worker: latency / service time x concurrency.
# TYPE checker_group_target_backlog_messages_per_worker gauge
checker_group_target_backlog_messages_per_worker{group="thumbs"} 50
# HELP checker_group_backlog_per_worker Deprecated: renamed checker_group_backlog_messages_per_worker; this name is removed in the next release.
# TYPE checker_group_backlog_per_worker gauge
checker_group_backlog_per_worker{group="thumbs"} 150
# HELP checker_group_target_backlog_per_worker Deprecated: renamed checker_group_target_backlog_messages_per_worker; this name is removed in the next release.
# TYPE checker_group_target_backlog_per_worker gauge
checker_group_target_backlog_per_worker{group="thumbs"} 50
# HELP checker_group_backlog_per_worker_ratio Backlog per worker divided by its target; 1 is on target.
# TYPE checker_group_backlog_per_worker_ratio gauge
checker_group_backlog_per_worker_ratio{group="thumbs"} 3
# HELP checker_group_latency_target_seconds The latency promise: how long a message may wait.
# TYPE checker_group_latency_target_seconds gauge
checker_group_latency_target_seconds{group="thumbs"} 10
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"checker_group_backlog_messages", "checker_group_backlog_messages_per_worker",
		"checker_group_target_backlog_messages_per_worker", "checker_group_backlog_per_worker_ratio",
		"checker_group_backlog_per_worker", "checker_group_target_backlog_per_worker",
		"checker_group_latency_target_seconds"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(c.metrics.workers.WithLabelValues("thumbs", "desired")); got != float64(d.DesiredWorkers) {
		t.Errorf("workers{kind=desired} = %v, want %d", got, d.DesiredWorkers)
	}
	if got := testutil.ToFloat64(c.metrics.diagnosis.WithLabelValues("thumbs", d.Diagnosis)); got != 1 {
		t.Errorf("diagnosis{state=%s} = %v, want 1", d.Diagnosis, got)
	}
	if n := testutil.CollectAndCount(c.metrics.diagnosis); n != len(model.Diagnoses) {
		t.Errorf("%d diagnosis series, want one per state (%d)", n, len(model.Diagnoses))
	}
}

func TestReloadKeepsStateOfGroupsThatStay(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("a", now, 10, 1), observation("b", now, 10, 1)}, nil
	})
	reg := prometheus.NewRegistry()
	c, err := New(Options{Groups: []policy.Settings{settings("a"), settings("b")}, Observer: obs, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.RunOnce(context.Background(), t0.Add(time.Duration(i)*5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Reload([]policy.Settings{settings("a")}, obs, nil); err != nil {
		t.Fatal(err)
	}
	views := c.Views().Groups()
	if len(views) != 1 || views[0].Settings.Group != "a" || len(views[0].History) != 3 {
		t.Fatalf("after reload: %d groups, history %d; want a alone with its 3 points", len(views), len(views[0].History))
	}
	if n := testutil.CollectAndCount(c.metrics.backlog); n != 1 {
		t.Errorf("%d backlog series after b was removed, want 1", n)
	}
	if err := c.Reload([]policy.Settings{settings("a"), settings("a")}, obs, nil); err == nil {
		t.Error("Reload accepted a group listed twice")
	}
}

func TestRunCyclesAtOnceAndStopsOnCancel(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("a", now, 10, 1)}, nil
	})
	c, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, RunOptions{Interval: time.Hour}) }()
	// The first cycle runs at once, long before the first tick of an hour.
	deadline := time.After(10 * time.Second)
	for obs.Calls() == 0 {
		select {
		case <-deadline:
			t.Fatal("no cycle within 10 s of Run starting")
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v, want nil on cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	if n := obs.Calls(); n != 1 {
		t.Errorf("%d cycles, want 1 (the next tick is an hour away)", n)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	obs := controllertest.NewObserver(func(context.Context, time.Time) ([]model.Observation, error) { return nil, nil })
	tests := []struct {
		name string
		o    Options
	}{
		{"no observer", Options{Groups: []policy.Settings{settings("a")}}},
		{"unnamed group", Options{Groups: []policy.Settings{{}}, Observer: obs}},
		{"duplicate group", Options{Groups: []policy.Settings{settings("a"), settings("a")}, Observer: obs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := New(tt.o); err == nil {
				t.Error("New accepted it")
			}
		})
	}
}

// Draining workers are reported beside the in-service ones, not among
// them, and the messages they hold stay in the backlog; a fleet that was
// not read reports none.
func TestDecisionReportsDrainingWorkers(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		a := observation("a", now, 300, 6)
		a.Sample.InFlight, a.Sample.Backlog = 40, 340
		a.Fleet.InService, a.Fleet.Draining = 4, 2
		b := observation("b", now, 300, 6)
		b.Fleet = model.Fleet{Kind: "autoscaling", Name: "b", Draining: 5, Err: errors.New("describe: timeout")}
		return []model.Observation{a, b}, nil
	})
	c, err := New(Options{Groups: []policy.Settings{settings("a"), settings("b")}, Observer: obs, Registerer: prometheus.NewRegistry(), Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := c.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	if d := ds[0]; d.DrainingWorkers != 2 || d.InServiceWorkers != 4 || d.Backlog != 340 || d.InFlight != 40 {
		t.Errorf("group a: draining %d, in service %d, backlog %d, in flight %d; want 2, 4, 340, 40",
			d.DrainingWorkers, d.InServiceWorkers, d.Backlog, d.InFlight)
	}
	if d := ds[1]; d.DrainingWorkers != 0 {
		t.Errorf("group b (fleet not read): draining %d, want 0", d.DrainingWorkers)
	}
	if got := testutil.ToFloat64(c.metrics.workers.WithLabelValues("a", "draining")); got != 2 {
		t.Errorf("workers{kind=draining} = %v, want 2", got)
	}
}
