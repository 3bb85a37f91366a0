//go:build comparison && !race

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/sim"
)

var scoreboardFlag = flag.Bool("scoreboard", false, "run the scoreboard (the model, fixed-warm-up, fixed-best and the oracle on the real traces and every built-in scenario) and print its table")

// scoreboardPolicies are the scoreboard's policies, in its table's order.
var scoreboardPolicies = []string{sim.PolicyModel, sim.PolicyFixedWarmUp, sim.PolicyFixedBest, sim.PolicyOracle}

// scoreboardSeeds are every row's seeds.
var scoreboardSeeds = []string{"1", "2", "3"}

// scoreboardRow is one traffic of the scoreboard: its runs' arguments,
// one a seed, and the start delay they run with.
type scoreboardRow struct {
	name       string
	args       []string // all but the seed
	startDelay time.Duration
}

// scoreboardSettings are the scoreboard's settings: lognormal service of
// a mean, a start delay and a promise, 1 to 3,000 workers.
func scoreboardSettings(service, startDelay, promise string) []string {
	return []string{"--service-dist", "lognormal", "--min", "1", "--max", "3000",
		"--service-time", service, "--start-delay", startDelay, "--latency-target", promise}
}

// scoreboardRows are the real traces of docs/traces, each with the
// first setting (1 s of service, 4 s on the conversation trace, whose
// arrivals are steadier; a 60 s start delay; a 30 s promise) and the
// second (each doubled), and every built-in scenario with the first. An
// hour or a few is scored after its first 15 minutes; days after their
// first hour; weeks runs at 15 msg/s, as in the comparison.
func scoreboardRows(t *testing.T) []scoreboardRow {
	t.Helper()
	traces, err := filepath.Glob("../../docs/traces/azure-*.csv")
	if err != nil || len(traces) == 0 {
		t.Fatalf("the real traces: %v, %v", traces, err)
	}
	hour := []string{"--warm-up", "15m"}
	var rows []scoreboardRow
	for _, tr := range traces {
		service := 1.0
		if strings.Contains(tr, "-conv-") {
			service = 4
		}
		name := strings.TrimSuffix(filepath.Base(tr), ".csv")
		for k, f := range []float64{1, 2} {
			setting := ""
			if k == 1 {
				setting = ", second setting"
			}
			delay := time.Duration(f * float64(time.Minute))
			rows = append(rows, scoreboardRow{
				name: fmt.Sprintf("`%s`%s", name, setting),
				args: slices.Concat([]string{"--scenario", tr},
					scoreboardSettings(fmt.Sprintf("%gs", f*service), delay.String(), fmt.Sprintf("%gs", f*30)), hour),
				startDelay: delay,
			})
		}
	}
	extra := map[string][]string{
		"cron":  {"--duration", "6h"},
		"days":  {"--warm-up", "1h"},
		"weeks": {"--rate", "15", "--warm-up", "1h"},
	}
	for _, sc := range sim.BuiltinScenarios {
		args, ok := extra[sc]
		if !ok || !slices.Contains(args, "--warm-up") {
			args = append(slices.Clone(args), hour...)
		}
		rows = append(rows, scoreboardRow{
			name:       fmt.Sprintf("`%s`", sc),
			args:       slices.Concat([]string{"--scenario", sc}, scoreboardSettings("1s", "1m0s", "30s"), args),
			startDelay: time.Minute,
		})
	}
	return rows
}

// TestScoreboard prints, with -scoreboard, the scoreboard of
// docs/simulation.md and checks that the page shows it as the simulator
// gives it now. For each traffic and each of its policies, the means over
// seeds 1-3 of: the share of messages within the promise (and its lowest
// and highest); the worker-seconds ÷ fixed-best's, ÷ the oracle's and ÷
// fixed-warm-up's on the same seed; the workers launched; and the launch
// overhead, launches × the start delay ÷ worker-seconds, all over the
// scored window.
func TestScoreboard(t *testing.T) {
	if !*scoreboardFlag {
		t.Skip("prints the scoreboard with -scoreboard")
	}
	rows := scoreboardRows(t)
	var b strings.Builder
	b.WriteString("| traffic | policy | within the promise (lowest–highest) | ÷ `fixed-best` | ÷ oracle | ÷ `fixed-warm-up` | launches | launch overhead |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, row := range rows {
		var runs []map[string]simResult
		for _, seed := range scoreboardSeeds {
			start := time.Now()
			by := map[string]simResult{}
			for _, r := range simJSON(t, slices.Concat(row.args, []string{"--seed", seed, "--policy", strings.Join(scoreboardPolicies, ",")})...) {
				by[r.Policy] = r
			}
			runs = append(runs, by)
			fmt.Fprintf(os.Stderr, "scoreboard: %s seed %s in %v\n", row.name, seed, time.Since(start).Round(time.Second))
		}
		b.WriteString(scoreboardLines(row, runs))
	}
	table := b.String()
	fmt.Println(table)
	doc, err := os.ReadFile("../../docs/simulation.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		if !strings.Contains(string(doc), "\n"+line+"\n") {
			t.Errorf("docs/simulation.md lacks the row, as the simulator now gives it: %s", line)
		}
	}
}

// scoreboardLines are the scoreboard's rows of one traffic, one a policy,
// from its runs (one a seed).
func scoreboardLines(row scoreboardRow, runs []map[string]simResult) string {
	var b strings.Builder
	n := float64(len(runs))
	for i, p := range scoreboardPolicies {
		var share, best, oracle, warm, launches, overhead float64
		lo, hi := 1.0, 0.0
		var workers []int
		for _, by := range runs {
			r := by[p]
			share += r.SLOAttainment
			lo, hi = min(lo, r.SLOAttainment), max(hi, r.SLOAttainment)
			best += r.WorkerSeconds / by[sim.PolicyFixedBest].WorkerSeconds
			oracle += r.WorkerSeconds / by[sim.PolicyOracle].WorkerSeconds
			warm += r.WorkerSeconds / by[sim.PolicyFixedWarmUp].WorkerSeconds
			launches += float64(r.Launches)
			overhead += launchOverhead(r, row.startDelay)
			if r.Workers > 0 {
				workers = append(workers, r.Workers)
			}
		}
		traffic := ""
		if i == 0 {
			traffic = row.name
		}
		label := "`" + p + "`"
		if len(workers) > 0 {
			label += fmt.Sprintf(": %s workers", joinInts(workers))
		}
		fmt.Fprintf(&b, "| %s | %s | %.2f %% (%.2f–%.2f) | %.3f× | %.3f× | %.3f× | %.0f | %.2f %% |\n",
			traffic, label, 100*share/n, 100*lo, 100*hi, best/n, oracle/n, warm/n, launches/n, 100*overhead/n)
	}
	return b.String()
}

// launchOverhead is a run's launches × the start delay ÷ its
// worker-seconds: the share of the bill spent on workers not yet serving.
func launchOverhead(r simResult, startDelay time.Duration) float64 {
	if r.WorkerSeconds <= 0 {
		return 0
	}
	return float64(r.Launches) * startDelay.Seconds() / r.WorkerSeconds
}

// joinInts writes the fleets of a fixed policy, one a seed: "194, 201, 188".
func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// The scoreboard's arithmetic, by hand: a run of 10 launches at a 60 s
// start delay over 6,000 worker-seconds spends 10 %; its worker-seconds
// against fixed-best's 5,000, the oracle's 4,000 and fixed-warm-up's
// 7,500 are 1.2×, 1.5× and 0.8×.
func TestScoreboardArithmetic(t *testing.T) {
	t.Parallel()
	runs := []map[string]simResult{{
		"model":         {SLOAttainment: 0.98, WorkerSeconds: 6000, Launches: 10},
		"fixed-warm-up": {SLOAttainment: 1, WorkerSeconds: 7500, Workers: 5},
		"fixed-best":    {SLOAttainment: 0.99, WorkerSeconds: 5000, Workers: 4},
		"oracle":        {SLOAttainment: 0.995, WorkerSeconds: 4000, Launches: 2},
	}}
	got := scoreboardLines(scoreboardRow{name: "x", startDelay: time.Minute}, runs)
	for _, want := range []string{
		"| x | `model` | 98.00 % (98.00–98.00) | 1.200× | 1.500× | 0.800× | 10 | 10.00 % |",
		"|  | `fixed-warm-up`: 5 workers | 100.00 % (100.00–100.00) | 1.500× | 1.875× | 1.000× | 0 | 0.00 % |",
		"|  | `oracle` | 99.50 % (99.50–99.50) | 0.800× | 1.000× | 0.533× | 2 | 3.00 % |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("scoreboard:\n%s\nwant a row %q", got, want)
		}
	}
}
