package controller

import (
	"fmt"
	"time"
)

// HealthWedged is Live's state when the loop has stopped running cycles.
const HealthWedged = "wedged"

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
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.restartNeeded != "":
		return Health{HealthUnhealthy, "restart needed: " + c.restartNeeded}
	case c.cycles == 0:
		return Health{HealthStarting, "the first cycle is still running"}
	}
	if age := now.Sub(c.lastRun); age > stale {
		return Health{HealthWedged, fmt.Sprintf("the last cycle to finish started %s ago (limit %s)", age.Round(time.Second), stale)}
	}
	return Health{State: HealthOK}
}
