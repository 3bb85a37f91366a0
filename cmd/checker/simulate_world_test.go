package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim"
)

func TestSimulateWorldFlagsRejectBadValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"zero assumed service time", []string{"--assumed-service-time", "0s"}, "--assumed-service-time: 0s"},
		{"negative assumed service time", []string{"--assumed-service-time", "-1s"}, "--assumed-service-time: -1s"},
		{"negative pool", []string{"--downstream-pool", "-1"}, "--downstream-pool: -1"},
		{"pool beyond the slots", []string{"--downstream-pool", "20000000"}, "--downstream-pool: 20000000"},
		{"change without a factor", []string{"--service-time-change", "1h"}, `--service-time-change: "1h": want AT=FACTOR`},
		{"change at no time", []string{"--service-time-change", "soon=2"}, `--service-time-change: "soon"`},
		{"change before the start", []string{"--service-time-change", "-1h=2"}, `--service-time-change: "-1h"`},
		{"zero factor", []string{"--service-time-change", "1h=0"}, `--service-time-change: "0": want a factor > 0`},
		{"negative factor", []string{"--service-time-change", "1h=-2"}, `--service-time-change: "-2"`},
		{"factor not a number", []string{"--service-time-change", "1h=x"}, `--service-time-change: "x"`},
		{"huge factor", []string{"--service-time-change", "1h=1e9"}, `--service-time-change: "1e9"`},
		{"infinite factor", []string{"--service-time-change", "1h=Inf"}, `--service-time-change: "Inf"`},
		{"a time twice", []string{"--service-time-change", "1h=2,60m=3"}, "--service-time-change: 1h0m0s given twice"},
		{"an empty item", []string{"--service-time-change", "1h=2,"}, `--service-time-change: "": want AT=FACTOR`},
		{"pool change without connections", []string{"--downstream-pool-change", "1h"}, `--downstream-pool-change: "1h": want AT=CONNECTIONS`},
		{"pool change before the start", []string{"--downstream-pool-change", "-1h=240"}, `--downstream-pool-change: "-1h"`},
		{"negative pool change", []string{"--downstream-pool-change", "1h=-1"}, `--downstream-pool-change: "-1": want connections within 0`},
		{"pool change beyond the slots", []string{"--downstream-pool-change", "1h=20000000"}, `--downstream-pool-change: "20000000"`},
		{"pool change not a number", []string{"--downstream-pool-change", "1h=many"}, `--downstream-pool-change: "many"`},
		{"a pool change twice", []string{"--downstream-pool-change", "1h=240,60m=120"}, "--downstream-pool-change: 1h0m0s given twice"},
		{"negative metric delay", []string{"--metric-delay", "-1s"}, "--metric-delay: -1s"},
		{"metric delay past 15 minutes", []string{"--metric-delay", "16m"}, "--metric-delay: 16m0s"},
		{"metric delay with exact metrics", []string{"--metrics-exact", "--metric-delay", "2m"}, "--metric-delay: not with --metrics-exact"},
		{"negative start-delay spread", []string{"--start-delay-cv", "-0.1"}, "--start-delay-cv: -0.1"},
		{"start-delay spread past 5", []string{"--start-delay-cv", "6"}, "--start-delay-cv: 6"},
		{"start-delay spread not a number", []string{"--start-delay-cv", "NaN"}, "--start-delay-cv: NaN"},
		{"pool not a number", []string{"--downstream-pool", "many"}, "-downstream-pool"},
		{"exact metrics not a bool", []string{"--metrics-exact=maybe"}, "-metrics-exact"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := runSimulate(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not name %q", errOut, tt.want)
			}
		})
	}
}

// Every bad value is named at once, with the other flags' problems.
func TestSimulateWorldFlagsAllAtOnce(t *testing.T) {
	t.Parallel()
	code, _, errOut := runSimulate(t, "--assumed-service-time", "0s", "--downstream-pool", "-3", "--service-time-change", "1h=0",
		"--metric-delay", "20m", "--start-delay-cv", "9", "--rate", "-1")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, flag := range []string{"--assumed-service-time", "--downstream-pool", "--service-time-change", "--metric-delay", "--start-delay-cv", "--rate"} {
		if !strings.Contains(errOut, flag+":") {
			t.Errorf("stderr does not name %s:\n%s", flag, errOut)
		}
	}
}

// simRun is the run the command line makes, without running it.
func simRun(t *testing.T, args ...string) sim.RunConfig {
	t.Helper()
	f, err := parseSimFlags(newFlags("simulate", io.Discard), args)
	if err != nil {
		t.Fatal(err)
	}
	f.Settings, f.Arrivals = policySettings, cloudWatchArrivals
	rc, _, err := f.RunConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// The world's flags reach the world; the settings' service time reaches
// the settings (sim.Settings without --config, the group's with it), and
// --service-time is the world's alone.
func TestSimulateWorldFlagsReachTheRun(t *testing.T) {
	t.Parallel()
	const example = "../../config.example.yaml" // thumbnails: service_time 800ms
	tests := []struct {
		name          string
		args          []string
		world         time.Duration // the world's mean service time
		assumed       time.Duration // the settings'
		fromConfig    bool          // the settings are the group's
		pool          int
		changes       []sim.ServiceChange
		delay         time.Duration
		exact         bool
		startDelaySpr float64
	}{
		{"the defaults", nil, 200 * time.Millisecond, 200 * time.Millisecond, false, 0, nil, time.Minute, false, 0},
		{"assumed apart from the world", []string{"--assumed-service-time", "100ms"},
			200 * time.Millisecond, 100 * time.Millisecond, false, 0, nil, time.Minute, false, 0},
		{"the world apart from the default assumption", []string{"--service-time", "400ms"},
			400 * time.Millisecond, 400 * time.Millisecond, false, 0, nil, time.Minute, false, 0},
		{"every world flag", []string{"--downstream-pool", "12", "--service-time-change", "1h=2,2h=1", "--metric-delay", "3m", "--start-delay-cv", "0.5"},
			200 * time.Millisecond, 200 * time.Millisecond, false, 12,
			[]sim.ServiceChange{{At: time.Hour, Factor: 2}, {At: 2 * time.Hour, Factor: 1}}, 3 * time.Minute, false, 0.5},
		{"exact metrics", []string{"--metrics-exact"}, 200 * time.Millisecond, 200 * time.Millisecond, false, 0, nil, 0, true, 0},
		{"a group", []string{"--config", example, "--group", "thumbnails"},
			800 * time.Millisecond, 800 * time.Millisecond, true, 0, nil, time.Minute, false, 0},
		{"a group in a slower world", []string{"--config", example, "--group", "thumbnails", "--service-time", "1s"},
			time.Second, 800 * time.Millisecond, true, 0, nil, time.Minute, false, 0},
		{"a group assuming less", []string{"--config", example, "--group", "thumbnails", "--assumed-service-time", "500ms"},
			800 * time.Millisecond, 500 * time.Millisecond, true, 0, nil, time.Minute, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := simRun(t, append(tt.args, "--duration", "10m")...)
			c := rc.World
			if c.Service.Mean != tt.world || c.SettingsServiceTime() != tt.assumed {
				t.Errorf("world %v, assumed %v; want %v and %v", c.Service.Mean, c.SettingsServiceTime(), tt.world, tt.assumed)
			}
			settings := sim.Settings(c, rc.Interval, policy.PolicyModel)
			if tt.fromConfig {
				if rc.Settings == nil {
					t.Fatal("no settings from the group")
				}
				settings = *rc.Settings
			} else if rc.Settings != nil {
				t.Fatalf("settings %+v without --config", rc.Settings)
			}
			if got := time.Duration(settings.ServiceSeconds() * float64(time.Second)); got.Round(time.Microsecond) != tt.assumed {
				t.Errorf("the policy's service time %v, want %v", got, tt.assumed)
			}
			if c.DownstreamPool != tt.pool || !slices.Equal(c.ServiceChanges, tt.changes) || c.MetricDelay != tt.delay ||
				c.MetricsExact != tt.exact || c.StartDelayCV != tt.startDelaySpr {
				t.Errorf("world: pool %d, changes %v, metric delay %v, exact %v, start-delay cv %v; want %d, %v, %v, %v, %v",
					c.DownstreamPool, c.ServiceChanges, c.MetricDelay, c.MetricsExact, c.StartDelayCV,
					tt.pool, tt.changes, tt.delay, tt.exact, tt.startDelaySpr)
			}
		})
	}
}

// The table's header says where the world departs from the settings and
// how its metrics arrive.
func TestSimulateHeaderDescribesTheWorld(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
	}{
		{"the defaults", nil,
			[]string{"service 200ms exponential; concurrency 1; start delay 1m0s; latency target", "; CloudWatch metrics per minute, 1m0s late; seed 1"},
			[]string{"assume", "pool", "×", "cv"}},
		{"a world apart from its settings",
			[]string{"--assumed-service-time", "100ms", "--downstream-pool", "20", "--service-time-change", "1h=2,2h=1", "--metric-delay", "2m30s", "--start-delay-cv", "0.5"},
			[]string{"service 200ms exponential, the settings assume 100ms; downstream pool 20; service ×2 from 1h0m0s, ×1 from 2h0m0s; concurrency 1",
				"start delay 1m0s (lognormal, cv 0.5); latency target", "CloudWatch metrics per minute, 2m30s late"},
			nil},
		{"exact metrics", []string{"--metrics-exact"}, []string{"; exact metrics (last 60 s, as of each sample); seed 1"}, []string{"CloudWatch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runSimulate(t, append(tt.args, "--duration", "10m", "--policy", "fixed")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			header, _, _ := strings.Cut(out, "\n")
			for _, w := range tt.want {
				if !strings.Contains(header, w) {
					t.Errorf("header lacks %q:\n%s", w, header)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(header, w) {
					t.Errorf("header has %q:\n%s", w, header)
				}
			}
		})
	}
}
