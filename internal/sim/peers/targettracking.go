package peers

import (
	"context"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

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
