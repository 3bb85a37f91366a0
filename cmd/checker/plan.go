package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/planreport"
)

// planFlagOf names the flag that sets each capacity.PlanInput field, so a
// problem Validate finds is reported against the flag the user typed.
var planFlagOf = map[string]string{
	capacity.FieldQueue:           "queue-name",
	capacity.FieldArrivalRate:     "arrival-rate",
	capacity.FieldWorkers:         "workers",
	capacity.FieldPerWorker:       "per-worker",
	capacity.FieldServiceTime:     "service-time",
	capacity.FieldConcurrency:     "concurrency",
	capacity.FieldBacklog:         "backlog",
	capacity.FieldDrainTarget:     "drain-target",
	capacity.FieldUtilization:     "utilization",
	capacity.FieldBurstPercent:    "burst",
	capacity.FieldOverheadPercent: "overhead",
	capacity.FieldStartDelay:      "start-delay",
	capacity.FieldSafetyWorkers:   "safety",
	capacity.FieldCap:             "cap",
	capacity.FieldLatencyTarget:   "latency-target",
	capacity.FieldLatencyQuantile: "latency-quantile",
	capacity.FieldServiceTimeCV:   "service-time-cv",
	capacity.FieldHorizon:         "horizon",
	capacity.FieldWorkerCost:      "worker-cost",
}

// planFlags are the flags of `checker plan`.
type planFlags struct {
	in                                                     capacity.PlanInput
	serviceTime, drainTarget, startDelay, latency, horizon time.Duration
	output                                                 string
}

// cmdPlan is the offline capacity calculator (docs/model.md, docs/planning.md): how many
// workers a queue needs to drain its backlog in time, stay under a
// utilisation ceiling and, with a latency target, start 99 % of messages
// (--latency-quantile) within it, as the daemon sizes.
func cmdPlan(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stderr)
	var f planFlags
	fs.StringVar(&f.in.Queue, "queue-name", "", "queue name, shown in every output so the plan stays traceable")
	fs.Float64Var(&f.in.ArrivalRate, "arrival-rate", 0, "arrival rate at the busiest sustained interval, msg/s (required)")
	fs.IntVar(&f.in.Workers, "workers", 0, "current workers")
	fs.Float64Var(&f.in.PerWorker, "per-worker", 0, "measured throughput of one worker, completed msg/s (or --service-time)")
	fs.DurationVar(&f.serviceTime, "service-time", 0, "time one message takes from pick-up to delete, e.g. 200ms (or --per-worker)")
	fs.IntVar(&f.in.Concurrency, "concurrency", 1, "messages one worker handles at once, with --service-time")
	fs.Float64Var(&f.in.Backlog, "backlog", 0, "messages waiting now")
	fs.DurationVar(&f.drainTarget, "drain-target", model.DefaultDrainTime, "the backlog must clear within this")
	fs.Float64Var(&f.in.Utilization, "utilization", model.DefaultUtilization, "utilisation ceiling, a ratio in (0, 1]")
	fs.Float64Var(&f.in.BurstPercent, "burst", 0, "arrival burst reserve, percent added to arrivals")
	fs.Float64Var(&f.in.OverheadPercent, "overhead", 0, "retry or overhead reserve, percent taken off per-worker throughput")
	fs.DurationVar(&f.startDelay, "start-delay", 0, "launch until an added worker takes its first message")
	fs.IntVar(&f.in.SafetyWorkers, "safety", 0, "fixed safety workers added to the target")
	fs.IntVar(&f.in.Cap, "cap", 0, "most workers allowed (connection pool, quota); 0: no cap")
	fs.DurationVar(&f.latency, "latency-target", 0, "the promise: how long a message may wait before a worker takes it (Erlang C wait floor); 0: none")
	fs.Float64Var(&f.in.LatencyQuantile, "latency-quantile", capacity.DefaultLatencyQuantile, "share of messages that must start within --latency-target, as the daemon's target.latency_quantile; the mean wait's floor is shown beside it")
	fs.Float64Var(&f.in.ServiceTimeCV, "service-time-cv", 0, "coefficient of variation of the service time (standard deviation ÷ mean): the wait floor's waits stretch by (1 + cv²) ÷ 2 (Allen–Cunneen); 0: exponential service, as Erlang C assumes")
	fs.DurationVar(&f.horizon, "horizon", 0, "burn-down span; 0: start delay + 2 × drain target")
	fs.Float64Var(&f.in.WorkerCostPerHour, "worker-cost", 0, "dollars one worker costs an hour: prices the target and each latency promise; 0: no price")
	fs.StringVar(&f.output, "output", string(planreport.FormatTable), "output format: table, json, markdown or csv")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: checker plan --arrival-rate R (--per-worker M | --service-time S) [flags]\n\n"+
			"How many workers a queue needs: enough to clear the backlog within the drain target\n"+
			"while arrivals continue, to keep utilisation under the ceiling and, with a latency\n"+
			"target, to start 99 % of messages within it (Erlang C, as the daemon sizes).\n\nflags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	format, in, err := f.input(fs)
	if err != nil {
		return err
	}
	p, err := capacity.NewPlan(in)
	if err != nil {
		return planUsageErr(err)
	}
	if p.BeyondAnyFleet && !p.Capped {
		// A target no fleet reaches is an input off by orders of
		// magnitude; with a cap the plan still says what the cap does.
		// The plan's first warning says which.
		return usageErr("invalid flags: %s (give --cap to plan a capped fleet)", p.Warnings[0])
	}
	if err := planreport.Write(stdout, p, format); err != nil {
		return fmt.Errorf("print the plan: %w", err)
	}
	return nil
}

// input turns the parsed flags into a plan input, checking what only the
// command line can know: which flags were given.
func (f *planFlags) input(fs *flag.FlagSet) (planreport.Format, capacity.PlanInput, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var problems []string
	format, err := planreport.ParseFormat(f.output)
	if err != nil {
		problems = append(problems, "--output: "+err.Error())
	}
	if !set["arrival-rate"] {
		problems = append(problems, "--arrival-rate: required")
	}
	if set["service-time"] && f.serviceTime == 0 {
		problems = append(problems, "--service-time: must be > 0")
	}
	if set["concurrency"] && f.in.Concurrency == 0 {
		problems = append(problems, "--concurrency: must be at least 1")
	}
	in := f.in
	in.ServiceTime = f.serviceTime.Seconds()
	in.DrainTarget = f.drainTarget.Seconds()
	in.StartDelay = f.startDelay.Seconds()
	in.LatencyTarget = f.latency.Seconds()
	in.Horizon = f.horizon.Seconds()
	if in.ServiceTime == 0 && in.Concurrency == 1 {
		in.Concurrency = 0 // the default, not a claim about a per-worker throughput
	}
	for _, fe := range capacity.FieldErrors(in.Validate()) {
		problems = append(problems, fmt.Sprintf("--%s: %s", planFlagOf[fe.Field], fe.Message))
	}
	if len(problems) > 0 {
		return "", in, usageErr("invalid flags:\n  %s", strings.Join(problems, "\n  "))
	}
	return format, in, nil
}

// planUsageErr reports the field errors of a plan against their flags.
func planUsageErr(err error) error {
	var lines []string
	for _, fe := range capacity.FieldErrors(err) {
		lines = append(lines, fmt.Sprintf("--%s: %s", planFlagOf[fe.Field], fe.Message))
	}
	if len(lines) == 0 {
		return fmt.Errorf("plan: %w", err)
	}
	return usageErr("invalid flags:\n  %s", strings.Join(lines, "\n  "))
}
