package controller

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
