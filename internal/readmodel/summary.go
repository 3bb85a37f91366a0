package readmodel

import "github.com/queuechecker/queue-checker/internal/model"

// GroupSummary is the little the status page's overview shows of a group,
// without the history and lists of a GroupView: cheap for thousands of groups.
type GroupSummary struct {
	Name        string
	Decision    *model.Decision // nil before the first cycle; a copy, reasons shared
	FleetError  bool            // the fleet could not be read last cycle
	ActionError bool            // the last action failed
}

// Summaries returns every group's summary, in configuration order.
func (m *Model) Summaries() []GroupSummary {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]GroupSummary, 0, len(m.groups))
	for _, g := range m.groups {
		s := GroupSummary{Name: g.Group}
		if st := m.states[g.Group]; st != nil {
			if st.decision != nil {
				d := *st.decision
				s.Decision = &d
			}
			s.FleetError = st.fleet.Err != nil
			s.ActionError = st.actionErr != ""
		}
		out = append(out, s)
	}
	return out
}

// Group returns the view of the group named name, and false when there is
// none.
func (m *Model) Group(name string) (GroupView, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, g := range m.groups {
		if g.Group == name {
			return m.viewOf(g), true
		}
	}
	return GroupView{}, false
}

// NumGroups returns how many groups are configured.
func (m *Model) NumGroups() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.groups)
}
