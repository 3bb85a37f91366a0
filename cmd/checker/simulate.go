package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/poller"
	"github.com/queuechecker/queue-checker/internal/sim"
	"github.com/queuechecker/queue-checker/internal/sim/chart"
	"github.com/queuechecker/queue-checker/internal/sim/peers"
	"github.com/queuechecker/queue-checker/internal/sim/report"
)

// simStart is the simulated clock's time zero; only offsets from it show.
var simStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// progressMessages is the run size, in simulated messages over all policies,
// above which a terminal gets a progress bar (a few seconds of work).
const progressMessages = 5_000_000

// simFlags are the flags of `checker simulate`.
type simFlags struct {
	scenario      string
	rate          float64
	duration      time.Duration
	serviceTime   time.Duration
	serviceDist   string
	serviceCV     float64
	concurrency   int
	startDelay    time.Duration
	interval      time.Duration
	latencyTarget time.Duration
	min, max      int
	workers       int
	policy        string
	seed          uint64
	output        string
	workerCost    float64
	chart         string
	scaleIn       string        // simulate_scalein.go
	visibility    time.Duration // simulate_scalein.go
	warmUp        time.Duration
	restartAt     time.Duration

	assumedServiceTime time.Duration // simulate_world.go
	downstreamPool     int
	serviceChanges     string
	metricDelay        time.Duration
	metricsExact       bool
	startDelayCV       float64
	deletedCount       bool
	learn              string

	configFile     string
	group          string
	fromCloudWatch time.Duration
	saveTrace      string

	peers peers.Params

	set map[string]bool // flags given on the command line
}

// cmdSimulate replays a traffic scenario against the checker's policies and
// its peers, each on its own simulated queue and fleet with the same
// arrivals, and prints their scores.
func cmdSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("simulate", stderr)
	f, err := parseSimFlags(fs, args)
	if err != nil {
		return err
	}
	rc, policies, err := f.runConfig(ctx)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) && ee.code == 2 {
			fs.Usage()
		}
		return err
	}
	chartFormat := ""
	if f.chart != "" {
		if chartFormat, err = chart.Format(f.chart); err != nil {
			return usageErr("--chart: %v", err)
		}
	}

	if bar := progressBar(stderr, rc, policies); bar != nil {
		rc.Progress = func(d time.Duration) { _ = bar.Add64(int64(d / time.Second)) }
		defer func() { _ = bar.Finish() }()
	}
	results, err := sim.Run(ctx, rc, policies)
	if err != nil {
		return err
	}
	if chartFormat != "" {
		if err := chart.WriteFile(f.chart, chartFormat, rc, results); err != nil {
			return err
		}
	}
	if f.output == "json" {
		return report.JSON(stdout, results)
	}
	return report.Table(stdout, rc, results)
}

// parseSimFlags defines the flags of `checker simulate` on fs and parses
// args, noting which flags were given.
func parseSimFlags(fs *flag.FlagSet, args []string) (simFlags, error) {
	var f simFlags
	fs.StringVar(&f.scenario, "scenario", sim.ScenarioSteady,
		"traffic: steady, step (×3 after a third), spike (×10 for 5 minutes at a third), diurnal (one sinusoid, 0.2× to 1.8×), ramp (0.1× climbing evenly to 2× over a sixth of the run, held, then back), bursty (2 minutes at ×3 every 10, ×0.5 between), "+
			"cron (90 s at ×15 every 20 minutes), days (3 days: daily sinusoid 0.4× to 1.6×, nightly batch +8×, morning surge +3×, noise; runs 72h unless --duration), "+
			"weeks (5 weeks from a Wednesday: days' weekdays, weekends at 0.4×, a Monday surge +5× 09:00-10:00, a Monday holiday with no traffic in the fourth week; runs 35d unless --duration), "+
			"irregular (seeded bursts of 20-90 s at 1.5× to 5.7× on average, steps up to 25×, 1 to 5 quiet minutes at 0.2× between), "+
			"or a CSV file with the header t_seconds,arrivals_per_second (runs to its end unless --duration)")
	fs.Float64Var(&f.rate, "rate", 50, "base arrival rate of the built-in scenarios, msg/s")
	f.duration = 2 * time.Hour
	fs.Var((*dayDuration)(&f.duration), "duration", "simulated time (default: the scenario's own length, else 2h)")
	fs.DurationVar(&f.serviceTime, "service-time", 200*time.Millisecond, "mean time one message takes from pick-up to delete, in the world (with --config: the group's); the settings assume --assumed-service-time")
	fs.StringVar(&f.serviceDist, "service-dist", sim.DistExponential, "service-time distribution: exponential, lognormal or constant")
	fs.Float64Var(&f.serviceCV, "service-cv", 1, "coefficient of variation of the lognormal service time (at most 100)")
	fs.IntVar(&f.concurrency, "concurrency", 1, "messages one worker handles at once")
	fs.DurationVar(&f.startDelay, "start-delay", time.Minute, "launch until a new worker takes its first message")
	fs.DurationVar(&f.interval, "interval", 5*time.Second, "sampling and decision interval")
	fs.DurationVar(&f.latencyTarget, "latency-target", 10*time.Second, "the promise: how long a message may wait in the queue")
	fs.IntVar(&f.min, "min", 1, "fewest workers")
	fs.IntVar(&f.max, "max", 200, "most workers (at most 1000000)")
	fs.IntVar(&f.workers, "workers", 0, "the fixed fleet and every policy's starting size; 0: what the base rate (a CSV file's mean rate) needs at 80 % utilisation and by the Erlang C wait floor")
	fs.StringVar(&f.policy, "policy", "all", "policies to run, comma-separated: "+strings.Join(sim.Policies, ", ")+", or all (fixed-warm-up only with --warm-up). "+
		"keda: visible + in-flight ÷ queueLength under the HPA (tolerance 0.1, scale-up at most +100 % or +4 pods per 15 s); "+
		"target-tracking: SQS visible ÷ in-service on 1-minute datapoints, out after 3 above the target, in after 15 below; "+
		"step: +1 at 1,000 visible, +2 at 1,500, -1 below 100; fixed-best: the fewest fixed workers that start 99 % of messages within the promise, found in hindsight; "+
		"fixed-same-cost: the most fixed workers that cost no more than the model over the scored window, found in hindsight from its run; "+
		"fixed-same-share: the fewest fixed workers that keep at least the model's share of messages within the promise, found in hindsight; "+
		"fixed-warm-up (with --warm-up): the fewest fixed workers that start 99 % of the warm-up's messages within the promise, sized from the warm-up alone and held for the whole run; "+
		"oracle: a clairvoyant plan that may let a burst wait up to the promise and pays every start delay; oracle-instant: the same with instant workers")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives the same run (and the days and weeks scenarios' noise)")
	fs.StringVar(&f.output, "output", "table", "output format: table or json")
	fs.Float64Var(&f.workerCost, "worker-cost", 0, "dollars one worker costs an hour: every policy's bill, and its saving against the oracle's; 0: no price")
	fs.StringVar(&f.chart, "chart", "", "also draw backlog, oldest age and workers over time to this .svg or .png file")
	f.scaleInFlags(fs)
	f.worldFlags(fs)
	fs.Var((*dayDuration)(&f.warmUp), "warm-up", "leave the first D out of the scores (a learning policy is not scored on its first day)")
	fs.Var((*dayDuration)(&f.restartAt), "restart-at", "restart the checker's policies at this time: a fresh process that warm-starts from the CloudWatch history the world has published so far, as the daemon does; 0: never")
	fs.StringVar(&f.configFile, "config", "", "run the model and backlog policies with a group's settings from this configuration file, as the daemon loads them (needs --group); flags given override single values, but --service-time sets only the world: --assumed-service-time overrides the settings' service time")
	fs.StringVar(&f.group, "group", "", "the group of --config to simulate")
	fs.Var((*dayDuration)(&f.fromCloudWatch), "from-cloudwatch", "replay the group's per-minute NumberOfMessagesSent, summed over its queues and regions, for the last D (at most 15 days); needs --config and --group and AWS credentials")
	fs.StringVar(&f.saveTrace, "save-trace", "", "with --from-cloudwatch: also write the trace to this CSV file, for --scenario FILE.csv")

	def := peers.Defaults()
	fs.Float64Var(&f.peers.KEDAQueueLength, "keda-queue-length", 0, "KEDA aws-sqs-queue queueLength, messages per replica; 0: the promise ÷ the settings' service time (--assumed-service-time) × concurrency, as KEDA's docs tell users to set it")
	fs.DurationVar(&f.peers.KEDAPolling, "keda-polling", def.KEDAPolling, "KEDA pollingInterval: how often the queue is read; 0: at every HPA sync")
	fs.DurationVar(&f.peers.HPASync, "hpa-sync", def.HPASync, "HPA sync period (--horizontal-pod-autoscaler-sync-period)")
	fs.DurationVar(&f.peers.HPADownWindow, "hpa-down-window", def.HPADownWindow, "HPA scale-down stabilisation window")
	fs.DurationVar(&f.peers.TTMetricLag, "tt-metric-lag", def.TTMetricLag, "target tracking: how late a minute's SQS datapoint reaches CloudWatch after the minute ends")
	fs.Float64Var(&f.peers.TTInBelow, "tt-scale-in-below", def.TTInBelow, "target tracking: scale in only while the metric is under this share of the target (0..1)")
	fs.Float64Var(&f.peers.TTInStep, "tt-scale-in-step", def.TTInStep, "target tracking: the most one scale-in removes, percent of the fleet (at least one worker)")
	fs.DurationVar(&f.peers.TTInCooldown, "tt-scale-in-cooldown", def.TTInCooldown, "target tracking: the scale-in cooldown")
	fs.DurationVar(&f.peers.StepPeriod, "step-period", def.StepPeriod, "step alarms: the period of their datapoints")
	fs.DurationVar(&f.peers.StepCooldown, "step-cooldown", def.StepCooldown, "step alarms: the cooldown after each scaling activity")
	f.peers.TTOutPoints, f.peers.TTInPoints = def.TTOutPoints, def.TTInPoints
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return f, nil
}

// dayDuration is a duration flag that also takes days: "2d", "1d12h".
type dayDuration time.Duration

func (d *dayDuration) String() string { return time.Duration(*d).String() }

func (d *dayDuration) Set(s string) error {
	days := 0.0
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		v, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || v < 0 || v > 366 {
			return fmt.Errorf("%q: want a duration such as 90s, 2h or 2d (at most 366d)", s)
		}
		days, rest = v, s[i+1:]
	}
	var extra time.Duration
	if rest != "" {
		v, err := time.ParseDuration(rest)
		if err != nil {
			return fmt.Errorf("%q: want a duration such as 90s, 2h or 2d", s)
		}
		extra = v
	}
	*d = dayDuration(time.Duration(days*24*float64(time.Hour)) + extra)
	return nil
}

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
func reportRun(err error, bad func(flag, format string, a ...any), later []string, name func(field string) string) {
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

// runConfig checks the flags and turns them into a run; every problem is a
// usage error naming its flag.
func (f simFlags) runConfig(ctx context.Context) (sim.RunConfig, []string, error) {
	var errs []error
	bad := func(flag, format string, a ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, a...)))
	}
	usage := func() (sim.RunConfig, []string, error) {
		return sim.RunConfig{}, nil, &exitError{code: 2, err: errors.Join(errs...)}
	}

	// A group of a configuration file sets the defaults the flags override.
	var settings *policy.Settings
	var grp config.Group
	var cfg config.Config
	switch {
	case f.configFile != "" && f.group == "":
		bad("group", "needed with --config: which group to simulate")
	case f.configFile == "" && f.group != "":
		bad("config", "needed with --group")
	case f.configFile != "":
		var err error
		if cfg, err = config.Load(f.configFile); err != nil {
			bad("config", "%v", err)
			return usage()
		}
		found := false
		var names []string
		for _, g := range cfg.Groups {
			names = append(names, g.Name)
			if g.Name == f.group {
				grp, found = g, true
			}
		}
		if !found {
			bad("group", "%q is not a group of %s (groups: %s)", f.group, f.configFile, strings.Join(names, ", "))
			return usage()
		}
		f.applyGroup(cfg, grp)
		if !f.set["worker-cost"] {
			f.workerCost = cfg.WorkerCostPerHour(grp)
		}
		s := policySettings(grp, f.interval)
		f.overrideSettings(&s)
		settings = &s
	}
	if f.fromCloudWatch != 0 && f.configFile == "" {
		bad("from-cloudwatch", "needs --config and --group: the group's queues are read")
	}
	if f.fromCloudWatch < 0 || f.fromCloudWatch > poller.HistoryMaxSpan {
		bad("from-cloudwatch", "%v: must be within 1m and %v (CloudWatch keeps 1-minute data for 15 days)", f.fromCloudWatch, poller.HistoryMaxSpan)
	} else if f.fromCloudWatch > 0 && f.fromCloudWatch < time.Minute {
		bad("from-cloudwatch", "%v: must be within 1m and %v", f.fromCloudWatch, poller.HistoryMaxSpan)
	}
	if f.saveTrace != "" && f.fromCloudWatch == 0 {
		bad("save-trace", "only with --from-cloudwatch")
	}

	// --rate makes the built-in scenarios, before the run has one.
	if !(f.rate >= 0) || math.IsInf(f.rate, 0) {
		bad("rate", "%v: must be a finite number >= 0", f.rate)
	}
	// The run reads a zero concurrency as 1 and an empty distribution as
	// exponential; given on the command line, they are mistakes.
	if f.concurrency == 0 {
		bad("concurrency", "%d: must be >= 1", f.concurrency)
	}
	if f.serviceDist == "" {
		bad("service-dist", "%q: want exponential, lognormal or constant", f.serviceDist)
	}
	var policies []string
	if f.policy == "all" {
		// fixed-warm-up sizes its fleet from the warm-up: without one it
		// has nothing to size from and is left out.
		for _, p := range sim.Policies {
			if p != sim.PolicyFixedWarmUp || f.warmUp > 0 {
				policies = append(policies, p)
			}
		}
	} else {
		for _, p := range strings.Split(f.policy, ",") {
			p = strings.TrimSpace(p)
			switch {
			case !slices.Contains(sim.Policies, p):
				bad("policy", "%q: want %s, a comma-separated list of them, or all", p, strings.Join(sim.Policies, ", "))
			case p == sim.PolicyFixedWarmUp && f.warmUp <= 0:
				bad("policy", "%q sizes its fleet from the warm-up: give --warm-up", p)
			case !slices.Contains(policies, p):
				policies = append(policies, p)
			}
		}
	}
	if f.output != "table" && f.output != "json" {
		bad("output", "%q: want table or json", f.output)
	}
	f.checkScaleIn(bad)
	changes := f.checkWorld(bad)

	svc := sim.Service{Dist: f.serviceDist, Mean: f.serviceTime}
	if f.serviceDist == sim.DistLognormal {
		svc.CV = f.serviceCV
	}
	rc := sim.RunConfig{
		World: sim.Config{
			Group:         f.group,
			Start:         simStart,
			Service:       svc,
			Concurrency:   f.concurrency,
			StartDelay:    f.startDelay,
			Min:           f.min,
			Max:           f.max,
			Workers:       f.workers,
			LatencyTarget: f.latencyTarget,
			Seed:          f.seed,
			WarmUp:        f.warmUp,
		},
		Duration:          f.duration,
		Interval:          f.interval,
		WorkerCostPerHour: f.workerCost,
		RestartAt:         f.restartAt,
		Peers:             f.peers,
		Settings:          settings,
		Learn:             f.learn,
	}
	// The scenario is made from the values checked here; the starting
	// fleet (--workers 0) and the duration a scenario gives are made with
	// it, so what involves them is checked once they are.
	later := []string{sim.FieldScenario}
	if f.workers == 0 {
		later = append(later, sim.FieldWorkers)
	}
	if !f.set["duration"] {
		later = append(later, sim.FieldDuration)
	}
	asFlag := func(field string) string { return "--" + simFlag(field) }
	reportRun(rc.Validate(), bad, later, asFlag)
	if len(errs) > 0 {
		return usage()
	}

	var sc sim.Scenario
	var err error
	switch {
	case f.fromCloudWatch > 0:
		if f.set["scenario"] {
			bad("scenario", "not with --from-cloudwatch, which gives the traffic")
			return usage()
		}
		// An AWS problem is not a usage one.
		clients, err := awsclient.New(ctx, awsOptions(cfg, prometheus.NewRegistry()))
		if err != nil {
			return sim.RunConfig{}, nil, fmt.Errorf("--from-cloudwatch: %w", err)
		}
		// The newest whole minutes: the scenario leaves out those not
		// published yet (sim.FromMinutes).
		to := time.Now().UTC().Truncate(time.Minute)
		h, err := poller.GroupArrivals(ctx, cfg, clients, grp, to.Add(-f.fromCloudWatch), to)
		if err != nil {
			return sim.RunConfig{}, nil, fmt.Errorf("--from-cloudwatch: %w", err)
		}
		if sc, err = sim.FromHistory(grp.Name, h); err != nil {
			return sim.RunConfig{}, nil, fmt.Errorf("--from-cloudwatch: %w", err)
		}
		if f.saveTrace != "" {
			if err := sim.SaveCSV(f.saveTrace, sc); err != nil {
				return sim.RunConfig{}, nil, fmt.Errorf("--save-trace: %w", err)
			}
		}
	default:
		if sc, err = sim.LoadScenario(f.scenario, f.rate, f.duration, f.seed); err != nil {
			bad("scenario", "%v", err)
			return usage()
		}
	}
	name := asFlag
	if !f.set["duration"] && sc.Length > 0 {
		f.duration = min(sc.Length, sim.MaxDuration)
		name = func(field string) string {
			if field == sim.FieldDuration {
				return fmt.Sprintf("the scenario's length %v", f.duration)
			}
			return asFlag(field)
		}
	}

	workers := f.workers
	if workers == 0 {
		base := f.rate // the built-in scenarios' base rate; a CSV file's mean
		if !slices.Contains(sim.BuiltinScenarios, f.scenario) || f.fromCloudWatch > 0 {
			base = sc.MeanRate(f.duration)
		}
		// The world's service time: every policy starts from the fleet the
		// world needs, whatever the settings assume.
		workers = capacity.SteadyFleet(base, f.serviceTime.Seconds(), f.concurrency, model.DefaultUtilization, f.latencyTarget.Seconds())
		workers = model.Limits{Min: f.min, Max: f.max}.For(model.Fleet{}).Clamp(workers)
	}
	rc.World.Scenario, rc.World.Workers, rc.Duration = sc, workers, f.duration
	rc.World.ScaleIn, rc.World.VisibilityTimeout = f.scaleIn, f.visibility
	settingsSeconds := 0.0
	if settings != nil {
		settingsSeconds = settings.ServiceSeconds()
	}
	f.applyWorld(&rc.World, f.assumedService(settingsSeconds), changes)
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

// applyGroup takes the simulated queue's settings from a configuration's
// group where the command line did not give them.
func (f *simFlags) applyGroup(cfg config.Config, g config.Group) {
	if !f.set["interval"] {
		f.interval = cfg.Interval
	}
	if !f.set["concurrency"] && g.Workers.Concurrency > 0 {
		f.concurrency = g.Workers.Concurrency
	}
	if !f.set["service-time"] {
		switch {
		case g.Workers.ServiceTime > 0:
			f.serviceTime = g.Workers.ServiceTime
		case g.Workers.Throughput > 0:
			f.serviceTime = time.Duration(float64(max(g.Workers.Concurrency, 1)) / g.Workers.Throughput * float64(time.Second))
		}
	}
	if !f.set["latency-target"] && g.Target.Latency > 0 {
		f.latencyTarget = g.Target.Latency
	}
	if !f.set["start-delay"] {
		f.startDelay = g.Fleet.StartDelay
	}
	if !f.set["min"] {
		f.min = g.Fleet.Min
	}
	if !f.set["max"] {
		f.max = g.Fleet.Max
	}
}

// overrideSettings puts the values given on the command line into the
// group's policy settings. --service-time is the world's, not the
// settings': --assumed-service-time overrides theirs.
func (f *simFlags) overrideSettings(s *policy.Settings) {
	if f.set["assumed-service-time"] {
		s.ServiceTime, s.Throughput = f.assumedServiceTime, 0
	}
	if f.set["concurrency"] {
		s.Concurrency = f.concurrency
	}
	if f.set["latency-target"] {
		s.Latency = f.latencyTarget
	}
	if f.set["start-delay"] {
		s.StartDelay = f.startDelay
	}
	if f.set["min"] {
		s.Min = f.min
	}
	if f.set["max"] {
		s.Max = f.max
	}
}

// progressBar is a bar on stderr for a long run when stderr is a terminal;
// nil otherwise.
func progressBar(stderr io.Writer, rc sim.RunConfig, policies []string) *progressbar.ProgressBar {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	if rc.World.Scenario.MeanRate(rc.Duration)*rc.Duration.Seconds()*float64(len(policies)) < progressMessages {
		return nil
	}
	total := int64(rc.Duration/time.Second) * int64(len(policies))
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("simulating"),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}
