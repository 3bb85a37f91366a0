package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim"
)

// Limits of the world's flags.
const (
	maxMetricDelay  = 15 * time.Minute
	maxStartDelayCV = 5
)

// worldFlags adds the flags of the simulated world that the group's settings
// need not agree with, and of how late its CloudWatch metrics arrive.
func (f *simFlags) worldFlags(fs *flag.FlagSet) {
	fs.DurationVar(&f.assumedServiceTime, "assumed-service-time", 0,
		"the mean service time the group's settings give, which the policies and the peers' targets are derived from; the world keeps --service-time (default: --service-time; with --config, the group's)")
	fs.IntVar(&f.downstreamPool, "downstream-pool", 0,
		"connections of a downstream the workers share: a message taken while more than N are in service, itself included, takes its service time × in service ÷ N, so completions level off near N ÷ service time (0: none)")
	fs.StringVar(&f.serviceChanges, "service-time-change", "",
		"AT=FACTOR[,AT=FACTOR...]: from AT on, messages take FACTOR × their drawn service time, each factor relative to --service-time (1h=2: a deploy that doubles it; 1h=2,2h=1: for an hour)")
	fs.DurationVar(&f.metricDelay, "metric-delay", time.Minute,
		"how late after its minute ends a CloudWatch datapoint (deletions, oldest age) can be read; the checker reads CloudWatch once a minute (at most 15m)")
	fs.BoolVar(&f.metricsExact, "metrics-exact", false,
		"give the checker exact readings instead of CloudWatch's: completions over the last 60 s and the oldest age, both as of each sample (the kinder simulator, for comparisons)")
	fs.BoolVar(&f.deletedCount, "deleted-count", true,
		"give the checker CloudWatch's NumberOfMessagesDeleted; false: a group that reads no CloudWatch, whose fleet cannot be measured")
	fs.StringVar(&f.learn, "learn", "",
		"the checker's workers.learn for the model and backlog policies: act, report or off (default: the group's, else act for the model, report for backlog)")
	fs.Float64Var(&f.startDelayCV, "start-delay-cv", 0,
		"spread of the start delays: each launched worker's is lognormal around --start-delay with this coefficient of variation (0..5; 0: all equal)")
}

// checkWorld names every bad world flag and returns the service changes.
func (f *simFlags) checkWorld(bad func(flag, format string, a ...any)) []sim.ServiceChange {
	if f.set["assumed-service-time"] && f.assumedServiceTime <= 0 {
		bad("assumed-service-time", "%v: must be > 0", f.assumedServiceTime)
	}
	if f.downstreamPool < 0 || f.downstreamPool > sim.MaxSlots {
		bad("downstream-pool", "%d: must be within 0 and %d", f.downstreamPool, sim.MaxSlots)
	}
	changes, err := parseServiceChanges(f.serviceChanges)
	if err != nil {
		bad("service-time-change", "%v", err)
	}
	if f.metricDelay < 0 || f.metricDelay > maxMetricDelay {
		bad("metric-delay", "%v: must be within 0 and %v", f.metricDelay, maxMetricDelay)
	}
	if f.metricsExact && f.set["metric-delay"] {
		bad("metric-delay", "not with --metrics-exact, whose readings are never late")
	}
	switch f.learn {
	case "", policy.LearnAct, policy.LearnReport, policy.LearnOff:
	default:
		bad("learn", "%q: want act, report or off", f.learn)
	}
	if !(f.startDelayCV >= 0 && f.startDelayCV <= maxStartDelayCV) {
		bad("start-delay-cv", "%v: must be within 0 and %d", f.startDelayCV, maxStartDelayCV)
	}
	return changes
}

// parseServiceChanges reads AT=FACTOR[,AT=FACTOR...]: AT a duration (days
// too, as --duration takes them), FACTOR a number > 0; no time twice.
func parseServiceChanges(s string) ([]sim.ServiceChange, error) {
	if s == "" {
		return nil, nil
	}
	var out []sim.ServiceChange
	seen := map[time.Duration]bool{}
	for _, item := range strings.Split(s, ",") {
		at, factor, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want AT=FACTOR, such as 1h=2", item)
		}
		var d dayDuration
		if err := d.Set(strings.TrimSpace(at)); err != nil || d < 0 {
			return nil, fmt.Errorf("%q: want a time of 0 or later, such as 90m or 1d", at)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(factor), 64)
		if err != nil || !(v > 0 && v <= sim.MaxServiceFactor) {
			return nil, fmt.Errorf("%q: want a factor > 0 and at most %d", factor, sim.MaxServiceFactor)
		}
		if seen[time.Duration(d)] {
			return nil, fmt.Errorf("%v given twice", time.Duration(d))
		}
		seen[time.Duration(d)] = true
		out = append(out, sim.ServiceChange{At: time.Duration(d), Factor: v})
	}
	return out, nil
}

// applyWorld puts the world flags into the simulated world. assumed is the
// service time the settings give: the group's with --config.
func (f *simFlags) applyWorld(c *sim.Config, assumed time.Duration, changes []sim.ServiceChange) {
	c.AssumedServiceTime = assumed
	c.DownstreamPool = f.downstreamPool
	c.ServiceChanges = changes
	c.StartDelayCV = f.startDelayCV
	c.MetricDelay = f.metricDelay
	c.MetricsExact = f.metricsExact
	c.NoDeleted = !f.deletedCount
	if c.MetricsExact {
		c.MetricDelay = 0
	}
}

// assumedService is the service time the settings give: the flag's, or else
// the group's (settingsSeconds, with --config), or else 0: --service-time's.
func (f *simFlags) assumedService(settingsSeconds float64) time.Duration {
	switch {
	case f.set["assumed-service-time"]:
		return f.assumedServiceTime
	case settingsSeconds > 0:
		return time.Duration(math.Round(settingsSeconds * float64(time.Second)))
	}
	return 0
}
