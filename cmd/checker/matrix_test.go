package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// The policy matrix (make matrix; its runs in matrixrun_test.go): the model
// alone on the scoreboard's traffics, seeds 1–3, each traffic's means
// against a baseline saved from another build. Its arithmetic is here,
// tested with the rest of the suite.

// Tolerances of the matrix's check: a traffic regresses when its share
// within the promise falls by more than matrixShareDrop or its
// worker-seconds rise by more than matrixCostRise.
const (
	matrixShareDrop = 0.005
	matrixCostRise  = 0.03
)

// matrixRun is one run of the matrix, as -matrix-save writes it.
type matrixRun struct {
	Traffic       string  `json:"traffic"`
	Seed          string  `json:"seed"`
	Share         float64 `json:"share"`
	WorkerSeconds float64 `json:"worker_seconds"`
	Launches      int     `json:"launches"`
}

// matrixRow is one traffic's means over its seeds.
type matrixRow struct {
	Traffic                        string
	Seeds                          []string // sorted
	Share, WorkerSeconds, Launches float64
}

// matrixMeans are the traffics of runs, in the order they first appear,
// each with its means over its seeds.
func matrixMeans(runs []matrixRun) []matrixRow {
	var rows []matrixRow
	at := map[string]int{}
	for _, r := range runs {
		i, ok := at[r.Traffic]
		if !ok {
			i = len(rows)
			at[r.Traffic] = i
			rows = append(rows, matrixRow{Traffic: r.Traffic})
		}
		row := &rows[i]
		row.Seeds = append(row.Seeds, r.Seed)
		row.Share += r.Share
		row.WorkerSeconds += r.WorkerSeconds
		row.Launches += float64(r.Launches)
	}
	for i := range rows {
		row := &rows[i]
		n := float64(len(row.Seeds))
		row.Share, row.WorkerSeconds, row.Launches = row.Share/n, row.WorkerSeconds/n, row.Launches/n
		slices.Sort(row.Seeds)
	}
	return rows
}

// matrixByTraffic is rows by their traffic.
func matrixByTraffic(rows []matrixRow) map[string]matrixRow {
	out := make(map[string]matrixRow, len(rows))
	for _, r := range rows {
		out[r.Traffic] = r
	}
	return out
}

// matrixRegressions are the traffics where now is worse than base beyond
// the tolerances, each said in a line, and those that cannot be compared:
// missing from either, or run on other seeds.
func matrixRegressions(base, now []matrixRow) []string {
	var out []string
	byTraffic := matrixByTraffic(base)
	seen := map[string]bool{}
	for _, n := range now {
		seen[n.Traffic] = true
		b, ok := byTraffic[n.Traffic]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: not in the baseline", n.Traffic))
			continue
		case !slices.Equal(b.Seeds, n.Seeds):
			out = append(out, fmt.Sprintf("%s: seeds %s here, %s in the baseline", n.Traffic, strings.Join(n.Seeds, ","), strings.Join(b.Seeds, ",")))
			continue
		}
		// Shares are means of fractions: a drop of exactly the tolerance
		// is one within its rounding.
		if drop := b.Share - n.Share; drop > matrixShareDrop+1e-9 {
			out = append(out, fmt.Sprintf("%s: %.3f %% within the promise, %.3f points below the baseline's %.3f %%", n.Traffic, 100*n.Share, 100*drop, 100*b.Share))
		}
		if rise := n.WorkerSeconds/b.WorkerSeconds - 1; b.WorkerSeconds > 0 && rise > matrixCostRise+1e-9 {
			out = append(out, fmt.Sprintf("%s: %.1f worker-hours, %.1f %% above the baseline's %.1f", n.Traffic, n.WorkerSeconds/3600, 100*rise, b.WorkerSeconds/3600))
		}
	}
	for _, b := range base {
		if !seen[b.Traffic] {
			out = append(out, fmt.Sprintf("%s: in the baseline, not run", b.Traffic))
		}
	}
	return out
}

// matrixTable is the matrix's table: each traffic's means, and where base
// has the traffic on the same seeds, the changes from it.
func matrixTable(base, now []matrixRow) string {
	byTraffic := matrixByTraffic(base)
	var sb strings.Builder
	sb.WriteString("| traffic | within the promise | worker-hours | launches |\n| --- | --- | --- | --- |\n")
	for _, n := range now {
		share := fmt.Sprintf("%.3f %%", 100*n.Share)
		wh := fmt.Sprintf("%.1f", n.WorkerSeconds/3600)
		launches := fmt.Sprintf("%.0f", n.Launches)
		if b, ok := byTraffic[n.Traffic]; ok && slices.Equal(b.Seeds, n.Seeds) {
			share += fmt.Sprintf(" (%+.3f)", 100*(n.Share-b.Share))
			if b.WorkerSeconds > 0 {
				wh += fmt.Sprintf(" (%+.2f %%)", 100*(n.WorkerSeconds/b.WorkerSeconds-1))
			}
			launches += fmt.Sprintf(" (%.0f before)", b.Launches)
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %s |\n", n.Traffic, share, wh, launches)
	}
	return sb.String()
}

// The matrix's arithmetic, by hand: two seeds of 99 % and 100 % within the
// promise at 3,600 and 5,400 worker-seconds (5 and 3 launches) are 99.5 %
// at 4,500 (4); against a baseline of 100 % at 4,200 that is 0.5 point
// lower (not beyond the tolerance) and 7.1 % dearer (beyond 3 %).
func TestMatrixArithmetic(t *testing.T) {
	t.Parallel()
	now := matrixMeans([]matrixRun{
		{Traffic: "a", Seed: "2", Share: 1, WorkerSeconds: 5400, Launches: 3},
		{Traffic: "b", Seed: "1", Share: 0.9, WorkerSeconds: 100},
		{Traffic: "a", Seed: "1", Share: 0.99, WorkerSeconds: 3600, Launches: 5},
	})
	if len(now) != 2 || now[0].Traffic != "a" || now[1].Traffic != "b" {
		t.Fatalf("rows %+v, want a then b", now)
	}
	a := now[0]
	if math.Abs(a.Share-0.995) > 1e-12 || a.WorkerSeconds != 4500 || a.Launches != 4 || !slices.Equal(a.Seeds, []string{"1", "2"}) {
		t.Errorf("a = %+v, want 99.5 %%, 4,500 worker-seconds, 4 launches, seeds 1 and 2", a)
	}
	base := []matrixRow{
		{Traffic: "a", Seeds: []string{"1", "2"}, Share: 1, WorkerSeconds: 4200},
		{Traffic: "b", Seeds: []string{"1", "2"}, Share: 0.9, WorkerSeconds: 100},
		{Traffic: "c", Seeds: []string{"1"}, Share: 1, WorkerSeconds: 1},
	}
	got := matrixRegressions(base, now)
	want := []string{
		"a: 1.2 worker-hours, 7.1 % above the baseline's 1.2",
		"b: seeds 1 here, 1,2 in the baseline",
		"c: in the baseline, not run",
	}
	if !slices.Equal(got, want) {
		t.Errorf("regressions\n%q\nwant\n%q", got, want)
	}
	// A share 0.6 point down regresses; 0.5 point does not (above).
	worse := []matrixRow{{Traffic: "a", Seeds: []string{"1", "2"}, Share: 0.994, WorkerSeconds: 4200}}
	if got := matrixRegressions(base[:1], worse); len(got) != 1 || !strings.Contains(got[0], "0.600 points below") {
		t.Errorf("0.6 point down: %q, want one regression of 0.600 points", got)
	}
	table := matrixTable(base, now)
	for _, line := range []string{
		"| a | 99.500 % (-0.500) | 1.2 (+7.14 %) | 4 (0 before) |",
		"| b | 90.000 % | 0.0 | 0 |",
	} {
		if !strings.Contains(table, line+"\n") {
			t.Errorf("table lacks %q:\n%s", line, table)
		}
	}
}
