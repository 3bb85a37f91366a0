package config

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// validateOwners checks what groups must not share: a fleet that two groups
// act on (set its desired count, or publish the metrics a scaling policy of
// it tracks) would be driven by two controllers at once, each undoing the
// other; a queue counted by two groups is counted twice unless the second
// says so with `shared: true`.
func (c Config) validateOwners(p *problems) {
	fleetOwner := map[string]int{}
	queueOwner := map[string]string{}
	for i, g := range c.Groups {
		path := indexPath("groups", i)
		if key, fp := g.fleetKey(c.AWS.Region); key != "" && g.actsOnFleet() {
			if j, dup := fleetOwner[key]; dup {
				p.add(joinPath(path, fp), "the same fleet as groups[%d].%s, which also acts on it (set_desired_capacity or cloudwatch_metrics); a fleet has one owner", j, fp)
			} else {
				fleetOwner[key] = i
			}
		}
		seen := map[string]bool{}
		for j, q := range g.Queues {
			key := queueKey(q, c.AWS.Region)
			if key == "" || seen[key] {
				continue // unparsable or listed twice in the group: reported by validateQueues
			}
			seen[key] = true
			qp := indexPath(joinPath(path, "queues"), j)
			first, dup := queueOwner[key]
			switch {
			case !dup:
				queueOwner[key] = qp
			case !q.Shared:
				p.add(joinPath(qp, "url"), "the same queue as %s; another group counts it already (set shared: true on this entry to count it in both on purpose)", first)
			}
		}
	}
}

// actsOnFleet reports whether the group changes its fleet or publishes the
// metrics that a scaling policy of the fleet tracks.
func (g Group) actsOnFleet() bool {
	return g.Actions.SetDesiredCapacity || g.Actions.CloudWatchMetrics != nil
}

// fleetKey identifies the group's fleet across groups (kind, region and
// name; the region defaults to aws.region), with the YAML path of its block
// under the group; "" when the group names none.
func (g Group) fleetKey(defaultRegion string) (key, path string) {
	switch f := g.Fleet; {
	case f.AutoScalingGroup != nil && f.AutoScalingGroup.Name != "":
		a := f.AutoScalingGroup
		return "asg\x00" + cmp.Or(a.Region, defaultRegion) + "\x00" + a.Name, "fleet.autoscaling_group"
	case f.ECSService != nil && f.ECSService.Service != "":
		e := f.ECSService
		// A service may be named by name or ARN; its name is the last part.
		svc := e.Service[strings.LastIndex(e.Service, "/")+1:]
		cluster := e.Cluster[strings.LastIndex(e.Cluster, "/")+1:]
		return "ecs\x00" + cmp.Or(e.Region, defaultRegion) + "\x00" + cluster + "\x00" + svc, "fleet.ecs_service"
	case f.Kubernetes != nil && kubeFleetKey(f.Kubernetes) != "":
		return kubeFleetKey(f.Kubernetes), "fleet.kubernetes"
	}
	return "", ""
}

// queueKey identifies a queue across groups: region, account and name; ""
// when its URL does not parse.
func queueKey(q Queue, defaultRegion string) string {
	_, urlRegion, err := sqsurl.Parse(q.URL)
	if err != nil {
		return ""
	}
	return cmp.Or(urlRegion, q.Region, defaultRegion) + "/" + accountAndName(q.URL)
}

// SameTargets returns the names of the groups of next that act on exactly
// what they act on under c: the same fleet (kind, region and name, the
// default region applied), the same set_desired_capacity and CloudWatch
// metrics (namespace, region, resolution), with the same dry_run and AWS
// endpoint. A decision made under c for such a group may still be carried
// out while next is swapped in: it acts on no fleet the new configuration
// has left.
func (c Config) SameTargets(next Config) []string {
	if c.DryRun != next.DryRun || c.AWS.EndpointURL != next.AWS.EndpointURL {
		return nil
	}
	old := make(map[string]Group, len(c.Groups))
	for _, g := range c.Groups {
		old[g.Name] = g
	}
	metrics := func(g Group, defaultRegion string) string {
		m := g.Actions.CloudWatchMetrics
		if m == nil {
			return ""
		}
		return fmt.Sprintf("%s\x00%s\x00%t", m.Namespace, cmp.Or(m.Region, defaultRegion), m.HighResolution)
	}
	var out []string
	for _, g := range next.Groups {
		o, ok := old[g.Name]
		if !ok {
			continue
		}
		ko, _ := o.fleetKey(c.AWS.Region)
		kn, _ := g.fleetKey(next.AWS.Region)
		if ko == kn && o.Actions.SetDesiredCapacity == g.Actions.SetDesiredCapacity &&
			metrics(o, c.AWS.Region) == metrics(g, next.AWS.Region) {
			out = append(out, g.Name)
		}
	}
	return out
}
