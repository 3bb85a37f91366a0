package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/measure"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/poller"
)

// fakeHistory answers History with its function and records the requests.
type fakeHistory struct {
	mu   sync.Mutex
	reqs []poller.HistoryRequest
	read func(ctx context.Context) (poller.History, error)
}

func (f *fakeHistory) History(ctx context.Context, req poller.HistoryRequest) (poller.History, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	return f.read(ctx)
}

// fakePreloader records what it is given and loads every minute offered.
type fakePreloader struct {
	mu    sync.Mutex
	calls []map[string]model.MinuteHistory
	fleet []map[string]model.FleetHistory
}

func (f *fakePreloader) Preload(h map[string]model.MinuteHistory) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, h)
	out := map[string]int{}
	for g, m := range h {
		out[g] = len(m.Counts)
	}
	return out
}

func (f *fakePreloader) PreloadFleet(h map[string]model.FleetHistory) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fleet = append(f.fleet, h)
	out := map[string]int{}
	for g, m := range h {
		out[g] = len(m.Deleted)
	}
	return out
}

func minutes(start time.Time, n int) model.MinuteHistory {
	return model.MinuteHistory{Start: start, Counts: make([]float64, n)}
}

func fleetMinutes(start time.Time, n int) model.FleetHistory {
	return model.FleetHistory{Start: start, Deleted: make([]float64, n), InFlight: make([]float64, n)}
}

func TestWarmStart(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 10, 4, 31, 0, time.UTC)
	end := time.Date(2026, 11, 30, 10, 4, 0, 0, time.UTC)
	model36h := policy.Settings{Group: "a", Forecast: policy.ForecastSettings{History: 36 * time.Hour}}
	report := policy.Settings{Group: "r", Forecast: policy.ForecastSettings{ReportOnly: true, History: 2 * time.Hour}}
	off := policy.Settings{Group: "off", Forecast: policy.ForecastSettings{Off: true, History: 100 * time.Hour}}
	bpw := policy.Settings{Group: "b", Policy: policy.PolicyBacklogPerWorker} // learns: report, by default
	defaulted := policy.Settings{Group: "d"}                                  // the model policy, history left to its default
	quiet := func(s policy.Settings) policy.Settings { s.Learn = policy.LearnOff; return s }
	sample := map[string]model.MinuteHistory{"a": minutes(end.Add(-time.Hour), 60), "r": minutes(end.Add(-time.Hour), 30)}
	fleet := map[string]model.FleetHistory{"a": fleetMinutes(end.Add(-30*time.Minute), 30)}
	both := func(context.Context) (poller.History, error) {
		return poller.History{Arrivals: sample, Fleet: fleet}, nil
	}

	cases := []struct {
		name      string
		groups    []policy.Settings
		read      func(context.Context) (poller.History, error)
		read0     bool          // nothing read
		wantSpan  time.Duration // the arrivals' span; 0: none asked for
		wantFleet []string      // the groups whose fleet history is asked for
		preload   bool
		fleet     bool // the fleet history preloaded
		warns     int
	}{
		{"the longest history of the forecasting groups, the fleets of the measuring ones", []policy.Settings{model36h, report, off, bpw},
			both, false, 36 * time.Hour, []string{"a", "r", "off", "b"}, true, true, 0},
		{"the default history, 8 days", []policy.Settings{report, defaulted},
			both, false, model.DefaultForecastHistory, []string{"r", "d"}, true, true, 0},
		{"no model group, none measures: nothing read", []policy.Settings{quiet(bpw)},
			func(context.Context) (poller.History, error) { t.Error("read"); return poller.History{}, nil }, true, 0, nil, false, false, 0},
		{"the forecast off: the burst learner's hour", []policy.Settings{quiet(off), quiet(bpw)},
			func(context.Context) (poller.History, error) { return poller.History{Arrivals: sample}, nil }, false, time.Hour, nil, true, false, 0},
		{"no group forecasts: the burst learner's hour and the fleets", []policy.Settings{off, quiet(bpw)},
			func(context.Context) (poller.History, error) { return poller.History{Fleet: fleet}, nil }, false, time.Hour, []string{"off"}, false, true, 0},
		{"no group measures: the arrivals alone", []policy.Settings{quiet(model36h)},
			func(context.Context) (poller.History, error) { return poller.History{Arrivals: sample}, nil }, false, 36 * time.Hour, nil, true, false, 0},
		{"a failure is logged once, nothing loaded", []policy.Settings{model36h},
			func(context.Context) (poller.History, error) { return poller.History{}, errors.New("throttled") }, false, 36 * time.Hour, []string{"a"}, false, false, 1},
		{"what came with a failure is loaded", []policy.Settings{model36h, report},
			func(context.Context) (poller.History, error) {
				return poller.History{Arrivals: map[string]model.MinuteHistory{"a": sample["a"]}, Fleet: fleet}, errors.New("one region failed")
			}, false, 36 * time.Hour, []string{"a", "r"}, true, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fakeHistory{read: tc.read}
			to := &fakePreloader{}
			core, logs := observer.New(zap.InfoLevel)
			warmStart(context.Background(), src, to, tc.groups, now, zap.New(core))

			if tc.read0 {
				if len(src.reqs) != 0 {
					t.Fatalf("read %+v, want nothing", src.reqs)
				}
			} else {
				if len(src.reqs) != 1 {
					t.Fatalf("read %d times, want once", len(src.reqs))
				}
				got := src.reqs[0]
				if !got.To.Equal(end) || got.To.Sub(got.From) != tc.wantSpan {
					t.Errorf("read arrivals [%s, %s), want %s up to %s", got.From, got.To, tc.wantSpan, end)
				}
				// Only a forecast reads the weeks: every case whose span is
				// longer than the burst learner's hour has one.
				if weekly := !got.WeeklyFrom.IsZero(); weekly != (tc.wantSpan > time.Hour) {
					t.Errorf("read the weeks from %s, want them read %v", got.WeeklyFrom, tc.wantSpan > time.Hour)
				}
				if !slices.Equal(got.Fleet, tc.wantFleet) {
					t.Errorf("read the fleets of %q, want %q", got.Fleet, tc.wantFleet)
				}
				if len(tc.wantFleet) > 0 && got.To.Sub(got.FleetFrom) != measure.PreloadSpan {
					t.Errorf("read fleets from %s, want %s before %s", got.FleetFrom, measure.PreloadSpan, end)
				}
			}
			if got := len(to.calls) == 1; got != tc.preload {
				t.Errorf("preloaded arrivals %d times, want preload %v", len(to.calls), tc.preload)
			}
			if got := len(to.fleet) == 1; got != tc.fleet {
				t.Errorf("preloaded fleets %d times, want preload %v", len(to.fleet), tc.fleet)
			}
			if n := logs.FilterLevelExact(zap.WarnLevel).Len(); n != tc.warns {
				t.Errorf("%d warnings, want %d: %v", n, tc.warns, logs.All())
			}
		})
	}
}

// A warm start does not outlive its deadline, and a new one (after a
// reload) cancels the one still running.
func TestWarmerCancelsAndTimesOut(t *testing.T) {
	t.Parallel()
	blocked := make(chan struct{}, 2)
	src := &fakeHistory{read: func(ctx context.Context) (poller.History, error) {
		blocked <- struct{}{}
		<-ctx.Done()
		return poller.History{}, ctx.Err()
	}}
	to := &fakePreloader{}
	core, logs := observer.New(zap.InfoLevel)
	w := newWarmer(context.Background(), to, zap.New(core))
	groups := []policy.Settings{{Group: "a"}}

	w.timeout = time.Hour
	w.start(src, groups)
	<-blocked
	w.timeout = 50 * time.Millisecond
	w.start(src, groups) // cancels the first, times out itself
	<-blocked
	w.start(nil, groups) // nothing to read: starts nothing
	done := make(chan struct{})
	go func() { w.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the warm starts did not end")
	}
	warns := logs.FilterLevelExact(zap.WarnLevel).All()
	if len(warns) != 2 {
		t.Fatalf("%d warnings, want one per warm start: %v", len(warns), warns)
	}
	var reasons []string
	for _, e := range warns {
		reasons = append(reasons, e.ContextMap()["error"].(string))
	}
	slices.Sort(reasons) // the order the two goroutines log in is not fixed
	if reasons[0] != context.Canceled.Error() || reasons[1] != context.DeadlineExceeded.Error() {
		t.Errorf("warm starts ended with %q, want canceled then deadline exceeded", reasons)
	}
	if len(to.calls) != 0 || len(to.fleet) != 0 {
		t.Errorf("preloaded %d and %d times", len(to.calls), len(to.fleet))
	}
}

// putNotVisible puts one ApproximateNumberOfMessagesNotVisible datapoint.
func putNotVisible(t testing.TB, f *awsclient.Factory, queueName string, at time.Time, v float64) {
	t.Helper()
	if _, err := f.CloudWatch(east).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
		Namespace: aws.String("AWS/SQS"),
		MetricData: []cwtypes.MetricDatum{{
			MetricName: aws.String("ApproximateNumberOfMessagesNotVisible"),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(queueName)}},
			Timestamp:  aws.Time(at),
			Value:      aws.Float64(v),
			Unit:       cwtypes.StandardUnitCount,
		}},
	}); err != nil {
		t.Fatalf("put ApproximateNumberOfMessagesNotVisible of %s at %s: %v", queueName, at, err)
	}
}

// TestE2EWarmStartMeasuresTheFleet runs the daemon's warm start against
// moto, through its own wiring (a configuration file, assemble, the
// controller): 20 minutes of 1,800 deletions and 12 in flight a minute are
// in CloudWatch for each group's queue, and the first decision of the group
// that measures with CloudWatch sizes with the measured 0.4 s where its
// settings say 1 s. A group without CloudWatch and one with learn: off are
// not preloaded: they size on their settings, as before.
func TestE2EWarmStartMeasuresTheFleet(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	ctx := context.Background()
	type group struct {
		name, extra string
		queue       string
	}
	groups := []*group{
		{name: "warm", extra: "    oldest_age: {cloudwatch: true}\n"},
		{name: "no-cloudwatch"},
		{name: "learn-off", extra: "    oldest_age: {cloudwatch: true}\n    workers: {service_time: 1s, learn: off}\n"},
	}
	var doc strings.Builder
	doc.WriteString(motoConfigHead(5*time.Second, moto.URL))
	now := time.Now().UTC()
	end := now.Truncate(time.Minute)
	for _, g := range groups {
		q := makeQueue(t, f, queueSpec{region: east, inFlight: 12})
		g.queue = q.name()
		asg := makeASG(t, f, 0, 100, 20)
		fmt.Fprintf(&doc, "  - name: %s\n    queues: [{url: %q, region: %s}]\n", g.name, q.url, east)
		if !strings.Contains(g.extra, "workers:") {
			g.extra += "    workers: {service_time: 1s}\n"
		}
		doc.WriteString(g.extra)
		fmt.Fprintf(&doc, "    target: {latency: 10s}\n    forecast: {enabled: false}\n")
		fmt.Fprintf(&doc, "    fleet: {autoscaling_group: {name: %s, region: %s}, min: 1, max: 100}\n", asg, east)
		fmt.Fprintf(&doc, "    actions: {set_desired_capacity: false}\n")
		for m := 22; m > 2; m-- {
			at := end.Add(-time.Duration(m) * time.Minute)
			putSQSMetric(t, f, g.queue, "NumberOfMessagesDeleted", at, 1800)
			putNotVisible(t, f, g.queue, at.Add(15*time.Second), 10)
			putNotVisible(t, f, g.queue, at.Add(45*time.Second), 14)
		}
	}
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, doc.String())
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(core)
	wd := wireDaemon(ctx, t, path, log)
	asm, ctrl := wd.asm, wd.ctrl

	warmStart(ctx, asm.history, ctrl, asm.groups, now, log)
	done := logs.FilterMessage("warm start done").All()
	if len(done) != 1 || done[0].ContextMap()["fleets"] != int64(1) || done[0].ContextMap()["fleet_minutes"] != int64(20) {
		t.Fatalf("warm start logged %v, want one group's 20 minutes of fleet history; all: %v", done, logs.All())
	}
	ds, err := ctrl.RunOnce(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	decided, _ := printedDecisions(t, ds)
	for _, g := range groups {
		d, ok := decided[g.name]
		if !ok {
			t.Fatalf("no decision for %s", g.name)
		}
		m := d.Measured
		if g.name == "warm" {
			if m.ServiceTimeSeconds == nil || math.Abs(*m.ServiceTimeSeconds-0.4) > 1e-9 || m.Confidence == nil ||
				*m.Confidence < policy.MeasuredConfidence || m.SizingWith != "measured" {
				t.Errorf("warm: measured %+v, want a trusted 0.4 s sizing the fleet; reasons %q", m, d.Reasons)
			}
			continue
		}
		if m.ServiceTimeSeconds != nil || m.SizingWith != "configured" {
			t.Errorf("%s: measured %+v, want nothing measured before a live minute", g.name, m)
		}
	}
}

// A group taken over from another checker is warmed up on its own, beside
// the warm start at start, which it does not cancel: one read for the
// groups taken, with the groups of the last start's configuration; names
// no longer configured are skipped.
func TestWarmerTakeover(t *testing.T) {
	t.Parallel()
	block := make(chan struct{})
	var mu sync.Mutex
	var ended []error // each read's context when it ended
	src := &fakeHistory{read: func(ctx context.Context) (poller.History, error) {
		select {
		case <-block:
		case <-ctx.Done():
		}
		mu.Lock()
		ended = append(ended, ctx.Err())
		mu.Unlock()
		return poller.History{}, nil
	}}
	w := newWarmer(context.Background(), &fakePreloader{}, zap.NewNop())
	w.start(src, []policy.Settings{{Group: "a"}, {Group: "b"}, {Group: "c"}}) // the warm start at start, still reading
	w.takeover([]string{"c", "gone"})
	w.takeover([]string{"gone"}) // nothing configured: no read
	close(block)
	w.wait()
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.reqs) != 2 {
		t.Fatalf("%d reads, want the start's and the takeover's", len(src.reqs))
	}
	var fleets [][]string
	for _, r := range src.reqs {
		fleets = append(fleets, r.Fleet)
	}
	if !slices.ContainsFunc(fleets, func(f []string) bool { return slices.Equal(f, []string{"c"}) }) ||
		!slices.ContainsFunc(fleets, func(f []string) bool { return slices.Equal(f, []string{"a", "b", "c"}) }) {
		t.Errorf("reads for %v, want one for every group and one for the taken group c alone", fleets)
	}
	for _, err := range ended {
		if err != nil {
			t.Errorf("a read was cancelled (%v): the takeover must not end the warm start at start", err)
		}
	}
}
