//go:build comparison && !race

package main

import (
	"flag"
	"fmt"
	"strconv"
	"testing"
)

var (
	flashFlag     = flag.Bool("flash", false, "run the flash steps over many seeds and print their spread")
	flashSeeds    = flag.Int("flash-seeds", 60, "seeds of the flash steps, from 1")
	flashInterval = flag.String("flash-interval", "5s", "the sampling interval of the flash steps")
)

// flashLow is the share within the promise below which a flash-steps run
// counts as an outlier.
const flashLow = 0.935

// TestFlashSeeds runs the model on the flash steps (docs/traces/flash-steps.csv,
// the first setting) over many seeds and prints the spread of its shares
// within the promise: what the measured ceiling's top is argued by
// (internal/policy/headroom.go). The few seeds of TestFlashCrowdSteps show a
// level; these show the outliers, a run in twenty or thirty that a release
// at the top of a step costs points.
//
// It checks the figures the code quotes at the default interval, 5 s: a
// mean of at least 94 % and at most 3 runs of 60 below 93.5 % (94.37 % and
// 2 when measured). At another interval, or another number of seeds, it
// prints and checks nothing but that every run is scored.
func TestFlashSeeds(t *testing.T) {
	if !*flashFlag {
		t.Skip("the flash steps over many seeds: make flash")
	}
	n := *flashSeeds
	runs := make([][]string, n)
	for i := range runs {
		runs[i] = []string{"--scenario", "../../docs/traces/flash-steps.csv", "--service-dist", "lognormal",
			"--service-time", "1s", "--start-delay", "1m", "--latency-target", "30s", "--min", "1", "--max", "3000",
			"--warm-up", "15m", "--interval", *flashInterval, "--seed", strconv.Itoa(i + 1)}
	}
	shares := make([]float64, n)
	hours := make([]float64, n)
	for i, res := range simAll(t, runs, "--policy", "model") {
		if len(res) != 1 || res[0].Messages == 0 {
			t.Fatalf("seed %d: %d results", i+1, len(res))
		}
		shares[i], hours[i] = res[0].SLOAttainment, res[0].WorkerSeconds/3600
	}
	mean, least, low, wh := 0.0, 1.0, 0, 0.0
	for i, s := range shares {
		mean += s / float64(n)
		least = min(least, s)
		if s < flashLow {
			low++
		}
		wh += hours[i]
	}
	fmt.Printf("flash steps, %s interval, seeds 1–%d: mean %.2f %% within the promise, least %.2f %%, %d below %.1f %%, %.0f worker-hours\n",
		*flashInterval, n, 100*mean, 100*least, low, 100*flashLow, wh)
	if *flashInterval == "5s" && n == 60 && (mean < 0.94 || low > 3) {
		t.Errorf("mean %.2f %%, %d of 60 below %.1f %%: want at least 94 %% and at most 3", 100*mean, low, 100*flashLow)
	}
}
