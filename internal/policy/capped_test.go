package policy

import (
	"fmt"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// A fleet held at its cap below what the forecast asks, every worker busy,
// the queue's depth wobbling up and down and today's need (17 or 18)
// wobbling around the cap, with the same recommended and desired counts
// decision after decision: the diagnosis holds instead of turning from
// capped to under_provisioned (or draining) and back as the wobble crosses
// a line. A group whose need went above the cap stays capped while the
// need is at the cap or above; one whose need never passed the cap is met
// by the fleet at it: healthy.
func TestDiagnosisHoldsWithTheSameNumbers(t *testing.T) {
	t.Parallel()
	// Between the jobs the history's rate is the 20 msg/s the live
	// samples show (20 in flight at 1 s), so that the burst learner the
	// history warms reads no burst into the live samples.
	counts := forecasttest.Minutes(5, 4*60, func(i int) float64 {
		if i%20 == 7 || i%20 == 8 {
			return 200
		}
		return 20
	})
	for _, tc := range []struct {
		cap  int
		want string
	}{{14, model.DiagCapped}, {17, model.DiagCapped}, {18, model.DiagHealthy}, {20, model.DiagHealthy}, {25, model.DiagHealthy}} {
		t.Run(fmt.Sprint("cap ", tc.cap), func(t *testing.T) {
			t.Parallel()
			s := Settings{Policy: PolicyModel, ServiceTime: time.Second, Concurrency: 1, Latency: 30 * time.Second,
				Max: 500, Cap: tc.cap, StartDelay: time.Minute, StaleAfter: time.Minute}
			var st State
			st.Preload(s, model.MinuteHistory{Start: fcStart, Counts: counts})
			fleet := model.Fleet{Kind: "autoscaling", Known: true, Desired: tc.cap, InService: tc.cap, Max: 500}
			at := fcStart.Add(4*time.Hour + 5*time.Minute + 50*time.Second)
			seen := map[string]int{}
			recs, desired := map[int]bool{}, map[int]bool{}
			for i := range 12 {
				now := at.Add(time.Duration(i) * 5 * time.Second)
				visible := int64(20 + 5*(i%2)) // up, down, up, ...
				smp := model.GroupSample{At: now, Visible: visible, InFlight: int64(tc.cap), Backlog: visible + int64(tc.cap),
					Queues: 1, Answered: 1, Deleted: &model.Reading{Value: 13, At: now}}
				d := Decide(s, smp, fleet, &st, now)
				if i < 2 {
					continue
				}
				seen[d.Diagnosis]++
				recs[d.RecommendedWorkers], desired[d.DesiredWorkers] = true, true
			}
			if len(recs) != 1 || len(desired) != 1 {
				t.Fatalf("recommended %v, desired %v: want the same numbers throughout", recs, desired)
			}
			if len(seen) != 1 || seen[tc.want] == 0 {
				t.Errorf("diagnoses %v with the same numbers, want %s throughout", seen, tc.want)
			}
		})
	}
}

// A group whose workers keep pace but whose oldest message, by a fresh
// reading, has waited 26.3 s against a 20 s promise is late, not healthy.
func TestLateIsNotHealthy(t *testing.T) {
	t.Parallel()
	s := base()
	s.Latency = 20 * time.Second
	h := newHarness(t, s, asg(20, 20, 0))
	var d model.Decision
	for i := range 3 {
		smp := q(5, 10)
		dt := tick
		if i == 0 {
			dt = 0
		}
		smp.OldestAge = reading(26.3, t0.Add(time.Duration(i)*tick))
		d = h.step(dt, smp)
	}
	if d.Diagnosis != model.DiagLate {
		t.Errorf("diagnosis %q with the oldest message at 26.3 s against 20 s, want late; reasons %q", d.Diagnosis, d.Reasons)
	}
	smp := q(5, 10)
	smp.OldestAge = reading(3, t0.Add(3*tick))
	if d = h.step(tick, smp); d.Diagnosis != model.DiagHealthy {
		t.Errorf("diagnosis %q with the oldest message at 3 s, want healthy", d.Diagnosis)
	}
}
