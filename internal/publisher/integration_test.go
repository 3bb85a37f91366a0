package publisher

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

const region = "us-east-1"

var seq atomic.Int64

// unique returns a resource name no other test uses.
func unique(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano()%1e9, seq.Add(1))
}

func factory(t testing.TB, endpoint string) *awsclient.Factory {
	t.Helper()
	return factoryAttempts(t, endpoint, 0)
}

// factoryAttempts is factory with the SDK retryer's attempts per call.
func factoryAttempts(t testing.TB, endpoint string, attempts int) *awsclient.Factory {
	t.Helper()
	return awsclienttest.Factory(t, endpoint, awsclienttest.Region(region), awsclienttest.MaxAttempts(attempts))
}

// call is one request the publisher sent, as seen on the wire.
type call struct {
	op   string     // operation name
	form url.Values // query-protocol parameters (Auto Scaling)
	body []byte
}

// recorder is a reverse proxy in front of the emulator that records every
// request passing through it, so tests can see which calls were made.
type recorder struct {
	mu    sync.Mutex
	calls []call
	srv   *httptest.Server
}

func newRecorder(t *testing.T, target string) *recorder {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatalf("parse %s: %v", target, err)
	}
	r := &recorder{}
	proxy := httputil.NewSingleHostReverseProxy(u)
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		c := call{body: body}
		if target := req.Header.Get("X-Amz-Target"); target != "" {
			c.op = target[strings.LastIndex(target, ".")+1:]
		} else if form, err := url.ParseQuery(string(body)); err == nil && form.Get("Action") != "" {
			c.op, c.form = form.Get("Action"), form
		} else {
			c.op = req.URL.Path
		}
		r.mu.Lock()
		r.calls = append(r.calls, c)
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) ops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ops []string
	for _, c := range r.calls {
		ops = append(ops, c.op)
	}
	return ops
}

func (r *recorder) find(op string) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls {
		if c.op == op {
			out = append(out, c)
		}
	}
	return out
}

// readASG reads the group back the way the poller does.
func readASG(t *testing.T, api *autoscaling.Client, name string) model.Fleet {
	t.Helper()
	out, err := api.DescribeAutoScalingGroups(context.Background(), &autoscaling.DescribeAutoScalingGroupsInput{
		AutoScalingGroupNames: []string{name},
	})
	if err != nil {
		t.Fatalf("describe auto scaling group %s: %v", name, err)
	}
	if len(out.AutoScalingGroups) != 1 {
		t.Fatalf("describe auto scaling group %s: %d groups", name, len(out.AutoScalingGroups))
	}
	g := out.AutoScalingGroups[0]
	return model.Fleet{
		Kind: kindAutoScaling, Name: name, Known: true,
		Desired: int(aws.ToInt32(g.DesiredCapacity)),
		Min:     int(aws.ToInt32(g.MinSize)),
		Max:     int(aws.ToInt32(g.MaxSize)),
	}
}

func TestIntegrationAutoScaling(t *testing.T) {
	moto := awstest.Shared(t)
	direct := factory(t, moto.URL).AutoScaling(region)

	t.Run("the emulator itself accepts a desired count above MaxSize", func(t *testing.T) {
		name := unique("asg-premise")
		awstest.CreateAutoScalingGroup(t, direct, region, name, 1, 5, 1)
		if _, err := direct.SetDesiredCapacity(context.Background(), &autoscaling.SetDesiredCapacityInput{
			AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(9),
		}); err != nil {
			t.Fatalf("SetDesiredCapacity 9: %v", err)
		}
		if got := readASG(t, direct, name).Desired; got != 9 {
			t.Fatalf("desired after setting 9 on a max-5 group = %d: the emulator now enforces MaxSize, so the clamp case below no longer tells the publisher's clamp from the emulator's", got)
		}
	})

	held := func(d model.Decision) model.Decision {
		d.Held, d.HoldReason = true, "no queue answered"
		return d
	}
	tests := []struct {
		name     string
		min, cap int // configured fleet min and cap (max is 10)
		dryRun   bool
		initial  int32 // the group's desired count before (its own bounds are 1..5)
		d        func(group string) model.Decision
		want     model.Action // Group filled in by the test
		desired  int          // read back after
		ops      []string     // calls made by the publisher
	}{
		{
			name: "a normal change is applied", initial: 2,
			d:       func(g string) model.Decision { return decision(g, 4) },
			want:    model.Action{Scaled: true, From: 2, To: 4},
			desired: 4, ops: []string{"SetDesiredCapacity"},
		},
		{
			name: "a desired count of 9 is clamped to the group's max size 5", initial: 2,
			d:       func(g string) model.Decision { return decision(g, 9) },
			want:    model.Action{Scaled: true, From: 2, To: 5},
			desired: 5, ops: []string{"SetDesiredCapacity"},
		},
		{
			name: "a configured cap of 3 clamps to 3", cap: 3, initial: 2,
			d:       func(g string) model.Decision { return decision(g, 9) },
			want:    model.Action{Scaled: true, From: 2, To: 3},
			desired: 3, ops: []string{"SetDesiredCapacity"},
		},
		{
			name: "the configured min is respected", min: 2, initial: 4,
			d:       func(g string) model.Decision { return decision(g, 0) },
			want:    model.Action{Scaled: true, From: 4, To: 2},
			desired: 2, ops: []string{"SetDesiredCapacity"},
		},
		{
			name: "no call when unchanged", initial: 3,
			d:       func(g string) model.Decision { return decision(g, 3) },
			want:    model.Action{From: 3, To: 3},
			desired: 3,
		},
		{
			name: "nothing changes under dry run", dryRun: true, initial: 2,
			d:       func(g string) model.Decision { return decision(g, 4) },
			want:    model.Action{Scaled: true, From: 2, To: 4, DryRun: true},
			desired: 2,
		},
		{
			name: "nothing changes for a held decision that would scale in", initial: 4,
			d:       func(g string) model.Decision { return held(decision(g, 1)) },
			want:    model.Action{From: 4, To: 4},
			desired: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := unique("asg")
			awstest.CreateAutoScalingGroup(t, direct, region, name, 1, 5, tt.initial)
			rec := newRecorder(t, moto.URL)
			cfg := config.Config{DryRun: tt.dryRun, Groups: []config.Group{{
				Name: name,
				Fleet: config.Fleet{
					AutoScalingGroup: &config.AutoScalingGroup{Name: name, Region: region},
					Min:              tt.min, Max: 10, Cap: tt.cap,
				},
				Actions: config.Actions{SetDesiredCapacity: true},
			}}}
			p, err := New(cfg, factory(t, rec.srv.URL), zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			got, err := p.Apply(context.Background(), tt.d(name), readASG(t, direct, name))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want := tt.want
			want.Group = name
			if got != want {
				t.Errorf("Action = %+v, want %+v", got, want)
			}
			if got := readASG(t, direct, name).Desired; got != tt.desired {
				t.Errorf("desired capacity read back = %d, want %d", got, tt.desired)
			}
			if ops := rec.ops(); !slices.Equal(ops, tt.ops) {
				t.Errorf("calls = %v, want %v", ops, tt.ops)
			}
			for _, c := range rec.find("SetDesiredCapacity") {
				if g, d, h := c.form.Get("AutoScalingGroupName"), c.form.Get("DesiredCapacity"), c.form.Get("HonorCooldown"); g != name || d != fmt.Sprint(tt.desired) || h != "false" {
					t.Errorf("SetDesiredCapacity sent group %q desired %q honor cooldown %q; want %q, %d, false", g, d, h, name, tt.desired)
				}
			}
		})
	}

	t.Run("an AWS error is returned with the operation", func(t *testing.T) {
		name := unique("asg-missing")
		p, err := New(config.Config{Groups: []config.Group{{
			Name:    name,
			Fleet:   config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: name, Region: region}, Max: 10},
			Actions: config.Actions{SetDesiredCapacity: true},
		}}}, factory(t, moto.URL), zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		// The group does not exist: the fleet as if read earlier.
		got, err := p.Apply(context.Background(), decision(name, 3), asgFleet(1, 1, 5))
		if err == nil {
			t.Fatal("Apply to a missing group: no error")
		}
		if !strings.Contains(err.Error(), "set desired capacity of auto scaling group "+name) {
			t.Errorf("error %q does not name the operation", err)
		}
		if got.Scaled {
			t.Errorf("Action = %+v, want not scaled", got)
		}
	})

	t.Run("a throttled call is retried by the SDK's retryer only, and metrics still go out", func(t *testing.T) {
		name := unique("asg-throttled")
		awstest.CreateAutoScalingGroup(t, direct, region, name, 1, 5, 2)
		proxy := awstest.NewProxy(t, moto.URL)
		proxy.Inject(awstest.MatchOperation("SetDesiredCapacity"), awstest.Fault{Kind: awstest.FaultThrottle})
		const attempts = 2
		p, err := New(config.Config{Groups: []config.Group{{
			Name:  name,
			Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: name, Region: region}, Max: 10},
			Actions: config.Actions{
				SetDesiredCapacity: true,
				CloudWatchMetrics:  &config.CloudWatchMetrics{Namespace: unique("Throttled"), Region: region},
			},
		}}}, factoryAttempts(t, proxy.URL, attempts), zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		got, err := p.Apply(context.Background(), decision(name, 4), readASG(t, direct, name))
		if err == nil {
			t.Fatal("Apply with SetDesiredCapacity throttled: no error")
		}
		if !strings.Contains(err.Error(), "set desired capacity of auto scaling group "+name+" to 4") {
			t.Errorf("error %q does not name the operation", err)
		}
		if class := awsclient.Classify(err); class != model.ErrClassThrottled {
			t.Errorf("Classify(error) = %q, want %q", class, model.ErrClassThrottled)
		}
		if n := proxy.Calls("SetDesiredCapacity"); n != attempts {
			t.Errorf("SetDesiredCapacity sent %d times, want %d (the retryer's attempts)", n, attempts)
		}
		if n := proxy.Calls("PutMetricData"); n != 1 || got.MetricsPublished != 5 {
			t.Errorf("PutMetricData sent %d times, %d metrics published; want 1 and 5", n, got.MetricsPublished)
		}
		want := model.Action{Group: name, From: 2, To: 2, MetricsPublished: 5, MetricRequests: 1}
		if got != want {
			t.Errorf("Action = %+v, want %+v", got, want)
		}
		if d := readASG(t, direct, name).Desired; d != 2 {
			t.Errorf("desired capacity read back = %d, want 2 (unchanged)", d)
		}
	})
}

func TestIntegrationECS(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	api := factory(t, moto.URL).ECS(region)
	cluster, service := unique("cluster"), unique("svc")
	awstest.CreateECSService(t, api, cluster, service, 1)
	read := func() int {
		t.Helper()
		out, err := api.DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String(cluster), Services: []string{service}})
		if err != nil {
			t.Fatalf("describe services: %v", err)
		}
		if len(out.Services) != 1 {
			t.Fatalf("describe services: %d services, failures %+v", len(out.Services), out.Failures)
		}
		return int(out.Services[0].DesiredCount)
	}

	tests := []struct {
		name    string
		want    int // decision's desired count
		desired int // read back after
		scaled  bool
	}{
		{name: "scale out", want: 3, desired: 3, scaled: true},
		{name: "clamped to the configured max", want: 40, desired: 6, scaled: true},
		{name: "unchanged", want: 6, desired: 6},
		{name: "scale in", want: 2, desired: 2, scaled: true},
	}
	p, err := New(config.Config{Groups: []config.Group{{
		Name:    service,
		Fleet:   config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: service, Region: region}, Max: 6},
		Actions: config.Actions{SetDesiredCapacity: true},
	}}}, factory(t, moto.URL), zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from := read()
			got, err := p.Apply(ctx, decision(service, tt.want), model.Fleet{Kind: kindECS, Known: true, Desired: from})
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want := model.Action{Group: service, Scaled: tt.scaled, From: from, To: tt.desired}
			if got != want {
				t.Errorf("Action = %+v, want %+v", got, want)
			}
			if got := read(); got != tt.desired {
				t.Errorf("desired count read back = %d, want %d", got, tt.desired)
			}
		})
	}
}

func TestIntegrationCloudWatch(t *testing.T) {
	moto := awstest.Shared(t)
	ctx := context.Background()
	cw := factory(t, moto.URL).CloudWatch(region)
	rate, age := 12.5, 42.0

	tests := []struct {
		name   string
		high   bool
		dryRun bool
		unread bool // the fleet could not be read
		d      func(model.Decision) model.Decision
		want   map[string]float64 // nil: nothing published
	}{
		{
			name: "every metric, arrival rate and age known",
			d: func(d model.Decision) model.Decision {
				d.ArrivalRate, d.OldestAgeSeconds = &rate, &age
				return d
			},
			want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 100,
				MetricBacklogPerWorkerRatio: 1.5, MetricDesiredWorkers: 4, MetricArrivalRate: 12.5, MetricOldestMessageAge: 42,
			},
		},
		{
			name: "high resolution, arrival rate and age unknown",
			high: true,
			d:    func(d model.Decision) model.Decision { return d },
			want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 100,
				MetricBacklogPerWorkerRatio: 1.5, MetricDesiredWorkers: 4,
			},
		},
		{
			name: "held on partial data: no queue-derived metrics",
			d: func(d model.Decision) model.Decision {
				d.Held, d.Partial, d.ArrivalRate = true, true, &rate
				return d
			},
			want: map[string]float64{MetricTargetBacklogPerWorker: 100, MetricDesiredWorkers: 4},
		},
		{
			name:   "fleet not read: backlog and age only, so target tracking sees no ratio",
			unread: true,
			d: func(d model.Decision) model.Decision {
				d.ArrivalRate, d.OldestAgeSeconds = &rate, &age
				return d
			},
			want: map[string]float64{MetricBacklog: 300, MetricOldestMessageAge: 42},
		},
		{
			name:   "dry run publishes nothing",
			dryRun: true,
			d:      func(d model.Decision) model.Decision { return d },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			group, namespace := unique("group"), unique("QueueChecker")
			p, err := New(config.Config{DryRun: tt.dryRun, Groups: []config.Group{{
				Name: group,
				Actions: config.Actions{CloudWatchMetrics: &config.CloudWatchMetrics{
					Namespace: namespace, Region: region, HighResolution: tt.high,
				}},
			}}}, factory(t, moto.URL), zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			d := decision(group, 4)
			d.At = time.Now().UTC().Truncate(time.Second)
			d = tt.d(d)
			f := model.Fleet{Kind: model.FleetFixed, Known: true, Desired: 2, InService: 2}
			if tt.unread {
				f = model.Fleet{Kind: "autoscaling", Name: "gone", Err: errors.New("auto scaling group \"gone\": not found")}
			}
			got, err := p.Apply(ctx, d, f)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			wantPublished := len(tt.want)
			if tt.dryRun {
				wantPublished = len(datums(d, f, tt.high))
			}
			if got.MetricsPublished != wantPublished || got.Scaled {
				t.Errorf("Action = %+v, want %d metrics published, not scaled", got, wantPublished)
			}

			// Every metric listed in the namespace carries exactly the Group dimension.
			listed, err := cw.ListMetrics(ctx, &cloudwatch.ListMetricsInput{Namespace: aws.String(namespace)})
			if err != nil {
				t.Fatalf("ListMetrics: %v", err)
			}
			var names []string
			for _, m := range listed.Metrics {
				names = append(names, aws.ToString(m.MetricName))
				if len(m.Dimensions) != 1 || aws.ToString(m.Dimensions[0].Name) != DimensionGroup || aws.ToString(m.Dimensions[0].Value) != group {
					t.Errorf("%s dimensions = %+v, want Group=%s", aws.ToString(m.MetricName), m.Dimensions, group)
				}
			}
			var wantNames []string
			for n := range tt.want {
				wantNames = append(wantNames, n)
			}
			slices.Sort(names)
			slices.Sort(wantNames)
			if !slices.Equal(names, wantNames) {
				t.Errorf("metrics listed = %v, want %v", names, wantNames)
			}
			if len(tt.want) == 0 {
				return
			}

			// The values, read back with GetMetricData by name and dimension.
			var queries []cwtypes.MetricDataQuery
			for i, n := range wantNames {
				queries = append(queries, cwtypes.MetricDataQuery{
					Id: aws.String(fmt.Sprintf("m%d", i)),
					MetricStat: &cwtypes.MetricStat{
						Metric: &cwtypes.Metric{
							Namespace:  aws.String(namespace),
							MetricName: aws.String(n),
							Dimensions: []cwtypes.Dimension{{Name: aws.String(DimensionGroup), Value: aws.String(group)}},
						},
						Period: aws.Int32(60),
						Stat:   aws.String("Average"),
					},
				})
			}
			out, err := cw.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{
				MetricDataQueries: queries,
				StartTime:         aws.Time(d.At.Add(-5 * time.Minute)),
				EndTime:           aws.Time(d.At.Add(5 * time.Minute)),
			})
			if err != nil {
				t.Fatalf("GetMetricData: %v", err)
			}
			read := map[string][]float64{}
			for _, r := range out.MetricDataResults {
				var i int
				if _, err := fmt.Sscanf(aws.ToString(r.Id), "m%d", &i); err != nil {
					t.Fatalf("result id %q: %v", aws.ToString(r.Id), err)
				}
				read[wantNames[i]] = r.Values
			}
			for n, v := range tt.want {
				if vs := read[n]; len(vs) != 1 || math.Abs(vs[0]-v) > 1e-9 {
					t.Errorf("%s read back = %v, want [%v]", n, vs, v)
				}
			}
			if r := read[MetricBacklogPerWorkerRatio]; len(r) == 1 && math.Abs(r[0]-*d.BacklogPerInServiceWorker/d.TargetBacklogPerWorker) > 1e-9 {
				t.Errorf("BacklogPerWorkerRatio = %v, want backlog per worker in service ÷ target = %v", r[0], *d.BacklogPerInServiceWorker/d.TargetBacklogPerWorker)
			}
		})
	}
}

// BenchmarkIntegrationApply measures one Apply against the emulator that
// sets the desired count and publishes the group's metrics: the actions'
// share of the time from a backlog change to the fleet being told.
func BenchmarkIntegrationApply(b *testing.B) {
	moto := awstest.Shared(b)
	f := factory(b, moto.URL)
	direct := f.AutoScaling(region)
	name := unique("asg-bench")
	awstest.CreateAutoScalingGroup(b, direct, region, name, 1, 5, 1)
	p, err := New(config.Config{Groups: []config.Group{{
		Name:  name,
		Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: name, Region: region}, Max: 10},
		Actions: config.Actions{
			SetDesiredCapacity: true,
			CloudWatchMetrics:  &config.CloudWatchMetrics{Namespace: unique("Bench"), Region: region},
		},
	}}}, f, zap.NewNop())
	if err != nil {
		b.Fatalf("New: %v", err)
	}
	ctx := context.Background()
	from := 1
	for b.Loop() {
		to := 3 - from // 1, 2, 1, 2, ...: every Apply makes one call of each kind
		a, err := p.Apply(ctx, decision(name, to), asgFleet(from, 1, 5))
		if err != nil || !a.Scaled {
			b.Fatalf("Apply: %+v, %v", a, err)
		}
		from = to
	}
}
