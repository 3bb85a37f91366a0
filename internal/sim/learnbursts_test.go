package sim

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// After a restart the model policy knows the irregular scenario's bursts as
// the scenario made them: with the issue's settings (1 s lognormal service,
// a 60 s start delay, a 30 s promise), a checker restarted at 30 minutes,
// warm-started from the CloudWatch minutes the world has published, reports
// at the end of the hour the bursts that ended within it (those of the
// minutes it replayed and those it measured live), within a quarter of
// their number, and their median gap within a third of the scenario's. The
// scenario's bursts are the runs of its 5 s steps above the base rate, 1 to
// 5 minutes apart. A checker restarted cold knows only the half hour it
// measured, about half of them.
func TestWarmStartKnowsTheIrregularBursts(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 5; seed++ {
		rc, truth := irregularRun(t, seed)
		var last *model.Bursts
		rc.RestartAt = 30 * time.Minute
		rc.probe = &restartProbe{decided: func(_ time.Time, ds []model.Decision) {
			if len(ds) == 1 && ds[0].Bursts != nil {
				b := *ds[0].Bursts
				last = &b
			}
		}}
		mustRun(t, rc, PolicyModel)
		if last == nil {
			t.Fatalf("seed %d: no decision told of bursts", seed)
		}
		t.Logf("seed %d: learned %d bursts, median gap %.0f s; the scenario made %d, median gap %.0f s",
			seed, last.Count, last.GapSeconds, truth.n, truth.gap)
		// Within a quarter, rounded up.
		if d := last.Count - truth.n; 4*max(d, -d) > truth.n+3 {
			t.Errorf("seed %d: %d bursts learned, the scenario made %d", seed, last.Count, truth.n)
		}
		if math.Abs(last.GapSeconds/truth.gap-1) > 1.0/3 {
			t.Errorf("seed %d: median gap %.0f s learned, the scenario's %.0f s", seed, last.GapSeconds, truth.gap)
		}
	}
}

// irregularTruth is what the irregular scenario made over a run: how many
// bursts ended within it, and the median quiet gap before them.
type irregularTruth struct {
	n   int
	gap float64
}

// irregularRun is an hour of the irregular scenario at 50 msg/s with the
// issue's settings, and its truth.
func irregularRun(t *testing.T, seed uint64) (RunConfig, irregularTruth) {
	t.Helper()
	const d = time.Hour
	sc, err := BuiltinSeeded(ScenarioIrregular, 50, d, seed)
	if err != nil {
		t.Fatal(err)
	}
	var tr irregularTruth
	var gaps []float64
	var end time.Duration
	on := false
	for _, s := range sc.Segments {
		hot := s.Rate > 50*irregularBase
		switch {
		case hot && !on:
			if end > 0 {
				gaps = append(gaps, (s.At - end).Seconds())
			}
		case !hot && on:
			end = s.At
			tr.n++
		}
		on = hot
	}
	slices.Sort(gaps)
	tr.gap = gaps[len(gaps)/2]
	rc := issueRun(sc, seed)
	rc.World.Workers, rc.World.ReportOldestAge = 40, true
	return rc, tr
}
