package simulate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/poller"
	"github.com/queuechecker/queue-checker/internal/sim"
)

// problemFunc records a problem of a flag.
type problemFunc func(flag, format string, a ...any)

// simFlagOf names the flag of each field of a run, by its path in
// sim.RunConfig; a field error is reported under its flag. "peers" is the
// peers' parameters together, whose messages name each one.
var simFlagOf = map[string]string{
	sim.FieldDuration:           "duration",
	sim.FieldInterval:           "interval",
	sim.FieldWorkerCost:         "worker-cost",
	sim.FieldRestartAt:          "restart-at",
	sim.FieldPeers:              "peers",
	sim.FieldScenario:           "scenario",
	sim.FieldServiceMean:        "service-time",
	sim.FieldServiceDist:        "service-dist",
	sim.FieldServiceCV:          "service-cv",
	sim.FieldConcurrency:        "concurrency",
	sim.FieldStartDelay:         "start-delay",
	sim.FieldLatencyTarget:      "latency-target",
	sim.FieldMin:                "min",
	sim.FieldMax:                "max",
	sim.FieldWorkers:            "workers",
	sim.FieldWarmUp:             "warm-up",
	sim.FieldAssumedServiceTime: "assumed-service-time",
	sim.FieldDownstreamPool:     "downstream-pool",
	sim.FieldServiceChanges:     "service-time-change",
	sim.FieldPoolChanges:        "downstream-pool-change",
	sim.FieldStartDelayCV:       "start-delay-cv",
	sim.FieldMetricDelay:        "metric-delay",
	sim.FieldScaleIn:            "scale-in",
	sim.FieldVisibilityTimeout:  "visibility-timeout",
}

// simFlag is the flag of a run's field; the path itself for a field
// without one.
func simFlag(field string) string {
	if name, ok := simFlagOf[field]; ok {
		return name
	}
	return field
}

// reportRun passes each of the run's problems (rc.Validate's field errors)
// to bad under its field's flag, with the other fields it names called
// what name says. A problem on or involving a field in later, whose value
// is not made yet, is left for a later check.
func reportRun(err error, bad problemFunc, later []string, name func(field string) string) {
	for _, fe := range sim.FieldErrors(err) {
		if slices.Contains(later, fe.Field) || slices.ContainsFunc(fe.Others, func(o string) bool { return slices.Contains(later, o) }) {
			continue
		}
		msg := fe.Msg
		for _, o := range fe.Others {
			msg = strings.ReplaceAll(msg, o, name(o))
		}
		bad(simFlag(fe.Field), "%s", msg)
	}
}

// RunConfig checks the options and turns them into a run and the policies
// to run: every problem of the options at once, as a *UsageError naming
// each flag; a problem of AWS or of a file as another error. New runs it.
func (o Options) RunConfig(ctx context.Context) (sim.RunConfig, []string, error) {
	var errs []error
	bad := func(flag, format string, a ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, a...)))
	}
	usage := func() (sim.RunConfig, []string, error) {
		return sim.RunConfig{}, nil, &UsageError{Err: errors.Join(errs...)}
	}

	// A group of a configuration file sets the defaults the flags override.
	g, ok := o.fromConfig(bad)
	if !ok {
		return usage()
	}
	policies, changes := o.check(bad)
	rc := o.run(g.settings)
	// The scenario is made from the values checked here; the starting
	// fleet (--workers 0) and the duration a scenario gives are made with
	// it, so what involves them is checked once they are.
	later := []string{sim.FieldScenario}
	if o.Workers == 0 {
		later = append(later, sim.FieldWorkers)
	}
	if !o.Set["duration"] {
		later = append(later, sim.FieldDuration)
	}
	asFlag := func(field string) string { return "--" + simFlag(field) }
	reportRun(rc.Validate(), bad, later, asFlag)
	if len(errs) > 0 {
		return usage()
	}

	sc, err := o.scenario(ctx, g, bad)
	if err != nil || len(errs) > 0 {
		if len(errs) > 0 {
			return usage()
		}
		return sim.RunConfig{}, nil, err
	}
	name := asFlag
	if !o.Set["duration"] && sc.Length > 0 {
		o.Duration = min(sc.Length, sim.MaxDuration)
		name = func(field string) string {
			if field == sim.FieldDuration {
				return fmt.Sprintf("the scenario's length %v", o.Duration)
			}
			return asFlag(field)
		}
	}
	rc.World.Scenario, rc.World.Workers, rc.Duration = sc, o.startingWorkers(sc), o.Duration
	rc.World.ScaleIn, rc.World.VisibilityTimeout = o.ScaleIn, o.Visibility
	settingsSeconds := 0.0
	if g.settings != nil {
		settingsSeconds = g.settings.ServiceSeconds()
	}
	o.applyWorld(&rc.World, o.assumedService(settingsSeconds), changes)
	reportRun(rc.Validate(), bad, nil, name)
	if len(errs) > 0 {
		return usage()
	}
	if err := rc.Estimate(len(policies)).Err(); err != nil {
		errs = append(errs, fmt.Errorf("refused before running: %s (lower --rate, --duration or the CSV's rates, or raise --interval)",
			strings.ReplaceAll(err.Error(), "\n", "; ")))
		return usage()
	}
	return rc, policies, nil
}

// configGroup is the group of --config a run simulates: the file, the
// group and the policy settings it maps to (nil without --config).
type configGroup struct {
	cfg      config.Config
	group    config.Group
	settings *policy.Settings
}

// fromConfig loads --config and finds --group in it, taking the run's
// defaults from the group where the command line did not set them; ok is
// false when the run cannot go on (a file that does not load, a group it
// does not have).
func (o *Options) fromConfig(bad problemFunc) (g configGroup, ok bool) {
	switch {
	case o.ConfigFile != "" && o.Group == "":
		bad("group", "needed with --config: which group to simulate")
	case o.ConfigFile == "" && o.Group != "":
		bad("config", "needed with --group")
	case o.ConfigFile != "":
		cfg, err := config.Load(o.ConfigFile)
		if err != nil {
			bad("config", "%v", err)
			return configGroup{}, false
		}
		g.cfg = cfg
		found := false
		var names []string
		for _, cg := range cfg.Groups {
			names = append(names, cg.Name)
			if cg.Name == o.Group {
				g.group, found = cg, true
			}
		}
		if !found {
			bad("group", "%q is not a group of %s (groups: %s)", o.Group, o.ConfigFile, strings.Join(names, ", "))
			return configGroup{}, false
		}
		o.applyGroup(cfg, g.group)
		if !o.Set["worker-cost"] {
			o.WorkerCost = cfg.WorkerCostPerHour(g.group)
		}
		s := o.Settings(g.group, o.Interval)
		o.overrideSettings(&s)
		g.settings = &s
	}
	return g, true
}

// check names every bad option that the run does not check itself, and
// returns the policies to run and the service changes.
func (o *Options) check(bad problemFunc) (policies []string, changes []sim.ServiceChange) {
	if o.FromCloudWatch != 0 && o.ConfigFile == "" {
		bad("from-cloudwatch", "needs --config and --group: the group's queues are read")
	}
	if o.FromCloudWatch < 0 || o.FromCloudWatch > poller.HistoryMaxSpan {
		bad("from-cloudwatch", "%v: must be within 1m and %v (CloudWatch keeps 1-minute data for 15 days)", o.FromCloudWatch, poller.HistoryMaxSpan)
	} else if o.FromCloudWatch > 0 && o.FromCloudWatch < time.Minute {
		bad("from-cloudwatch", "%v: must be within 1m and %v", o.FromCloudWatch, poller.HistoryMaxSpan)
	}
	if o.SaveTrace != "" && o.FromCloudWatch == 0 {
		bad("save-trace", "only with --from-cloudwatch")
	}

	// --rate makes the built-in scenarios, before the run has one.
	if !(o.Rate >= 0) || math.IsInf(o.Rate, 0) {
		bad("rate", "%v: must be a finite number >= 0", o.Rate)
	}
	// The run reads a zero concurrency as 1 and an empty distribution as
	// exponential; given on the command line, they are mistakes.
	if o.Concurrency == 0 {
		bad("concurrency", "%d: must be >= 1", o.Concurrency)
	}
	if o.ServiceDist == "" {
		bad("service-dist", "%q: want exponential, lognormal or constant", o.ServiceDist)
	}
	if o.Policy == "all" {
		// fixed-warm-up sizes its fleet from the warm-up: without one it
		// has nothing to size from and is left out.
		for _, p := range sim.Policies {
			if p != sim.PolicyFixedWarmUp || o.WarmUp > 0 {
				policies = append(policies, p)
			}
		}
	} else {
		for _, p := range strings.Split(o.Policy, ",") {
			p = strings.TrimSpace(p)
			switch {
			case !slices.Contains(sim.Policies, p):
				bad("policy", "%q: want %s, a comma-separated list of them, or all", p, strings.Join(sim.Policies, ", "))
			case p == sim.PolicyFixedWarmUp && o.WarmUp <= 0:
				bad("policy", "%q sizes its fleet from the warm-up: give --warm-up", p)
			case !slices.Contains(policies, p):
				policies = append(policies, p)
			}
		}
	}
	if o.Output != "table" && o.Output != "json" {
		bad("output", "%q: want table or json", o.Output)
	}
	o.checkScaleIn(bad)
	return policies, o.checkWorld(bad)
}

// run is the run the options give, before its scenario, starting fleet
// and the world's own fields are made.
func (o *Options) run(settings *policy.Settings) sim.RunConfig {
	svc := sim.Service{Dist: o.ServiceDist, Mean: o.ServiceTime}
	if o.ServiceDist == sim.DistLognormal {
		svc.CV = o.ServiceCV
	}
	return sim.RunConfig{
		World: sim.Config{
			Group:         o.Group,
			Start:         Start,
			Service:       svc,
			Concurrency:   o.Concurrency,
			StartDelay:    o.StartDelay,
			Min:           o.Min,
			Max:           o.Max,
			Workers:       o.Workers,
			LatencyTarget: o.LatencyTarget,
			Seed:          o.Seed,
			WarmUp:        o.WarmUp,
		},
		Duration:          o.Duration,
		Interval:          o.Interval,
		WorkerCostPerHour: o.WorkerCost,
		RestartAt:         o.RestartAt,
		Peers:             o.Peers,
		Settings:          settings,
		Learn:             o.Learn,
		PlanActs:          o.PlanActs,
	}
}

// scenario is the run's traffic: the group's arrivals from CloudWatch
// (saved to --save-trace when asked), or the scenario --scenario names. A
// problem of the options goes to bad; one of AWS or of a file is the error.
func (o *Options) scenario(ctx context.Context, g configGroup, bad problemFunc) (sim.Scenario, error) {
	if o.FromCloudWatch <= 0 {
		sc, err := sim.LoadScenario(o.Scenario, o.Rate, o.Duration, o.Seed)
		if err != nil {
			bad("scenario", "%v", err)
		}
		return sc, nil
	}
	if o.Set["scenario"] {
		bad("scenario", "not with --from-cloudwatch, which gives the traffic")
		return sim.Scenario{}, nil
	}
	// An AWS problem is not a usage one.
	h, err := o.Arrivals(ctx, g.cfg, g.group, o.FromCloudWatch)
	if err != nil {
		return sim.Scenario{}, fmt.Errorf("--from-cloudwatch: %w", err)
	}
	sc, err := sim.FromHistory(g.group.Name, h)
	if err != nil {
		return sim.Scenario{}, fmt.Errorf("--from-cloudwatch: %w", err)
	}
	if o.SaveTrace != "" {
		if err := sim.SaveCSV(o.SaveTrace, sc); err != nil {
			return sim.Scenario{}, fmt.Errorf("--save-trace: %w", err)
		}
	}
	return sc, nil
}

// startingWorkers is every policy's starting fleet: --workers, or else
// what the base rate needs (the built-in scenarios' --rate, a CSV file's or
// CloudWatch's mean) at the world's service time, within --min and --max.
func (o *Options) startingWorkers(sc sim.Scenario) int {
	if o.Workers != 0 {
		return o.Workers
	}
	base := o.Rate // the built-in scenarios' base rate; a CSV file's mean
	if !slices.Contains(sim.BuiltinScenarios, o.Scenario) || o.FromCloudWatch > 0 {
		base = sc.MeanRate(o.Duration)
	}
	// The world's service time: every policy starts from the fleet the
	// world needs, whatever the settings assume.
	svc, k := o.ServiceTime.Seconds(), max(o.Concurrency, 1)
	workers := capacity.SteadyFleet(capacity.Steady{Rate: base, PerWorker: float64(k) / svc, PerServer: 1 / svc, Concurrency: k,
		Utilization: model.DefaultUtilization, Latency: o.LatencyTarget.Seconds(), Quantile: model.DefaultLatencyQuantile}).Workers
	return model.Limits{Min: o.Min, Max: o.Max}.For(model.Fleet{}).Clamp(workers)
}

// applyGroup takes the simulated queue's settings from a configuration's
// group where the command line did not give them.
func (o *Options) applyGroup(cfg config.Config, g config.Group) {
	if !o.Set["interval"] {
		o.Interval = cfg.Interval
	}
	if !o.Set["concurrency"] && g.Workers.Concurrency > 0 {
		o.Concurrency = g.Workers.Concurrency
	}
	if !o.Set["service-time"] {
		switch {
		case g.Workers.ServiceTime > 0:
			o.ServiceTime = g.Workers.ServiceTime
		case g.Workers.Throughput > 0:
			o.ServiceTime = time.Duration(float64(max(g.Workers.Concurrency, 1)) / g.Workers.Throughput * float64(time.Second))
		}
	}
	if !o.Set["latency-target"] && g.Target.Latency > 0 {
		o.LatencyTarget = g.Target.Latency
	}
	if !o.Set["start-delay"] {
		o.StartDelay = g.Fleet.StartDelay
	}
	if !o.Set["min"] {
		o.Min = g.Fleet.Min
	}
	if !o.Set["max"] {
		o.Max = g.Fleet.Max
	}
}

// overrideSettings puts the values given on the command line into the
// group's policy settings. --service-time is the world's, not the
// settings': --assumed-service-time overrides theirs.
func (o *Options) overrideSettings(s *policy.Settings) {
	if o.Set["assumed-service-time"] {
		s.ServiceTime, s.Throughput = o.AssumedServiceTime, 0
	}
	if o.Set["concurrency"] {
		s.Concurrency = o.Concurrency
	}
	if o.Set["latency-target"] {
		s.Latency = o.LatencyTarget
	}
	if o.Set["start-delay"] {
		s.StartDelay = o.StartDelay
	}
	if o.Set["min"] {
		s.Min = o.Min
	}
	if o.Set["max"] {
		s.Max = o.Max
	}
}

// Limits of the world's flags.
const (
	maxMetricDelay  = 15 * time.Minute
	maxStartDelayCV = 5
)

// checkWorld names every bad world flag and returns the service changes.
func (o *Options) checkWorld(bad problemFunc) []sim.ServiceChange {
	if o.Set["assumed-service-time"] && o.AssumedServiceTime <= 0 {
		bad("assumed-service-time", "%v: must be > 0", o.AssumedServiceTime)
	}
	if o.DownstreamPool < 0 || o.DownstreamPool > sim.MaxSlots {
		bad("downstream-pool", "%d: must be within 0 and %d", o.DownstreamPool, sim.MaxSlots)
	}
	changes, err := parseServiceChanges(o.ServiceChanges)
	if err != nil {
		bad("service-time-change", "%v", err)
	}
	if o.poolChanges, err = parsePoolChanges(o.PoolChanges); err != nil {
		bad("downstream-pool-change", "%v", err)
	}
	if o.MetricDelay < 0 || o.MetricDelay > maxMetricDelay {
		bad("metric-delay", "%v: must be within 0 and %v", o.MetricDelay, maxMetricDelay)
	}
	if o.MetricsExact && o.Set["metric-delay"] {
		bad("metric-delay", "not with --metrics-exact, whose readings are never late")
	}
	switch o.Learn {
	case "", policy.LearnAct, policy.LearnReport, policy.LearnOff:
	default:
		bad("learn", "%q: want act, report or off", o.Learn)
	}
	if !(o.StartDelayCV >= 0 && o.StartDelayCV <= maxStartDelayCV) {
		bad("start-delay-cv", "%v: must be within 0 and %d", o.StartDelayCV, maxStartDelayCV)
	}
	return changes
}

// parseServiceChanges reads AT=FACTOR[,AT=FACTOR...]: AT a duration (days
// too, as --duration takes them), FACTOR a number > 0; no time twice.
func parseServiceChanges(s string) ([]sim.ServiceChange, error) {
	return parseTimed(s, "AT=FACTOR, such as 1h=2", func(at time.Duration, v string) (sim.ServiceChange, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || !(f > 0 && f <= sim.MaxServiceFactor) {
			return sim.ServiceChange{}, fmt.Errorf("%q: want a factor > 0 and at most %d", v, sim.MaxServiceFactor)
		}
		return sim.ServiceChange{At: at, Factor: f}, nil
	})
}

// parsePoolChanges reads AT=N[,AT=N...]: AT a duration (days too), N the
// pool's connections from then on, 0 for none; no time twice.
func parsePoolChanges(s string) ([]sim.PoolChange, error) {
	return parseTimed(s, "AT=CONNECTIONS, such as 1h=240", func(at time.Duration, v string) (sim.PoolChange, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > sim.MaxSlots {
			return sim.PoolChange{}, fmt.Errorf("%q: want connections within 0 and %d", v, sim.MaxSlots)
		}
		return sim.PoolChange{At: at, Connections: n}, nil
	})
}

// parseTimed reads a comma-separated list of AT=VALUE items (want says
// what one looks like, for the error): AT a duration of 0 or later (days
// too, as --duration takes them), no time twice, each VALUE read by item.
func parseTimed[T any](s, want string, item func(at time.Duration, v string) (T, error)) ([]T, error) {
	if s == "" {
		return nil, nil
	}
	var out []T
	seen := map[time.Duration]bool{}
	for _, it := range strings.Split(s, ",") {
		at, v, ok := strings.Cut(strings.TrimSpace(it), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want %s", it, want)
		}
		d, err := ParseDays(strings.TrimSpace(at))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%q: want a time of 0 or later, such as 90m or 1d", at)
		}
		x, err := item(time.Duration(d), strings.TrimSpace(v))
		if err != nil {
			return nil, err
		}
		if seen[time.Duration(d)] {
			return nil, fmt.Errorf("%v given twice", time.Duration(d))
		}
		seen[time.Duration(d)] = true
		out = append(out, x)
	}
	return out, nil
}

// applyWorld puts the world flags into the simulated world. assumed is the
// service time the settings give: the group's with --config.
func (o *Options) applyWorld(c *sim.Config, assumed time.Duration, changes []sim.ServiceChange) {
	c.AssumedServiceTime = assumed
	c.DownstreamPool = o.DownstreamPool
	c.PoolChanges = o.poolChanges
	c.ServiceChanges = changes
	c.StartDelayCV = o.StartDelayCV
	c.MetricDelay = o.MetricDelay
	c.MetricsExact = o.MetricsExact
	c.NoDeleted = !o.DeletedCount
	if c.MetricsExact {
		c.MetricDelay = 0
	}
}

// assumedService is the service time the settings give: the flag's, or else
// the group's (settingsSeconds, with --config), or else 0: --service-time's.
func (o *Options) assumedService(settingsSeconds float64) time.Duration {
	switch {
	case o.Set["assumed-service-time"]:
		return o.AssumedServiceTime
	case settingsSeconds > 0:
		return time.Duration(math.Round(settingsSeconds * float64(time.Second)))
	}
	return 0
}

func (o *Options) checkScaleIn(bad problemFunc) {
	if !slices.Contains(sim.ScaleInModes, o.ScaleIn) {
		bad("scale-in", "%q: want %s", o.ScaleIn, strings.Join(sim.ScaleInModes, " or "))
	}
	if o.Visibility <= 0 || o.Visibility > 12*time.Hour {
		bad("visibility-timeout", "%v: must be > 0 and at most 12h (SQS's limit)", o.Visibility)
	}
}
