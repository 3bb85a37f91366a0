package peers

import (
	"context"
	"time"
)

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
