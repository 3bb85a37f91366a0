package policy

// safety applies the guards that make the checker safe to own a fleet,
// after the sizing guards and before the clamp: it says when the fleet was
// not read (so nothing per worker can be trusted).
func (c *call) safety() {
	switch {
	case c.fleet.Kind == "":
		c.reason("no fleet is read: current workers are the last desired count; per-worker metrics are not published")
	case !c.fleet.Known:
		c.reason("the fleet was not read: only Backlog and OldestMessageAge are published, so a policy tracking the per-worker ratio sees no data and holds")
	}
}
