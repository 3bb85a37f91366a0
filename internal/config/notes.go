package config

import (
	"net"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Notes returns advice about a valid configuration: settings that are
// allowed but probably not what was meant, each a FieldError naming its
// YAML path. They are not problems; `checker validate` prints them and
// still succeeds.
func (c Config) Notes() []*FieldError {
	var notes []*FieldError
	add := func(path, msg string) { notes = append(notes, &FieldError{Path: path, Msg: msg}) }
	if host, _, err := net.SplitHostPort(c.Listen); err == nil {
		if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
			add("listen", "listens on every interface; metrics and the status page are open to the network")
		}
	}
	keda := c.KEDA.Listen != ""
	for i, g := range c.Groups {
		path := indexPath("groups", i)
		if note := g.unscaled(keda); note != "" {
			if g.Fleet.fleetKinds() == 0 {
				add(path, note)
			} else {
				add(joinPath(path, "actions"), note)
			}
		}
		if !g.OldestAge.CloudWatch && g.Workers.Learn != model.LearnOff {
			add(joinPath(path, "workers"), "the fleet is not measured: learning the service time needs CloudWatch's deleted count (oldest_age.cloudwatch: true); sizing trusts the configured value")
		}
		if g.Fleet.Cap > g.Fleet.Max && g.Fleet.Max > 0 {
			add(joinPath(path, "fleet.cap"), "above max: the cap never binds")
		}
	}
	return notes
}

// unscaled says why nothing scales the group's workers, or "" when
// something may: the checker itself (set_desired_capacity), a
// target-tracking policy that follows its CloudWatch metrics
// (cloudwatch_metrics), or KEDA, which asks the external scaler
// (keda.listen) for the count of a Kubernetes workload, or of one the
// group does not read. Whether a policy or a ScaledObject is really there
// is outside the file: the checker cannot see it, so it does not guess.
func (g Group) unscaled(keda bool) string {
	a := g.Actions
	if a.SetDesiredCapacity || a.CloudWatchMetrics != nil {
		return ""
	}
	switch f := g.Fleet; {
	case f.fleetKinds() == 0 && keda:
		return ""
	case f.fleetKinds() == 0:
		return "no fleet, no cloudwatch_metrics and no keda.listen: the group is only observed (Prometheus, logs, `checker once`)"
	case f.Kubernetes != nil && keda:
		return ""
	case f.Kubernetes != nil:
		return "neither set_desired_capacity, cloudwatch_metrics nor keda.listen: the workload is read, never scaled"
	}
	return "neither set_desired_capacity nor cloudwatch_metrics: the fleet is read, never scaled (KEDA scales Kubernetes workloads only)"
}
