package sim

import (
	"fmt"
	"time"
)

// PoolChange sets the connections of the downstream the workers share
// (Config.DownstreamPool) from At on: a pool that grows or shrinks
// mid-run. 0 is no pool. The latest change at or before a dispatch is in
// force.
type PoolChange struct {
	At          time.Duration // since the start
	Connections int
}

func poolChangeErrors(changes []PoolChange) []error {
	var errs []error
	seen := make(map[time.Duration]bool, len(changes))
	for _, c := range changes {
		if c.At < 0 {
			errs = append(errs, fmt.Errorf("pool change at %v: must be at 0 or later", c.At))
		}
		if c.Connections < 0 || c.Connections > MaxSlots {
			errs = append(errs, fmt.Errorf("pool change at %v: %d connections must be within 0 and %d", c.At, c.Connections, MaxSlots))
		}
		if seen[c.At] {
			errs = append(errs, fmt.Errorf("pool change at %v: given twice", c.At))
		}
		seen[c.At] = true
	}
	return errs
}

// newPoolChanges are a world's pool changes in time order, their
// connections.
func newPoolChanges(cs []PoolChange) []timed[int] {
	return inTimeOrder(cs, func(c PoolChange) (time.Duration, int) { return c.At, c.Connections })
}

// widestPool is the most connections the downstream ever has, the most
// workers that can add completions at some time: 0 when at some time
// there is no pool.
func (c Config) widestPool() int {
	widest := c.DownstreamPool
	for _, ch := range c.PoolChanges {
		if widest == 0 || ch.Connections == 0 {
			return 0
		}
		widest = max(widest, ch.Connections)
	}
	return widest
}
