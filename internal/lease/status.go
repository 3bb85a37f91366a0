package lease

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Status is what the manager knows of one group's lease.
type Status struct {
	Owner string    // the identity of the owner as last seen; "" when free or unknown
	Held  bool      // this checker holds it
	Since time.Time // when this checker took it; zero when not held
	// Acting is whether this checker may act on it now (see Permit).
	Acting  bool
	Expires time.Time // end of the lease as last seen or written
}

// Status returns what is known of a group's lease.
func (m *Manager) Status(group string) Status {
	_, acting := m.Permit(group)
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.held[group]; ok {
		return Status{Owner: m.id, Held: true, Since: h.since, Acting: acting, Expires: h.until}
	}
	it := m.owners[group]
	if !it.expires.After(m.now()) {
		return Status{Expires: it.expires}
	}
	return Status{Owner: it.owner, Expires: it.expires}
}

// Peer is a live checker and the number of leases it holds.
type Peer struct {
	Identity string    `json:"identity"`
	Leases   int       `json:"leases"`
	Expires  time.Time `json:"expires"` // end of its heartbeat
}

// Peers lists the live checkers seen at the last Sync, this one included.
func (m *Manager) Peers() []Peer {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	counts := map[string]int{}
	for _, it := range m.owners {
		if it.owner != "" && it.expires.After(now) {
			counts[it.owner]++
		}
	}
	counts[m.id] = len(m.held)
	out := make([]Peer, 0, len(m.peers))
	for p, exp := range m.peers {
		out = append(out, Peer{Identity: p, Leases: counts[p], Expires: exp})
	}
	slices.SortFunc(out, func(a, b Peer) int { return strings.Compare(a.Identity, b.Identity) })
	return out
}

// Unowned returns the groups this checker serves that no live checker has
// held for longer than a lease duration, as seen at the last Sync, sorted.
// Free leases are taken within an interval or two, so such a group is one
// that something keeps every checker from taking: every checker serving it
// reports it, since its owner's metrics, which would fire its alerts, do
// not exist.
func (m *Manager) Unowned() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.unowned(m.lastScan)
}

func (m *Manager) unowned(now time.Time) []string {
	var out []string
	for g, since := range m.freeSince {
		if now.Sub(since) > m.duration && slices.Contains(m.groups, g) {
			out = append(out, g)
		}
	}
	slices.Sort(out)
	return out
}

// Healthy returns nil while the table has answered within a lease
// duration (counting from the first Sync), and an error saying what is
// wrong otherwise. What the table holds is no matter of liveness: a
// restart changes no item (see Degraded).
func (m *Manager) Healthy() error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.syncs == 0 {
		return nil
	}
	ref := m.lastOK
	if ref.IsZero() {
		ref = m.started
	}
	if age := now.Sub(ref); age > m.duration {
		err := fmt.Errorf("%s: no good exchange for %s (lease duration %s); acting on no group", m.st, age.Round(time.Second), m.duration)
		if m.lastErr != nil {
			err = fmt.Errorf("%w: %w", err, m.lastErr)
		}
		return err
	}
	return nil
}

// Degraded returns an error naming the groups served that have had no
// owner for more than a lease duration (see Unowned), and nil when there
// are none: a problem of the table's data, for readiness and the status
// page, that restarting the checker would not mend.
func (m *Manager) Degraded() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	un := m.unowned(m.lastScan)
	if len(un) == 0 {
		return nil
	}
	shown := un
	if len(shown) > 10 {
		shown = shown[:10]
	}
	more := ""
	if len(un) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(un)-len(shown))
	}
	bad := ""
	if len(m.bad) > 0 {
		bad = fmt.Sprintf(" (%d item(s) of the table not as a checker writes them, see checker_lease_bad_items and the log)", len(m.bad))
	}
	return fmt.Errorf("%s: %d group(s) with no owner for more than a lease duration (%s): %s%s%s",
		m.st, len(un), m.duration, strings.Join(shown, ", "), more, bad)
}
