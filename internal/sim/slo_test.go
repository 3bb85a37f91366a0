package sim

import (
	"math"
	"testing"
	"time"
)

// Each run reports, per whole hour, the messages the world started within
// the promise and the daemon's estimate of them. The truth counts every
// message started (the hours and the messages still waiting add up to the
// arrivals), and on a spike that breaks the
// promise for part of an hour the estimate follows it within a point; a
// fleet that never moves and cannot keep up is estimated late as well.
func TestRunReportsTheEstimateBesideTheTruth(t *testing.T) {
	t.Parallel()
	rc := runConfig(t, "spike", 50, 2*time.Hour)
	for _, name := range []string{PolicyModel, PolicyFixed} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := mustRun(t, rc, name)
			if len(r.SLO) != 2 {
				t.Fatalf("%d hours, want 2", len(r.SLO))
			}
			var started int64
			for _, h := range r.SLO {
				started += h.Started
				if math.Abs(h.EstShare-h.Share) > 0.01 {
					t.Errorf("hour %d: estimated %.4f, truth %.4f", h.Hour, h.EstShare, h.Share)
				}
				if rel := math.Abs(h.Estimated-float64(h.Started)) / float64(h.Started); rel > 0.05 {
					t.Errorf("hour %d: estimated %.0f started, truth %d", h.Hour, h.Estimated, h.Started)
				}
			}
			// Every message arrived was started or is still waiting; the
			// backlog at the end counts those in flight too, at most one a
			// worker.
			last := r.Series[len(r.Series)-1]
			if d := started + last.Backlog - r.Messages; d < 0 || d > int64(last.Workers) {
				t.Errorf("the hours started %d, %d left, of %d messages", started, last.Backlog, r.Messages)
			}
			if h := r.SLO[0]; h.Trust != "rough" || h.TrustReason == "" {
				t.Errorf("first hour trust %q (%q): want rough while the estimator warms", h.Trust, h.TrustReason)
			}
		})
	}
	// The fixed fleet (the starting fleet of 13) falls behind the spike
	// for good: its runs must show a broken promise, or the test proves
	// nothing about late hours.
	if r := mustRun(t, rc, PolicyFixed); r.SLO[1].Share > 0.5 {
		t.Fatalf("fixed fleet kept %.2f of the second hour: the case is not late", r.SLO[1].Share)
	}
}
