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

// Gate shares the groups with other checkers (internal/lease, over
// DynamoDB): the controller acts on a group only while the gate permits
// it. Without a gate the controller acts on every group.
type Gate interface {
	// Sync renews, takes and balances this checker's leases as of now, the
	// cycle's time. It runs at the start of every cycle; an error means
	// some of it failed, and the groups whose leases were not renewed are
	// not acted on. The gate logs its failures itself and reports them
	// through Healthy.
	Sync(ctx context.Context, now time.Time) error
	// Permit reports whether this checker may act on a group now, for at
	// least one action's deadline, and until when its lease runs.
	Permit(group string) (until time.Time, ok bool)
	// Lease describes a group's lease: the cycle reads whether it is
	// held and since when; the views show it.
	Lease(group string) model.LeaseStatus
	// Peers lists the live checkers, this one included.
	Peers() []model.Peer
	// Identity names this checker among its peers.
	Identity() string
	// Healthy returns an error while the gate cannot reach its table.
	Healthy() error
}

// LoadExpecter is an Observer that samples quiet queues less often and can be
// told that a group expects load (the poller's idle backoff): the
// controller tells it while a decision's forecast expects load, so that the
// first messages of a forecast job are seen within an interval.
type LoadExpecter interface {
	SetExpectingLoad(group string, until time.Time)
}

// GroupActivator is an Observer that can leave groups out (the poller):
// with a Gate, the controller keeps active only the groups whose lease
// this checker holds, so that a checker polls only its share.
type GroupActivator interface {
	SetGroupActive(group string, active bool)
}
