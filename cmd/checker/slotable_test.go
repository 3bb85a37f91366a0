//go:build comparison && !race

package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

var sloFlag = flag.Bool("slo", false, "measure the estimate of the promise against the simulator's truth and print its table")

// sloRun is one row of the estimate's table: a traffic, its runs (one per
// seed) and the policies whose runs are measured.
type sloRun struct {
	name     string
	args     []string
	policies string
}

// sloRuns are every built-in scenario, seeds 1-3, with the model and two
// peers that move differently (KEDA's HPA and step alarms) at the
// comparison's settings (weeks over its first week, the model only); and
// the real traces of docs/traces with the settings the policy is measured
// at: lognormal service of 1 s (4 s for the conversation trace), a 60 s
// start delay and a 30 s promise, 1 to 3,000 workers.
func sloRuns() []sloRun {
	var runs []sloRun
	for _, sc := range []string{"steady", "step", "spike", "diurnal", "ramp", "bursty", "cron", "irregular", "days"} {
		runs = append(runs, sloRun{name: "`" + sc + "`", args: []string{"--scenario", sc}, policies: "model,keda,step"})
	}
	runs = append(runs, sloRun{name: "`weeks`, its first week", args: []string{"--scenario", "weeks", "--rate", "15", "--duration", "168h"}, policies: "model"})
	trace := func(file, service string) sloRun {
		return sloRun{
			name: "`" + file + "`",
			args: []string{"--scenario", "../../docs/traces/" + file, "--service-dist", "lognormal", "--service-time", service,
				"--start-delay", "60s", "--latency-target", "30s", "--min", "1", "--max", "3000"},
			policies: "model,keda,step,fixed-best",
		}
	}
	return append(runs, trace("azure-llm-code-2023.csv", "1s"), trace("azure-llm-conv-2023.csv", "4s"))
}

// sloStats sums a row's hours: how many, the truth's range, the largest
// errors (estimate − truth, points) each way where the truth is at least
// 95 % and below it, and the hours the estimate calls kept (at least 99 %)
// whose truth is below 98.5 %.
type sloStats struct {
	hours     int
	lo, hi    float64
	high, low errRange
	falseKept int
}

// errRange is the largest error under the truth (≤ 0) and over it (≥ 0).
type errRange struct{ under, over float64 }

func (r *errRange) add(e float64) {
	r.under, r.over = math.Min(r.under, e), math.Max(r.over, e)
}

func (r errRange) String() string { return fmt.Sprintf("%+.2f / %+.2f", r.under, r.over) }

func (s *sloStats) add(h sloHour) {
	if h.Started == 0 {
		return
	}
	if s.hours == 0 {
		s.lo, s.hi = h.Share, h.Share
	}
	s.hours++
	s.lo, s.hi = math.Min(s.lo, h.Share), math.Max(s.hi, h.Share)
	e := 100 * (h.EstShare - h.Share)
	if h.Share >= 0.95 {
		s.high.add(e)
	} else {
		s.low.add(e)
	}
	if h.EstShare >= 0.99 && h.Share < 0.985 {
		s.falseKept++
	}
}

// TestSLOTable measures the estimate of the promise (internal/slo) where the
// truth is known: each hour of each run, the share of messages started
// within the promise as the simulator counts it and as the daemon would
// estimate it from its samples, with CloudWatch's minutes late as in
// production. It checks the goals (above the truth by at most 0.5 point
// where the truth is at least 95 %, 2 below; under it by at most twice
// that; never "kept" where the truth is more than half a point under
// 99 %) and that docs/simulation.md shows the table.
func TestSLOTable(t *testing.T) {
	if !*sloFlag {
		t.Skip("prints the estimate's table with -slo")
	}
	runs := sloRuns()
	var all [][]string
	for _, r := range runs {
		for seed := 1; seed <= 3; seed++ {
			all = append(all, slices.Concat(r.args, []string{"--seed", fmt.Sprint(seed), "--policy", r.policies}))
		}
	}
	ran := simAll(t, all)
	var b strings.Builder
	b.WriteString("| traffic | hours | true share | largest errors, truth ≥ 95 % | largest errors, truth < 95 % | said kept, truth < 98.5 % |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for i, r := range runs {
		var s sloStats
		for _, results := range ran[3*i : 3*i+3] {
			for _, res := range results {
				for _, h := range res.SLO {
					s.add(h)
				}
			}
		}
		low := "—"
		if s.lo < 0.95 {
			low = s.low.String()
		}
		fmt.Fprintf(&b, "| %s | %d | %.1f–%.1f %% | %s | %s | %d |\n", r.name, s.hours, 100*s.lo, 100*s.hi, s.high, low, s.falseKept)
		// An estimate above the truth is held to the goals; one below
		// them errs on the side of the promise, and is held to twice
		// the goals' bounds (docs/simulation.md says where it errs so).
		if s.high.over > 0.5 || s.low.over > 2 || s.high.under < -1 || s.low.under < -4 || s.falseKept > 0 {
			t.Errorf("%s: errors %v points (truth ≥ 95 %%), %v (below), %d hours said kept: past the bounds", r.name, s.high, s.low, s.falseKept)
		}
	}
	table := b.String()
	fmt.Println(table)
	doc, err := os.ReadFile("../../docs/simulation.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(strings.TrimSpace(table), "\n") {
		if !strings.Contains(string(doc), "\n"+row+"\n") {
			t.Errorf("docs/simulation.md lacks the row, as the simulator now gives it: %s", row)
		}
	}
}
