package controller

import (
	"fmt"
	"time"
)

// Health states, as /healthz reports them.
const (
	HealthOK        = "ok"        // a good cycle within the staleness period
	HealthStarting  = "starting"  // no good cycle yet, and the staleness period since the start has not passed
	HealthUnhealthy = "unhealthy" // no good cycle within the staleness period
	// HealthDegraded is a live checker whose data keeps it from doing its
	// whole job (a group nobody can take): not ready, but alive, since a
	// restart would not mend it.
	HealthDegraded = "degraded"
)

// Degrader is a Gate that can report a problem of its data, as opposed to
// one of reaching it (Healthy).
type Degrader interface {
	Degraded() error
}

// Health is the controller's health at one time: a state and, unless it is
// ok, why.
type Health struct {
	State  string
	Detail string
}

// Health reports the controller's health at now. started is when the
// process started the loop (zero: the time of the first cycle). A good cycle
// within stale is ok. Before any good cycle, the controller is starting
// until stale has passed since started, whether the first cycle is still
// running or cycles have failed, and unhealthy after: a checker whose every
// cycle fails is never reported ok.
func (c *Controller) Health(now, started time.Time, stale time.Duration) Health {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.restartNeeded != "" {
		return Health{HealthUnhealthy, "restart needed: " + c.restartNeeded}
	}
	cause := ""
	if c.lastErr != nil {
		cause = ": " + c.lastErr.Error()
	}
	if !c.lastGood.IsZero() {
		if age := now.Sub(c.lastGood); age > stale {
			return Health{HealthUnhealthy, fmt.Sprintf("last good cycle %s ago (limit %s)%s", age.Round(time.Second), stale, cause)}
		}
		if c.gate != nil {
			if err := c.gate.Healthy(); err != nil {
				return Health{HealthUnhealthy, err.Error()}
			}
			if d, ok := c.gate.(Degrader); ok {
				if err := d.Degraded(); err != nil {
					return Health{HealthDegraded, err.Error()}
				}
			}
		}
		return Health{State: HealthOK}
	}
	ref := started
	if ref.IsZero() {
		ref = c.firstRun
	}
	since := now.Sub(ref)
	switch {
	case c.cycles == 0 && (ref.IsZero() || since <= stale):
		return Health{HealthStarting, "the first cycle is still running"}
	case c.cycles == 0:
		return Health{HealthUnhealthy, fmt.Sprintf("the first cycle has not finished after %s (limit %s)", since.Round(time.Second), stale)}
	case since <= stale:
		return Health{HealthStarting, fmt.Sprintf("no good cycle yet: %d failed in %s%s", c.cycles, since.Round(time.Second), cause)}
	}
	return Health{HealthUnhealthy, fmt.Sprintf("no good cycle in %s since the start (limit %s; %d failed)%s", since.Round(time.Second), stale, c.cycles, cause)}
}

// SetRestartNeeded marks the controller as running a configuration that a
// refused reload wanted to change in a way only a restart applies (why, or
// "" to clear it): Health is unhealthy while it is set, so that an
// orchestrator restarts the checker, and no cycle acts meanwhile (see
// mayAct).
func (c *Controller) SetRestartNeeded(why string) {
	c.mu.Lock()
	c.restartNeeded = why
	c.mu.Unlock()
}
