// Package controllertest provides fakes of the controller's interfaces for
// the tests of the packages that drive a controller.Controller: an
// Observer that answers with what a function returns and an Actuator that
// records what it is asked to do.
//
// It imports only the model, so that the controller's own tests can use it.
package controllertest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// ObserveFunc answers one Observe call.
type ObserveFunc func(ctx context.Context, now time.Time) ([]model.Observation, error)

// Observer is a controller.Observer that answers with what Func returns
// (no observations when Func is nil) and counts its calls. It is safe for
// concurrent use when Func is.
type Observer struct {
	Func  ObserveFunc
	calls atomic.Int32
}

// NewObserver returns an Observer answering with f.
func NewObserver(f ObserveFunc) *Observer { return &Observer{Func: f} }

// Observe counts the call and returns what Func returns.
func (o *Observer) Observe(ctx context.Context, now time.Time) ([]model.Observation, error) {
	o.calls.Add(1)
	if o.Func == nil {
		return nil, nil
	}
	return o.Func(ctx, now)
}

// Calls is the number of Observe calls so far.
func (o *Observer) Calls() int { return int(o.calls.Load()) }

// Apply is one call of an Actuator that succeeded.
type Apply struct {
	Decision model.Decision
	Fleet    model.Fleet
	Deadline time.Time // the context's deadline; zero when it had none
}

// Actuator is a controller.Actuator that fails for the groups in Fail and
// otherwise records the call and reports the fleet set to the decision's
// count (Scaled when that differs from the fleet's desired count). It is
// safe for concurrent use; Fail must not change while the controller runs.
type Actuator struct {
	Fail map[string]error

	mu      sync.Mutex
	applied []Apply
}

// Apply records d unless d's group is in Fail.
func (a *Actuator) Apply(ctx context.Context, d model.Decision, f model.Fleet) (model.Action, error) {
	if err := a.Fail[d.Group]; err != nil {
		return model.Action{}, err
	}
	dl, _ := ctx.Deadline()
	a.mu.Lock()
	a.applied = append(a.applied, Apply{Decision: d, Fleet: f, Deadline: dl})
	a.mu.Unlock()
	return model.Action{Group: d.Group, Scaled: d.DesiredWorkers != f.Desired, From: f.Desired, To: d.DesiredWorkers}, nil
}

// Applied returns the recorded calls, in order.
func (a *Actuator) Applied() []Apply {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]Apply(nil), a.applied...)
}

// Last returns the last recorded call for group.
func (a *Actuator) Last(group string) (Apply, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.applied) - 1; i >= 0; i-- {
		if a.applied[i].Decision.Group == group {
			return a.applied[i], true
		}
	}
	return Apply{}, false
}
