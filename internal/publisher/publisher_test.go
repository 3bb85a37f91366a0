package publisher

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
)

// The publisher is the AWS Actuator.
var _ controller.Actuator = (*Publisher)(nil)

// fakeAWS records the calls made through the narrow interfaces, with the
// region each client was asked for, and answers with err when set.
type fakeAWS struct {
	cwErr, asgErr, ecsErr error

	puts    []*cloudwatch.PutMetricDataInput
	sets    []*autoscaling.SetDesiredCapacityInput
	updates []*ecs.UpdateServiceInput
	regions []string
}

type fakeCloudWatch struct {
	put func(*cloudwatch.PutMetricDataInput) error
}

func (f fakeCloudWatch) PutMetricData(_ context.Context, in *cloudwatch.PutMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	if err := f.put(in); err != nil {
		return nil, err
	}
	return &cloudwatch.PutMetricDataOutput{}, nil
}

type fakeAutoScaling struct {
	set func(*autoscaling.SetDesiredCapacityInput) error
}

func (f fakeAutoScaling) SetDesiredCapacity(_ context.Context, in *autoscaling.SetDesiredCapacityInput, _ ...func(*autoscaling.Options)) (*autoscaling.SetDesiredCapacityOutput, error) {
	if err := f.set(in); err != nil {
		return nil, err
	}
	return &autoscaling.SetDesiredCapacityOutput{}, nil
}

type fakeECS struct {
	update func(*ecs.UpdateServiceInput) error
}

func (f fakeECS) UpdateService(_ context.Context, in *ecs.UpdateServiceInput, _ ...func(*ecs.Options)) (*ecs.UpdateServiceOutput, error) {
	if err := f.update(in); err != nil {
		return nil, err
	}
	return &ecs.UpdateServiceOutput{}, nil
}

func (a *fakeAWS) clients() clients {
	return clients{
		cloudWatch: func(region string) cloudWatchAPI {
			a.regions = append(a.regions, "cloudwatch:"+region)
			return fakeCloudWatch{put: func(in *cloudwatch.PutMetricDataInput) error {
				a.puts = append(a.puts, in)
				return a.cwErr
			}}
		},
		autoScaling: func(region string) autoScalingAPI {
			a.regions = append(a.regions, "autoscaling:"+region)
			return fakeAutoScaling{set: func(in *autoscaling.SetDesiredCapacityInput) error {
				a.sets = append(a.sets, in)
				return a.asgErr
			}}
		},
		ecs: func(region string) ecsAPI {
			a.regions = append(a.regions, "ecs:"+region)
			return fakeECS{update: func(in *ecs.UpdateServiceInput) error {
				a.updates = append(a.updates, in)
				return a.ecsErr
			}}
		},
	}
}

func asgGroup(name string) config.Group {
	return config.Group{
		Name: name,
		Fleet: config.Fleet{
			AutoScalingGroup: &config.AutoScalingGroup{Name: name + "-workers", Region: "eu-west-1"},
			Min:              1,
			Max:              10,
		},
		Actions: config.Actions{
			SetDesiredCapacity: true,
			CloudWatchMetrics:  &config.CloudWatchMetrics{Namespace: "QueueChecker"},
		},
	}
}

func ecsGroup(name string) config.Group {
	return config.Group{
		Name: name,
		Fleet: config.Fleet{
			ECSService: &config.ECSService{Cluster: "jobs", Service: name},
			Min:        0,
			Max:        20,
		},
		Actions: config.Actions{SetDesiredCapacity: true},
	}
}

func asgFleet(desired, lo, hi int) model.Fleet {
	return model.Fleet{Kind: kindAutoScaling, Known: true, Desired: desired, Min: lo, Max: hi}
}

func decision(group string, desired int) model.Decision {
	return model.Decision{
		Group:                  group,
		At:                     time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
		Backlog:                300,
		CurrentWorkers:         2,
		BacklogPerWorker:       150,
		TargetBacklogPerWorker: 100,
		DesiredWorkers:         desired,
		Diagnosis:              model.DiagUnderProvisioned,
		// 300 waiting, 2 in service.
		BacklogPerInServiceWorker: perWorker(150),
	}
}

func perWorker(x float64) *float64 { return &x }

func TestApply(t *testing.T) {
	awsErr := errors.New("boom")
	held := func(d model.Decision) model.Decision {
		d.Held, d.HoldReason = true, "stale sample"
		return d
	}
	tests := []struct {
		name    string
		dryRun  bool
		group   config.Group
		d       model.Decision
		f       model.Fleet
		fake    fakeAWS
		want    model.Action
		wantSet []int32  // desired counts sent to Auto Scaling
		wantUpd []int32  // desired counts sent to ECS
		wantErr []string // substrings of the error; nil: no error
	}{
		{
			name:    "scale out auto scaling group",
			group:   asgGroup("g"),
			d:       decision("g", 4),
			f:       asgFleet(2, 1, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 2, To: 4, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{4},
		},
		{
			name:    "scale in when not held",
			group:   asgGroup("g"),
			d:       decision("g", 1),
			f:       asgFleet(3, 1, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 3, To: 1, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{1},
		},
		{
			name:    "clamped to the group's own max size",
			group:   asgGroup("g"),
			d:       decision("g", 9),
			f:       asgFleet(2, 1, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 2, To: 5, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{5},
		},
		{
			name:    "clamped to the group's own min size",
			group:   func() config.Group { g := asgGroup("g"); g.Fleet.Min = 0; return g }(),
			d:       decision("g", 0),
			f:       asgFleet(4, 2, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 4, To: 2, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{2},
		},
		{
			name:    "clamped to the configured cap",
			group:   func() config.Group { g := asgGroup("g"); g.Fleet.Cap = 3; return g }(),
			d:       decision("g", 9),
			f:       asgFleet(2, 1, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 2, To: 3, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{3},
		},
		{
			name:    "clamped to the configured min",
			group:   func() config.Group { g := asgGroup("g"); g.Fleet.Min = 2; return g }(),
			d:       decision("g", 0),
			f:       asgFleet(4, 1, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 4, To: 2, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{2},
		},
		{
			name:  "paused: no call, not even into the bounds; metrics still published",
			group: func() config.Group { g := asgGroup("g"); g.Fleet.Min = 3; return g }(),
			d: func() model.Decision {
				d := decision("g", 3)
				d.Paused, d.Held, d.HoldReason = true, true, "paused"
				return d
			}(),
			f:    asgFleet(1, 0, 5),
			want: model.Action{Group: "g", From: 1, To: 1, MetricsPublished: 5, MetricRequests: 1},
		},
		{
			name:  "unchanged: no call",
			group: asgGroup("g"),
			d:     decision("g", 3),
			f:     asgFleet(3, 1, 5),
			want:  model.Action{Group: "g", From: 3, To: 3, MetricsPublished: 5, MetricRequests: 1},
		},
		{
			name:  "unchanged after clamping: no call",
			group: asgGroup("g"),
			d:     decision("g", 8),
			f:     asgFleet(5, 1, 5),
			want:  model.Action{Group: "g", From: 5, To: 5, MetricsPublished: 5, MetricRequests: 1},
		},
		{
			name:  "fleet not read: no call",
			group: asgGroup("g"),
			d:     decision("g", 4),
			f:     model.Fleet{Kind: kindAutoScaling, Err: errors.New("throttled")},
			// Backlog only: the per-worker metrics need a fleet that was read.
			want: model.Action{Group: "g", MetricsPublished: 1, MetricRequests: 1},
		},
		{
			name:  "held decision never scales in",
			group: asgGroup("g"),
			d:     held(decision("g", 1)),
			f:     asgFleet(3, 1, 5),
			want:  model.Action{Group: "g", From: 3, To: 3, MetricsPublished: 5, MetricRequests: 1},
		},
		{
			name:  "held decision never scales in, not even to honour a lowered cap",
			group: func() config.Group { g := asgGroup("g"); g.Fleet.Cap = 2; return g }(),
			d:     held(decision("g", 4)),
			f:     asgFleet(4, 1, 5),
			want:  model.Action{Group: "g", From: 4, To: 4, MetricsPublished: 5, MetricRequests: 1},
		},
		{
			name:    "held decision may scale out",
			group:   asgGroup("g"),
			d:       held(decision("g", 4)),
			f:       asgFleet(3, 1, 5),
			want:    model.Action{Group: "g", Scaled: true, From: 3, To: 4, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{4},
		},
		{
			name:  "set_desired_capacity off: metrics only",
			group: func() config.Group { g := asgGroup("g"); g.Actions.SetDesiredCapacity = false; return g }(),
			d:     decision("g", 4),
			f:     asgFleet(2, 1, 5),
			want:  model.Action{Group: "g", From: 2, To: 2, MetricsPublished: 5, MetricRequests: 1},
		},
		{
			name:   "dry run: nothing called, the action says what would be done",
			dryRun: true,
			group:  asgGroup("g"),
			d:      decision("g", 9),
			f:      asgFleet(2, 1, 5),
			want:   model.Action{Group: "g", Scaled: true, From: 2, To: 5, MetricsPublished: 5, DryRun: true},
		},
		{
			name:    "ECS service: no own bounds, configured max applies",
			group:   ecsGroup("e"),
			d:       decision("e", 30),
			f:       model.Fleet{Kind: kindECS, Known: true, Desired: 1},
			want:    model.Action{Group: "e", Scaled: true, From: 1, To: 20},
			wantUpd: []int32{20},
		},
		{
			name:    "Auto Scaling error: wrapped with the operation, metrics still published",
			group:   asgGroup("g"),
			d:       decision("g", 4),
			f:       asgFleet(2, 1, 5),
			fake:    fakeAWS{asgErr: awsErr},
			want:    model.Action{Group: "g", From: 2, To: 2, MetricsPublished: 5, MetricRequests: 1},
			wantSet: []int32{4},
			wantErr: []string{"set desired capacity of auto scaling group g-workers to 4", "boom"},
		},
		{
			name:    "CloudWatch error: scaling still done",
			group:   asgGroup("g"),
			d:       decision("g", 4),
			f:       asgFleet(2, 1, 5),
			fake:    fakeAWS{cwErr: awsErr},
			want:    model.Action{Group: "g", Scaled: true, From: 2, To: 4, MetricRequests: 1},
			wantSet: []int32{4},
			wantErr: []string{"publish metrics of group g to namespace QueueChecker", "PutMetricData", "boom"},
		},
		{
			name:    "ECS error: wrapped with the operation",
			group:   ecsGroup("e"),
			d:       decision("e", 3),
			f:       model.Fleet{Kind: kindECS, Known: true, Desired: 1},
			fake:    fakeAWS{ecsErr: awsErr},
			want:    model.Action{Group: "e", From: 1, To: 1},
			wantUpd: []int32{3},
			wantErr: []string{"update desired count of ECS service jobs/e to 3", "boom"},
		},
		{
			name:    "bounds conflict: no call, an error",
			group:   func() config.Group { g := asgGroup("g"); g.Fleet.Cap = 2; return g }(),
			d:       decision("g", 4),
			f:       asgFleet(3, 3, 5),
			want:    model.Action{Group: "g", From: 3, To: 3, MetricsPublished: 5, MetricRequests: 1},
			wantErr: []string{"scale group g", "min size 3"},
		},
		{
			name:    "unknown group",
			group:   asgGroup("g"),
			d:       decision("other", 4),
			f:       asgFleet(2, 1, 5),
			want:    model.Action{Group: "other"},
			wantErr: []string{`unknown group "other"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := tt.fake
			p, err := newPublisher(config.Config{DryRun: tt.dryRun, Groups: []config.Group{tt.group}}, fake.clients(), zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("newPublisher: %v", err)
			}
			got, err := p.Apply(context.Background(), tt.d, tt.f)
			if got != tt.want {
				t.Errorf("Action = %+v, want %+v", got, tt.want)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("error = %v, want none", err)
			case tt.wantErr != nil && err == nil:
				t.Errorf("error = nil, want one containing %q", tt.wantErr)
			case err != nil:
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if errors.Is(err, awsErr) != (tt.fake.asgErr != nil || tt.fake.cwErr != nil || tt.fake.ecsErr != nil) {
					t.Errorf("errors.Is(err, the AWS error) = %v", errors.Is(err, awsErr))
				}
			}
			var sets, upds []int32
			for _, in := range fake.sets {
				sets = append(sets, aws.ToInt32(in.DesiredCapacity))
				if aws.ToString(in.AutoScalingGroupName) != tt.group.Fleet.AutoScalingGroup.Name {
					t.Errorf("SetDesiredCapacity group = %q", aws.ToString(in.AutoScalingGroupName))
				}
				if in.HonorCooldown == nil || *in.HonorCooldown {
					t.Errorf("SetDesiredCapacity HonorCooldown = %v, want false", in.HonorCooldown)
				}
			}
			for _, in := range fake.updates {
				upds = append(upds, aws.ToInt32(in.DesiredCount))
				if aws.ToString(in.Cluster) != "jobs" || aws.ToString(in.Service) != tt.group.Name {
					t.Errorf("UpdateService %s/%s", aws.ToString(in.Cluster), aws.ToString(in.Service))
				}
			}
			if !equalInt32(sets, tt.wantSet) {
				t.Errorf("SetDesiredCapacity calls = %v, want %v", sets, tt.wantSet)
			}
			if !equalInt32(upds, tt.wantUpd) {
				t.Errorf("UpdateService calls = %v, want %v", upds, tt.wantUpd)
			}
			wantPuts := 0
			if tt.group.Actions.CloudWatchMetrics != nil && !tt.dryRun && tt.d.Group == tt.group.Name {
				wantPuts = 1
			}
			if len(fake.puts) != wantPuts {
				t.Errorf("PutMetricData calls = %d, want %d", len(fake.puts), wantPuts)
			}
			if tt.dryRun && len(fake.regions) != 0 {
				t.Errorf("dry run asked for clients %v, want none", fake.regions)
			}
		})
	}
}

func equalInt32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestApplyRegions(t *testing.T) {
	tests := []struct {
		name          string
		defaultRegion string
		fleetRegion   string
		metricsRegion string
		want          []string
	}{
		{name: "named regions", defaultRegion: "us-east-1", fleetRegion: "eu-west-1", metricsRegion: "ap-south-1",
			want: []string{"autoscaling:eu-west-1", "cloudwatch:ap-south-1"}},
		{name: "config default region", defaultRegion: "us-east-1",
			want: []string{"autoscaling:us-east-1", "cloudwatch:us-east-1"}},
		{name: "factory default region",
			want: []string{"autoscaling:", "cloudwatch:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := asgGroup("g")
			g.Fleet.AutoScalingGroup.Region = tt.fleetRegion
			g.Actions.CloudWatchMetrics.Region = tt.metricsRegion
			var fake fakeAWS
			cfg := config.Config{AWS: config.AWS{Region: tt.defaultRegion}, Groups: []config.Group{g}}
			p, err := newPublisher(cfg, fake.clients(), zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("newPublisher: %v", err)
			}
			if _, err := p.Apply(context.Background(), decision("g", 3), asgFleet(2, 1, 5)); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if strings.Join(fake.regions, ",") != strings.Join(tt.want, ",") {
				t.Errorf("clients asked for %v, want %v", fake.regions, tt.want)
			}
		})
	}
}

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name   string
		groups []config.Group
		want   string
	}{
		{name: "duplicate names", groups: []config.Group{asgGroup("a"), asgGroup("a")},
			want: `groups[1].name: "a" used twice`},
		{name: "metrics without namespace", groups: []config.Group{func() config.Group {
			g := asgGroup("a")
			g.Actions.CloudWatchMetrics.Namespace = ""
			return g
		}()}, want: "groups[0].actions.cloudwatch_metrics.namespace: empty"},
		{name: "scaling without a fleet", groups: []config.Group{func() config.Group {
			g := asgGroup("a")
			g.Fleet.AutoScalingGroup = nil
			return g
		}()}, want: "groups[0].actions.set_desired_capacity: no fleet to scale"},
		{name: "scaling two fleets", groups: []config.Group{func() config.Group {
			g := asgGroup("a")
			g.Fleet.ECSService = &config.ECSService{Cluster: "c", Service: "s"}
			return g
		}()}, want: "groups[0].fleet: both autoscaling_group and ecs_service set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var fake fakeAWS
			_, err := newPublisher(config.Config{Groups: tt.groups}, fake.clients(), zaptest.NewLogger(t))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
	t.Run("no factory outside dry run", func(t *testing.T) {
		t.Parallel()
		if _, err := New(config.Config{}, nil, zaptest.NewLogger(t)); err == nil {
			t.Error("New without a factory: no error")
		}
		if _, err := New(config.Config{DryRun: true, Groups: []config.Group{asgGroup("a")}}, nil, zaptest.NewLogger(t)); err != nil {
			t.Errorf("New without a factory under dry run: %v", err)
		}
	})
}

func TestClamp(t *testing.T) {
	tests := []struct {
		name string
		want int
		fc   config.Fleet
		f    model.Fleet
		to   int
		err  bool
	}{
		{name: "inside", want: 3, fc: config.Fleet{Min: 1, Max: 10}, f: asgFleet(2, 1, 5), to: 3},
		{name: "own max", want: 9, fc: config.Fleet{Min: 1, Max: 10}, f: asgFleet(2, 1, 5), to: 5},
		{name: "config max", want: 9, fc: config.Fleet{Min: 1, Max: 4}, f: asgFleet(2, 1, 5), to: 4},
		{name: "cap", want: 9, fc: config.Fleet{Min: 1, Max: 10, Cap: 3}, f: asgFleet(2, 1, 5), to: 3},
		{name: "own min", want: 0, fc: config.Fleet{Max: 10}, f: asgFleet(2, 2, 5), to: 2},
		{name: "config min", want: 0, fc: config.Fleet{Min: 3, Max: 10}, f: asgFleet(2, 1, 5), to: 3},
		{name: "negative", want: -7, fc: config.Fleet{Max: 10}, f: model.Fleet{}, to: 0},
		{name: "huge", want: math.MaxInt, fc: config.Fleet{Max: 10}, f: model.Fleet{}, to: 10},
		{name: "no config max: unbounded for ECS", want: 500, fc: config.Fleet{}, f: model.Fleet{}, to: 500},
		{name: "ECS ignores the zero bounds read back", want: 4, fc: config.Fleet{Max: 10}, f: model.Fleet{Kind: kindECS, Known: true, Min: 0, Max: 0}, to: 4},
		{name: "own max 0", want: 4, fc: config.Fleet{Max: 10}, f: asgFleet(0, 0, 0), to: 0},
		{name: "config min above own max: max wins", want: 1, fc: config.Fleet{Min: 6, Max: 10}, f: asgFleet(2, 1, 5), to: 5},
		{name: "config min above cap: cap wins", want: 1, fc: config.Fleet{Min: 4, Max: 10, Cap: 2}, f: model.Fleet{}, to: 2},
		{name: "own min above cap: error", want: 4, fc: config.Fleet{Max: 10, Cap: 2}, f: asgFleet(3, 3, 5), err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			to, err := clamp(tt.want, tt.fc, tt.f)
			if (err != nil) != tt.err {
				t.Fatalf("clamp error = %v, want error %v", err, tt.err)
			}
			if err == nil && to != tt.to {
				t.Errorf("clamp(%d) = %d, want %d", tt.want, to, tt.to)
			}
		})
	}
}

// TestClampBounds checks over a grid of inputs that a clamped count never
// leaves any upper bound and, when they do not cross, never goes below a lower.
func TestClampBounds(t *testing.T) {
	t.Parallel()
	wants := []int{math.MinInt, -1, 0, 1, 2, 3, 5, 8, 13, 100, math.MaxInt}
	small := []int{0, 1, 2, 3, 5, 8}
	for _, want := range wants {
		for _, cmin := range small {
			for _, cmax := range small {
				for _, cp := range small {
					for _, omin := range small {
						for _, omax := range small {
							if omax < omin {
								continue
							}
							fc := config.Fleet{Min: cmin, Max: cmax, Cap: cp}
							to, err := clamp(want, fc, asgFleet(0, omin, omax))
							if err != nil {
								continue
							}
							if to > omax || (cmax > 0 && to > cmax) || (cp > 0 && to > cp) {
								t.Fatalf("clamp(%d, %+v, own %d..%d) = %d: above an upper bound", want, fc, omin, omax, to)
							}
							hi := omax
							if cmax > 0 {
								hi = min(hi, cmax)
							}
							if cp > 0 {
								hi = min(hi, cp)
							}
							lo := max(cmin, omin)
							if to < omin || (lo <= hi && to < lo) {
								t.Fatalf("clamp(%d, %+v, own %d..%d) = %d: below a lower bound", want, fc, omin, omax, to)
							}
						}
					}
				}
			}
		}
	}
}

func TestDatums(t *testing.T) {
	rate, age := 12.5, 42.0
	nan, inf := math.NaN(), math.Inf(1)
	base := decision("g", 4)
	with := func(mod func(*model.Decision)) model.Decision {
		d := base
		mod(&d)
		return d
	}
	read := model.Fleet{Kind: "autoscaling", Known: true, Desired: 4, InService: 2}
	fleet := func(mod func(*model.Fleet)) *model.Fleet {
		f := read
		mod(&f)
		return &f
	}
	tests := []struct {
		name string
		d    model.Decision
		f    *model.Fleet // nil: read, 2 in service
		want map[string]float64
	}{
		{name: "no arrival rate or age known", d: base, want: map[string]float64{
			MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 100,
			MetricBacklogPerWorkerRatio: 1.5, MetricDesiredWorkers: 4,
		}},
		{name: "arrival rate and age known", d: with(func(d *model.Decision) { d.ArrivalRate, d.OldestAgeSeconds = &rate, &age }),
			want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 100,
				MetricBacklogPerWorkerRatio: 1.5, MetricDesiredWorkers: 4, MetricArrivalRate: 12.5, MetricOldestMessageAge: 42,
			}},
		{name: "NaN and Inf skipped", d: with(func(d *model.Decision) {
			d.TargetBacklogPerWorker, d.ArrivalRate, d.OldestAgeSeconds = inf, &nan, &age
		}), want: map[string]float64{
			MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricBacklogPerWorkerRatio: 0, MetricDesiredWorkers: 4, MetricOldestMessageAge: 42,
		}},
		// The policy divides by the workers in service (TestBacklogPerWorker).
		{name: "per worker: the decision's per worker in service", d: with(func(d *model.Decision) { d.BacklogPerInServiceWorker = perWorker(100) }),
			f: fleet(func(f *model.Fleet) { f.InService, f.Pending = 3, 1 }), want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 100, MetricTargetBacklogPerWorker: 100,
				MetricBacklogPerWorkerRatio: 1, MetricDesiredWorkers: 4,
			}},
		{name: "none in service: divided by one", d: with(func(d *model.Decision) { d.BacklogPerInServiceWorker = perWorker(300) }),
			f: fleet(func(f *model.Fleet) { f.InService, f.Pending = 0, 4 }), want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 300, MetricTargetBacklogPerWorker: 100,
				MetricBacklogPerWorkerRatio: 3, MetricDesiredWorkers: 4,
			}},
		{name: "fixed fleet", d: with(func(d *model.Decision) { d.BacklogPerInServiceWorker = perWorker(60) }),
			f: &model.Fleet{Kind: model.FleetFixed, Known: true, Desired: 5, InService: 5}, want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 60, MetricTargetBacklogPerWorker: 100,
				MetricBacklogPerWorkerRatio: 0.6, MetricDesiredWorkers: 4,
			}},
		{name: "fleet not read: backlog and age only", d: with(func(d *model.Decision) {
			d.ArrivalRate, d.OldestAgeSeconds = &rate, &age
		}), f: &model.Fleet{Kind: "autoscaling", Err: errors.New("not found")}, want: map[string]float64{
			MetricBacklog: 300, MetricOldestMessageAge: 42,
		}},
		{name: "no fleet at all: backlog only", d: base, f: &model.Fleet{}, want: map[string]float64{MetricBacklog: 300}},
		{name: "fleet read, no per worker in service: target and desired only", d: with(func(d *model.Decision) { d.BacklogPerInServiceWorker = nil }),
			want: map[string]float64{MetricBacklog: 300, MetricTargetBacklogPerWorker: 100, MetricDesiredWorkers: 4}},
		{name: "no target: no ratio", d: with(func(d *model.Decision) { d.TargetBacklogPerWorker = 0 }),
			want: map[string]float64{
				MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 0, MetricDesiredWorkers: 4,
			}},
		{name: "NaN target: neither target nor ratio", d: with(func(d *model.Decision) { d.TargetBacklogPerWorker = nan }),
			want: map[string]float64{MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricDesiredWorkers: 4}},
		{name: "ratio overflowing skipped", d: with(func(d *model.Decision) {
			d.TargetBacklogPerWorker = 1e-300
		}), want: map[string]float64{MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 0, MetricDesiredWorkers: 4}},
		{name: "held on stale data: everything, desired is the held count", d: with(func(d *model.Decision) {
			d.Held, d.HoldReason, d.DesiredWorkers = true, "stale", 2
		}), want: map[string]float64{
			MetricBacklog: 300, MetricBacklogPerWorker: 150, MetricTargetBacklogPerWorker: 100,
			MetricBacklogPerWorkerRatio: 1.5, MetricDesiredWorkers: 2,
		}},
		{name: "partial: no queue-derived values", d: with(func(d *model.Decision) {
			d.Held, d.Partial, d.ArrivalRate, d.OldestAgeSeconds = true, true, &rate, &age
		}), want: map[string]float64{MetricTargetBacklogPerWorker: 100, MetricDesiredWorkers: 4}},
		{name: "nothing known: no queue-derived values", d: with(func(d *model.Decision) {
			d.Held, d.Diagnosis, d.Backlog, d.BacklogPerWorker = true, model.DiagUnknown, 0, 0
		}), want: map[string]float64{MetricTargetBacklogPerWorker: 100, MetricDesiredWorkers: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := read
			if tt.f != nil {
				f = *tt.f
			}
			got := map[string]float64{}
			for _, m := range datums(tt.d, f, false) {
				name := aws.ToString(m.MetricName)
				if _, dup := got[name]; dup {
					t.Errorf("metric %s twice", name)
				}
				got[name] = aws.ToFloat64(m.Value)
				if len(m.Dimensions) != 1 || aws.ToString(m.Dimensions[0].Name) != DimensionGroup || aws.ToString(m.Dimensions[0].Value) != "g" {
					t.Errorf("%s dimensions = %+v, want Group=g", name, m.Dimensions)
				}
				if m.Timestamp == nil || !m.Timestamp.Equal(tt.d.At) {
					t.Errorf("%s timestamp = %v, want %v", name, m.Timestamp, tt.d.At)
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("metrics = %v, want %v", got, tt.want)
			}
			for name, v := range tt.want {
				if g, ok := got[name]; !ok || g != v {
					t.Errorf("%s = %v (sent %v), want %v", name, g, ok, v)
				}
			}
		})
	}
}

func TestDatumUnitsAndResolution(t *testing.T) {
	rate, age := 1.0, 2.0
	d := decision("g", 4)
	d.ArrivalRate, d.OldestAgeSeconds = &rate, &age
	wantUnits := map[string]types.StandardUnit{
		MetricBacklog:                types.StandardUnitCount,
		MetricBacklogPerWorker:       types.StandardUnitCount,
		MetricTargetBacklogPerWorker: types.StandardUnitCount,
		MetricBacklogPerWorkerRatio:  types.StandardUnitNone,
		MetricDesiredWorkers:         types.StandardUnitCount,
		MetricArrivalRate:            types.StandardUnitCountSecond,
		MetricOldestMessageAge:       types.StandardUnitSeconds,
	}
	for _, tt := range []struct {
		name string
		high bool
		res  int32
	}{{"standard resolution", false, 60}, {"high resolution", true, 1}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ds := datums(d, model.Fleet{Known: true, InService: 2}, tt.high)
			if len(ds) != len(wantUnits) {
				t.Fatalf("%d datums, want %d", len(ds), len(wantUnits))
			}
			for _, m := range ds {
				name := aws.ToString(m.MetricName)
				if m.Unit != wantUnits[name] {
					t.Errorf("%s unit = %q, want %q", name, m.Unit, wantUnits[name])
				}
				if aws.ToInt32(m.StorageResolution) != tt.res {
					t.Errorf("%s storage resolution = %d, want %d", name, aws.ToInt32(m.StorageResolution), tt.res)
				}
			}
		})
	}
	t.Run("zero time: no timestamp", func(t *testing.T) {
		t.Parallel()
		d := decision("g", 4)
		d.At = time.Time{}
		for _, m := range datums(d, model.Fleet{Known: true, InService: 2}, false) {
			if m.Timestamp != nil {
				t.Errorf("%s timestamp = %v, want none", aws.ToString(m.MetricName), m.Timestamp)
			}
		}
	})
}

func TestPublishable(t *testing.T) {
	tests := []struct {
		name string
		in   float64
		out  float64
		ok   bool
	}{
		{"zero", 0, 0, true},
		{"ordinary", 12.5, 12.5, true},
		{"negative", -3, -3, true},
		{"NaN", math.NaN(), 0, false},
		{"+Inf", math.Inf(1), 0, false},
		{"-Inf", math.Inf(-1), 0, false},
		{"above 2^360", math.Pow(2, 361), 0, false},
		{"below the smallest magnitude", 1e-200, 0, true},
		{"largest finite", math.MaxFloat64, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, ok := publishable(tt.in)
			if ok != tt.ok || (ok && out != tt.out) {
				t.Errorf("publishable(%v) = %v, %v; want %v, %v", tt.in, out, ok, tt.out, tt.ok)
			}
		})
	}
}

func TestPutMetricsBatches(t *testing.T) {
	mk := func(n int) []types.MetricDatum {
		ds := make([]types.MetricDatum, n)
		for i := range ds {
			ds[i] = types.MetricDatum{MetricName: aws.String("M"), Value: aws.Float64(float64(i))}
		}
		return ds
	}
	tests := []struct {
		name     string
		n        int
		failCall int // 1-based call that fails; 0: none
		calls    []int
		sent     int
	}{
		{name: "none", n: 0, calls: nil, sent: 0},
		{name: "one group's worth", n: 7, calls: []int{7}, sent: 7},
		{name: "exactly the limit", n: 1000, calls: []int{1000}, sent: 1000},
		{name: "split", n: 2500, calls: []int{1000, 1000, 500}, sent: 2500},
		{name: "second call fails", n: 2500, failCall: 2, calls: []int{1000, 1000}, sent: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls []int
			var values []float64
			cw := fakeCloudWatch{put: func(in *cloudwatch.PutMetricDataInput) error {
				calls = append(calls, len(in.MetricData))
				if aws.ToString(in.Namespace) != "NS" {
					t.Errorf("namespace = %q", aws.ToString(in.Namespace))
				}
				if len(calls) == tt.failCall {
					return errors.New("throttled")
				}
				for _, m := range in.MetricData {
					values = append(values, aws.ToFloat64(m.Value))
				}
				return nil
			}}
			sent, made, err := putMetrics(context.Background(), cw, "NS", mk(tt.n))
			if (err != nil) != (tt.failCall != 0) {
				t.Errorf("error = %v", err)
			}
			if sent != tt.sent {
				t.Errorf("sent = %d, want %d", sent, tt.sent)
			}
			// Every call made is a billed request, the failed one included.
			if made != len(tt.calls) {
				t.Errorf("requests counted = %d, want %d", made, len(tt.calls))
			}
			if len(calls) != len(tt.calls) {
				t.Fatalf("calls = %v, want %v", calls, tt.calls)
			}
			for i := range calls {
				if calls[i] != tt.calls[i] {
					t.Errorf("calls = %v, want %v", calls, tt.calls)
				}
			}
			for i, v := range values {
				if v != float64(i) {
					t.Fatalf("datum %d has value %v: order or coverage lost", i, v)
				}
			}
		})
	}
}
