//go:build comparison && !race

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var burstsFlag = flag.Bool("bursts", false, "run the bursty-traffic yardstick (irregular and the burst traces) and print its table")

// burstSet is one row of the bursty-traffic yardstick: runs of the model
// against the fixed fleets chosen in hindsight, each over an hour scored
// after its first 15 minutes (or as args say).
type burstSet struct {
	name string
	runs [][]string // each run's scenario, seed and settings
	// draws are the runs that are draws of one traffic (one generator,
	// its seeds), for which one fixed fleet can be chosen (oneFleetTable).
	draws []draws
}

// draws are runs of one traffic: their indices among the set's runs.
type draws struct {
	name string
	runs []int
}

// burstSettings are the bursty-traffic measurements' settings: lognormal
// service, 1 to 3,000 workers, and a start delay, a promise and a mean
// service time; the issue's are 60 s, 30 s and 1 s, the second setting
// doubles each.
func burstSettings(startDelay, promise, service string) []string {
	return []string{"--service-dist", "lognormal", "--min", "1", "--max", "3000",
		"--start-delay", startDelay, "--latency-target", promise, "--service-time", service}
}

// burstHour is an hour scored after its first 15 minutes.
var burstHour = []string{"--duration", "1h", "--warm-up", "15m"}

// burstSets are the yardstick's rows: irregular, seeds 1-20; the burst
// traces of docs/traces, seed 11, with each setting; irregular over four
// hours, seeds 1-10, where the model has learned the bursts.
func burstSets(t *testing.T) []burstSet {
	t.Helper()
	traces, err := filepath.Glob("../../docs/traces/burst-*.csv")
	if err != nil || len(traces) == 0 {
		t.Fatalf("the burst traces: %v, %v", traces, err)
	}
	seeds := func(sc string, n int, args ...string) [][]string {
		var runs [][]string
		for _, s := range seedRange(n) {
			runs = append(runs, append([]string{"--scenario", sc, "--seed", s}, args...))
		}
		return runs
	}
	each := func(args ...string) [][]string {
		var runs [][]string
		for _, tr := range traces {
			runs = append(runs, append([]string{"--scenario", tr, "--seed", "11"}, args...))
		}
		return runs
	}
	all := func(name string, n int) []draws {
		d := draws{name: name}
		for i := range n {
			d.runs = append(d.runs, i)
		}
		return []draws{d}
	}
	// The traces' families (burst-A1.csv to burst-A4.csv, and so on) are
	// each four draws of one generator: the runs of each, in order.
	var letters []string
	var members [][]int
	for i, tr := range traces {
		f := strings.TrimPrefix(filepath.Base(tr), "burst-")[:1]
		if len(letters) == 0 || letters[len(letters)-1] != f {
			letters, members = append(letters, f), append(members, nil)
		}
		members[len(members)-1] = append(members[len(members)-1], i)
	}
	families := func(setting string) []draws {
		ds := make([]draws, len(letters))
		for k, f := range letters {
			ds[k] = draws{fmt.Sprintf("the burst traces %s1–%s4, seed 11%s", f, f, setting), members[k]}
		}
		return ds
	}
	// Each family's four traces, end to end: four hours of one traffic,
	// where the model has learned the bursts after the first.
	dir := t.TempDir()
	var joined []string
	for k, f := range letters {
		var fam []string
		for _, j := range members[k] {
			fam = append(fam, traces[j])
		}
		joined = append(joined, joinTraces(t, filepath.Join(dir, "burst-"+f+".csv"), fam))
	}
	endToEnd := func(args ...string) [][]string {
		var runs [][]string
		for _, tr := range joined {
			runs = append(runs, append([]string{"--scenario", tr, "--seed", "11"}, args...))
		}
		return runs
	}
	issue, second := burstSettings("60s", "30s", "1s"), burstSettings("120s", "60s", "2s")
	long := []string{"--duration", "4h", "--warm-up", "1h"}
	return []burstSet{
		{"`irregular`, seeds 1–20", seeds("irregular", 20, slices.Concat(issue, burstHour)...), all("`irregular`, seeds 1–20", 20)},
		{"the 12 burst traces, seed 11", each(slices.Concat(issue, burstHour)...), families("")},
		{"the 12 burst traces, seed 11, second setting", each(slices.Concat(second, burstHour)...), families(", second setting")},
		{"`irregular`, 4 h scored after 1 h, seeds 1–10", seeds("irregular", 10, slices.Concat(issue, long)...), all("`irregular`, 4 h scored after 1 h, seeds 1–10", 10)},
		{"each family's 4 traces end to end, seed 11, 4 h scored after 1 h", endToEnd(slices.Concat(issue, long)...), nil},
		{"each family's 4 traces end to end, seed 11, second setting, 4 h scored after 1 h", endToEnd(slices.Concat(second, long)...), nil},
	}
}

// joinTraces writes the traces end to end to path, each shifted by the
// hours before it (each is an hour, t_seconds 0 to 3599), and returns path.
func joinTraces(t *testing.T, path string, traces []string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("t_seconds,arrivals_per_second\n")
	for i, tr := range traces {
		data, err := os.ReadFile(tr)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			ts, rate, ok := strings.Cut(strings.TrimSpace(line), ",")
			sec, err := strconv.Atoi(ts)
			if !ok || err != nil {
				continue // the comment, the header and the last newline
			}
			if sec < 0 || sec >= 3600 {
				t.Fatalf("%s: t_seconds %d outside its hour", tr, sec)
			}
			fmt.Fprintf(&b, "%d,%s\n", 3600*i+sec, rate)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBurstTable prints, with -bursts, the bursty-traffic yardstick of
// docs/simulation.md ("Bursts harsher than irregular") and checks that the
// page shows it as the simulator gives it now. For each set, the means
// over its runs of: the model's share within the promise; its
// worker-seconds ÷ fixed-best's; fixed-same-cost's share (the fleet that
// never moves at the model's bill); the model's worker-seconds ÷
// fixed-same-share's (the cheapest fleet that never moves and keeps the
// model's share: above 1, the model's motion cost more than it bought),
// and on how many runs that is below 1. Then, for the sets of draws of one
// traffic, the model against one fixed fleet for all their runs (see
// oneFleetTable).
func TestBurstTable(t *testing.T) {
	if !*burstsFlag {
		t.Skip("prints the bursty-traffic table with -bursts")
	}
	sets := burstSets(t)
	var all [][]string
	for _, s := range sets {
		all = append(all, s.runs...)
	}
	ran := simAll(t, all, "--policy", "model,fixed-best,fixed-same-cost,fixed-same-share")
	results := make([][]map[string]simResult, len(sets))
	for i, s := range sets {
		for range s.runs {
			by := map[string]simResult{}
			for _, r := range ran[0] {
				by[r.Policy] = r
			}
			results[i], ran = append(results[i], by), ran[1:]
		}
	}

	var b strings.Builder
	b.WriteString("| traffic | model: within the promise | model ÷ `fixed-best` | `fixed-same-cost`: within the promise | model ÷ `fixed-same-share` | model cheaper than `fixed-same-share` |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for i, s := range sets {
		var share, best, same, ratio float64
		cheaper := 0
		for _, by := range results[i] {
			m := by["model"]
			share += m.SLOAttainment
			best += m.WorkerSeconds / by["fixed-best"].WorkerSeconds
			same += by["fixed-same-cost"].SLOAttainment
			r := m.WorkerSeconds / by["fixed-same-share"].WorkerSeconds
			ratio += r
			if r < 1 {
				cheaper++
			}
		}
		n := float64(len(results[i]))
		fmt.Fprintf(&b, "| %s | %.2f %% | %.3f× | %.2f %% | %.3f× | %d of %d |\n",
			s.name, 100*share/n, best/n, 100*same/n, ratio/n, cheaper, len(results[i]))
	}
	b.WriteString("\n")
	b.WriteString(oneFleetTable(t, sets, results))
	table := b.String()
	fmt.Println(table)
	doc, err := os.ReadFile("../../docs/simulation.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range strings.Split(strings.TrimSpace(table), "\n") {
		if row == "" {
			continue
		}
		if !strings.Contains(string(doc), "\n"+row+"\n") {
			t.Errorf("docs/simulation.md lacks the row, as the simulator now gives it: %s", row)
		}
	}
}

// oneFleetTable compares the model, on each set's draws of one traffic,
// with one fixed fleet for all of them, chosen knowing the traffic (all
// its draws) but not the run, as a user who had watched this traffic for a
// while would choose it: the fewest such workers that keep 99 % of the
// draws' scored messages within the promise, on how many runs they keep
// 99 %, and their worker-seconds ÷ each run's fixed-best (the mean); and
// the model's worker-seconds ÷ those of the fewest such workers that keep
// the model's share of the draws' messages (above 1: the model paid more
// than a fleet that never moves, sized for this traffic, for what it kept).
func oneFleetTable(t *testing.T, sets []burstSet, results [][]map[string]simResult) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("| traffic | one fixed fleet for the traffic at 99 % | its runs at 99 % | it ÷ `fixed-best` | model ÷ one fixed fleet at the model's share |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for i, s := range sets {
		for _, d := range s.draws {
			oneFleetRow(t, &b, s, d, results[i])
		}
	}
	return b.String()
}

// oneFleetRow writes oneFleetTable's row for the draws d of set s, whose
// runs gave results.
func oneFleetRow(t *testing.T, b *strings.Builder, s burstSet, d draws, results []map[string]simResult) {
	t.Helper()
	var model pooled
	hi := 1
	for _, j := range d.runs {
		by := results[j]
		model.add(by["model"])
		hi = max(hi, by["fixed-best"].Workers, by["fixed-same-share"].Workers)
	}
	runs := map[int][]simResult{}
	fleet := func(n int) pooled {
		if _, ok := runs[n]; !ok {
			runs[n] = fixedRuns(t, s, d, n)
		}
		var p pooled
		for _, r := range runs[n] {
			p.add(r)
		}
		return p
	}
	n99 := fewestPooled(hi, func(n int) bool { return fleet(n).share() >= 0.99 })
	nSame := fewestPooled(hi, func(n int) bool { return fleet(n).share() >= model.share() })
	at99, best := 0, 0.0
	for k, r := range runs[n99] {
		if r.SLOAttainment >= 0.99 {
			at99++
		}
		best += r.WorkerSeconds / results[d.runs[k]]["fixed-best"].WorkerSeconds
	}
	fmt.Fprintf(b, "| %s | %d workers | %d of %d | %.3f× | %.3f× |\n",
		d.name, n99, at99, len(d.runs), best/float64(len(d.runs)), model.ws/fleet(nSame).ws)
}

// pooled sums runs: their messages, those within the promise, and their
// worker-seconds.
type pooled struct{ msgs, within, ws float64 }

func (p *pooled) add(r simResult) {
	p.msgs += float64(r.Messages)
	p.within += r.SLOAttainment * float64(r.Messages)
	p.ws += r.WorkerSeconds
}

// share is the pooled runs' share of messages within the promise.
func (p pooled) share() float64 { return p.within / p.msgs }

// fewestPooled is the fewest workers from 1 to hi for which enough holds,
// by bisection (enough holds at hi and is monotone in the workers).
func fewestPooled(hi int, enough func(n int) bool) int {
	lo := 0 // enough does not hold at lo (no workers)
	for hi-lo > 1 {
		if m := (lo + hi) / 2; enough(m) {
			hi = m
		} else {
			lo = m
		}
	}
	return hi
}

// fixedRuns runs n fixed workers on each of the draws d of set s.
func fixedRuns(t *testing.T, s burstSet, d draws, n int) []simResult {
	t.Helper()
	runs := make([][]string, len(d.runs))
	for k, j := range d.runs {
		runs[k] = s.runs[j]
	}
	out := make([]simResult, len(runs))
	for k, res := range simAll(t, runs, "--policy", "fixed", "--workers", fmt.Sprint(n)) {
		out[k] = res[0]
	}
	return out
}

// simAll runs `checker simulate` with each run's arguments followed by
// extra, as many at once as there are CPUs, and returns each run's results.
func simAll(t *testing.T, runs [][]string, extra ...string) [][]simResult {
	t.Helper()
	out := make([][]simResult, len(runs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, run := range runs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = simJSON(t, slices.Concat(run, extra)...)
		})
	}
	wg.Wait()
	return out
}
