package renamed

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestGaugeRepeatsTheNewSeries(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "new_requests_per_second", Help: "Requests a second."},
		[]string{"group", "region"})
	reg.MustRegister(vec, NewGauge(vec, "new_requests_per_second", []string{"group", "region"}, "old_requests_per_minute", 60))
	vec.WithLabelValues("a", "eu-west-1").Set(2.5)
	vec.WithLabelValues("b", "us-east-1").Set(0.25)
	want := `
# HELP new_requests_per_second Requests a second.
# TYPE new_requests_per_second gauge
new_requests_per_second{group="a",region="eu-west-1"} 2.5
new_requests_per_second{group="b",region="us-east-1"} 0.25
# HELP old_requests_per_minute Deprecated: renamed new_requests_per_second, in its unit (this is 60 times it); this name is removed in the next release.
# TYPE old_requests_per_minute gauge
old_requests_per_minute{group="a",region="eu-west-1"} 150
old_requests_per_minute{group="b",region="us-east-1"} 15
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// A series deleted under the new name is gone under the old one.
	vec.DeleteLabelValues("a", "eu-west-1")
	want = `
# HELP new_requests_per_second Requests a second.
# TYPE new_requests_per_second gauge
new_requests_per_second{group="b",region="us-east-1"} 0.25
# HELP old_requests_per_minute Deprecated: renamed new_requests_per_second, in its unit (this is 60 times it); this name is removed in the next release.
# TYPE old_requests_per_minute gauge
old_requests_per_minute{group="b",region="us-east-1"} 15
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}

func TestGaugeSameUnit(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cost_dollars_per_month", Help: "Cost."}, []string{"group"})
	reg.MustRegister(vec, NewGauge(vec, "cost_dollars_per_month", []string{"group"}, "monthly_cost_dollars", 1))
	vec.WithLabelValues("a").Set(1.75)
	want := `
# HELP monthly_cost_dollars Deprecated: renamed cost_dollars_per_month; this name is removed in the next release.
# TYPE monthly_cost_dollars gauge
monthly_cost_dollars{group="a"} 1.75
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "monthly_cost_dollars"); err != nil {
		t.Error(err)
	}
}
