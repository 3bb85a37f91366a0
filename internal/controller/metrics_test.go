package controller

import (
	"math"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// checker_group_cost_dollars_per_hour: 143 workers × $0.0416 = $5.9488 an
// hour; absent for a group with no price.
func TestCostMetric(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.observe(policy.Settings{Group: "priced", WorkerCostPerHour: 0.0416}, model.Decision{CurrentWorkers: 143}, nil)
	m.observe(policy.Settings{Group: "free"}, model.Decision{CurrentWorkers: 9}, nil)
	if got := testutil.ToFloat64(m.cost.WithLabelValues("priced")); math.Abs(got-5.9488) > 1e-9 {
		t.Errorf("priced: %v, want 5.9488", got)
	}
	m.cost.DeleteLabelValues("priced")
	if n := testutil.CollectAndCount(m.cost); n != 0 {
		t.Errorf("%d cost series besides the priced group's, want none for the group with no price", n)
	}
}
