package controller

import (
	"context"
	"time"

	"go.uber.org/zap"
)

// RunOptions drive Run.
type RunOptions struct {
	// Interval between cycle starts; the first cycle runs at once.
	Interval time.Duration
	// Deadline bounds one cycle; 0 means 90 % of Interval.
	Deadline time.Duration
	// Now is the clock passed to RunOnce; nil means time.Now. The demo passes
	// a faster simulated clock.
	Now func() time.Time
}

// Run runs cycles until ctx is done, then returns nil. Cycles never overlap:
// a cycle that overruns delays the next tick, and ticks missed meanwhile are
// dropped. Cycle errors are logged (once per change of message) and do not
// stop the loop.
func (c *Controller) Run(ctx context.Context, o RunOptions) error {
	if o.Interval <= 0 {
		o.Interval = 5 * time.Second
	}
	if o.Deadline <= 0 {
		o.Deadline = o.Interval * 9 / 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c.mu.Lock()
	c.interval = o.Interval
	c.mu.Unlock()
	ticker := time.NewTicker(o.Interval)
	defer ticker.Stop()
	lastMsg := ""
	for {
		cctx, cancel := context.WithTimeout(ctx, o.Deadline)
		_, err := c.RunOnce(cctx, o.Now())
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && err.Error() != lastMsg:
			c.log.Warn("cycle failed; the last decisions stand", zap.Error(err))
			lastMsg = err.Error()
		case err == nil && lastMsg != "":
			c.log.Info("cycles succeed again")
			lastMsg = ""
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}
