package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// The decision carries both backlogs per worker, each computed once here:
// ÷ the current workers (starting ones included) for Prometheus, and ÷ the
// workers in service for CloudWatch, which target tracking follows.
func TestBacklogPerWorker(t *testing.T) {
	t.Parallel()
	s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second, Max: 100}
	smp := model.GroupSample{Group: "g", At: t0, Visible: 300, Backlog: 300, Queues: 1, Answered: 1}
	tests := []struct {
		name      string
		f         model.Fleet
		current   float64
		inService *float64
	}{
		{"3 in service, 1 starting", asg(4, 3, 1), 75, perWorker(100.0)},
		{"none in service: divided by one", asg(4, 0, 4), 75, perWorker(300.0)},
		{"no workers at all", asg(0, 0, 0), 300, perWorker(300.0)},
		{"fleet not read", model.Fleet{Kind: "autoscaling"}, 300, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(s, smp, tt.f, nil, t0)
			if d.BacklogPerWorker != tt.current {
				t.Errorf("backlog per worker = %v, want %v", d.BacklogPerWorker, tt.current)
			}
			switch got := d.BacklogPerInServiceWorker; {
			case (got == nil) != (tt.inService == nil):
				t.Errorf("backlog per worker in service = %v, want %v", got, tt.inService)
			case got != nil && *got != *tt.inService:
				t.Errorf("backlog per worker in service = %v, want %v", *got, *tt.inService)
			}
		})
	}
}
func perWorker(x float64) *float64 { return &x }
