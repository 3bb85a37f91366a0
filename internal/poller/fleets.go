package poller

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
	// ecsTasksPerCall is ListTasks' page size and DescribeTasks' limit of
	// tasks per call.
	ecsTasksPerCall = 100
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
	asg      *asgtypes.AutoScalingGroup
	svc      *ecstypes.Service
	stopping stoppingTasks // ECS: the service's tasks being stopped
	err      error

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

func (f *fleetReader) reset() {
	f.asg, f.svc, f.stopping, f.err, f.workload = nil, nil, stoppingTasks{}, nil, nil
}

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
	fromService(fl, f.svc, f.stopping)
	if f.pendingTasks == nil {
		f.pendingTasks = pendingTasks{}
	}
	fl.PendingSince = f.pendingTasks.observe(f.svc.Deployments, now)
	slices.SortFunc(fl.PendingSince, time.Time.Compare)
}

// stoppingTasks counts an ECS service's tasks that the service is stopping
// (desiredStatus STOPPED) and that took work: those still RUNNING, and
// those DEACTIVATING or STOPPING, which have left every running count
// but may still be finishing their messages.
type stoppingTasks struct {
	running  int
	stopping int
}

// fromService fills fl's counts from an ECS service and the tasks it is
// stopping: running tasks are in service, pending ones launching, and the
// tasks being stopped draining. It leaves PendingSince, which needs the
// reads before this one, to fromECS.
//
// A task the scheduler is stopping still counts in the service's
// runningCount while its lastStatus is RUNNING; it has left its
// deployment's desiredCount, so each deployment's running tasks above its
// desired count are draining too, even before ListTasks lists them. The
// larger of the two estimates leaves InService. Tasks already DEACTIVATING
// or STOPPING are in no running count: they are added to Draining only.
func fromService(fl *model.Fleet, s *ecstypes.Service, t stoppingTasks) {
	fl.Known = true
	fl.Desired = int(s.DesiredCount)
	fl.Pending = int(s.PendingCount)
	leaving := max(t.running, 0)
	surplus := 0
	for _, d := range s.Deployments {
		surplus += max(int(d.RunningCount-d.DesiredCount), 0)
	}
	leaving = min(max(leaving, surplus), max(int(s.RunningCount), 0))
	fl.InService = int(s.RunningCount) - leaving
	fl.Draining = leaving + max(t.stopping, 0)
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

// ecsBatch reads up to ecsServicesPerCall services of one cluster, and
// the tasks they are stopping.
type ecsBatch struct {
	api      ecsAPI
	region   string
	cluster  string
	services []string
	readers  map[string][]*fleetReader // by configured service name or ARN

	// stopped holds the tasks last seen STOPPED (or no longer described):
	// ListTasks keeps listing them for an hour or so, and they are not
	// described again. Only fetch uses it.
	stopped map[string]bool
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
	live := make(map[string]bool, len(b.readers)) // by service name
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
		if err == nil {
			live[key] = true
		}
	}
	b.fetchStopping(ctx, live)
}

// fetchStopping counts, per live service (by name), the tasks the service
// is stopping that may still hold messages: ListTasks with desiredStatus
// STOPPED per service, then DescribeTasks, at most ecsTasksPerCall tasks a
// call, for the tasks not already known to be STOPPED. A service whose
// tasks cannot be read fails its fleet read: a stopping task counted as
// capacity would overstate the fleet.
func (b *ecsBatch) fetchStopping(ctx context.Context, live map[string]bool) {
	if len(live) == 0 {
		return
	}
	failed := map[string]error{} // by service name
	toDescribe := b.listStopping(ctx, live, failed)
	counts := b.describeStopping(ctx, toDescribe, live, failed)
	for svc, rs := range b.readers {
		key := serviceKey(svc)
		if !live[key] {
			continue
		}
		for _, r := range rs {
			if err := failed[key]; err != nil {
				r.err, r.svc = err, nil
			} else {
				r.stopping = counts[key]
			}
		}
	}
}

// listStopping lists the tasks each live service is stopping and returns
// those not already known to be STOPPED; a service whose list failed is
// in failed. The stopped tasks no longer listed are forgotten.
func (b *ecsBatch) listStopping(ctx context.Context, live map[string]bool, failed map[string]error) []string {
	listed := map[string]bool{} // task ARNs, over every list
	var toDescribe []string
	for _, svc := range slices.Sorted(maps.Keys(live)) {
		in := &ecs.ListTasksInput{
			Cluster: aws.String(b.cluster), ServiceName: aws.String(svc),
			DesiredStatus: ecstypes.DesiredStatusStopped, MaxResults: aws.Int32(ecsTasksPerCall),
		}
		for {
			out, err := b.api.ListTasks(ctx, in)
			if err != nil {
				failed[svc] = fmt.Errorf("list the stopping tasks of ECS service %s/%s in %s: %w", b.cluster, svc, b.region, err)
				break
			}
			for _, arn := range out.TaskArns {
				if listed[arn] {
					continue
				}
				listed[arn] = true
				if !b.stopped[arn] {
					toDescribe = append(toDescribe, arn)
				}
			}
			if out.NextToken == nil {
				break
			}
			in.NextToken = out.NextToken
		}
	}
	for arn := range b.stopped {
		if !listed[arn] {
			delete(b.stopped, arn)
		}
	}
	if b.stopped == nil {
		b.stopped = map[string]bool{}
	}
	return toDescribe
}

// describeStopping describes the tasks, ecsTasksPerCall a call, and counts
// by live service those running and those stopping that may still hold
// messages; a task found STOPPED, or no longer described, is remembered as
// stopped. A call that fails leaves every live service unknown (in failed):
// which service a task is of is only known once it is described.
func (b *ecsBatch) describeStopping(ctx context.Context, tasks []string, live map[string]bool, failed map[string]error) map[string]stoppingTasks {
	counts := map[string]stoppingTasks{} // by service name
	for chunk := range slices.Chunk(tasks, ecsTasksPerCall) {
		out, err := b.api.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String(b.cluster), Tasks: chunk})
		if err != nil {
			err = fmt.Errorf("describe the stopping tasks of ECS cluster %s in %s: %w", b.cluster, b.region, err)
			for svc := range live {
				if failed[svc] == nil {
					failed[svc] = err
				}
			}
			continue
		}
		described := make(map[string]bool, len(out.Tasks))
		for _, t := range out.Tasks {
			arn := aws.ToString(t.TaskArn)
			described[arn] = true
			status := aws.ToString(t.LastStatus)
			if status == "STOPPED" || status == "DELETED" {
				b.stopped[arn] = true
				continue
			}
			// A service's tasks are in the group "service:<name>"; a task
			// of no service in the batch is not counted.
			svc, ok := strings.CutPrefix(aws.ToString(t.Group), "service:")
			if !ok || !live[svc] {
				continue
			}
			c := counts[svc]
			switch status {
			case "RUNNING":
				c.running++
			case "DEACTIVATING", "STOPPING":
				if t.StartedAt != nil { // a task stopped before it started took no work
					c.stopping++
				}
			}
			counts[svc] = c
		}
		// A task ECS no longer describes (a failure such as MISSING) is gone.
		for _, arn := range chunk {
			if !described[arn] {
				b.stopped[arn] = true
			}
		}
	}
	return counts
}
