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
	for i, g := range c.Groups {
		path := indexPath("groups", i)
		hasFleet := g.Fleet.fleetKinds() > 0
		switch {
		case !hasFleet && g.Actions.CloudWatchMetrics == nil:
			add(path, "no fleet and no cloudwatch_metrics: the group is only observed (Prometheus, logs, `checker once`)")
		case hasFleet && !g.Actions.SetDesiredCapacity && g.Actions.CloudWatchMetrics == nil:
			add(joinPath(path, "actions"), "neither set_desired_capacity nor cloudwatch_metrics: the fleet is read, never scaled")
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
