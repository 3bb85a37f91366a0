package main

import (
	"reflect"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

func TestPolicySettings(t *testing.T) {
	t.Parallel()
	g := config.Group{
		Name:      "jobs",
		Queues:    []config.Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs.fifo"}},
		OldestAge: config.OldestAge{CloudWatch: true, StaleAfter: 3 * time.Minute},
		Workers:   config.Workers{ServiceTime: 250 * time.Millisecond, Concurrency: 3, Throughput: 7.5, Learn: "report", ServiceTimeCV: ptr(2.0)},
		Target: config.Target{
			Policy: "backlog_per_worker", Latency: 45 * time.Second, DrainTime: 20 * time.Minute,
			Utilization: ptr(0.75), BurstReserve: 25, OverheadReserve: 10, SafetyWorkers: 2,
			Deadband: 0.05, MaxStepOut: 8, StaleAfter: 40 * time.Second, ArrivalSmoothing: 90 * time.Second,
			LatencyQuantile: 0.95, SLOWindow: config.Duration(7 * 24 * time.Hour),
		},
		Forecast: config.Forecast{Mode: config.ForecastReport, History: config.Duration(36 * time.Hour)},
		Fleet: config.Fleet{Min: 1, Max: 60, Cap: 40, StartDelay: 90 * time.Second, ScaleInStabilization: 7 * time.Minute,
			Paused: true, ScaleIn: false, Pin: func() *int { n := 5; return &n }(), Activation: 4,
			WorkerCostPerHour: ptr(0.17)},
	}
	want := policy.Settings{
		Group: "jobs", Policy: "backlog_per_worker",
		ServiceTime: 250 * time.Millisecond, Concurrency: 3, Throughput: 7.5, Learn: "report", FIFO: true,
		WaitSpread: 2.5, // (1 + 2²) ÷ 2
		Latency:    45 * time.Second, DrainTime: 20 * time.Minute, Utilization: 0.75,
		BurstReserve: 25, OverheadReserve: 10, SafetyWorkers: 2,
		Min: 1, Max: 60, Cap: 40,
		StartDelay: 90 * time.Second, ScaleInStabilization: 7 * time.Minute,
		Deadband: 0.05, MaxStepOut: 8, StaleAfter: 40 * time.Second, ArrivalSmoothing: 90 * time.Second,
		LatencyQuantile: 0.95, SLOWindow: 7 * 24 * time.Hour, MetricStaleAfter: 3 * time.Minute, CloudWatchCounts: true,
		Forecast: policy.ForecastSettings{ReportOnly: true, History: 36 * time.Hour},
		Paused:   true, ScaleInOff: true, Pinned: true, Pin: 5, Activation: 4,
		WorkerCostPerHour: 0.17,
	}
	got := policySettings(g, 5*time.Second)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	// Every setting has a key: a field the policy gains must be mapped. The
	// takeover time is no setting: the controller sets it from the lease;
	// nor is PlanActs, the simulator's --plan-acts (the daemon shows the
	// plan and does not act on it); MeasuredCeiling is what WithDefaults
	// makes of target.utilization unset (below).
	v := reflect.ValueOf(got)
	for i := range v.NumField() {
		if name := v.Type().Field(i).Name; name == "TakenOver" || name == "PlanActs" || name == "MeasuredCeiling" {
			continue
		}
		if v.Field(i).IsZero() {
			t.Errorf("policy.Settings.%s is not set from the configuration", v.Type().Field(i).Name)
		}
	}
	checkEqual(t, "target.utilization 0.75: a fixed ceiling", got.WithDefaults().MeasuredCeiling, false)
	g.Target.Utilization = nil
	unset := policySettings(g, 5*time.Second).WithDefaults()
	checkEqual(t, "target.utilization unset: measured", unset.MeasuredCeiling, true)
	checkEqual(t, "target.utilization unset: at most the default's headroom", unset.Utilization, model.DefaultUtilization)
	g.Target.StaleAfter = 0
	checkEqual(t, "stale_after 0 at a 4s interval", policySettings(g, 4*time.Second).StaleAfter, 12*time.Second)
	g.Forecast.Enabled = ptr(false)
	checkEqual(t, "forecast enabled: false", policySettings(g, time.Second).Forecast.Off, true)
	g.Forecast.Enabled = ptr(true)
	checkEqual(t, "forecast enabled: true", policySettings(g, time.Second).Forecast.Off, false)
}

// An explicit 0 for the deadband or the stabilisation window turns the guard
// off in the policy, whose own zero would mean "the default".
func TestExplicitZeroTurnsGuardsOff(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`
groups:
  - name: jobs
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}]
    workers: {service_time: 1s}
    target: {latency: 30s, deadband: 0}
    fleet: {max: 10, scale_in_stabilization: 0s}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := policySettings(cfg.Groups[0], cfg.Interval).WithDefaults()
	if s.Deadband >= 0 || s.ScaleInStabilization >= 0 {
		t.Fatalf("deadband %v, window %v: want both off (negative)", s.Deadband, s.ScaleInStabilization)
	}
	d := config.DefaultGroup()
	if got := policySettings(config.Group{Target: d.Target, Fleet: d.Fleet}, cfg.Interval); got.Deadband != config.DefaultDeadband || got.ScaleInStabilization != config.DefaultScaleInStabilization {
		t.Fatalf("defaults map to %v and %v", got.Deadband, got.ScaleInStabilization)
	}
}

func checkEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %v, want %v", what, got, want)
	}
}

func ptr[T any](v T) *T { return &v }
