//go:build comparison && !race

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestComparisonTable prints the comparison's tables with -comparison and
// checks that docs/simulation.md shows them as the simulator gives them
// now: a change to a policy or to the simulator that moves a number fails
// it until the page is regenerated. Each cell of the first is the mean
// over seeds 1-3 of the share of messages within the promise and the
// worker-hours, with the cost as a multiple of the oracle's mean; the
// second is the bill (comparisonBill).
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
	table, bill := b.String(), comparisonBill(runs, policies, comparisonWorkerCost)
	fmt.Println(table)
	fmt.Println(bill)
	doc, err := os.ReadFile("../../docs/simulation.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(strings.TrimSpace(table+"\n"+bill), "\n") {
		if row = strings.TrimSpace(row); row != "" && !strings.Contains(string(doc), "\n"+row+"\n") {
			t.Errorf("docs/simulation.md lacks the row, as the simulator now gives it: %s", row)
		}
	}
}

// comparisonWorkerCost is the worker price of the comparison's bill: an
// on-demand t3.medium in us-east-1, dollars an hour.
const comparisonWorkerCost = 0.0416
