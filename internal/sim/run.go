package sim

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// Policy names of a run.
const (
	PolicyModel          = "model"           // the checker's model policy, through the controller
	PolicyBacklog        = "backlog"         // the checker's backlog_per_worker policy, through the controller
	PolicyKEDA           = "keda"            // KEDA's SQS scaler with the HPA
	PolicyTargetTracking = "target-tracking" // EC2 Auto Scaling target tracking on backlog per instance
	PolicyStep           = "step"            // seed 003's alarm steps
	PolicyFixed          = "fixed"           // the starting fleet, never scaled
	PolicyOracle         = "oracle"          // clairvoyant lower bound
)

// Policies lists every policy, in the order of a comparison.
var Policies = []string{PolicyModel, PolicyBacklog, PolicyKEDA, PolicyTargetTracking, PolicyStep, PolicyFixed, PolicyOracle}

// RunConfig is one comparison: the same world, scenario and seed for every
// policy.
type RunConfig struct {
	World    Config
	Duration time.Duration // how long to simulate
	Interval time.Duration // sampling and decision interval
	// Progress, when set, is told of simulated time as it passes, in steps.
	Progress func(simulated time.Duration)
}

// Result is one policy's run: its scores and, every interval, its state.
type Result struct {
	Policy string `json:"policy"`
	Scores
	Series []Point `json:"-"`
}

// Settings are the checker's policy settings for a simulated group: its
// service time, concurrency, latency promise, bounds and start delay, with
// the policy's defaults for the rest. A sample older than three intervals
// is stale.
func Settings(cfg Config, interval time.Duration, policyName string) policy.Settings {
	group := cfg.Group
	if group == "" {
		group = DefaultGroup
	}
	return policy.Settings{
		Group:       group,
		Policy:      policyName,
		ServiceTime: cfg.Service.Mean,
		Concurrency: max(cfg.Concurrency, 1),
		Latency:     cfg.LatencyTarget,
		Min:         cfg.Min,
		Max:         cfg.Max,
		StartDelay:  cfg.StartDelay,
		StaleAfter:  3 * interval,
	}.WithDefaults()
}

func (rc RunConfig) validate() error {
	var errs []error
	if rc.Duration <= 0 {
		errs = append(errs, fmt.Errorf("duration %v: must be > 0", rc.Duration))
	}
	if rc.Interval <= 0 {
		errs = append(errs, fmt.Errorf("interval %v: must be > 0", rc.Interval))
	}
	if err := rc.World.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run runs each named policy in turn on its own world and returns their
// results in the same order.
func Run(ctx context.Context, rc RunConfig, policies []string) ([]Result, error) {
	if err := rc.validate(); err != nil {
		return nil, err
	}
	out := make([]Result, 0, len(policies))
	for _, name := range policies {
		r, err := RunPolicy(ctx, rc, name)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// NewAutoscaler makes the named policy's autoscaler for w. The checker's
// own policies run through the controller, exactly as the daemon runs them.
func NewAutoscaler(name string, w *World, interval time.Duration) (Autoscaler, error) {
	cfg := w.Config()
	switch name {
	case PolicyModel, PolicyBacklog:
		p := policy.PolicyModel
		if name == PolicyBacklog {
			p = policy.PolicyBacklogPerWorker
		}
		c, err := controller.New(controller.Options{
			Groups:   []policy.Settings{Settings(cfg, interval, p)},
			Observer: w,
			Actuator: w,
			Logger:   zap.NewNop(),
		})
		if err != nil {
			return nil, err
		}
		return controlled{c}, nil
	case PolicyKEDA:
		return NewKEDA(w, cfg.LatencyTarget), nil
	case PolicyTargetTracking:
		return NewTargetTracking(w, cfg.LatencyTarget), nil
	case PolicyStep:
		return NewStepScaling(w), nil
	case PolicyFixed:
		return Fixed{}, nil
	case PolicyOracle:
		return NewOracle(w, cfg.LatencyTarget, interval), nil
	}
	return nil, fmt.Errorf("unknown policy %q (want %s)", name, strings.Join(Policies, ", "))
}

// controlled drives the checker's controller: one cycle per step.
type controlled struct{ c *controller.Controller }

func (c controlled) Step(ctx context.Context, now time.Time) error {
	_, err := c.c.RunOnce(ctx, now)
	return err
}

// progressEvery is how many intervals pass between progress reports.
const progressEvery = 64

// RunPolicy runs one policy: every interval from the start it records the
// world's state and lets the policy act, until the duration has passed.
func RunPolicy(ctx context.Context, rc RunConfig, name string) (Result, error) {
	if err := rc.validate(); err != nil {
		return Result{}, err
	}
	cfg := rc.World
	if name == PolicyOracle {
		cfg.StartDelay = 0
	}
	w, err := NewWorld(cfg)
	if err != nil {
		return Result{}, err
	}
	as, err := NewAutoscaler(name, w, rc.Interval)
	if err != nil {
		return Result{}, err
	}
	steps := int(rc.Duration / rc.Interval)
	res := Result{Policy: name, Series: make([]Point, 0, steps+2)}
	reported := time.Duration(0)
	for i := 0; i <= steps; i++ {
		at := time.Duration(i) * rc.Interval
		if at >= rc.Duration {
			break
		}
		if i%progressEvery == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
			if rc.Progress != nil && at > reported {
				rc.Progress(at - reported)
				reported = at
			}
		}
		now := cfg.Start.Add(at)
		res.Series = append(res.Series, w.Snapshot(now))
		if err := as.Step(ctx, now); err != nil {
			return Result{}, fmt.Errorf("%s at %v: %w", name, at, err)
		}
	}
	res.Series = append(res.Series, w.Snapshot(cfg.Start.Add(rc.Duration)))
	if rc.Progress != nil && rc.Duration > reported {
		rc.Progress(rc.Duration - reported)
	}
	res.Scores = w.Scores()
	return res, nil
}
