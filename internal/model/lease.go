package model

import "time"

// LeaseStatus is what this checker knows of a group's lease, when several
// checkers share the groups.
type LeaseStatus struct {
	Owner   string    `json:"owner"`   // identity of the owner as last seen; "" when free
	Held    bool      `json:"held"`    // this checker holds it
	Acting  bool      `json:"acting"`  // this checker may act on the group now
	Since   time.Time `json:"since"`   // when this checker took it; zero when not held
	Expires time.Time `json:"expires"` // end of the lease as last seen
}

// Peer is a live checker sharing the groups.
type Peer struct {
	Identity string    `json:"identity"`
	Leases   int       `json:"leases"`
	Expires  time.Time `json:"expires"` // end of its heartbeat
}
