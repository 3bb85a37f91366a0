package controller

import (
	"fmt"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// holdAfterTakeover keeps a group's fleet from scaling in during the first
// scale-in window after this checker took its lease: the decisions of the
// previous owner within that window are not known here, so the new owner
// scales out as needed but scales in only once a whole window of its own
// has passed.
func holdAfterTakeover(g policy.Settings, d model.Decision, f model.Fleet, l LeaseStatus, now time.Time) model.Decision {
	if !l.Held || l.Since.IsZero() || !f.Known || d.DesiredWorkers >= f.Desired {
		return d
	}
	window := g.WithDefaults().ScaleInStabilization
	if window <= 0 {
		return d // scale-in is not stabilised: there is no window to wait out
	}
	end := l.Since.Add(window)
	if !now.Before(end) {
		return d
	}
	wanted := d.DesiredWorkers
	d.DesiredWorkers = f.Desired
	d.Held = true
	d.HoldReason = fmt.Sprintf("lease taken over %s ago: no scale-in until one scale-in window (%s) has passed", now.Sub(l.Since).Round(time.Second), window)
	d.Reasons = append(d.Reasons, fmt.Sprintf("scale-in to %d held until %s: this checker took the group's lease at %s",
		wanted, end.UTC().Format(time.RFC3339), l.Since.UTC().Format(time.RFC3339)))
	return d
}

// Coordination is this checker's view of the checkers sharing the groups.
type Coordination struct {
	Identity string `json:"identity"`
	Peers    []Peer `json:"peers"`
}

// Coordination returns the checkers sharing the groups; nil when this
// checker runs alone.
func (c *Controller) Coordination() *Coordination {
	c.mu.RLock()
	gate := c.gate
	c.mu.RUnlock()
	if gate == nil {
		return nil
	}
	peers := gate.Peers()
	if peers == nil {
		peers = []Peer{}
	}
	return &Coordination{Identity: gate.Identity(), Peers: peers}
}
