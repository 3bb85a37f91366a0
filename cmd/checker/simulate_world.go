package main

import (
	"flag"
	"time"

	"github.com/queuechecker/queue-checker/internal/simulate"
)

// worldFlags adds the flags of the simulated world that the group's settings
// need not agree with, and of how late its CloudWatch metrics arrive.
func worldFlags(fs *flag.FlagSet, f *simulate.Options) {
	fs.DurationVar(&f.AssumedServiceTime, "assumed-service-time", 0,
		"the mean service time the group's settings give, which the policies and the peers' targets are derived from; the world keeps --service-time (default: --service-time; with --config, the group's)")
	fs.IntVar(&f.DownstreamPool, "downstream-pool", 0,
		"connections of a downstream the workers share: a message taken while more than N are in service, itself included, takes its service time × in service ÷ N, so completions level off near N ÷ service time (0: none)")
	fs.StringVar(&f.PoolChanges, "downstream-pool-change", "",
		"AT=N[,AT=N...]: from AT on, the downstream pool has N connections (0: none), each in place of --downstream-pool (1h=240: the pool doubles an hour in)")
	fs.StringVar(&f.ServiceChanges, "service-time-change", "",
		"AT=FACTOR[,AT=FACTOR...]: from AT on, messages take FACTOR × their drawn service time, each factor relative to --service-time (1h=2: a deploy that doubles it; 1h=2,2h=1: for an hour)")
	fs.DurationVar(&f.MetricDelay, "metric-delay", time.Minute,
		"how late after its minute ends a CloudWatch datapoint (deletions, oldest age) can be read; the checker reads CloudWatch once a minute (at most 15m)")
	fs.BoolVar(&f.MetricsExact, "metrics-exact", false,
		"give the checker exact readings instead of CloudWatch's: completions over the last 60 s and the oldest age, both as of each sample (the kinder simulator, for comparisons)")
	fs.BoolVar(&f.DeletedCount, "deleted-count", true,
		"give the checker CloudWatch's NumberOfMessagesDeleted; false: a group that reads no CloudWatch, whose fleet cannot be measured")
	fs.StringVar(&f.Learn, "learn", "",
		"the checker's workers.learn for the model and backlog policies: act, report or off (default: the group's, else act for the model, report for backlog)")
	fs.BoolVar(&f.PlanActs, "plan-acts", false,
		"the model policy's plan over sampled futures sets the count, in place of the rules it would replace (burst warm capacity, the noise and backlog holds, the scale-in window); without it the plan is only shown")
	fs.Float64Var(&f.StartDelayCV, "start-delay-cv", 0,
		"spread of the start delays: each launched worker's is lognormal around --start-delay with this coefficient of variation (0..5; 0: all equal)")
}
