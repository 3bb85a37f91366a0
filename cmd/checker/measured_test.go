//go:build !race

package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The claims of docs/measuring.md, through `checker simulate` with
// CloudWatch's metrics delivered a minute late (the default), seeds 1-3.
// They run with the README's comparison (make test runs them without the
// race detector).

// measuredRuns runs each argument list through `checker simulate --policy
// model`, two at a time, and returns the model's result of each.
func measuredRuns(t *testing.T, jobs [][]string) []simResult {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the simulator for minutes")
	}
	out := make([]simResult, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, args := range jobs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = simJSON(t, append(slices.Clone(args), "--policy", "model")...)[0]
		})
	}
	wg.Wait()
	return out
}

// scored leaves out of the scores what a learning policy has not seen yet:
// the first 30 minutes, the first day of days.
var scored = map[string][]string{
	"days":  {"--warm-up", "24h"},
	"cron":  {"--duration", "6h", "--warm-up", "30m"},
	"spike": {"--warm-up", "30m"},
}

// Settings wrong by 2× either way: the workers take 200 ms, the settings
// say 100 ms or 400 ms. Measuring the fleet, the model holds the promise
// for as many messages (within 1 point) at the same cost (within 10 %) as
// when the settings are right. The control: with learning off and the
// exact deleted count taken as completions (the old, kind simulator, in
// which the checker trusted the configured number), workers twice as slow
// as configured break the promise.
func TestComparisonMeasuredFleetWrongSettings(t *testing.T) {
	t.Parallel()
	var jobs [][]string
	var names []string
	for _, sc := range []string{"days", "cron", "spike"} {
		for _, seed := range comparisonSeeds {
			for _, assumed := range []string{"200ms", "100ms", "400ms"} {
				jobs = append(jobs, append([]string{"--scenario", sc, "--seed", seed, "--service-dist", "lognormal",
					"--assumed-service-time", assumed}, scored[sc]...))
				names = append(names, fmt.Sprintf("%s seed %s assuming %s", sc, seed, assumed))
			}
		}
	}
	control := append([]string{"--scenario", "days", "--seed", "1", "--service-dist", "lognormal",
		"--assumed-service-time", "100ms", "--learn", "off", "--metrics-exact"}, scored["days"]...)
	res := measuredRuns(t, append(jobs, control))
	var misses []string
	for i := 0; i < len(jobs); i += 3 {
		right := res[i]
		for k := 1; k <= 2; k++ {
			wrong := res[i+k]
			if d := math.Abs(wrong.SLOAttainment - right.SLOAttainment); d > 0.01 {
				misses = append(misses, fmt.Sprintf("%s: %.2f %% within the promise, %.2f %% when right", names[i+k], 100*wrong.SLOAttainment, 100*right.SLOAttainment))
			}
			if r := wrong.WorkerSeconds / right.WorkerSeconds; math.Abs(r-1) > 0.10 {
				misses = append(misses, fmt.Sprintf("%s: costs %.2f× the run with the right settings", names[i+k], r))
			}
		}
	}
	if off := res[len(jobs)]; off.SLOAttainment > res[0].SLOAttainment-0.1 {
		t.Errorf("control: trusting settings 2× too fast, %.2f %% within the promise; want at least 10 points below the right settings' %.2f %%",
			100*off.SLOAttainment, 100*res[0].SLOAttainment)
	}
	if len(misses) > 0 {
		t.Errorf("the measured fleet's goals not met:\n%s", strings.Join(misses, "\n"))
	}
}

// Settings wrong on bursty traffic: irregular at a 30 s promise, a 60 s
// start delay and 1 s a message (lognormal), scored after 15 minutes, with
// the settings saying 0.7 s or 3 s. The burst learner keeps what it learned
// when the measured service time is trusted over the configured one, and
// the sizing does not switch back and forth while the measurement's
// confidence hovers near trust: over seeds 1-6 the model holds the promise
// for as many messages (the mean within 1 point) at the same cost (within
// 10 %) as with the right settings. (Forgetting the bursts at each switch,
// it kept 90.6 % and 87.3 % against 95.2 %.)
func TestComparisonMeasuredFleetWrongSettingsOnBursts(t *testing.T) {
	t.Parallel()
	assumed := []string{"1s", "700ms", "3s"}
	var jobs [][]string
	for _, seed := range []string{"1", "2", "3", "4", "5", "6"} {
		for _, a := range assumed {
			jobs = append(jobs, []string{"--scenario", "irregular", "--seed", seed, "--service-dist", "lognormal",
				"--min", "1", "--max", "3000", "--start-delay", "60s", "--latency-target", "30s", "--service-time", "1s",
				"--warm-up", "15m", "--duration", "1h", "--assumed-service-time", a})
		}
	}
	res := measuredRuns(t, jobs)
	share, cost := make([]float64, len(assumed)), make([]float64, len(assumed))
	for i, r := range res {
		share[i%len(assumed)] += r.SLOAttainment / float64(len(res)/len(assumed))
		cost[i%len(assumed)] += r.WorkerSeconds
	}
	for k := 1; k < len(assumed); k++ {
		if d := share[k] - share[0]; d < -0.01 {
			t.Errorf("assuming %s: %.2f %% within the promise over seeds 1-6, %.2f %% with the right settings", assumed[k], 100*share[k], 100*share[0])
		}
		if r := cost[k] / cost[0]; math.Abs(r-1) > 0.10 {
			t.Errorf("assuming %s: costs %.3f× the runs with the right settings", assumed[k], r)
		}
	}
}

// Start delays spread lognormally (cv 0.5) around the configured one: the
// model, pre-starting with the start delay it measures, holds the promise
// within 1 point of the run with exact delays on cron and days.
func TestComparisonMeasuredStartDelaySpread(t *testing.T) {
	t.Parallel()
	var jobs [][]string
	for _, sc := range []string{"cron", "days"} {
		for _, seed := range comparisonSeeds {
			base := append([]string{"--scenario", sc, "--seed", seed}, scored[sc]...)
			jobs = append(jobs, base, append(slices.Clone(base), "--start-delay-cv", "0.5"))
		}
	}
	res := measuredRuns(t, jobs)
	for i := 0; i < len(jobs); i += 2 {
		exact, spread := res[i], res[i+1]
		if spread.SLOAttainment < exact.SLOAttainment-0.01 {
			t.Errorf("%s: %.2f %% within the promise with spread start delays, %.2f %% with exact ones",
				strings.Join(jobs[i], " "), 100*spread.SLOAttainment, 100*exact.SLOAttainment)
		}
	}
}

// CloudWatch's deleted count, delivered as CloudWatch delivers it, does not
// make the model worse than not reading it, on every built-in scenario
// (the mean over seeds 1-3: within 0.1 point of the promise held and 3 %
// of the cost), but web. On irregular, at the default promise (10 s, a
// sixth of the start delay), a seed's share swings by up to 15 points both
// ways with whether one burst is met by warm workers or cold, so there the
// claim is over seeds 1-20 and the mean paired difference must be within
// two of its standard errors (and the 0.1 point) of none: six seeds
// passed or failed with any change that moved one burst (-0.40 +/- 0.31
// points at 2fcb45b, -0.57 +/- 0.16 once served backlogs released their
// workers; over 20 seeds -0.19 +/- 0.19 and -0.23 +/- 0.16). On web
// reading it keeps less: -0.21 +/- 0.10 points over seeds 1-12, from
// -0.29 +/- 0.08 while the forecast took the onsets a rhythm was fitted to
// for evidence of it and, given each minute's exact arrivals, bet on
// rhythms fitted to the day's random bumps (fittedTail in
// internal/forecast), whose end also raised what web keeps both ways (96.0
// % read, from 95.4; 96.2 % not, from 95.7). That gap is known and bounded
// here: over seeds 1-6, at most webDeletedGap.
func TestComparisonDeletedCountKeepsTheShare(t *testing.T) {
	t.Parallel()
	args := map[string][]string{"days": {"--warm-up", "24h"}, "cron": {"--duration", "6h", "--warm-up", "1h"}, "weeks": comparisonArgs["weeks"]}
	seeds := map[string][]string{"irregular": seedRange(20), "web": seedRange(6)}
	seedsOf := func(sc string) []string {
		if s, ok := seeds[sc]; ok {
			return s
		}
		return comparisonSeeds
	}
	var jobs [][]string
	for _, sc := range comparisonScenarios {
		for _, seed := range seedsOf(sc) {
			base := append([]string{"--scenario", sc, "--seed", seed}, args[sc]...)
			jobs = append(jobs, base, append(slices.Clone(base), "--deleted-count=false"))
		}
	}
	res := measuredRuns(t, jobs)
	i := 0
	for _, sc := range comparisonScenarios {
		n := len(seedsOf(sc))
		var slo, cost [2]float64
		diffs := make([]float64, n)
		for k := range n {
			with, without := res[i+2*k], res[i+2*k+1]
			slo[0] += with.SLOAttainment / float64(n)
			slo[1] += without.SLOAttainment / float64(n)
			cost[0] += with.WorkerSeconds / float64(n)
			cost[1] += without.WorkerSeconds / float64(n)
			diffs[k] = with.SLOAttainment - without.SLOAttainment
		}
		i += 2 * n
		tol := 0.001
		switch {
		case sc == "web":
			tol = webDeletedGap
		case seeds[sc] != nil:
			tol = max(tol, 2*standardError(diffs))
		}
		if slo[0] < slo[1]-tol || cost[0] > cost[1]*1.03 {
			t.Errorf("%s: reading the deleted count %.2f %% within the promise at %.0f worker-hours; not reading it %.2f %% at %.0f (tolerance %.2f points)",
				sc, 100*slo[0], cost[0]/3600, 100*slo[1], cost[1]/3600, 100*tol)
		}
	}
}

// webDeletedGap is the share within the promise that reading the deleted
// count may cost on web, the mean over its seeds: the gap measured (0.2
// point) and about three of its standard errors.
const webDeletedGap = 0.005

// seedRange is the seeds 1 to n, as flags.
func seedRange(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// standardError is the standard error of the mean of xs (n − 1 in the
// variance).
func standardError(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	mean := 0.0
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	v := 0.0
	for _, x := range xs {
		v += (x - mean) * (x - mean)
	}
	return math.Sqrt(v / float64(len(xs)-1) / float64(len(xs)))
}
