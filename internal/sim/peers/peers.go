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
	"fmt"
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
