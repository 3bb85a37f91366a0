//go:build comparison && !race

package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/queuechecker/queue-checker/internal/sim"
)

var (
	matrixFlag    = flag.Bool("matrix", false, "run the policy matrix: the model alone on the scoreboard's traffics, seeds 1–3, and print each traffic's means")
	matrixSave    = flag.String("matrix-save", "", "with -matrix: write its runs to this JSON file, a baseline for -matrix-against")
	matrixAgainst = flag.String("matrix-against", "", "with -matrix: compare each traffic with the runs -matrix-save wrote and fail where its share within the promise falls by more than 0.5 point or its worker-hours rise by more than 3 %")
)

// TestMatrix runs, with -matrix, the model alone on the scoreboard's
// traffics (the real traces in both settings, every built-in scenario),
// seeds 1–3, as many runs at once as -parallel allows, and prints each
// traffic's mean share within the promise, worker-hours and launches over
// the scored window: the quick check of a change to the policy (make matrix,
// a few minutes on two cores). With -matrix-save it writes the runs; with
// -matrix-against it compares with runs written so by another build and
// fails on a regression beyond the tolerances of matrixRegressions.
func TestMatrix(t *testing.T) {
	if !*matrixFlag {
		t.Skip("the policy matrix: make matrix")
	}
	var base []matrixRun
	if *matrixAgainst != "" {
		b, err := os.ReadFile(*matrixAgainst)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &base); err != nil {
			t.Fatalf("%s: %v", *matrixAgainst, err)
		}
	}
	rows := scoreboardRows(t)
	// Each run has its own place, in the rows' order and the seeds', so
	// the runs at once need no lock and the result no sorting.
	runs := make([]matrixRun, len(rows)*len(scoreboardSeeds))
	t.Run("runs", func(t *testing.T) {
		for i, row := range rows {
			for j, seed := range scoreboardSeeds {
				t.Run(strings.ReplaceAll(row.name, "`", "")+"/"+seed, func(t *testing.T) {
					t.Parallel()
					args := slices.Concat(row.args, []string{"--seed", seed, "--policy", sim.PolicyModel})
					r := simJSON(t, args...)
					if len(r) != 1 {
						t.Fatalf("%d results, want the model's", len(r))
					}
					runs[i*len(scoreboardSeeds)+j] = matrixRun{Traffic: row.name, Seed: seed,
						Share: r[0].SLOAttainment, WorkerSeconds: r[0].WorkerSeconds, Launches: r[0].Launches}
				})
			}
		}
	})
	if t.Failed() {
		return
	}
	if *matrixSave != "" {
		b, err := json.MarshalIndent(runs, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*matrixSave, append(b, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now, was := matrixMeans(runs), matrixMeans(base)
	fmt.Println(matrixTable(was, now))
	if *matrixAgainst != "" {
		for _, r := range matrixRegressions(was, now) {
			t.Error(r)
		}
	}
}
