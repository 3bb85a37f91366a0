// Package policytest builds policy.Settings for the tests of the packages
// that run the policy: one group that sizes by its service time, changed
// by overrides where a test needs something else.
package policytest

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
)

// Settings returns the settings of a group named name: 200 ms a message,
// one message at a time per worker, a 10 s latency target, between 1 and
// 50 workers, a sample stale after 15 s, every other setting zero. Each
// override then changes what it sets, in order. The result has not been
// through WithDefaults.
func Settings(name string, overrides ...func(*policy.Settings)) policy.Settings {
	s := policy.Settings{
		Group: name, ServiceTime: 200 * time.Millisecond, Concurrency: 1, Latency: 10 * time.Second,
		Min: 1, Max: 50, StaleAfter: 15 * time.Second,
	}
	for _, o := range overrides {
		o(&s)
	}
	return s
}
