package controller

import (
	"fmt"
	"time"
)

// Health states, as /healthz and /livez report them.
const (
	HealthOK        = "ok"        // a good cycle within the staleness period
	HealthStarting  = "starting"  // no good cycle yet, and the staleness period since the start has not passed
	HealthUnhealthy = "unhealthy" // no good cycle within the staleness period
	// HealthDegraded is a live checker whose data keeps it from doing its
	// whole job (a group nobody can take): not ready, but alive, since a
	// restart would not mend it.
	HealthDegraded = "degraded"
	// HealthWedged is Live's state when the loop has stopped running
	// cycles.
	HealthWedged = "wedged"
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

// Health reports the controller's readiness at now, as /healthz and /readyz
// answer. started is when the process started the loop (zero: the time of
// the first cycle). A good cycle within stale is ok. Before any good cycle,
// the controller is starting until stale has passed since started, whether
// the first cycle is still running or cycles have failed, and unhealthy
// after: a checker whose every cycle fails is never reported ok.
func (c *Controller) Health(now, started time.Time, stale time.Duration) Health {
	ready, _ := c.probe(now, started, stale)
	return ready
}

// Live reports whether the loop runs, as /livez answers: starting until the
// first cycle has finished, whatever its outcome; ok while a cycle started
// within stale of now, however it went (AWS or IAM errors, groups without
// an owner, held decisions: the loop runs, and a restart would only lose
// its windows); wedged when the last cycle to finish started longer than
// stale ago (a cycle runs under a deadline shorter than the interval, so
// only a loop that stopped gets there).
// A refused reload that needs a restart (SetRestartNeeded) is unhealthy
// here too: a restart is what it asks for.
func (c *Controller) Live(now time.Time, stale time.Duration) Health {
	_, live := c.probe(now, time.Time{}, stale)
	return live
}

// probe computes both answers from one reading of the loop's state: ready
// (Health) and live (Live).
func (c *Controller) probe(now, started time.Time, stale time.Duration) (ready, live Health) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.restartNeeded != "" {
		h := Health{HealthUnhealthy, "restart needed: " + c.restartNeeded}
		return h, h
	}
	switch age := now.Sub(c.lastRun); {
	case c.cycles == 0:
		live = Health{HealthStarting, "the first cycle is still running"}
	case age > stale:
		live = Health{HealthWedged, fmt.Sprintf("the last cycle to finish started %s ago (limit %s)", age.Round(time.Second), stale)}
	default:
		live = Health{State: HealthOK}
	}
	return c.ready(now, started, stale), live
}

// ready is Health's answer; c.mu is held.
func (c *Controller) ready(now, started time.Time, stale time.Duration) Health {
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
