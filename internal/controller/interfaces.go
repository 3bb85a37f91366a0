package controller

import (
	"context"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Observer samples every group's queues and reads every group's fleet once.
// The poller is the AWS one; the simulator provides another.
type Observer interface {
	// Observe returns one Observation per group, in configuration order.
	// Failures of single queues or fleets are recorded inside the
	// observations (GroupSample.Failures, Fleet.Err), never as zero counts.
	Observe(ctx context.Context, now time.Time) ([]model.Observation, error)
}

// Actuator carries out decisions: it publishes a group's metrics and, when
// the desired count changed and the group's actions allow it, sets it.
// The publisher is the AWS one; the simulator provides another.
type Actuator interface {
	Apply(ctx context.Context, d model.Decision, f model.Fleet) (model.Action, error)
}

// LoadExpecter is an Observer that samples quiet queues less often and can be
// told that a group expects load (the poller's idle backoff): the
// controller tells it while a decision's forecast expects load, so that the
// first messages of a forecast job are seen within an interval.
type LoadExpecter interface {
	SetExpectingLoad(group string, until time.Time)
}
