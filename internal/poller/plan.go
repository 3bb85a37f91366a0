package poller

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/kube"
	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// pollPlan is what a configuration asks the poller to read, worked out from
// the configuration alone, before any client, series or log exists: the
// region each queue is asked in, the fleet each group reads, the queue
// names each region reads from CloudWatch, and which fleets one call reads
// together. newPoller then makes the readers the plan names.
type pollPlan struct {
	groups  []groupPlan
	regions []string // sorted
	// cwNames are, by region, the distinct names of the queues whose group
	// reads CloudWatch, in configuration order.
	cwNames map[string][]string
	// fleets are the distinct fleets, Kubernetes workloads first (each read
	// on its own), then those of asgReads and ecsReads, in their order.
	fleets   []fleetPlan
	asgReads []asgRead
	ecsReads []ecsRead
}

// groupPlan is one configured group's part of the plan.
type groupPlan struct {
	config config.Group
	queues []queuePlan
	fleet  int // index in pollPlan.fleets; -1 when the group names no fleet
}

// queuePlan is one queue: its name, URL and the region it is asked in.
type queuePlan struct {
	name, url, region string
}

// fleetPlan names one fleet to read.
type fleetPlan struct {
	kind    string
	name    string // Auto Scaling group, ECS service (name or ARN), or the workload as kube.Ref writes it
	cluster string // ECS only
	region  string // not for Kubernetes
	kubeRef kube.Ref
}

// key tells fleets apart: two groups naming the same fleet share its reader.
func (f fleetPlan) key() string {
	if f.kind == KindKubernetes {
		return f.kind + "\x00" + f.kubeRef.Namespace + "\x00" + f.kubeRef.APIVersion + "\x00" + f.kubeRef.Kind + "\x00" + f.kubeRef.Name
	}
	return f.kind + "\x00" + f.region + "\x00" + f.cluster + "\x00" + f.name
}

// asgRead is one DescribeAutoScalingGroups: up to asgNamesPerCall groups of
// a region, by name.
type asgRead struct {
	region string
	names  []string
}

// ecsRead is one DescribeServices: up to ecsServicesPerCall services of a
// cluster.
type ecsRead struct {
	region, cluster string
	services        []string
}

// planPolling plans the reads of a validated and defaulted configuration;
// defaultRegion is the region of a fleet that sets none. It fails when a
// queue's region can be learned neither from its region field nor from its
// URL, or a fleet has no region.
func planPolling(cfg config.Config, defaultRegion string) (pollPlan, error) {
	plan := pollPlan{cwNames: map[string][]string{}}
	regions := map[string]bool{}
	cwSeen := map[string]bool{}
	var fleets []fleetPlan
	for gi, gc := range cfg.Groups {
		g := groupPlan{config: gc, fleet: -1}
		for qi, qc := range gc.Queues {
			q, err := planQueue(qc)
			if err != nil {
				return pollPlan{}, fmt.Errorf("groups[%d].queues[%d]: %w", gi, qi, err)
			}
			g.queues = append(g.queues, q)
			regions[q.region] = true
			if gc.OldestAge.CloudWatch && !cwSeen[q.region+"\x00"+q.name] {
				cwSeen[q.region+"\x00"+q.name] = true
				plan.cwNames[q.region] = append(plan.cwNames[q.region], q.name)
			}
		}
		f, ok, err := planFleet(gc.Fleet, defaultRegion)
		if err != nil {
			return pollPlan{}, fmt.Errorf("groups[%d].fleet.%w", gi, err)
		}
		if ok {
			i := slices.IndexFunc(fleets, func(o fleetPlan) bool { return o.key() == f.key() })
			if i < 0 {
				i = len(fleets)
				fleets = append(fleets, f)
			}
			g.fleet = i
		}
		plan.groups = append(plan.groups, g)
	}
	plan.regions = sortedKeys(regions)
	plan.fleets, plan.asgReads, plan.ecsReads = planFleetReads(fleets)
	for gi := range plan.groups {
		if i := plan.groups[gi].fleet; i >= 0 {
			plan.groups[gi].fleet = slices.IndexFunc(plan.fleets, func(o fleetPlan) bool { return o.key() == fleets[i].key() })
		}
	}
	return plan, nil
}

// planQueue reads a queue's name from its URL, and its region from the
// configuration or else the URL.
func planQueue(qc config.Queue) (queuePlan, error) {
	name, urlRegion, err := sqsurl.Parse(qc.URL)
	if err != nil {
		return queuePlan{}, err
	}
	region := firstNonEmpty(qc.Region, urlRegion)
	if region == "" {
		return queuePlan{}, fmt.Errorf("the URL %q names no region and no region is set", qc.URL)
	}
	return queuePlan{name: name, url: qc.URL, region: region}, nil
}

// planFleet is the fleet a group reads; ok is false when it names none. An
// error names the fleet's key, to follow "groups[N].fleet.".
func planFleet(f config.Fleet, defaultRegion string) (fp fleetPlan, ok bool, err error) {
	switch {
	case f.AutoScalingGroup != nil:
		region := firstNonEmpty(f.AutoScalingGroup.Region, defaultRegion)
		if region == "" {
			return fleetPlan{}, false, errors.New("autoscaling_group: no region set and no default region")
		}
		return fleetPlan{kind: KindAutoScaling, name: f.AutoScalingGroup.Name, region: region}, true, nil
	case f.ECSService != nil:
		region := firstNonEmpty(f.ECSService.Region, defaultRegion)
		if region == "" {
			return fleetPlan{}, false, errors.New("ecs_service: no region set and no default region")
		}
		return fleetPlan{kind: KindECS, name: f.ECSService.Service, cluster: f.ECSService.Cluster, region: region}, true, nil
	case f.Kubernetes != nil:
		ref := kube.RefOf(*f.Kubernetes)
		return fleetPlan{kind: KindKubernetes, name: ref.String(), kubeRef: ref}, true, nil
	}
	return fleetPlan{}, false, nil
}

// planFleetReads orders the distinct fleets (Kubernetes workloads in the
// order given, then Auto Scaling groups by region and name, then ECS
// services by region, cluster and name) and groups the Auto Scaling
// groups and the ECS services into the calls that read them.
func planFleetReads(fleets []fleetPlan) ([]fleetPlan, []asgRead, []ecsRead) {
	var ordered []fleetPlan
	asg := map[string][]string{}    // names, by region
	ecs := map[[2]string][]string{} // services, by region and cluster
	for _, f := range fleets {
		switch f.kind {
		case KindKubernetes:
			ordered = append(ordered, f)
		case KindAutoScaling:
			asg[f.region] = append(asg[f.region], f.name)
		case KindECS:
			k := [2]string{f.region, f.cluster}
			ecs[k] = append(ecs[k], f.name)
		}
	}
	var asgReads []asgRead
	for _, region := range sortedKeys(asg) {
		names := slices.Sorted(slices.Values(asg[region]))
		for chunk := range slices.Chunk(names, asgNamesPerCall) {
			asgReads = append(asgReads, asgRead{region: region, names: chunk})
			for _, n := range chunk {
				ordered = append(ordered, fleetPlan{kind: KindAutoScaling, name: n, region: region})
			}
		}
	}
	keys := make([][2]string, 0, len(ecs))
	for k := range ecs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	var ecsReads []ecsRead
	for _, k := range keys {
		services := slices.Sorted(slices.Values(ecs[k]))
		for chunk := range slices.Chunk(services, ecsServicesPerCall) {
			ecsReads = append(ecsReads, ecsRead{region: k[0], cluster: k[1], services: chunk})
			for _, s := range chunk {
				ordered = append(ordered, fleetPlan{kind: KindECS, name: s, cluster: k[1], region: k[0]})
			}
		}
	}
	return ordered, asgReads, ecsReads
}
