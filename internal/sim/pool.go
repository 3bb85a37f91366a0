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
	return changeErrors("pool change", changes, func(c PoolChange) (time.Duration, string) {
		if c.Connections < 0 || c.Connections > MaxSlots {
			return c.At, fmt.Sprintf("%d connections must be within 0 and %d", c.Connections, MaxSlots)
		}
		return c.At, ""
	})
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
