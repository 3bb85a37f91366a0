package sim

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim/peers"
)

// Autoscaler is one scaling policy driving a world: Step is called at every
// sampling interval with the time, and scales the world when the policy's
// own schedule says so.
type Autoscaler interface {
	Step(ctx context.Context, now time.Time) error
}

// Policy names of a run.
const (
	PolicyModel          = "model"            // the checker's model policy, through the controller
	PolicyBacklog        = "backlog"          // the checker's backlog_per_worker policy, through the controller
	PolicyKEDA           = "keda"             // KEDA's SQS scaler with the HPA
	PolicyTargetTracking = "target-tracking"  // EC2 Auto Scaling target tracking on backlog per instance
	PolicyStep           = "step"             // step scaling on depth alarms
	PolicyFixed          = "fixed"            // the starting fleet, never scaled
	PolicyFixedBest      = "fixed-best"       // the cheapest fixed fleet in hindsight that keeps the promise share
	PolicyFixedSameCost  = "fixed-same-cost"  // the largest fixed fleet in hindsight that costs no more than the model
	PolicyFixedSameShare = "fixed-same-share" // the smallest fixed fleet in hindsight that keeps the model's share
	PolicyFixedWarmUp    = "fixed-warm-up"    // the fleet an operator sizes from the warm-up, then holds
	PolicyOracle         = "oracle"           // clairvoyant, paying the start delay
	PolicyOracleInstant  = "oracle-instant"   // clairvoyant with workers that start at once: no real fleet's bound
)

// Policies lists every policy, in the order of a comparison.
var Policies = []string{PolicyModel, PolicyBacklog, PolicyKEDA, PolicyTargetTracking, PolicyStep, PolicyFixed, PolicyFixedBest, PolicyFixedSameCost, PolicyFixedSameShare, PolicyFixedWarmUp, PolicyOracle, PolicyOracleInstant}

// plansWholeRun reports whether the policy is chosen over a whole run, from
// runs of others over the same messages (RunPolicy runs it), rather than
// acting interval by interval.
func plansWholeRun(name string) bool {
	switch name {
	case PolicyFixedBest, PolicyFixedSameCost, PolicyFixedSameShare, PolicyFixedWarmUp, PolicyOracle, PolicyOracleInstant:
		return true
	}
	return false
}

// PolicyLabels describe each policy in a line, for tables.
var PolicyLabels = map[string]string{
	PolicyModel:          "the checker's model policy, through its controller",
	PolicyBacklog:        "the checker's backlog_per_worker rule, through its controller (not AWS's mechanism)",
	PolicyKEDA:           "KEDA's aws-sqs-queue scaler with the HPA",
	PolicyTargetTracking: "EC2 Auto Scaling target tracking on SQS backlog per instance",
	PolicyStep:           "the classic recipe's step alarms (+1 at 1,000, +2 at 1,500, -1 below 100)",
	PolicyFixed:          "the starting fleet, never scaled",
	PolicyFixedBest:      "the fewest workers, never scaled, that start 99 % of messages within the promise (chosen in hindsight)",
	PolicyFixedSameCost:  "the most workers, never scaled, that cost no more than the model (chosen in hindsight): where it keeps more within the promise, the model's motion cost more than it bought",
	PolicyFixedSameShare: "the fewest workers, never scaled, that keep as many messages within the promise as the model (chosen in hindsight): where it costs less, the model paid more than a fleet that never moves for what it kept",
	PolicyFixedWarmUp:    "the fewest workers, never scaled, that start 99 % of the warm-up's messages within the promise, sized from the warm-up alone and held for the whole run: the fleet an operator would size from what they had seen",
	PolicyOracle:         "clairvoyant plan, paying every start delay, 99 % within the promise: the cost to beat",
	PolicyOracleInstant:  "the same plan with instant workers: a bound no real fleet reaches",
}

// RunConfig is one comparison: the same world, scenario and seed for every
// policy.
type RunConfig struct {
	World    Config
	Duration time.Duration // how long to simulate
	Interval time.Duration // sampling and decision interval
	// Peers are the peers' parameters; the zero value means peers.Defaults.
	Peers peers.Params
	// Settings, when set, are the checker's own policy settings for the
	// model and backlog policies (a group of a configuration file), in
	// place of Settings(World, Interval, ...). Their policy is set per run.
	Settings *policy.Settings
	// Learn, when set, is the checker's workers.learn for the model and
	// backlog policies (policy.LearnAct, LearnReport or LearnOff).
	Learn string
	// PlanActs sets the model policy's Settings.PlanActs.
	PlanActs bool
	// Progress, when set, is told of simulated time as it passes, in steps.
	Progress func(simulated time.Duration)
	// WorkerCostPerHour is a worker's price, dollars an hour; above 0 every
	// result carries its Dollars.
	WorkerCostPerHour float64
	// RestartAt restarts the checker's own policies (model and backlog)
	// once, at the first step at or after it, as a deploy or a crash
	// restarts the daemon: a fresh controller with no policy state, warmed
	// from the CloudWatch history the world has published by then as the
	// daemon's warm start warms it (see restart). The fleet runs on as it
	// is until the new checker acts. The other policies ignore it. 0:
	// never.
	RestartAt time.Duration

	// probe, when set, watches the restart (tests).
	probe *restartProbe
}

// restartProbe watches a run's restart, for tests.
type restartProbe struct {
	// cold restarts without the warm start, as a checker that reads no
	// history would.
	cold bool
	// warmed is told the minutes the warm start's preloads took: of
	// arrivals into the forecast, and of the fleet into its measurement.
	warmed func(minutes, fleetMinutes int)
	// decided is told of every decision of the restarted checker.
	decided func(now time.Time, ds []model.Decision)
}

// Result is one policy's run: its scores and, every interval, its state.
type Result struct {
	Policy string `json:"policy"`
	Scores
	// Dollars is the run's worker-hours × RunConfig.WorkerCostPerHour,
	// not rounded; absent without a price.
	Dollars *float64 `json:"dollars,omitempty"`
	// Workers is the fleet of the fixed policies (fixed, fixed-best,
	// fixed-same-cost, fixed-same-share and fixed-warm-up).
	Workers int `json:"workers,omitempty"`
	// PlanDeadline is the oracle's planning deadline, seconds: the plan
	// takes every message's work within it (see Oracle).
	PlanDeadline float64 `json:"plan_deadline_seconds,omitempty"`
	// SLO is each hour's share of messages started within the promise,
	// true and as the daemon would estimate it (slo.go).
	SLO    []SLOHour `json:"slo,omitempty"`
	Series []Point   `json:"-"`
}

// Settings are the checker's policy settings for a simulated group: the
// service time its settings assume (Config.SettingsServiceTime, which the
// world need not have), concurrency, latency promise, bounds and start
// delay, with the policy's defaults for the rest. A sample older than three
// intervals is stale.
func Settings(cfg Config, interval time.Duration, policyName string) policy.Settings {
	group := cfg.Group
	if group == "" {
		group = DefaultGroup
	}
	return policy.Settings{
		Group:       group,
		Policy:      policyName,
		ServiceTime: cfg.SettingsServiceTime(),
		Concurrency: max(cfg.Concurrency, 1),
		Latency:     cfg.LatencyTarget,
		Min:         cfg.Min,
		Max:         cfg.Max,
		StartDelay:  cfg.StartDelay,
		StaleAfter:  model.StaleAfter(interval),
	}.WithDefaults()
}

func (rc RunConfig) peerParams() peers.Params {
	if rc.Peers == (peers.Params{}) {
		return peers.Defaults()
	}
	return rc.Peers
}

// Run runs each named policy in turn on its own world and returns their
// results in the same order.
//
// The policies run side by side, as many at once as there are processors:
// each has a world of its own, and the same seed gives the same results
// whatever the order. Progress, when set, is called from one goroutine at
// a time.
func Run(ctx context.Context, rc RunConfig, policies []string) ([]Result, error) {
	if err := rc.Validate(); err != nil {
		return nil, err
	}
	if rc.Progress != nil {
		var mu sync.Mutex
		progress := rc.Progress
		rc.Progress = func(d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			progress(d)
		}
	}
	out := make([]Result, len(policies))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, name := range policies {
		g.Go(func() error {
			r, err := RunPolicy(ctx, rc, name)
			out[i] = r
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// NewAutoscaler makes the named policy's autoscaler for w with the peers'
// default parameters. The checker's own policies run through the
// controller, exactly as the daemon runs them. The policies that plan over
// a whole run (plansWholeRun) are RunPolicy's.
func NewAutoscaler(name string, w *World, interval time.Duration) (Autoscaler, error) {
	return newAutoscaler(name, w, RunConfig{Interval: interval})
}

func newAutoscaler(name string, w *World, rc RunConfig) (Autoscaler, error) {
	cfg := w.Config()
	pp := rc.peerParams()
	switch name {
	case PolicyModel, PolicyBacklog:
		c, err := controller.New(controller.Options{
			Groups:   []policy.Settings{rc.checkerSettings(name, w)},
			Observer: w,
			Actuator: w,
			Logger:   zap.NewNop(),
		})
		if err != nil {
			return nil, err
		}
		return controlled{c: c}, nil
	case PolicyKEDA:
		return peers.NewKEDA(w, peerSettings(cfg), pp), nil
	case PolicyTargetTracking:
		return peers.NewTargetTracking(w, peerSettings(cfg), pp), nil
	case PolicyStep:
		return peers.NewStepScaling(w, pp), nil
	case PolicyFixed:
		return peers.Fixed{}, nil
	}
	if plansWholeRun(name) {
		return nil, fmt.Errorf("policy %q plans over a whole run: run it with RunPolicy", name)
	}
	return nil, fmt.Errorf("unknown policy %q (want %s)", name, strings.Join(Policies, ", "))
}

// checkerSettings are the settings the checker's policy name (model or
// backlog) runs with on w.
func (rc RunConfig) checkerSettings(name string, w *World) policy.Settings {
	p := policy.PolicyModel
	if name == PolicyBacklog {
		p = policy.PolicyBacklogPerWorker
	}
	settings := Settings(w.Config(), rc.Interval, p)
	if rc.Settings != nil {
		settings = *rc.Settings
		settings.Policy = p
		settings.Group = w.group
	}
	if rc.PlanActs {
		settings.PlanActs = true
	}
	if rc.Learn != "" {
		settings.Learn = rc.Learn
	}
	return settings
}

// peerSettings are what a peer's user knows of the group: the promise, the
// service time the group's settings assume (not the world's) and the
// concurrency.
func peerSettings(cfg Config) peers.Settings {
	return peers.Settings{Latency: cfg.LatencyTarget, ServiceTime: cfg.SettingsServiceTime(), Concurrency: max(cfg.Concurrency, 1)}
}

// controlled drives the checker's controller: one cycle per step.
type controlled struct {
	c       *controller.Controller
	decided func(now time.Time, ds []model.Decision) // when set, told of every decision
}

func (c controlled) Step(ctx context.Context, now time.Time) error {
	ds, err := c.c.RunOnce(ctx, now)
	if c.decided != nil {
		c.decided(now, ds)
	}
	return err
}

// restart replaces the checker's autoscaler of policy name on w with a
// fresh one, as a restarted daemon is: a new controller, with no policy
// state. It warms it as the daemon's warm start does (cmd/checker's
// warmStart), from the history the world has published by now
// (World.History): the arrival history its group reads
// (controller.HistorySpan and ReadsWeeks; none for the backlog rule)
// into Preload, and, when the group measures its fleet
// (controller.Measuring) and reads CloudWatch (the poller reads the
// fleet's minutes only then; not Config.NoDeleted), the fleet's last
// measure.PreloadSpan into PreloadFleet. The daemon's warm start runs
// beside its first cycles; here it is done before the first, as when the
// history comes back within an interval.
func (rc RunConfig) restart(name string, w *World, now time.Time) (Autoscaler, error) {
	as, err := newAutoscaler(name, w, rc)
	if err != nil {
		return nil, err
	}
	c, ok := as.(controlled)
	if !ok {
		return nil, fmt.Errorf("policy %q does not run through the controller: it cannot restart", name)
	}
	p := rc.probe
	if p != nil {
		c.decided = p.decided
	}
	if p != nil && p.cold {
		return c, nil
	}
	groups := []policy.Settings{rc.checkerSettings(name, w)}
	span := controller.HistorySpan(groups)
	measuring := len(controller.Measuring(groups)) > 0 && !w.Config().NoDeleted
	if span <= 0 && !measuring {
		return c, nil
	}
	arrivals, fleet := w.History(now, span, controller.ReadsWeeks(groups))
	minutes, fleetMinutes := 0, 0
	if span > 0 {
		minutes = c.c.Preload(map[string]model.MinuteHistory{w.group: arrivals})[w.group]
	}
	if measuring {
		fleetMinutes = c.c.PreloadFleet(map[string]model.FleetHistory{w.group: fleet})[w.group]
	}
	if p != nil && p.warmed != nil {
		p.warmed(minutes, fleetMinutes)
	}
	return c, nil
}

// progressEvery is how many intervals pass between progress reports.
const progressEvery = 64

// RunPolicy runs one policy: every interval from the start it records the
// world's state and lets the policy act, until the duration has passed. The
// oracles and fixed-best run several times over the same messages and give
// the run they choose (best.go).
func RunPolicy(ctx context.Context, rc RunConfig, name string) (Result, error) {
	if err := rc.Validate(); err != nil {
		return Result{}, err
	}
	var res Result
	var err error
	switch name {
	case PolicyFixedBest:
		res, err = runFixedBest(ctx, rc)
	case PolicyFixedSameCost:
		res, err = runFixedSameCost(ctx, rc)
	case PolicyFixedSameShare:
		res, err = runFixedSameShare(ctx, rc)
	case PolicyFixedWarmUp:
		res, err = runFixedWarmUp(ctx, rc)
	case PolicyOracle, PolicyOracleInstant:
		res, err = runOracle(ctx, rc, name)
	default:
		res, _, err = rc.runWorld(ctx, name, rc.World, nil, -1)
		if name == PolicyFixed {
			res.Workers = rc.World.Workers
		}
	}
	if err != nil {
		return Result{}, err
	}
	if rc.Progress != nil && plansWholeRun(name) {
		rc.Progress(rc.Duration)
	}
	if rc.WorkerCostPerHour > 0 {
		d := WorkerDollars(res.WorkerSeconds, rc.WorkerCostPerHour)
		res.Dollars = &d
	}
	return res, nil
}

// runWorld runs the named policy on a world of cfg, its autoscaler made by
// mk (the named policy's when nil). With a budget ≥ 0 it stops once more
// scored messages than the budget have waited past the promise, and says
// so; its scores are then those so far. Progress is reported only for a
// policy that runs once.
func (rc RunConfig) runWorld(ctx context.Context, name string, cfg Config, mk func(*World) Autoscaler, budget int64) (Result, bool, error) {
	w, err := NewWorld(cfg)
	if err != nil {
		return Result{}, false, err
	}
	var as Autoscaler
	if mk != nil {
		as = mk(w)
	} else if as, err = newAutoscaler(name, w, rc); err != nil {
		return Result{}, false, err
	}
	progress := rc.Progress
	if mk != nil {
		progress = nil
	}
	steps := int(rc.Duration / rc.Interval)
	res := Result{Policy: name, Series: make([]Point, 0, steps+2)}
	// Only the checker's own policies restart.
	_, restarts := as.(controlled)
	restarts = restarts && mk == nil && rc.RestartAt > 0
	reported := time.Duration(0)
	probe := newSLOProbe(cfg)
	for i := 0; i <= steps; i++ {
		at := time.Duration(i) * rc.Interval
		if at >= rc.Duration {
			break
		}
		if i%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, false, err
			}
			if progress != nil && at > reported {
				progress(at - reported)
				reported = at
			}
			if budget >= 0 && w.missed() > budget {
				res.Scores = w.Scores()
				return res, true, nil
			}
		}
		now := cfg.Start.Add(at)
		res.Series = append(res.Series, w.Snapshot(now))
		probe.observe(w, now, at.Seconds())
		if restarts && at >= rc.RestartAt {
			restarts = false
			if as, err = rc.restart(name, w, now); err != nil {
				return Result{}, false, fmt.Errorf("%s restarting at %v: %w", name, at, err)
			}
		}
		if err := as.Step(ctx, now); err != nil {
			return Result{}, false, fmt.Errorf("%s at %v: %w", name, at, err)
		}
	}
	res.Series = append(res.Series, w.Snapshot(cfg.Start.Add(rc.Duration)))
	if progress != nil && rc.Duration > reported {
		progress(rc.Duration - reported)
	}
	res.Scores = w.Scores()
	res.SLO = probe.report(w, rc.Duration)
	return res, false, nil
}

// maxWorkerCost bounds a worker's price, dollars an hour.
const maxWorkerCost = 1e6

// WorkerDollars is what workerSeconds of workers cost at pricePerHour a
// worker-hour: workerSeconds ÷ 3600 × the price.
func WorkerDollars(workerSeconds, pricePerHour float64) float64 {
	return workerSeconds / 3600 * pricePerHour
}
