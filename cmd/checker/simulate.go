package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/poller"
	"github.com/queuechecker/queue-checker/internal/sim"
	"github.com/queuechecker/queue-checker/internal/sim/peers"
	"github.com/queuechecker/queue-checker/internal/simulate"
)

// cmdSimulate replays a traffic scenario against the checker's policies and
// its peers, each on its own simulated queue and fleet with the same
// arrivals, and prints their scores.
func cmdSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("simulate", stderr)
	o, err := parseSimFlags(fs, args)
	if err != nil {
		return err
	}
	o.Settings, o.Arrivals = policySettings, cloudWatchArrivals
	s, err := simulate.New(ctx, o)
	if err != nil {
		if ue := (*simulate.UsageError)(nil); errors.As(err, &ue) {
			fs.Usage()
			return &exitError{code: 2, err: ue.Err}
		}
		return err
	}
	return s.Run(ctx, stdout, stderr)
}

// cloudWatchArrivals reads group g's per-minute arrivals of the newest
// whole minutes of span from CloudWatch (the scenario leaves out those not
// published yet: sim.FromMinutes).
func cloudWatchArrivals(ctx context.Context, cfg config.Config, g config.Group, span time.Duration) (model.MinuteHistory, error) {
	clients, err := awsclient.New(ctx, awsOptions(cfg, prometheus.NewRegistry()))
	if err != nil {
		return model.MinuteHistory{}, err
	}
	to := time.Now().UTC().Truncate(time.Minute)
	return poller.GroupArrivals(ctx, cfg, clients, g, to.Add(-span), to)
}

// parseSimFlags defines the flags of `checker simulate` on fs and parses
// args, noting which flags were given.
func parseSimFlags(fs *flag.FlagSet, args []string) (simulate.Options, error) {
	var f simulate.Options
	fs.StringVar(&f.Scenario, "scenario", sim.ScenarioSteady,
		"traffic: steady, step (×3 after a third), spike (×10 for 5 minutes at a third), diurnal (one sinusoid, 0.2× to 1.8×), ramp (0.1× climbing evenly to 2× over a sixth of the run, held, then back), bursty (2 minutes at ×3 every 10, ×0.5 between), "+
			"cron (90 s at ×15 every 20 minutes), days (3 days: daily sinusoid 0.4× to 1.6×, nightly batch +8×, morning surge +3×, noise; runs 72h unless --duration), "+
			"weeks (5 weeks from a Wednesday: days' weekdays, weekends at 0.4×, a Monday surge +5× 09:00-10:00, a Monday holiday with no traffic in the fourth week; runs 35d unless --duration), "+
			"irregular (seeded bursts of 20-90 s at 1.5× to 5.7× on average, steps up to 25×, 1 to 5 quiet minutes at 0.2× between), "+
			"web (a web server's day of 1-second steps: daily sinusoid 0.3× to 1.7×, lognormal noise correlated over 30 s, a dozen seeded bumps of 1-5 minutes at 1.5× to 3×; runs 24h unless --duration), "+
			"or a CSV file with the header t_seconds,arrivals_per_second (runs to its end unless --duration)")
	fs.Float64Var(&f.Rate, "rate", 50, "base arrival rate of the built-in scenarios, msg/s")
	f.Duration = 2 * time.Hour
	fs.Var((*dayDuration)(&f.Duration), "duration", "simulated time (default: the scenario's own length, else 2h)")
	fs.DurationVar(&f.ServiceTime, "service-time", 200*time.Millisecond, "mean time one message takes from pick-up to delete, in the world (with --config: the group's); the settings assume --assumed-service-time")
	fs.StringVar(&f.ServiceDist, "service-dist", sim.DistExponential, "service-time distribution: exponential, lognormal or constant")
	fs.Float64Var(&f.ServiceCV, "service-cv", 1, "coefficient of variation of the lognormal service time (at most 100)")
	fs.IntVar(&f.Concurrency, "concurrency", 1, "messages one worker handles at once")
	fs.DurationVar(&f.StartDelay, "start-delay", time.Minute, "launch until a new worker takes its first message")
	fs.DurationVar(&f.Interval, "interval", 5*time.Second, "sampling and decision interval")
	fs.DurationVar(&f.LatencyTarget, "latency-target", 10*time.Second, "the promise: how long a message may wait in the queue")
	fs.IntVar(&f.Min, "min", 1, "fewest workers")
	fs.IntVar(&f.Max, "max", 200, "most workers (at most 1000000)")
	fs.IntVar(&f.Workers, "workers", 0, "the fixed fleet and every policy's starting size; 0: what the base rate (a CSV file's mean rate) needs at 80 % utilisation and by the Erlang C wait floor for 99 % of messages within the promise, as the daemon sizes a steady load")
	fs.StringVar(&f.Policy, "policy", "all", "policies to run, comma-separated: "+strings.Join(sim.Policies, ", ")+", or all (fixed-warm-up only with --warm-up). "+
		"keda: visible + in-flight ÷ queueLength under the HPA (tolerance 0.1, scale-up at most +100 % or +4 pods per 15 s); "+
		"target-tracking: SQS visible ÷ in-service on 1-minute datapoints, out after 3 above the target, in after 15 below; "+
		"step: +1 at 1,000 visible, +2 at 1,500, -1 below 100; fixed-best: the fewest fixed workers that start 99 % of messages within the promise, found in hindsight; "+
		"fixed-same-cost: the most fixed workers that cost no more than the model over the scored window, found in hindsight from its run; "+
		"fixed-same-share: the fewest fixed workers that keep at least the model's share of messages within the promise, found in hindsight; "+
		"fixed-warm-up (with --warm-up): the fewest fixed workers that start 99 % of the warm-up's messages within the promise, sized from the warm-up alone and held for the whole run; "+
		"oracle: a clairvoyant plan that may let a burst wait up to the promise and pays every start delay; oracle-instant: the same with instant workers")
	fs.Uint64Var(&f.Seed, "seed", 1, "random seed; the same seed gives the same run (and the days and weeks scenarios' noise)")
	fs.StringVar(&f.Output, "output", "table", "output format: table or json")
	fs.Float64Var(&f.WorkerCost, "worker-cost", 0, "dollars one worker costs an hour: every policy's bill, and its saving against the oracle's; 0: no price")
	fs.StringVar(&f.Chart, "chart", "", "also draw backlog, oldest age and workers over time to this .svg or .png file")
	scaleInFlags(fs, &f)
	worldFlags(fs, &f)
	fs.Var((*dayDuration)(&f.WarmUp), "warm-up", "leave the first D out of the scores (a learning policy is not scored on its first day)")
	fs.Var((*dayDuration)(&f.RestartAt), "restart-at", "restart the checker's policies at this time: a fresh process that warm-starts from the CloudWatch history the world has published so far, as the daemon does; 0: never")
	fs.StringVar(&f.ConfigFile, "config", "", "run the model and backlog policies with a group's settings from this configuration file, as the daemon loads them (needs --group); flags given override single values, but --service-time sets only the world: --assumed-service-time overrides the settings' service time")
	fs.StringVar(&f.Group, "group", "", "the group of --config to simulate")
	fs.Var((*dayDuration)(&f.FromCloudWatch), "from-cloudwatch", "replay the group's per-minute NumberOfMessagesSent, summed over its queues and regions, for the last D (at most 15 days); needs --config and --group and AWS credentials")
	fs.StringVar(&f.SaveTrace, "save-trace", "", "with --from-cloudwatch: also write the trace to this CSV file, for --scenario FILE.csv")

	def := peers.Defaults()
	fs.Float64Var(&f.Peers.KEDAQueueLength, "keda-queue-length", 0, "KEDA aws-sqs-queue queueLength, messages per replica; 0: the promise ÷ the settings' service time (--assumed-service-time) × concurrency, as KEDA's docs tell users to set it")
	fs.DurationVar(&f.Peers.KEDAPolling, "keda-polling", def.KEDAPolling, "KEDA pollingInterval: how often the queue is read; 0: at every HPA sync")
	fs.DurationVar(&f.Peers.HPASync, "hpa-sync", def.HPASync, "HPA sync period (--horizontal-pod-autoscaler-sync-period)")
	fs.DurationVar(&f.Peers.HPADownWindow, "hpa-down-window", def.HPADownWindow, "HPA scale-down stabilisation window")
	fs.DurationVar(&f.Peers.TTMetricLag, "tt-metric-lag", def.TTMetricLag, "target tracking: how late a minute's SQS datapoint reaches CloudWatch after the minute ends")
	fs.Float64Var(&f.Peers.TTInBelow, "tt-scale-in-below", def.TTInBelow, "target tracking: scale in only while the metric is under this share of the target (0..1)")
	fs.Float64Var(&f.Peers.TTInStep, "tt-scale-in-step", def.TTInStep, "target tracking: the most one scale-in removes, percent of the fleet (at least one worker)")
	fs.DurationVar(&f.Peers.TTInCooldown, "tt-scale-in-cooldown", def.TTInCooldown, "target tracking: the scale-in cooldown")
	fs.DurationVar(&f.Peers.StepPeriod, "step-period", def.StepPeriod, "step alarms: the period of their datapoints")
	fs.DurationVar(&f.Peers.StepCooldown, "step-cooldown", def.StepCooldown, "step alarms: the cooldown after each scaling activity")
	f.Peers.TTOutPoints, f.Peers.TTInPoints = def.TTOutPoints, def.TTInPoints
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	f.Set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.Set[fl.Name] = true })
	return f, nil
}

// dayDuration is a duration flag that also takes days: "2d", "1d12h".
type dayDuration time.Duration

func (d *dayDuration) String() string { return time.Duration(*d).String() }

func (d *dayDuration) Set(s string) error {
	v, err := simulate.ParseDays(s)
	if err != nil {
		return err
	}
	*d = dayDuration(v)
	return nil
}
