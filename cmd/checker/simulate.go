package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim"
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
	chart         string
	scaleIn       string        // simulate_scalein.go
	visibility    time.Duration // simulate_scalein.go
}

// cmdSimulate replays a traffic scenario against the checker's policies and
// its peers, each on its own simulated queue and fleet with the same
// arrivals, and prints their scores.
func cmdSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("simulate", stderr)
	var f simFlags
	fs.StringVar(&f.scenario, "scenario", sim.ScenarioSteady,
		"traffic: steady, step (×3 after a third), spike (×10 for 5 minutes at a third), diurnal (one sinusoid, 0.2× to 1.8×), bursty (2 minutes at ×3 every 10, ×0.5 between), or a CSV file with the header t_seconds,arrivals_per_second")
	fs.Float64Var(&f.rate, "rate", 50, "base arrival rate of the built-in scenarios, msg/s")
	fs.DurationVar(&f.duration, "duration", 2*time.Hour, "simulated time")
	fs.DurationVar(&f.serviceTime, "service-time", 200*time.Millisecond, "mean time one message takes from pick-up to delete")
	fs.StringVar(&f.serviceDist, "service-dist", sim.DistExponential, "service-time distribution: exponential, lognormal or constant")
	fs.Float64Var(&f.serviceCV, "service-cv", 1, "coefficient of variation of the lognormal service time")
	fs.IntVar(&f.concurrency, "concurrency", 1, "messages one worker handles at once")
	fs.DurationVar(&f.startDelay, "start-delay", time.Minute, "launch until a new worker takes its first message")
	fs.DurationVar(&f.interval, "interval", 5*time.Second, "sampling and decision interval")
	fs.DurationVar(&f.latencyTarget, "latency-target", 10*time.Second, "the promise: how long a message may wait in the queue")
	fs.IntVar(&f.min, "min", 1, "fewest workers")
	fs.IntVar(&f.max, "max", 200, "most workers")
	fs.IntVar(&f.workers, "workers", 0, "the fixed fleet and every policy's starting size; 0: what the base rate (a CSV file's mean rate) needs at 80 % utilisation and by the Erlang C wait floor")
	fs.StringVar(&f.policy, "policy", "all", "policy to run: "+strings.Join(sim.Policies, ", ")+", or all")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives the same run")
	fs.StringVar(&f.output, "output", "table", "output format: table or json")
	fs.StringVar(&f.chart, "chart", "", "also draw backlog, oldest age and workers over time to this .svg or .png file")
	f.scaleInFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rc, policies, err := f.runConfig()
	if err != nil {
		fs.Usage()
		return err
	}
	chartFormat := ""
	if f.chart != "" {
		if chartFormat, err = sim.ChartFormat(f.chart); err != nil {
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
		if err := writeChart(f.chart, chartFormat, rc, results); err != nil {
			return err
		}
	}
	if f.output == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Results []sim.Result `json:"results"`
		}{results})
	}
	if err := printSimTable(stdout, rc, results); err != nil {
		return err
	}
	return printScaleIn(stdout, rc, results)
}

// runConfig checks the flags and turns them into a run; every problem is a
// usage error naming its flag.
func (f simFlags) runConfig() (sim.RunConfig, []string, error) {
	var errs []error
	bad := func(flag, format string, a ...any) {
		errs = append(errs, fmt.Errorf("--%s: %s", flag, fmt.Sprintf(format, a...)))
	}
	if !(f.rate >= 0) || math.IsInf(f.rate, 0) {
		bad("rate", "%v: must be a finite number >= 0", f.rate)
	}
	if f.duration <= 0 {
		bad("duration", "%v: must be > 0", f.duration)
	}
	if f.serviceTime <= 0 {
		bad("service-time", "%v: must be > 0", f.serviceTime)
	}
	switch f.serviceDist {
	case sim.DistExponential, sim.DistConstant:
	case sim.DistLognormal:
		if !(f.serviceCV > 0) || math.IsInf(f.serviceCV, 0) {
			bad("service-cv", "%v: must be > 0", f.serviceCV)
		}
	default:
		bad("service-dist", "%q: want exponential, lognormal or constant", f.serviceDist)
	}
	if f.concurrency < 1 {
		bad("concurrency", "%d: must be >= 1", f.concurrency)
	}
	if f.startDelay < 0 {
		bad("start-delay", "%v: must be >= 0", f.startDelay)
	}
	if f.interval <= 0 || (f.duration > 0 && f.interval > f.duration) {
		bad("interval", "%v: must be > 0 and at most --duration", f.interval)
	}
	if f.latencyTarget <= 0 {
		bad("latency-target", "%v: must be > 0", f.latencyTarget)
	}
	if f.min < 0 {
		bad("min", "%d: must be >= 0", f.min)
	}
	if f.max < max(f.min, 1) {
		bad("max", "%d: must be >= 1 and >= --min (%d)", f.max, f.min)
	}
	if f.workers < 0 || (f.workers > 0 && (f.workers < f.min || f.workers > f.max)) {
		bad("workers", "%d: must be 0 or within --min (%d) and --max (%d)", f.workers, f.min, f.max)
	}
	var policies []string
	switch {
	case f.policy == "all":
		policies = sim.Policies
	case slices.Contains(sim.Policies, f.policy):
		policies = []string{f.policy}
	default:
		bad("policy", "%q: want %s or all", f.policy, strings.Join(sim.Policies, ", "))
	}
	if f.output != "table" && f.output != "json" {
		bad("output", "%q: want table or json", f.output)
	}
	f.checkScaleIn(bad)
	var sc sim.Scenario
	if len(errs) == 0 {
		var err error
		if sc, err = loadScenario(f.scenario, f.rate, f.duration); err != nil {
			bad("scenario", "%v", err)
		}
	}
	if len(errs) > 0 {
		return sim.RunConfig{}, nil, &exitError{code: 2, err: errors.Join(errs...)}
	}

	svc := sim.Service{Dist: f.serviceDist, Mean: f.serviceTime}
	if f.serviceDist == sim.DistLognormal {
		svc.CV = f.serviceCV
	}
	workers := f.workers
	if workers == 0 {
		base := f.rate // the built-in scenarios' base rate; a CSV file's mean
		if !slices.Contains(sim.BuiltinScenarios, f.scenario) {
			base = sc.MeanRate(f.duration)
		}
		workers = baseFleet(base, f.serviceTime, f.concurrency, f.latencyTarget)
		workers = min(max(workers, f.min), f.max)
	}
	rc := sim.RunConfig{
		World: sim.Config{
			Start:         simStart,
			Scenario:      sc,
			Service:       svc,
			Concurrency:   f.concurrency,
			StartDelay:    f.startDelay,
			Min:           f.min,
			Max:           f.max,
			Workers:       workers,
			LatencyTarget: f.latencyTarget,
			Seed:          f.seed,
		},
		Duration: f.duration,
		Interval: f.interval,
	}
	rc.World.ScaleIn, rc.World.VisibilityTimeout = f.scaleIn, f.visibility
	return rc, policies, nil
}

// loadScenario is a built-in scenario by name, or else a CSV file.
func loadScenario(name string, rate float64, d time.Duration) (sim.Scenario, error) {
	if slices.Contains(sim.BuiltinScenarios, name) {
		return sim.Builtin(name, rate, d)
	}
	if !strings.HasSuffix(strings.ToLower(name), ".csv") {
		if _, err := os.Stat(name); err != nil {
			return sim.Scenario{}, fmt.Errorf("%q: want %s or a CSV file", name, strings.Join(sim.BuiltinScenarios, ", "))
		}
	}
	file, err := os.Open(name)
	if err != nil {
		return sim.Scenario{}, err
	}
	defer func() { _ = file.Close() }()
	return sim.ParseCSV(name, file)
}

// baseFleet is the fleet a steady rate needs: the larger of the utilisation
// floor at 80 % and the Erlang C wait floor for the latency target.
func baseFleet(rate float64, serviceTime time.Duration, concurrency int, latency time.Duration) int {
	perWorker := float64(concurrency) / serviceTime.Seconds()
	n := capacity.UtilizationFloor(rate, perWorker, policy.DefaultUtilization)
	if slots, ok := capacity.WaitFloor(rate, 1/serviceTime.Seconds(), latency.Seconds()); ok {
		n = max(n, (slots+concurrency-1)/concurrency)
	}
	return n
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

func writeChart(path, format string, rc sim.RunConfig, results []sim.Result) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	defer func() {
		if cerr := file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("chart: %w", cerr)
		}
	}()
	title := fmt.Sprintf("%s scenario, latency target %v, start delay %v", rc.World.Scenario.Name, rc.World.LatencyTarget, rc.World.StartDelay)
	return sim.WriteChart(file, format, title, rc.World.LatencyTarget, results)
}

// printSimTable prints one row per policy, with the cost as a multiple of
// the oracle's when the oracle ran.
func printSimTable(w io.Writer, rc sim.RunConfig, results []sim.Result) error {
	c := rc.World
	if _, err := fmt.Fprintf(w, "scenario %s over %v: mean %.3g msg/s; service %v %s; concurrency %d; start delay %v; latency target %v; workers %d..%d, starting at %d; seed %d\n\n",
		c.Scenario.Name, rc.Duration, c.Scenario.MeanRate(rc.Duration), c.Service.Mean, serviceDesc(c.Service),
		max(c.Concurrency, 1), c.StartDelay, c.LatencyTarget, c.Min, c.Max, c.Workers, c.Seed); err != nil {
		return err
	}
	oracle := 0.0
	for _, r := range results {
		if r.Policy == sim.PolicyOracle {
			oracle = r.WorkerSeconds
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tslo\tmean wait\tp50\tp99\tmax wait\tmax oldest\tworker-hours\t× oracle\tactions\tmessages\t")
	for _, r := range results {
		mult := "-"
		if oracle > 0 {
			mult = fmt.Sprintf("%.2f", r.WorkerSeconds/oracle)
		}
		fmt.Fprintf(tw, "%s\t%.2f%%\t%.2fs\t%.2fs\t%.2fs\t%.1fs\t%.1fs\t%.1f\t%s\t%d\t%d\t\n",
			r.Policy, 100*r.SLOAttainment, r.MeanWait, r.P50Wait, r.P99Wait, r.MaxWait, r.MaxOldestAge,
			r.WorkerSeconds/3600, mult, r.ScalingActions, r.Messages)
	}
	return tw.Flush()
}

func serviceDesc(s sim.Service) string {
	if s.Dist == sim.DistLognormal {
		return fmt.Sprintf("lognormal (cv %g)", s.CV)
	}
	if s.Dist == "" {
		return sim.DistExponential
	}
	return s.Dist
}
