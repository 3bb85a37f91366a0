package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A surge of 500 msg/s meets 16 workers of 250 ms: the queue grows by
// 436 msg/s. The 488 workers launched for it come into service. Behind a
// downstream pool of 120 connections they complete 480 msg/s, and the
// queue still grows by 20 msg/s; Little's law over 488 busy slots reads
// that as 1,970 msg/s of arrivals. No more workers are bought on that
// reading, none are removed, and the decision says why. Without the pool
// the same 488 drain the queue by 1,452 msg/s, and nothing is suspected.
func TestAScaleOutThatHardlyMovedTheQueueHoldsTheFleet(t *testing.T) {
	t.Parallel()
	for _, pooled := range []bool{true, false} {
		s := base()
		s.ServiceTime, s.Max = 250*time.Millisecond, 3000
		h := newHarness(t, s, asg(16, 16, 0))
		h.follow = false
		visible := int64(0)
		for range 8 {
			visible += 436 * 5
			h.step(5*time.Second, q(visible, 16))
		}
		h.fleet = asg(488, 488, 0)
		growth := int64(20)
		if !pooled {
			growth = -1452
		}
		var d model.Decision
		for range 4 {
			visible += growth * 5
			d = h.step(5*time.Second, q(visible, 488))
		}
		suspected := strings.Contains(strings.Join(d.Reasons, "\n"), "slowed the queue's growth")
		switch {
		case pooled && (d.DesiredWorkers != 488 || d.Diagnosis != model.DiagDownstreamLimited || !suspected):
			t.Errorf("behind a pool: %d workers, diagnosis %s, reasons:\n%s\nwant 488, downstream_limited and the suspicion",
				d.DesiredWorkers, d.Diagnosis, strings.Join(d.Reasons, "\n"))
		case !pooled && suspected:
			t.Errorf("without a pool the scale-out was suspected:\n%s", strings.Join(d.Reasons, "\n"))
		}
	}
}
