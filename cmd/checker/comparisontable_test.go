//go:build comparison && !race

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestComparisonTable prints the README's table with -comparison: each
// cell is the mean over seeds 1-3 of the share of messages within the
// promise and the worker-hours, with the cost as a multiple of the
// oracle's mean.
func TestComparisonTable(t *testing.T) {
	if !*comparisonFlag {
		t.Skip("prints the README table with -comparison")
	}
	runs := comparisonAll(t)
	policies := []string{"model", "backlog", "keda", "target-tracking", "step", "fixed", "fixed-best", "oracle", "oracle-instant"}
	var b strings.Builder
	b.WriteString(comparisonHeader(policies))
	for _, sc := range comparisonScenarios {
		slo, cost := map[string]float64{}, map[string]float64{}
		n := 0.0
		for _, r := range runs {
			if r.scenario != sc {
				continue
			}
			n++
			for _, p := range policies {
				slo[p] += r.byPolicy[p].SLOAttainment
				cost[p] += r.byPolicy[p].WorkerSeconds / 3600
			}
		}
		fmt.Fprintf(&b, "| %s |", sc)
		for _, p := range policies {
			fmt.Fprintf(&b, " %.1f %%, %.0f h (%.2f×) |", 100*slo[p]/n, cost[p]/n, cost[p]/cost["oracle"])
		}
		b.WriteString("\n")
	}
	fmt.Println(b.String())
	fmt.Println(comparisonBill(runs, policies, comparisonWorkerCost))
}

// comparisonWorkerCost is the worker price of the comparison's bill: an
// on-demand t3.medium in us-east-1, dollars an hour.
const comparisonWorkerCost = 0.0416
