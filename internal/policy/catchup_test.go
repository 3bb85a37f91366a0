package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// A fleet at its recommended count with workers still starting, every slot
// busy and a few messages waiting, the oldest well within the promise, is
// catching up, not under-provisioned: the advice "scale out" would be wrong.
// The same fleet with nothing on the way is under-provisioned, and with the
// oldest message past the promise it is not catching up.
func TestCatchingUpIsNotUnderProvisioned(t *testing.T) {
	t.Parallel()
	s := Settings{Group: "g", ServiceTime: time.Second, Latency: 30 * time.Second, Min: 1, Max: 50,
		StartDelay: time.Minute, Forecast: ForecastSettings{Off: true}}
	age := func(v float64) *model.Reading { return &model.Reading{Value: v, At: t0} }
	tests := []struct {
		name      string
		fleet     model.Fleet
		oldest    *model.Reading
		want      string
		reasonHas string
	}{
		{"two of six still starting", model.Fleet{Kind: "autoscaling", Known: true, Max: asgMaxSize, Desired: 6, InService: 4, Pending: 2,
			PendingSince: []time.Time{t0.Add(-15 * time.Second), t0.Add(-15 * time.Second)}}, age(2),
			model.DiagCatchingUp, "catching up: 2 workers are starting, the last in service in about 35 s"},
		{"the oldest past the promise", model.Fleet{Kind: "autoscaling", Known: true, Max: asgMaxSize, Desired: 6, InService: 4, Pending: 2,
			PendingSince: []time.Time{t0, t0}}, age(45), "", ""},
		{"nothing on the way", model.Fleet{Kind: "autoscaling", Known: true, Max: asgMaxSize, Desired: 4, InService: 4}, age(2),
			model.DiagUnderProvisioned, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, s, tt.fleet)
			h.follow = false
			var d model.Decision
			for i := range 3 { // a steady 4 msg/s: 12 waiting, every in-service slot busy
				smp := q(12, 4)
				smp.OldestAge = tt.oldest
				dt := tick
				if i == 0 {
					dt = 0
				}
				d = h.step(dt, smp)
			}
			if tt.want == "" && d.Diagnosis == model.DiagCatchingUp {
				t.Fatalf("catching up with the oldest message past the promise; reasons %q", d.Reasons)
			}
			if tt.want != "" && d.Diagnosis != tt.want {
				t.Fatalf("diagnosis %q, want %q; recommended %d, reasons %q", d.Diagnosis, tt.want, d.RecommendedWorkers, d.Reasons)
			}
			if tt.reasonHas != "" && !hasReason(d, tt.reasonHas) {
				t.Fatalf("no reason %q in %q", tt.reasonHas, d.Reasons)
			}
		})
	}
}
