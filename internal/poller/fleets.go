package poller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/kube"
	"github.com/queuechecker/queue-checker/internal/model"
)

// Fleet kinds, as in model.Fleet.Kind.
const (
	KindAutoScaling = "autoscaling"
	KindECS         = model.FleetECS
	KindFixed       = model.FleetFixed
)

// fixedFleet is the fleet of a group that names none: a known fixed size
// (fleet.fixed_workers), all in service, or nothing known when n is 0.
func fixedFleet(n int, now time.Time) model.Fleet {
	if n <= 0 {
		return model.Fleet{At: now}
	}
	return model.Fleet{Kind: KindFixed, Name: "fixed", At: now, Known: true, Desired: n, InService: n}
}

const (
	// asgNamesPerCall is how many groups one DescribeAutoScalingGroups asks for.
	asgNamesPerCall = 50
	// ecsServicesPerCall is DescribeServices' limit of services per call.
	ecsServicesPerCall = 10
)

// errFleetNotFound marks a fleet the API did not return.
var errFleetNotFound = errors.New("not found")

// fleetReader is one fleet (an Auto Scaling group or an ECS service) as
// the poller remembers it between intervals.
type fleetReader struct {
	kind    string
	name    string // group name, or service name or ARN
	cluster string // ECS only
	region  string
	log     *zap.Logger

	// This interval's answer, written by the batch that read it.
	asg *asgtypes.AutoScalingGroup
	svc *ecstypes.Service
	err error

	// A Kubernetes workload (kube.go): its name, this interval's answer,
	// and when each pending pod was first seen.
	kubeRef     kube.Ref
	workload    *kube.Workload
	kubePending []time.Time

	// pendingSince remembers, per Auto Scaling instance ID, when the poller
	// first saw the instance pending: the API gives no launch time.
	pendingSince map[string]time.Time
	// pendingTasks does the same for an ECS service's tasks, which
	// DescribeServices counts per deployment but does not name.
	pendingTasks pendingTasks

	failing   bool
	failSince time.Time
	// atZero: the last read found no worker, none wanted: the group's
	// queues are then asked every interval (queue.due), so that the first
	// message wakes the fleet within one.
	atZero bool

	// pausedSeen is when the poller first saw the fleet paused without a
	// paused-at tag; warned is the switch warnings last logged.
	pausedSeen time.Time
	warned     string
}

func (f *fleetReader) display() string {
	if f.kind == KindECS {
		return f.cluster + "/" + f.name
	}
	return f.name
}

func (f *fleetReader) reset() { f.asg, f.svc, f.err, f.workload = nil, nil, nil, nil }

// settle turns this interval's answer into a model.Fleet and logs when the
// fleet starts or stops failing.
func (f *fleetReader) settle(now time.Time) model.Fleet {
	fl := model.Fleet{Kind: f.kind, Name: f.display(), At: now}
	switch {
	case f.err != nil:
		fl.Err = f.err
	case f.kind == KindAutoScaling && f.asg != nil:
		f.fromASG(&fl, now)
		f.applySwitches(&fl, asgTags(f.asg), now)
	case f.kind == KindECS && f.svc != nil:
		f.fromECS(&fl, now)
		f.applySwitches(&fl, serviceTags(f.svc), now)
	case f.kind == KindKubernetes && f.workload != nil:
		f.fromKube(&fl, now)
	default:
		fl.Err = fmt.Errorf("%s %s in %s: no answer", f.kind, f.display(), f.region)
	}
	if fl.Err != nil {
		fl.Known = false
		if !f.failing {
			f.failing, f.failSince = true, now
			f.log.Warn("fleet read failed", zap.String("class", fleetErrClass(fl.Err)), zap.Error(fl.Err))
		}
		return fl
	}
	if f.failing {
		f.failing = false
		f.log.Info("fleet read answers again", zap.Duration("failed_for", now.Sub(f.failSince)))
	}
	f.atZero = fl.Desired == 0 && fl.InService == 0 && fl.Pending == 0
	return fl
}

func fleetErrClass(err error) string {
	if errors.Is(err, errFleetNotFound) {
		return model.ErrClassClient
	}
	if c := kube.Class(err); c != "" {
		return c
	}
	return awsclient.Classify(err)
}

// pendingState reports whether an Auto Scaling lifecycle state is a worker
// on its way in: launching (Pending, Pending:Wait, Pending:Proceed) or
// coming out of a warm pool (Warmed:*, except those on their way out).
func pendingState(s asgtypes.LifecycleState) bool {
	switch {
	case s == asgtypes.LifecycleStatePending, s == asgtypes.LifecycleStatePendingWait,
		s == asgtypes.LifecycleStatePendingProceed:
		return true
	case strings.HasPrefix(string(s), "Warmed:"):
		return !strings.HasPrefix(string(s), "Warmed:Terminat")
	}
	return false
}

// drainingState reports whether an Auto Scaling lifecycle state is a worker
// on its way out of the group: Terminating, Terminating:Wait (held by a
// termination lifecycle hook while it finishes its messages) or
// Terminating:Proceed. Warm-pool instances on their way out
// (Warmed:Terminating*) never took work and are not counted.
func drainingState(s asgtypes.LifecycleState) bool {
	switch s {
	case asgtypes.LifecycleStateTerminating, asgtypes.LifecycleStateTerminatingWait,
		asgtypes.LifecycleStateTerminatingProceed:
		return true
	}
	return false
}

// fromASG fills fl from an Auto Scaling group. Instances in the group carry
// no launch time, so PendingSince holds, per pending instance, the time the
// poller first saw it pending: the real launch is at or before it.
func (f *fleetReader) fromASG(fl *model.Fleet, now time.Time) {
	g := f.asg
	fl.Known = true
	fl.Desired = int(aws.ToInt32(g.DesiredCapacity))
	fl.Min = int(aws.ToInt32(g.MinSize))
	fl.Max = int(aws.ToInt32(g.MaxSize))
	seen := make(map[string]bool, len(f.pendingSince))
	for _, in := range g.Instances {
		switch {
		case in.LifecycleState == asgtypes.LifecycleStateInService:
			fl.InService++
		case drainingState(in.LifecycleState):
			fl.Draining++
		case pendingState(in.LifecycleState):
			fl.Pending++
			id := aws.ToString(in.InstanceId)
			since, ok := f.pendingSince[id]
			if !ok {
				since = now
				if f.pendingSince == nil {
					f.pendingSince = map[string]time.Time{}
				}
				f.pendingSince[id] = since
			}
			seen[id] = true
			fl.PendingSince = append(fl.PendingSince, since)
		}
	}
	for id := range f.pendingSince {
		if !seen[id] {
			delete(f.pendingSince, id)
		}
	}
	slices.SortFunc(fl.PendingSince, time.Time.Compare)
}

// fromECS fills fl from an ECS service: the counts from fromService, and
// PendingSince, per pending task, from when the poller first saw it pending
// (see pendingTasks), sorted.
func (f *fleetReader) fromECS(fl *model.Fleet, now time.Time) {
	fromService(fl, f.svc)
	if f.pendingTasks == nil {
		f.pendingTasks = pendingTasks{}
	}
	fl.PendingSince = f.pendingTasks.observe(f.svc.Deployments, now)
	slices.SortFunc(fl.PendingSince, time.Time.Compare)
}

// fromService fills fl's counts from an ECS service: running tasks are in
// service, pending ones launching. It leaves PendingSince, which needs the
// reads before this one, to fromECS.
//
// Draining tasks are estimated from DescribeServices alone: a task the
// scheduler is stopping (desiredStatus STOPPED) still counts in its
// deployment's runningCount while its lastStatus is RUNNING, but no longer
// in the deployment's desiredCount. So each deployment's running tasks
// above its desired count are draining; they leave InService. Tasks
// already in STOPPING or later are in no running count and not seen
// (counting them would take ListTasks and DescribeTasks per service).
func fromService(fl *model.Fleet, s *ecstypes.Service) {
	fl.Known = true
	fl.Desired = int(s.DesiredCount)
	fl.Pending = int(s.PendingCount)
	for _, d := range s.Deployments {
		fl.Draining += max(int(d.RunningCount-d.DesiredCount), 0)
	}
	fl.Draining = min(fl.Draining, max(int(s.RunningCount), 0))
	fl.InService = int(s.RunningCount) - fl.Draining
}

// pendingTasks remembers, per ECS deployment, when the poller first saw
// each of its pending tasks, oldest first. DescribeServices gives a
// deployment's pending count but no task, so tasks are told apart by order
// alone: when the count rises by k, k tasks were first seen now; when it
// falls by k, the k oldest have left pending (taken to start oldest
// first). A task that starts and another that is placed within one
// interval cancel out: the older first-seen time stays.
type pendingTasks map[string][]time.Time // by deploymentKey

// observe updates the record from this read's deployments, forgets those
// gone, and returns, unsorted, one time per pending task: the later of
// when it was first seen and its deployment's creation, since no task
// launches before its deployment (the poller's clock may be behind AWS's).
func (p pendingTasks) observe(deps []ecstypes.Deployment, now time.Time) []time.Time {
	var since []time.Time
	live := make(map[string]bool, len(deps))
	for _, d := range deps {
		key := deploymentKey(d)
		live[key] = true
		seen := p[key]
		switch n := max(int(d.PendingCount), 0); {
		case n > len(seen):
			for range n - len(seen) {
				seen = append(seen, now)
			}
		case n < len(seen):
			seen = slices.Delete(seen, 0, len(seen)-n)
		}
		p[key] = seen
		for _, t := range seen {
			if d.CreatedAt != nil && d.CreatedAt.After(t) {
				t = *d.CreatedAt
			}
			since = append(since, t)
		}
	}
	for key := range p {
		if !live[key] {
			delete(p, key)
		}
	}
	return since
}

// deploymentKey names a deployment in pendingTasks: its ID, which ECS
// always sets; else, for emulators and fakes without one, its creation
// time, so that two such deployments are still told apart.
func deploymentKey(d ecstypes.Deployment) string {
	if id := aws.ToString(d.Id); id != "" || d.CreatedAt == nil {
		return id
	}
	return "created " + d.CreatedAt.UTC().Format(time.RFC3339Nano)
}

// asgBatch reads up to asgNamesPerCall Auto Scaling groups of one region.
type asgBatch struct {
	api     autoScalingAPI
	region  string
	names   []string
	readers map[string][]*fleetReader // by group name
}

func (b *asgBatch) fetch(ctx context.Context) {
	found := make(map[string]*asgtypes.AutoScalingGroup, len(b.names))
	in := &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: b.names, MaxRecords: aws.Int32(100)}
	for {
		out, err := b.api.DescribeAutoScalingGroups(ctx, in)
		if err != nil {
			err = fmt.Errorf("describe auto scaling groups in %s: %w", b.region, err)
			for _, rs := range b.readers {
				for _, r := range rs {
					r.err = err
				}
			}
			return
		}
		for i := range out.AutoScalingGroups {
			g := &out.AutoScalingGroups[i]
			found[aws.ToString(g.AutoScalingGroupName)] = g
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	for name, rs := range b.readers {
		g, ok := found[name]
		for _, r := range rs {
			if ok {
				r.asg = g
			} else {
				r.err = fmt.Errorf("auto scaling group %q in %s: %w", name, b.region, errFleetNotFound)
			}
		}
	}
}

// ecsBatch reads up to ecsServicesPerCall services of one cluster.
type ecsBatch struct {
	api      ecsAPI
	region   string
	cluster  string
	services []string
	readers  map[string][]*fleetReader // by configured service name or ARN
}

// serviceKey is the name part of a service name or ARN.
func serviceKey(s string) string { return s[strings.LastIndex(s, "/")+1:] }

func (b *ecsBatch) fetch(ctx context.Context) {
	out, err := b.api.DescribeServices(ctx, &ecs.DescribeServicesInput{
		Cluster: aws.String(b.cluster), Services: b.services,
		Include: []ecstypes.ServiceField{ecstypes.ServiceFieldTags}, // the switch tags
	})
	if err != nil {
		err = fmt.Errorf("describe ECS services of cluster %s in %s: %w", b.cluster, b.region, err)
		for _, rs := range b.readers {
			for _, r := range rs {
				r.err = err
			}
		}
		return
	}
	found := make(map[string]*ecstypes.Service, len(out.Services))
	for i := range out.Services {
		s := &out.Services[i]
		found[aws.ToString(s.ServiceName)] = s
	}
	failed := make(map[string]string, len(out.Failures))
	for _, f := range out.Failures {
		failed[serviceKey(aws.ToString(f.Arn))] = strings.TrimSpace(aws.ToString(f.Reason) + " " + aws.ToString(f.Detail))
	}
	for svc, rs := range b.readers {
		key := serviceKey(svc)
		s, ok := found[key]
		var err error
		switch {
		case ok && aws.ToString(s.Status) == "INACTIVE":
			err = fmt.Errorf("ECS service %s/%s in %s is INACTIVE: %w", b.cluster, svc, b.region, errFleetNotFound)
		case ok:
		case failed[key] != "":
			err = fmt.Errorf("ECS service %s/%s in %s: %s: %w", b.cluster, svc, b.region, failed[key], errFleetNotFound)
		default:
			err = fmt.Errorf("ECS service %s/%s in %s: %w", b.cluster, svc, b.region, errFleetNotFound)
		}
		for _, r := range rs {
			if err != nil {
				r.err = err
			} else {
				r.svc = s
			}
		}
	}
}
