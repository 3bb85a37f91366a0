package sim

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/sim/peers"
)

// Every problem of a run is a field error naming the field's path, and
// the other fields it involves.
func TestRunConfigValidate(t *testing.T) {
	t.Parallel()
	good := runConfig(t, ScenarioSteady, 50, time.Hour)
	if err := good.Validate(); err != nil {
		t.Fatalf("a good run: %v", err)
	}
	tests := []struct {
		name   string
		change func(*RunConfig)
		field  string
		others []string
		msg    string   // part of the message
		also   []string // the fields of any further problems the change makes
	}{
		{"no duration", func(rc *RunConfig) { rc.Duration = 0 }, FieldDuration, nil, "must be > 0 and at most 8784h0m0s", nil},
		{"past a year", func(rc *RunConfig) { rc.Duration = MaxDuration + time.Second }, FieldDuration, nil, "8784h0m1s", nil},
		{"no interval", func(rc *RunConfig) { rc.Interval = 0 }, FieldInterval, []string{FieldDuration}, "at most Duration", nil},
		{"interval past the run", func(rc *RunConfig) { rc.Interval = 2 * time.Hour }, FieldInterval, []string{FieldDuration}, "2h0m0s", nil},
		{"no service time", func(rc *RunConfig) { rc.World.Service.Mean = 0 }, FieldServiceMean, nil, "0s: must be > 0", nil},
		{"unknown distribution", func(rc *RunConfig) { rc.World.Service.Dist = "pareto" }, FieldServiceDist, nil, `"pareto"`, nil},
		{"lognormal without spread", func(rc *RunConfig) { rc.World.Service = Service{Dist: DistLognormal, Mean: time.Second} }, FieldServiceCV, nil, "0: must be > 0", nil},
		{"lognormal spread past 100", func(rc *RunConfig) { rc.World.Service = Service{Dist: DistLognormal, Mean: time.Second, CV: 101} }, FieldServiceCV, nil, "at most 100", nil},
		{"lognormal spread NaN", func(rc *RunConfig) {
			rc.World.Service = Service{Dist: DistLognormal, Mean: time.Second, CV: math.NaN()}
		}, FieldServiceCV, nil, "NaN", nil},
		{"negative concurrency", func(rc *RunConfig) { rc.World.Concurrency = -1 }, FieldConcurrency, nil, "-1: must be >= 1", nil},
		{"slots past the limit", func(rc *RunConfig) { rc.World.Concurrency = MaxSlots }, FieldConcurrency, []string{FieldMax}, "× World.Max 200", nil},
		{"start delay past a day", func(rc *RunConfig) { rc.World.StartDelay = 25 * time.Hour }, FieldStartDelay, nil, "within 0 and 24h", nil},
		{"no latency target", func(rc *RunConfig) { rc.World.LatencyTarget = 0 }, FieldLatencyTarget, nil, "must be > 0", nil},
		{"negative min", func(rc *RunConfig) { rc.World.Min, rc.World.Workers = -1, 0 }, FieldMin, nil, "-1: must be >= 0", nil},
		{"max below min", func(rc *RunConfig) { rc.World.Min, rc.World.Max, rc.World.Workers = 5, 4, 4 }, FieldMax, []string{FieldMin}, ">= World.Min (5)", []string{FieldWorkers}},
		{"max past a million", func(rc *RunConfig) { rc.World.Max = MaxWorkers + 1 }, FieldMax, []string{FieldMin}, "at most 1000000", nil},
		{"workers above max", func(rc *RunConfig) { rc.World.Workers = 500 }, FieldWorkers, []string{FieldMin, FieldMax}, "within World.Min (1) and World.Max (200)", nil},
		{"negative workers", func(rc *RunConfig) { rc.World.Min, rc.World.Workers = 0, -1 }, FieldWorkers, []string{FieldMin, FieldMax}, "-1", nil},
		{"negative warm-up", func(rc *RunConfig) { rc.World.WarmUp = -time.Second }, FieldWarmUp, nil, "-1s: must be >= 0", nil},
		{"warm-up as long as the run", func(rc *RunConfig) { rc.World.WarmUp = time.Hour }, FieldWarmUp, []string{FieldDuration}, "shorter than the run (1h0m0s)", nil},
		{"negative restart", func(rc *RunConfig) { rc.RestartAt = -time.Second }, FieldRestartAt, nil, "-1s: must be >= 0", nil},
		{"restart at the run's end", func(rc *RunConfig) { rc.RestartAt = time.Hour }, FieldRestartAt, []string{FieldDuration}, "shorter than the run (1h0m0s)", nil},
		{"negative price", func(rc *RunConfig) { rc.WorkerCostPerHour = -1 }, FieldWorkerCost, nil, "dollars an hour", nil},
		{"no scenario", func(rc *RunConfig) { rc.World.Scenario = Scenario{} }, FieldScenario, nil, "no segments", nil},
		{"negative assumed service time", func(rc *RunConfig) { rc.World.AssumedServiceTime = -time.Second }, FieldAssumedServiceTime, nil, "-1s", nil},
		{"negative pool", func(rc *RunConfig) { rc.World.DownstreamPool = -2 }, FieldDownstreamPool, nil, "-2", nil},
		{"zero factor", func(rc *RunConfig) { rc.World.ServiceChanges = []ServiceChange{{time.Minute, 0}} }, FieldServiceChanges, nil, "factor 0", nil},
		{"negative pool change", func(rc *RunConfig) { rc.World.PoolChanges = []PoolChange{{time.Minute, -1}} }, FieldPoolChanges, nil, "-1 connections", nil},
		{"infinite start-delay spread", func(rc *RunConfig) { rc.World.StartDelayCV = math.Inf(1) }, FieldStartDelayCV, nil, "+Inf", nil},
		{"negative metric delay", func(rc *RunConfig) { rc.World.MetricDelay = -time.Second }, FieldMetricDelay, nil, "-1s", nil},
		{"unknown scale-in", func(rc *RunConfig) { rc.World.ScaleIn = "drop" }, FieldScaleIn, nil, `"drop": want graceful or kill`, nil},
		{"negative visibility timeout", func(rc *RunConfig) { rc.World.VisibilityTimeout = -time.Second }, FieldVisibilityTimeout, nil, "-1s", nil},
		{"bad peer", func(rc *RunConfig) { rc.Peers = peers.Defaults(); rc.Peers.HPASync = 0 }, FieldPeers, nil, "HPA sync period 0s", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := good
			tt.change(&rc)
			err := rc.Validate()
			fes := FieldErrors(err)
			var fields []string
			for _, fe := range fes {
				fields = append(fields, fe.Field)
			}
			if want := append([]string{tt.field}, tt.also...); !slices.Equal(fields, want) {
				t.Fatalf("Validate = %v, want field errors on %v", err, want)
			}
			fe := fes[0]
			if fe.Field != tt.field || !slices.Equal(fe.Others, tt.others) || !strings.Contains(fe.Msg, tt.msg) {
				t.Errorf("field error %+v, want on %s with others %v and %q in the message", *fe, tt.field, tt.others, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), tt.field+": ") {
				t.Errorf("error %q does not start with its field", err)
			}
			if _, err := Run(t.Context(), rc, []string{PolicyFixed}); err == nil {
				t.Error("Run ran it")
			}
		})
	}
}

// Validate reports every problem at once, in the order of the fields, and
// errors.As finds the first.
func TestRunConfigValidateEveryProblem(t *testing.T) {
	t.Parallel()
	rc := runConfig(t, ScenarioSteady, 50, time.Hour)
	rc.Duration = 0
	rc.World.LatencyTarget = 0
	rc.Peers = peers.Defaults()
	rc.Peers.HPASync, rc.Peers.StepCooldown = 0, -time.Second
	err := rc.Validate()
	var fields []string
	for _, fe := range FieldErrors(err) {
		fields = append(fields, fe.Field)
	}
	if want := []string{FieldDuration, FieldLatencyTarget, FieldPeers, FieldPeers}; !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v (%v)", fields, want, err)
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != FieldDuration {
		t.Errorf("errors.As = %+v, want the duration's", fe)
	}
	if FieldErrors(nil) != nil {
		t.Error("field errors of nil")
	}
}
