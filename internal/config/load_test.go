package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/queuechecker/queue-checker/internal/model"
)

// TestLoadOK loads every testdata/*.ok.yaml and checks what it decoded to;
// every such file must have a case here.
func TestLoadOK(t *testing.T) {
	t.Parallel()
	cases := map[string]func(t *testing.T, c Config){
		"minimal": func(t *testing.T, c Config) {
			want := Default()
			g := DefaultGroup()
			g.Name = "jobs"
			g.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs", Region: "us-east-1"}}
			g.Workers.ServiceTime = 200 * time.Millisecond
			g.Target.Latency = 30 * time.Second
			g.Target.StaleAfter = 15 * time.Second // 3 × the default 5s
			g.Fleet.Max = 10
			// The forecast acts by default, and the stabilisation window
			// left out follows it.
			g.Fleet.ScaleInStabilization = model.DefaultForecastStabilization
			want.Groups = []Group{g}
			if !reflect.DeepEqual(c, want) {
				t.Errorf("got  %+v\nwant %+v", c, want)
			}
		},
		"explicit-zero": func(t *testing.T, c Config) {
			g := c.Groups[0]
			check(t, "dry_run", c.DryRun, true)
			check(t, "count.in_flight", g.Count.InFlight, false)
			check(t, "count.delayed", g.Count.Delayed, true)
			check(t, "workers.throughput", g.Workers.Throughput, 2.5)
			check(t, "workers.service_time", g.Workers.ServiceTime, time.Duration(0))
			check(t, "target.deadband", g.Target.Deadband, 0.0)
			check(t, "target.utilization", *g.Target.Utilization, 1.0)
			check(t, "target.stale_after", g.Target.StaleAfter, 6*time.Second) // 3 × 2s
			check(t, "target.drain_time", g.Target.DrainTime, DefaultDrainTime)
			check(t, "fleet.scale_in_stabilization", g.Fleet.ScaleInStabilization, time.Duration(0))
			check(t, "fleet.fixed_workers", g.Fleet.FixedWorkers, 1)
			if g.Actions.CloudWatchMetrics == nil {
				t.Fatal("actions.cloudwatch_metrics: nil, want the block")
			}
			check(t, "cloudwatch_metrics.namespace", g.Actions.CloudWatchMetrics.Namespace, DefaultNamespace)
		},
		"anchors": func(t *testing.T, c Config) {
			if len(c.Groups) != 2 {
				t.Fatalf("got %d groups, want 2", len(c.Groups))
			}
			v := c.Groups[1]
			check(t, "name", v.Name, "video")
			check(t, "queue", v.Queues[0].URL, "https://sqs.us-east-1.amazonaws.com/123456789012/video")
			check(t, "workers.concurrency (merged)", v.Workers.Concurrency, 2)
			check(t, "target.latency (own)", v.Target.Latency, 2*time.Minute)
			check(t, "target.utilization (merged)", *v.Target.Utilization, 0.7)
			check(t, "target.drain_time (default)", v.Target.DrainTime, DefaultDrainTime)
			check(t, "fleet.max (merged)", v.Fleet.Max, 30)
			check(t, "set_desired_capacity (merged)", v.Actions.SetDesiredCapacity, true)
			if v.Fleet.AutoScalingGroup == nil || v.Fleet.AutoScalingGroup.Name != "video-workers" {
				t.Errorf("fleet.autoscaling_group = %+v, want video-workers (own)", v.Fleet.AutoScalingGroup)
			}
			check(t, "first group's latency", c.Groups[0].Target.Latency, 20*time.Second)
		},
		"forecast": func(t *testing.T, c Config) {
			check(t, "groups", len(c.Groups), 4)
			days, report, off, bpw := c.Groups[0], c.Groups[1], c.Groups[2], c.Groups[3]
			check(t, "history 7d", days.Forecast.History, Duration(7*24*time.Hour))
			check(t, "mode (default)", days.Forecast.Mode, ForecastAct)
			check(t, "acts", days.Forecast.Acts(days.Target.Policy), true)
			check(t, "window left out, forecast acting", days.Fleet.ScaleInStabilization, model.DefaultForecastStabilization)
			check(t, "history 1d12h", report.Forecast.History, Duration(36*time.Hour))
			check(t, "report mode", report.Forecast.Mode, ForecastReport)
			check(t, "reports, does not act", [2]bool{report.Forecast.On(report.Target.Policy), report.Forecast.Acts(report.Target.Policy)}, [2]bool{true, false})
			check(t, "window left out, forecast reporting", report.Fleet.ScaleInStabilization, DefaultScaleInStabilization)
			check(t, "history 36h", off.Forecast.History, Duration(36*time.Hour))
			check(t, "off", off.Forecast.On(off.Target.Policy), false)
			check(t, "window set explicitly", off.Fleet.ScaleInStabilization, 2*time.Minute)
			check(t, "backlog_per_worker forecasts nothing", bpw.Forecast.On(bpw.Target.Policy), false)
			check(t, "window left out, backlog_per_worker", bpw.Fleet.ScaleInStabilization, DefaultScaleInStabilization)
		},
		"emulator": func(t *testing.T, c Config) {
			g := c.Groups[0]
			check(t, "interval", c.Interval, time.Second)
			check(t, "aws.cloudwatch_protocol", c.AWS.CloudWatchProtocol, "json")
			check(t, "aws.sqs_client", c.AWS.SQSClient, "sdk")
			check(t, "aws.max_attempts", c.AWS.MaxAttempts, 1)
			check(t, "CallTimeout()", c.CallTimeout(), 900*time.Millisecond)
			check(t, "queues[0].region (from aws.region)", g.Queues[0].Region, "us-west-2")
			check(t, "queues[1].region (own)", g.Queues[1].Region, "eu-central-1")
			check(t, "target.stale_after", g.Target.StaleAfter, time.Second)
			if g.Fleet.ECSService == nil || g.Fleet.ECSService.Service != "workers" {
				t.Errorf("fleet.ecs_service = %+v, want service workers", g.Fleet.ECSService)
			}
		},
		"slo": func(t *testing.T, c Config) {
			check(t, "groups[0].target.slo_window", c.Groups[0].Target.SLOWindow, Duration(90*24*time.Hour))
			check(t, "groups[0].target.latency_quantile", c.Groups[0].Target.LatencyQuantile, 0.995)
			check(t, "groups[1].target.slo_window", c.Groups[1].Target.SLOWindow, Duration(36*time.Hour))
			check(t, "groups[2].target.slo_window (default)", c.Groups[2].Target.SLOWindow, Duration(30*24*time.Hour))
		},
		"debug": func(t *testing.T, c Config) {
			check(t, "debug.pprof", c.Debug.Pprof, true)
		},
		"prices": func(t *testing.T, c Config) {
			check(t, "aws.worker_cost_per_hour", c.AWS.WorkerCostPerHour, 0.0416)
			check(t, "aws.dynamodb_price_per_million_writes (default)", c.AWS.DynamoDBPricePerMillionWrites, 0.625)
			if c.Groups[0].Fleet.WorkerCostPerHour != nil || c.Groups[2].Fleet.WorkerCostPerHour == nil {
				t.Errorf("fleet.worker_cost_per_hour absent must stay nil, an explicit 0 must not")
			}
		},
	}
	files, err := filepath.Glob("testdata/*.ok.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.ok.yaml: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".ok.yaml")
		verify := cases[name]
		if verify == nil {
			t.Errorf("%s has no case in TestLoadOK", f)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := Load(f)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			verify(t, c)
		})
	}
}

// TestLoadBad loads every testdata/*.bad.yaml and compares the problems,
// one per line, with its .want file.
func TestLoadBad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/*.bad.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("want at least 10 testdata/*.bad.yaml, got %d: %v", len(files), err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".bad.yaml"), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".want")
			if err != nil {
				t.Fatalf("read the expected problems: %v", err)
			}
			want := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
			_, err = Load(f)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			got := strings.Split(err.Error(), "\n")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("problems differ\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			for _, p := range Problems(err) {
				if strings.Contains(p.Msg, "\n") {
					t.Errorf("%q: a message must be one line", p.Msg)
				}
				if p.Msg == "" || p.Msg[:1] != strings.ToLower(p.Msg[:1]) {
					t.Errorf("%q: a message starts lower-case", p.Msg)
				}
			}
		})
	}
}

func TestLoadUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
		is   error
	}{
		{name: "absent", path: filepath.Join(dir, "absent.yaml"), is: fs.ErrNotExist},
		{name: "directory", path: dir},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(tt.path)
			if err == nil {
				t.Fatal("Load succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.path) {
				t.Errorf("error %q does not name the file", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			if Problems(err) != nil {
				t.Errorf("an unreadable file has no YAML path problems, got %v", Problems(err))
			}
		})
	}
}

func TestParseDefaultsEverywhere(t *testing.T) {
	t.Parallel()
	// Every group is decoded over DefaultGroup, not only the first; a
	// cloudwatch_metrics block over its own default.
	doc := `
groups:
  - name: a
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/1/a"}]
    workers: {service_time: 1s}
    target: {latency: 1m}
    fleet: {max: 1}
  - name: b
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/1/b"}]
    workers: {throughput: 1}
    target: {latency: 1m, policy: backlog_per_worker}
    fleet: {max: 1, fixed_workers: 1}
    actions: {cloudwatch_metrics: {high_resolution: true}}
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for i, g := range c.Groups {
		def := DefaultGroup()
		check(t, g.Name+" count.in_flight", g.Count.InFlight, def.Count.InFlight)
		check(t, g.Name+" workers.concurrency", g.Workers.Concurrency, def.Workers.Concurrency)
		check(t, g.Name+" target.utilization", g.Target.Utilization, def.Target.Utilization)
		check(t, g.Name+" target.deadband", g.Target.Deadband, def.Target.Deadband)
		check(t, g.Name+" target.arrival_smoothing", g.Target.ArrivalSmoothing, def.Target.ArrivalSmoothing)
		window := def.Fleet.ScaleInStabilization
		if i == 0 { // the model policy, whose forecast acts
			window = model.DefaultForecastStabilization
		}
		check(t, g.Name+" fleet.scale_in_stabilization", g.Fleet.ScaleInStabilization, window)
		if i == 0 {
			check(t, "a target.policy", g.Target.Policy, DefaultPolicy)
		}
	}
	check(t, "b target.policy", c.Groups[1].Target.Policy, "backlog_per_worker")
	m := c.Groups[1].Actions.CloudWatchMetrics
	if m == nil || m.Namespace != DefaultNamespace || !m.HighResolution {
		t.Errorf("groups[1].actions.cloudwatch_metrics = %+v, want namespace %s, high resolution", m, DefaultNamespace)
	}
	if c.Groups[0].Actions.CloudWatchMetrics != nil {
		t.Errorf("groups[0].actions.cloudwatch_metrics = %+v, want none", c.Groups[0].Actions.CloudWatchMetrics)
	}
}

func TestGroupUnmarshalYAML(t *testing.T) {
	t.Parallel()
	// Decoding a group on its own fills defaults too (without rejecting
	// unknown keys: that is Parse's shape check).
	var g Group
	if err := yaml.Unmarshal([]byte("name: x\ncount: {delayed: true}\n"), &g); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := DefaultGroup()
	want.Name = "x"
	want.Count.Delayed = true
	if !reflect.DeepEqual(g, want) {
		t.Errorf("got  %+v\nwant %+v", g, want)
	}
}

func TestExampleConfig(t *testing.T) {
	t.Parallel()
	c, err := Load("../../config.example.yaml")
	if err != nil {
		t.Fatalf("config.example.yaml does not load:\n%v", err)
	}
	if len(c.Groups) != 2 {
		t.Fatalf("got %d groups, want 2", len(c.Groups))
	}
	thumbs, transcode := c.Groups[0], c.Groups[1]
	check(t, "groups[0].name", thumbs.Name, "thumbnails")
	check(t, "groups[1].name", transcode.Name, "transcode")

	var regions []string
	for _, q := range thumbs.Queues {
		regions = append(regions, q.Region)
	}
	check(t, "thumbnails queue regions", strings.Join(regions, ","), "us-east-1,eu-west-1")
	if a := thumbs.Fleet.AutoScalingGroup; a == nil || a.Name != "thumbnails-workers" || thumbs.Fleet.ECSService != nil {
		t.Errorf("thumbnails fleet = %+v, want the Auto Scaling group thumbnails-workers", thumbs.Fleet)
	}
	check(t, "thumbnails cap", thumbs.Fleet.Cap, 40)
	check(t, "thumbnails set_desired_capacity", thumbs.Actions.SetDesiredCapacity, true)
	if thumbs.Actions.CloudWatchMetrics != nil {
		t.Errorf("thumbnails publishes CloudWatch metrics, want it not to")
	}

	if e := transcode.Fleet.ECSService; e == nil || e.Cluster != "media" || e.Service != "transcoder" {
		t.Errorf("transcode fleet = %+v, want the ECS service media/transcoder", transcode.Fleet)
	}
	check(t, "transcode policy", transcode.Target.Policy, "backlog_per_worker")
	check(t, "transcode set_desired_capacity", transcode.Actions.SetDesiredCapacity, false)
	if m := transcode.Actions.CloudWatchMetrics; m == nil || m.Namespace != "QueueChecker" {
		t.Errorf("transcode cloudwatch_metrics = %+v, want namespace QueueChecker", m)
	}
	if n := c.Notes(); len(n) != 0 {
		t.Errorf("the example draws notes: %v", n)
	}
}

func check[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
