package readmodel

import "github.com/queuechecker/queue-checker/internal/model"

// Coordination is this checker's view of the checkers sharing the groups.
type Coordination struct {
	Identity string       `json:"identity"`
	Peers    []model.Peer `json:"peers"`
}

// Coordination returns the checkers sharing the groups; nil when this
// checker runs alone.
func (m *Model) Coordination() *Coordination {
	if m.leases == nil {
		return nil
	}
	peers := m.leases.Peers()
	if peers == nil {
		peers = []model.Peer{}
	}
	return &Coordination{Identity: m.leases.Identity(), Peers: peers}
}
