package peers

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Params are the peers' own parameters, each at the value its
// documentation gives by default (or tells its users to choose); every one
// is a flag of `checker simulate`.
type Params struct {
	// KEDAQueueLength is the aws-sqs-queue scaler's queueLength, messages
	// per replica; 0 derives it as KEDA's docs tell users to: the messages
	// one replica handles within the promise (latency ÷ service time ×
	// concurrency), with the service time of the Settings.
	KEDAQueueLength float64
	// KEDAPolling is how often KEDA reads the queue (pollingInterval,
	// default 30 s); the HPA sees the value read last. 0: read at every
	// HPA sync.
	KEDAPolling time.Duration
	// HPASync is the HPA's sync period (--horizontal-pod-autoscaler-sync-period,
	// default 15 s).
	HPASync time.Duration
	// HPADownWindow is the HPA's scale-down stabilisation window (default 300 s).
	HPADownWindow time.Duration

	// TTMetricLag is how long after its minute ends an SQS datapoint can be
	// read from CloudWatch.
	TTMetricLag time.Duration
	// TTOutPoints and TTInPoints are the datapoints the target-tracking
	// alarms need above (scale out) and below (scale in) the target: 3 and 15.
	TTOutPoints, TTInPoints int
	// TTInBelow is the share of the target the metric must stay under for
	// a scale-in (0.9: scale-in waits for the metric to be clearly low).
	TTInBelow float64
	// TTInStep is the most one scale-in removes, in percent of the desired
	// count (at least one worker).
	TTInStep float64
	// TTInCooldown is the scale-in cooldown (default 300 s).
	TTInCooldown time.Duration

	// StepPeriod is the period of the step alarms' datapoints (1 minute,
	// the checker's published metric averaged per minute).
	StepPeriod time.Duration
	// StepCooldown is the simple-scaling cooldown (EC2 Auto Scaling's
	// default, 300 s).
	StepCooldown time.Duration
}

// Defaults are the peers' documented defaults.
func Defaults() Params {
	return Params{
		KEDAPolling:   30 * time.Second,
		HPASync:       15 * time.Second,
		HPADownWindow: 300 * time.Second,
		TTMetricLag:   time.Minute,
		TTOutPoints:   3,
		TTInPoints:    15,
		TTInBelow:     0.9,
		TTInStep:      10,
		TTInCooldown:  300 * time.Second,
		StepPeriod:    time.Minute,
		StepCooldown:  300 * time.Second,
	}
}

// Validate names every parameter out of range.
func (p Params) Validate() error {
	var errs []error
	bad := func(name string, v any, want string) { errs = append(errs, fmt.Errorf("%s %v: %s", name, v, want)) }
	if !(p.KEDAQueueLength >= 0) || math.IsInf(p.KEDAQueueLength, 0) {
		bad("KEDA queue length", p.KEDAQueueLength, "must be a finite number >= 0")
	}
	if p.KEDAPolling < 0 || p.KEDAPolling > time.Hour {
		bad("KEDA polling interval", p.KEDAPolling, "must be within 0 and 1h")
	}
	if p.HPASync < time.Second || p.HPASync > time.Hour {
		bad("HPA sync period", p.HPASync, "must be within 1s and 1h")
	}
	if p.HPADownWindow < 0 || p.HPADownWindow > 24*time.Hour {
		bad("HPA scale-down window", p.HPADownWindow, "must be within 0 and 24h")
	}
	if p.TTMetricLag < 0 || p.TTMetricLag > time.Hour {
		bad("target-tracking metric lag", p.TTMetricLag, "must be within 0 and 1h")
	}
	if p.TTOutPoints < 1 || p.TTOutPoints > 60 || p.TTInPoints < 1 || p.TTInPoints > 60 {
		bad("target-tracking datapoints", fmt.Sprintf("%d/%d", p.TTOutPoints, p.TTInPoints), "must be within 1 and 60")
	}
	if !(p.TTInBelow > 0 && p.TTInBelow <= 1) {
		bad("target-tracking scale-in share", p.TTInBelow, "must be within 0 (excluded) and 1")
	}
	if !(p.TTInStep > 0 && p.TTInStep <= 100) {
		bad("target-tracking scale-in step", p.TTInStep, "must be within 0 (excluded) and 100 percent")
	}
	if p.TTInCooldown < 0 || p.TTInCooldown > 24*time.Hour {
		bad("target-tracking scale-in cooldown", p.TTInCooldown, "must be within 0 and 24h")
	}
	if p.StepPeriod < 10*time.Second || p.StepPeriod > time.Hour {
		bad("step alarm period", p.StepPeriod, "must be within 10s and 1h")
	}
	if p.StepCooldown < 0 || p.StepCooldown > 24*time.Hour {
		bad("step cooldown", p.StepCooldown, "must be within 0 and 24h")
	}
	return errors.Join(errs...)
}
