// Package peers models the autoscalers the checker is compared with in the
// simulator, each as its documentation describes it and with its documented
// defaults: a fixed fleet, KEDA's aws-sqs-queue scaler under the Kubernetes
// Horizontal Pod Autoscaler, EC2 Auto Scaling target tracking on backlog per
// instance, and step scaling on queue-depth alarms.
//
// A peer sees a queue and its fleet only through World: the observations a
// poller would make and the desired count it sets. What it is told of the
// group (the promise, the service time the settings assume, the
// concurrency) it is given at construction, as its users would set it.
package peers

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// World is the queue and fleet a peer scales: Observe advances it to now and
// returns what a poller would see (one observation, of one group);
// SetDesired advances it to now and sets the fleet's desired count, clamped
// to the fleet's bounds, reporting whether the count changed.
type World interface {
	Observe(ctx context.Context, now time.Time) ([]model.Observation, error)
	SetDesired(now time.Time, n int) bool
}

// Settings are what a peer's user knows of the group when setting its
// target: the promise, the mean service time they believe a message takes
// (the one the group's settings give, which the world need not have) and
// the messages one worker handles at once.
type Settings struct {
	Latency     time.Duration
	ServiceTime time.Duration
	Concurrency int // 1 when 0
}

// backlogPerWorker is the backlog one worker clears within the promise:
// latency ÷ service time × concurrency.
func (s Settings) backlogPerWorker() float64 {
	return capacity.TargetBacklogPerWorker(s.Latency.Seconds(), s.ServiceTime.Seconds(), max(s.Concurrency, 1))
}

// observeOne returns the world's one observation at now.
func observeOne(ctx context.Context, w World, now time.Time) (model.Observation, error) {
	obs, err := w.Observe(ctx, now)
	if err != nil {
		return model.Observation{}, err
	}
	if len(obs) != 1 {
		return model.Observation{}, fmt.Errorf("%d observations, want 1", len(obs))
	}
	return obs[0], nil
}

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

// Fixed never scales: the fleet stays at its starting size.
type Fixed struct{}

// Step does nothing.
func (Fixed) Step(context.Context, time.Time) error { return nil }

// KEDA models KEDA's aws-sqs-queue scaler feeding the Kubernetes Horizontal
// Pod Autoscaler, with their documented defaults.
//
// KEDA (https://keda.sh/docs/latest/scalers/aws-sqs/): the metric is
// ApproximateNumberOfMessages plus ApproximateNumberOfMessagesNotVisible
// (scaleOnInFlight defaults to true), exposed as an AverageValue external
// metric with target `queueLength` messages per replica.
//
// HPA (https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/):
// every sync period (15 s) desired = ceil(current × metric/target), which for
// an AverageValue target is ceil(total/queueLength); no change while the
// ratio is within the tolerance 0.1 of 1. Default behaviour: scale-down is
// stabilised over 300 s (the highest recommendation in the window wins);
// scale-up is immediate but limited per 15 s to the larger of +100 % and +4
// pods.
//
// The queue is read every pollingInterval (KEDA's ScaledObject default,
// 30 s; https://keda.sh/docs/latest/reference/scaledobject-spec/), and the
// HPA acts on the value read last, as with the trigger's useCachedMetrics:
// a change of depth reaches the HPA up to 30 s + 15 s late.
type KEDA struct {
	w           World
	QueueLength float64 // target messages per replica
	Polling     time.Duration
	Sync        time.Duration
	Tolerance   float64
	DownWindow  time.Duration
	UpPods      int     // pods added per UpPeriod at most (policy Pods)
	UpPercent   float64 // percent added per UpPeriod at most (policy Percent)
	UpPeriod    time.Duration

	last   time.Time
	polled time.Time
	metric float64
	recs   []recommendation
	events []scaleEvent
}

type recommendation struct {
	at time.Time
	n  int
}

type scaleEvent struct {
	at     time.Time
	change int
}

// NewKEDA makes the KEDA/HPA peer for w with the parameters' polling and
// sync, and their queueLength or else latency ÷ service time × concurrency,
// the backlog one replica clears within the latency (the scaler's docs:
// "if one pod can handle 10 messages, set the queue length target to 10").
// The service time is the one the settings give: a user sets queueLength
// from what they believe a message takes, as the checker's settings do.
func NewKEDA(w World, s Settings, pp Params) *KEDA {
	ql := pp.KEDAQueueLength
	if ql <= 0 {
		ql = s.backlogPerWorker()
	}
	return &KEDA{
		w:           w,
		QueueLength: ql,
		Polling:     pp.KEDAPolling,
		Sync:        pp.HPASync,
		Tolerance:   0.1,
		DownWindow:  pp.HPADownWindow,
		UpPods:      4,
		UpPercent:   100,
		UpPeriod:    15 * time.Second,
	}
}

// Step runs one HPA sync when the sync period has passed.
func (k *KEDA) Step(ctx context.Context, now time.Time) error {
	if !k.last.IsZero() && now.Sub(k.last) < k.Sync {
		return nil
	}
	k.last = now
	o, err := observeOne(ctx, k.w, now)
	if err != nil {
		return err
	}
	if k.polled.IsZero() || now.Sub(k.polled) >= k.Polling {
		k.polled = now
		k.metric = float64(o.Sample.Visible + o.Sample.InFlight)
	}
	n := k.decide(k.metric, o.Fleet, now)
	if k.w.SetDesired(now, n) {
		k.events = append(k.events, scaleEvent{now, n - o.Fleet.Desired})
	}
	return nil
}

// decide is one HPA reconciliation: the raw recommendation, its
// stabilisation, and the rate limits.
func (k *KEDA) decide(metric float64, f model.Fleet, now time.Time) int {
	current := f.Desired                // the scale target's spec.replicas
	replicas := f.InService + f.Pending // pods that exist (status.replicas)
	rec := current
	if k.QueueLength > 0 {
		if replicas == 0 {
			rec = capacity.CeilWorkers(metric / k.QueueLength)
		} else if ratio := metric / (k.QueueLength * float64(replicas)); math.Abs(ratio-1) > k.Tolerance {
			rec = capacity.CeilWorkers(metric / k.QueueLength)
		} else {
			rec = replicas
		}
	}
	rec = min(max(rec, f.Min), f.Max)

	// The HPA seeds a new target's recommendations with its current
	// replica count, so the first scale-down waits out the window too.
	if k.recs == nil {
		k.recs = []recommendation{{now, current}}
	}

	// Stabilisation: a scale-down goes only as low as the highest
	// recommendation within the window; scale-up has no window.
	k.recs = append(k.recs, recommendation{now, rec})
	cut := 0
	for cut < len(k.recs) && now.Sub(k.recs[cut].at) > k.DownWindow {
		cut++
	}
	k.recs = k.recs[cut:]
	down := rec
	for _, r := range k.recs {
		down = max(down, r.n)
	}
	out := current
	if rec > out {
		out = rec
	}
	if out > down {
		out = down
	}

	// Scale-up limit: over the last period, at most the larger of
	// +UpPercent % and +UpPods of the replicas at the period's start.
	if out > current {
		added := 0
		ecut := 0
		for ecut < len(k.events) && now.Sub(k.events[ecut].at) >= k.UpPeriod {
			ecut++
		}
		k.events = k.events[ecut:]
		for _, e := range k.events {
			added += e.change
		}
		base := current - added
		limit := max(base+k.UpPods, capacity.CeilWorkers(float64(base)*(1+k.UpPercent/100)))
		out = min(out, limit)
	}
	return min(max(out, f.Min), f.Max)
}

// TargetTracking models an EC2 Auto Scaling target-tracking policy on the
// backlog per instance, as AWS documents it for SQS ("Scaling policy based
// on Amazon SQS", EC2 Auto Scaling User Guide): the metric is the queue's
// ApproximateNumberOfMessagesVisible divided by the group's in-service
// instances, both 1-minute CloudWatch averages; the target is the
// acceptable backlog per instance, latency ÷ service time × concurrency,
// with the service time the group's settings assume.
//
//   - SQS publishes its metrics to CloudWatch once a minute and they arrive
//     late ("Available CloudWatch metrics for Amazon SQS", SQS Developer
//     Guide): a minute's datapoint is read TTMetricLag after the minute ends.
//   - The alarms target tracking creates need 3 datapoints above the target
//     to scale out and 15 below it to scale in ("Target tracking scaling
//     policies", EC2 Auto Scaling User Guide); scale-out goes to
//     ceil(in service × metric ÷ target) at once, counting instances still
//     warming up (the start delay) as capacity already added.
//   - Scale-in is gradual: the same guide says the group scales out as fast
//     as it can but scales in more gradually, and only when the metric is
//     well below the target. AWS does not publish the step; here each
//     scale-in removes at most TTInStep percent of the desired count (at
//     least one), the metric must be under TTInBelow × target, and
//     scale-ins are TTInCooldown apart (the scale-in cooldown, 300 s).
type TargetTracking struct {
	w        World
	Target   float64
	Lag      time.Duration
	OutAfter int     // consecutive breaching datapoints before a scale-out
	InAfter  int     // consecutive datapoints below InBelow × Target before a scale-in
	InBelow  float64 // share of the target
	InStep   float64 // percent of the desired count one scale-in removes at most
	Cooldown time.Duration

	minute   time.Time // start of the minute being aggregated
	visible  float64   // sums over the minute's samples
	service  float64
	n        int
	started  bool
	waiting  []ttPoint // closed minutes not yet readable
	points   []float64 // readable datapoints, newest last (only the last InAfter are kept)
	lastIn   time.Time
	inActive bool
}

type ttPoint struct {
	readable time.Time
	value    float64
}

// NewTargetTracking makes the target-tracking peer for w, its target the
// backlog one instance clears within the promise by the settings.
func NewTargetTracking(w World, s Settings, pp Params) *TargetTracking {
	return &TargetTracking{
		w:        w,
		Target:   s.backlogPerWorker(),
		Lag:      pp.TTMetricLag,
		OutAfter: pp.TTOutPoints,
		InAfter:  pp.TTInPoints,
		InBelow:  pp.TTInBelow,
		InStep:   pp.TTInStep,
		Cooldown: pp.TTInCooldown,
	}
}

// Step adds one sample to the minute being aggregated, closes the minutes
// that have ended, and when a datapoint becomes readable evaluates the
// alarms on the datapoints read so far.
func (p *TargetTracking) Step(ctx context.Context, now time.Time) error {
	o, err := observeOne(ctx, p.w, now)
	if err != nil {
		return err
	}
	if !p.started {
		p.minute, p.started = now, true
	}
	for !now.Before(p.minute.Add(time.Minute)) {
		end := p.minute.Add(time.Minute)
		if p.n > 0 {
			v := p.visible / float64(p.n)
			in := p.service / float64(p.n)
			p.waiting = append(p.waiting, ttPoint{readable: end.Add(p.Lag), value: v / math.Max(in, 1)})
		}
		p.minute = end
		p.visible, p.service, p.n = 0, 0, 0
	}
	fresh := false
	for len(p.waiting) > 0 && !now.Before(p.waiting[0].readable) {
		p.points = append(p.points, p.waiting[0].value)
		p.waiting = p.waiting[1:]
		fresh = true
	}
	if len(p.points) > max(p.InAfter, p.OutAfter) {
		p.points = p.points[len(p.points)-max(p.InAfter, p.OutAfter):]
	}
	if fresh {
		if n, ok := p.decide(o.Fleet, now); ok {
			p.w.SetDesired(now, n)
		}
	}
	p.visible += float64(o.Sample.Visible)
	p.service += float64(o.Fleet.InService)
	p.n++
	return nil
}

// decide evaluates the alarms on the datapoints: the new desired count and
// whether an alarm acted.
func (p *TargetTracking) decide(f model.Fleet, now time.Time) (int, bool) {
	if p.Target <= 0 || len(p.points) == 0 {
		return 0, false
	}
	last := p.points[len(p.points)-1]
	base := max(f.InService, 1)
	want := capacity.CeilWorkers(float64(base) * last / p.Target)
	if tail(p.points, p.OutAfter, func(v float64) bool { return v > p.Target }) && want > f.Desired {
		return want, true
	}
	if !tail(p.points, p.InAfter, func(v float64) bool { return v < p.InBelow*p.Target }) || want >= f.Desired {
		return 0, false
	}
	if p.inActive && now.Sub(p.lastIn) < p.Cooldown {
		return 0, false
	}
	step := max(1, int(math.Ceil(float64(f.Desired)*p.InStep/100)))
	n := max(want, f.Desired-step, f.Min)
	if n >= f.Desired {
		return 0, false
	}
	p.lastIn, p.inActive = now, true
	return n, true
}

// tail reports whether the last n values all satisfy ok.
func tail(vs []float64, n int, ok func(float64) bool) bool {
	if len(vs) < n {
		return false
	}
	for _, v := range vs[len(vs)-n:] {
		if !ok(v) {
			return false
		}
	}
	return true
}

// StepScaling models simple/step scaling on CloudWatch alarms on the queue depth the
// checker publishes (ApproximateNumberOfMessagesVisible, sampled every
// interval, so each 1-minute datapoint is the average of several samples,
// as the usual recipe for faster alarms has it): alarms on each 1-minute datapoint add one
// worker at 1,000 messages, two at 1,500, and remove one below 100 (the
// recipe's three alarms); after a scaling activity no other starts until the
// cooldown (EC2 Auto Scaling's default, 300 s) has passed. An alarm that
// stays in ALARM acts again at the next evaluation.
type StepScaling struct {
	w        World
	Period   time.Duration
	Cooldown time.Duration
	Low      float64 // +1 at or above
	High     float64 // +2 at or above
	Safe     float64 // −1 below

	period   time.Time
	sum      float64
	n        int
	started  bool
	lastScal time.Time
}

// NewStepScaling makes the step-scaling peer for w.
func NewStepScaling(w World, pp Params) *StepScaling {
	return &StepScaling{w: w, Period: pp.StepPeriod, Cooldown: pp.StepCooldown, Low: 1000, High: 1500, Safe: 100}
}

// Step publishes one sample and, at each period's end, evaluates the alarms.
func (p *StepScaling) Step(ctx context.Context, now time.Time) error {
	o, err := observeOne(ctx, p.w, now)
	if err != nil {
		return err
	}
	if !p.started {
		p.period, p.started = now, true
	}
	for !now.Before(p.period.Add(p.Period)) {
		if p.n > 0 {
			avg := p.sum / float64(p.n)
			if change := p.change(avg); change != 0 && (p.lastScal.IsZero() || now.Sub(p.lastScal) >= p.Cooldown) {
				if p.w.SetDesired(now, o.Fleet.Desired+change) {
					p.lastScal = now
				}
			}
		}
		p.period = p.period.Add(p.Period)
		p.sum, p.n = 0, 0
	}
	p.sum += float64(o.Sample.Visible)
	p.n++
	return nil
}

func (p *StepScaling) change(avg float64) int {
	switch {
	case avg >= p.High:
		return 2
	case avg >= p.Low:
		return 1
	case avg < p.Safe:
		return -1
	}
	return 0
}
