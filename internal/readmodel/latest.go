package readmodel

import "github.com/queuechecker/queue-checker/internal/model"

// Latest is a group's most recent decision as a reader outside the status
// page (the KEDA scaler) needs it: cheap to take, whatever the number of
// groups and the length of their history.
type Latest struct {
	// Decision is the latest decision, nil before the first cycle and
	// while another checker holds the group. A copy, its slices shared: do
	// not modify them.
	Decision *model.Decision
	// Held is false while another checker holds the group's lease (then
	// Owner names it); without leases every group is held.
	Held  bool
	Owner string
}

// Latest returns the latest decision of the group named name, and false
// when no group has that name. It takes the read lock and copies one
// decision.
func (m *Model) Latest(name string) (Latest, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	st, ok := m.states[name]
	if !ok {
		return Latest{}, false
	}
	l := Latest{Held: true}
	if m.leases != nil {
		ls := m.leases.Lease(name)
		l.Held, l.Owner = ls.Held, ls.Owner
	}
	if st.decision != nil && !st.elsewhere {
		d := *st.decision
		l.Decision = &d
	}
	return l, true
}
