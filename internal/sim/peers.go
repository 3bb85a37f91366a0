package sim

import (
	"context"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// Autoscaler is one scaling policy driving a world: Step is called at every
// sampling interval with the time, and scales the world when the policy's
// own schedule says so.
type Autoscaler interface {
	Step(ctx context.Context, now time.Time) error
}

// observeOne returns the world's one observation at now.
func observeOne(ctx context.Context, w *World, now time.Time) (model.Observation, error) {
	obs, err := w.Observe(ctx, now)
	if err != nil {
		return model.Observation{}, err
	}
	return obs[0], nil
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
type KEDA struct {
	w           *World
	QueueLength float64 // target messages per replica
	Sync        time.Duration
	Tolerance   float64
	DownWindow  time.Duration
	UpPods      int     // pods added per UpPeriod at most (policy Pods)
	UpPercent   float64 // percent added per UpPeriod at most (policy Percent)
	UpPeriod    time.Duration

	last   time.Time
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

// NewKEDA makes the KEDA/HPA peer for w with queueLength = latency ÷ service
// time × concurrency, the backlog one replica clears within the latency.
func NewKEDA(w *World, latency time.Duration) *KEDA {
	cfg := w.Config()
	return &KEDA{
		w:           w,
		QueueLength: capacity.TargetBacklogPerWorker(latency.Seconds(), cfg.Service.Mean.Seconds(), max(cfg.Concurrency, 1)),
		Sync:        15 * time.Second,
		Tolerance:   0.1,
		DownWindow:  300 * time.Second,
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
	n := k.decide(float64(o.Sample.Visible+o.Sample.InFlight), o.Fleet, now)
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
// on Amazon SQS", EC2 Auto Scaling User Guide): the checker publishes
// ApproximateNumberOfMessagesVisible ÷ InService instances at every
// interval; CloudWatch aggregates it into 1-minute datapoints (the average);
// the policy's alarms scale out after 3 consecutive datapoints above the
// target and scale in after 15 consecutive below it, each time to
// ceil(current × metric/target). The target is the acceptable backlog per
// instance, latency ÷ service time × concurrency. Instances within their
// warm-up (the start delay) are not in service and so not in the metric's
// instance count, but they do count towards the current capacity, so the
// policy does not launch them twice.
type TargetTracking struct {
	w      *World
	Target float64

	minute   time.Time // start of the minute being aggregated
	sum      float64
	n        int
	points   []float64 // datapoints, newest last (only the last 15 are kept)
	started  bool
	OutAfter int // consecutive breaching datapoints before a scale-out
	InAfter  int // consecutive datapoints below target before a scale-in
}

// NewTargetTracking makes the target-tracking peer for w.
func NewTargetTracking(w *World, latency time.Duration) *TargetTracking {
	cfg := w.Config()
	return &TargetTracking{
		w:        w,
		Target:   capacity.TargetBacklogPerWorker(latency.Seconds(), cfg.Service.Mean.Seconds(), max(cfg.Concurrency, 1)),
		OutAfter: 3,
		InAfter:  15,
	}
}

// Step publishes one sample of the metric and, at each minute's end,
// evaluates the alarms on the minute's datapoint.
func (p *TargetTracking) Step(ctx context.Context, now time.Time) error {
	o, err := observeOne(ctx, p.w, now)
	if err != nil {
		return err
	}
	if !p.started {
		p.minute, p.started = now, true
	}
	for !now.Before(p.minute.Add(time.Minute)) {
		if p.n > 0 {
			p.points = append(p.points, p.sum/float64(p.n))
			if len(p.points) > p.InAfter {
				p.points = p.points[len(p.points)-p.InAfter:]
			}
			if n, ok := p.decide(o.Fleet); ok {
				p.w.SetDesired(now, n)
			}
		}
		p.minute = p.minute.Add(time.Minute)
		p.sum, p.n = 0, 0
	}
	p.sum += float64(o.Sample.Visible) / float64(max(o.Fleet.InService, 1))
	p.n++
	return nil
}

// decide evaluates the alarms on the datapoints: the new desired count and
// whether an alarm fired.
func (p *TargetTracking) decide(f model.Fleet) (int, bool) {
	if p.Target <= 0 || len(p.points) == 0 {
		return 0, false
	}
	last := p.points[len(p.points)-1]
	base := max(f.InService, 1)
	want := capacity.CeilWorkers(float64(base) * last / p.Target)
	if tail(p.points, p.OutAfter, func(v float64) bool { return v > p.Target }) && want > f.Desired {
		return want, true
	}
	if tail(p.points, p.InAfter, func(v float64) bool { return v < p.Target }) && want < f.Desired {
		return max(want, f.Min), true
	}
	return 0, false
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

// StepScaling models seed 003's simple/step scaling on the published queue
// depth (ApproximateNumberOfMessagesVisible, sampled every interval):
// CloudWatch alarms on the 5-minute average add one worker at 1,000
// messages, two at 1,500, and remove one below 100; after a scaling
// activity no other starts until the cooldown (EC2 Auto Scaling's default
// 300 s) has passed. An alarm that stays in ALARM acts again at the next
// evaluation.
type StepScaling struct {
	w        *World
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

// NewStepScaling makes the seed 003 step-scaling peer for w.
func NewStepScaling(w *World) *StepScaling {
	return &StepScaling{w: w, Period: 5 * time.Minute, Cooldown: 300 * time.Second, Low: 1000, High: 1500, Safe: 100}
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

// Oracle is a clairvoyant lower bound on the cost of the promise. It knows
// the scenario's arrival rate ahead of time, its workers start at once (its
// world has no start delay), and at every interval it sizes the fleet for
// the highest rate until the next interval: the fewest workers for which,
// by Erlang C, at most 1 % of messages wait longer than the latency target,
// raised if needed to clear any backlog within the latency target. No
// reactive policy, which must first see load and then wait out the start
// delay, can hold the promise for less, except by luck.
type Oracle struct {
	w        *World
	Latency  time.Duration
	Interval time.Duration
	Miss     float64 // share of messages allowed past the target in the Erlang C model
}

// NewOracle makes the oracle for w, which should have no start delay.
func NewOracle(w *World, latency, interval time.Duration) *Oracle {
	return &Oracle{w: w, Latency: latency, Interval: interval, Miss: 0.01}
}

// Step sizes the fleet for the coming interval.
func (p *Oracle) Step(ctx context.Context, now time.Time) error {
	o, err := observeOne(ctx, p.w, now)
	if err != nil {
		return err
	}
	p.w.SetDesired(now, p.size(o.Sample, now))
	return nil
}

func (p *Oracle) size(s model.GroupSample, now time.Time) int {
	cfg := p.w.Config()
	from := now.Sub(cfg.Start)
	rate := cfg.Scenario.MaxRate(from, from+p.Interval)
	conc := max(cfg.Concurrency, 1)
	perSlot := 1 / cfg.Service.Mean.Seconds()
	slots, ok := capacity.WaitQuantileFloor(rate, perSlot, p.Latency.Seconds(), p.Miss)
	if !ok {
		return cfg.Max
	}
	n := (slots + conc - 1) / conc
	if lat := p.Latency.Seconds(); lat > 0 && s.Visible > 0 {
		n = max(n, capacity.DrainFloor(rate, perSlot*float64(conc), float64(s.Visible), lat))
	}
	return n
}
