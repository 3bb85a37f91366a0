// Package publisher carries out the policy's decisions in AWS: it publishes
// each group's CloudWatch custom metrics (for dashboards and target-tracking
// policies) and sets the desired count of its Auto Scaling group or ECS
// service, never outside the group's own bounds nor the configured ones.
//
// Metrics, all with the dimension Group=<name>:
//
//	Backlog                 Count         messages counted as backlog (visible, plus in-flight and delayed when configured)
//	BacklogPerWorker        Count         backlog ÷ workers in service (at least 1)
//	TargetBacklogPerWorker  Count         the backlog per worker that keeps the latency promise
//	BacklogPerWorkerRatio   None          BacklogPerWorker ÷ TargetBacklogPerWorker: a target-tracking
//	                                      policy with target 1.0 keeps working when the service time changes
//	DesiredWorkers          Count         the count the checker wants the fleet at (see below)
//	ArrivalRate             Count/Second  smoothed arrivals, only when known
//	OldestMessageAge        Seconds       age of the oldest message, only when known
//
// A held decision (missing, partial or stale data) still publishes its
// metrics, with two rules. DesiredWorkers is then the count the checker is
// holding the fleet at, not a fresh estimate of what the queue needs. The
// queue-derived metrics (Backlog, BacklogPerWorker, BacklogPerWorkerRatio,
// ArrivalRate, OldestMessageAge) are published only when they describe every
// queue of the group: not when no queue answered (diagnosis "unknown") nor
// when only some did (partial). An undercount published as a fact would walk
// a target-tracking policy into scaling in; a gap leaves its alarms without
// data, and they do nothing.
//
// The per-worker metrics (BacklogPerWorker, TargetBacklogPerWorker,
// BacklogPerWorkerRatio, DesiredWorkers) and ArrivalRate divide by, or
// size, a fleet: they are published only when the fleet was read this cycle
// (or is of fixed size, fleet.fixed_workers). When it could not be read,
// only Backlog and OldestMessageAge are published, so that a target-tracking
// policy on the ratio sees missing data and does nothing, instead of a ratio
// computed against a count the checker made up.
package publisher

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
)

// cloudWatchAPI is the part of CloudWatch the publisher calls.
type cloudWatchAPI interface {
	PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// autoScalingAPI is the part of EC2 Auto Scaling the publisher calls.
type autoScalingAPI interface {
	SetDesiredCapacity(ctx context.Context, in *autoscaling.SetDesiredCapacityInput, optFns ...func(*autoscaling.Options)) (*autoscaling.SetDesiredCapacityOutput, error)
}

// ecsAPI is the part of ECS the publisher calls.
type ecsAPI interface {
	UpdateService(ctx context.Context, in *ecs.UpdateServiceInput, optFns ...func(*ecs.Options)) (*ecs.UpdateServiceOutput, error)
}

var (
	_ cloudWatchAPI  = (*cloudwatch.Client)(nil)
	_ autoScalingAPI = (*autoscaling.Client)(nil)
	_ ecsAPI         = (*ecs.Client)(nil)
)

// Fleet kinds, as in model.Fleet.Kind.
const (
	kindAutoScaling = "autoscaling"
	kindECS         = "ecs"
)

// clients hands out the narrow clients of a region.
type clients struct {
	cloudWatch  func(region string) cloudWatchAPI
	autoScaling func(region string) autoScalingAPI
	ecs         func(region string) ecsAPI
	kube        kubeAPI // nil when no group scales a Kubernetes workload
}

// Publisher is the AWS Actuator. It is safe for concurrent use: it keeps no
// state between calls beyond the configuration it was made with.
type Publisher struct {
	dryRun        bool
	defaultRegion string
	groups        map[string]config.Group
	clients       clients
	log           *zap.Logger
}

// New returns a Publisher for the groups of cfg, getting its clients from
// factory per region. The factory may be nil under cfg.DryRun, when nothing
// is called. New checks only what the publisher cannot work without: group
// names unique, a namespace for metrics, exactly one fleet to scale.
func New(cfg config.Config, factory *awsclient.Factory, log *zap.Logger) (*Publisher, error) {
	if factory == nil && !cfg.DryRun {
		return nil, errors.New("publisher: no AWS client factory (needed unless dry_run)")
	}
	c := clients{
		cloudWatch:  func(region string) cloudWatchAPI { return factory.CloudWatch(region) },
		autoScaling: func(region string) autoScalingAPI { return factory.AutoScaling(region) },
		ecs:         func(region string) ecsAPI { return factory.ECS(region) },
	}
	var err error
	if c.kube, err = kubeClient(cfg); err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	return newPublisher(cfg, c, log)
}

func newPublisher(cfg config.Config, c clients, log *zap.Logger) (*Publisher, error) {
	if log == nil {
		log = zap.NewNop()
	}
	var errs []error
	groups := make(map[string]config.Group, len(cfg.Groups))
	for i, g := range cfg.Groups {
		if _, dup := groups[g.Name]; dup {
			errs = append(errs, fmt.Errorf("groups[%d].name: %q used twice", i, g.Name))
			continue
		}
		groups[g.Name] = g
		if m := g.Actions.CloudWatchMetrics; m != nil && m.Namespace == "" {
			errs = append(errs, fmt.Errorf("groups[%d].actions.cloudwatch_metrics.namespace: empty", i))
		}
		if g.Actions.SetDesiredCapacity {
			switch {
			case g.Fleet.AutoScalingGroup == nil && g.Fleet.ECSService == nil && g.Fleet.Kubernetes == nil:
				errs = append(errs, fmt.Errorf("groups[%d].actions.set_desired_capacity: no fleet to scale (fleet.autoscaling_group, fleet.ecs_service or fleet.kubernetes)", i))
			case g.Fleet.AutoScalingGroup != nil && g.Fleet.ECSService != nil:
				errs = append(errs, fmt.Errorf("groups[%d].fleet: both autoscaling_group and ecs_service set", i))
			case g.Fleet.Kubernetes != nil && (g.Fleet.AutoScalingGroup != nil || g.Fleet.ECSService != nil):
				errs = append(errs, fmt.Errorf("groups[%d].fleet: kubernetes and another fleet kind set", i))
			case g.Fleet.Kubernetes != nil && c.kube == nil && !cfg.DryRun:
				errs = append(errs, fmt.Errorf("groups[%d].fleet.kubernetes: no Kubernetes client", i))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("publisher: %w", err)
	}
	return &Publisher{
		dryRun:        cfg.DryRun,
		defaultRegion: cfg.AWS.Region,
		groups:        groups,
		clients:       c,
		log:           log,
	}, nil
}

// Apply carries out one decision for the group d.Group, whose fleet was read
// back this cycle as f. It sets the desired count first (when the group's
// actions allow it, the fleet was read, and the clamped count differs from
// f.Desired), then publishes the group's metrics (when configured). Both are
// attempted; their errors are returned together, each naming the operation.
// Nothing is retried beyond the SDK's retryer.
//
// The returned Action has From = f.Desired and To = the count set, or To =
// From when nothing was set. Under dry run no AWS call is made and the Action
// describes what would have been done (Scaled, To, MetricsPublished), with
// DryRun true.
func (p *Publisher) Apply(ctx context.Context, d model.Decision, f model.Fleet) (model.Action, error) {
	g, ok := p.groups[d.Group]
	if !ok {
		return model.Action{Group: d.Group}, fmt.Errorf("apply decision: unknown group %q", d.Group)
	}
	log := p.log.With(zap.String("group", g.Name))
	act := model.Action{Group: g.Name, From: f.Desired, To: f.Desired, DryRun: p.dryRun}

	var errs []error
	if to, scale, err := p.plan(g, d, f, log); err != nil {
		errs = append(errs, err)
	} else if scale {
		if p.dryRun {
			act.Scaled, act.To = true, to
			log.Info("dry run: would set desired count", zap.Int("from", f.Desired), zap.Int("to", to))
		} else if err := p.setDesired(ctx, g, to); err != nil {
			errs = append(errs, err)
		} else {
			act.Scaled, act.To = true, to
			log.Info("set desired count", zap.Int("from", f.Desired), zap.Int("to", to))
		}
	}

	if m := g.Actions.CloudWatchMetrics; m != nil {
		datums := datums(d, f, m.HighResolution)
		if p.dryRun {
			act.MetricsPublished = len(datums)
		} else {
			n, calls, err := putMetrics(ctx, p.clients.cloudWatch(p.region(m.Region)), m.Namespace, datums)
			act.MetricsPublished, act.MetricRequests = n, calls
			if err != nil {
				errs = append(errs, fmt.Errorf("publish metrics of group %s to namespace %s: %w", g.Name, m.Namespace, err))
			}
		}
	}
	return act, errors.Join(errs...)
}

// plan returns the count to set and whether to set it at all.
func (p *Publisher) plan(g config.Group, d model.Decision, f model.Fleet, log *zap.Logger) (int, bool, error) {
	if !g.Actions.SetDesiredCapacity || !f.Known || d.Paused || len(d.SwitchProblems) > 0 {
		// A paused group, or one with a switch not understood, is never
		// scaled, not even into its bounds.
		return f.Desired, false, nil
	}
	to, err := clamp(d.DesiredWorkers, g.Fleet, f)
	if err != nil {
		return f.Desired, false, fmt.Errorf("scale group %s: %w", g.Name, err)
	}
	if to == f.Desired {
		return to, false, nil
	}
	if d.Held && to < f.Desired {
		// A held decision rests on missing, partial or stale data; the
		// policy never asks it to scale in, and we never do.
		log.Warn("held decision asks to scale in; not applied",
			zap.Int("from", f.Desired), zap.Int("to", to), zap.String("hold_reason", d.HoldReason))
		return f.Desired, false, nil
	}
	return to, true, nil
}

// clamp bounds want as the policy bounds it (model.Limits.For): by the
// configured min, max and cap and the fleet's own bounds as read back in f
// (an Auto Scaling group's MinSize and MaxSize). A configured max or cap of
// 0 means none. When a floor is above a ceiling the ceiling wins (never
// exceed a max or cap), unless that falls below the Auto Scaling group's
// own MinSize, which AWS would refuse: then it is an error.
func clamp(want int, fc config.Fleet, f model.Fleet) (int, error) {
	b := model.Limits{Min: fc.Min, Max: fc.Max, Cap: fc.Cap}.For(f)
	if b.Refused {
		return 0, fmt.Errorf("bounds conflict: the group's own min size %d is above the configured max or cap (%d)", b.Floor, b.Hi)
	}
	return b.Clamp(want), nil
}

func (p *Publisher) region(r string) string {
	if r != "" {
		return r
	}
	return p.defaultRegion // empty: the factory's default
}

func (p *Publisher) setDesired(ctx context.Context, g config.Group, to int) error {
	switch {
	case g.Fleet.AutoScalingGroup != nil:
		a := g.Fleet.AutoScalingGroup
		_, err := p.clients.autoScaling(p.region(a.Region)).SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{
			AutoScalingGroupName: aws.String(a.Name),
			DesiredCapacity:      aws.Int32(int32(min(to, math.MaxInt32))),
			HonorCooldown:        aws.Bool(false),
		})
		if err != nil {
			return fmt.Errorf("set desired capacity of auto scaling group %s to %d: %w", a.Name, to, err)
		}
	case g.Fleet.ECSService != nil:
		s := g.Fleet.ECSService
		_, err := p.clients.ecs(p.region(s.Region)).UpdateService(ctx, &ecs.UpdateServiceInput{
			Cluster:      aws.String(s.Cluster),
			Service:      aws.String(s.Service),
			DesiredCount: aws.Int32(int32(min(to, math.MaxInt32))),
		})
		if err != nil {
			return fmt.Errorf("update desired count of ECS service %s/%s to %d: %w", s.Cluster, s.Service, to, err)
		}
	case g.Fleet.Kubernetes != nil:
		return p.scaleKube(ctx, g.Fleet.Kubernetes, to)
	}
	return nil
}
