package policy

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Batch consumers with slots to spare: 6 one-slot workers receive up to
// ten messages, handle them one at a time (0.3 s each) and delete them as a
// batch, at 5 msg/s. Little's law over their in-flight count gives the time
// a message waits in its batch, 1.1 s, which "agreed" with a configured 1 s
// and sized with it. The decision must say it cannot tell and keep the
// prior, or measure within 25 % of 0.3 s.
func TestBatchConsumerKeepsThePrior(t *testing.T) {
	t.Parallel()
	inFlight := []int64{2, 9, 4, 8, 3, 7, 6, 5, 4, 8, 2, 8} // mean 5.5 of 6 slots
	for _, prior := range []time.Duration{time.Second, 3 * time.Second} {
		s := base()
		s.ServiceTime = prior
		h := newHarness(t, s, asg(6, 6, 0))
		h.follow = false
		var d model.Decision
		for i := 0; h.now.Before(t0.Add(12 * time.Minute)); i++ {
			smp := q(0, inFlight[i%len(inFlight)])
			next := h.now.Add(5 * time.Second)
			if m := next.Truncate(time.Minute).Add(-2 * time.Minute); !m.Before(t0) {
				smp.Deleted, smp.Sent = reading(5, m), reading(5, m)
			}
			d = h.step(5*time.Second, smp)
		}
		m := d.Measured
		within := m.ServiceTimeSeconds != nil && math.Abs(*m.ServiceTimeSeconds/0.3-1) <= 0.25
		kept := m.SizingWith == "configured" && hasReason(d, "cannot be told", "batches", "configured")
		if !within && !kept {
			t.Errorf("prior %s: measured %v, sizing with %s; reasons %q", prior, *m.ServiceTimeSeconds, m.SizingWith, d.Reasons)
		}
	}
}
