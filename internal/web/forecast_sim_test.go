package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim"
)

// The status page's forecast note says what the decision's forecast says,
// for every decision of six hours of the cron scenario (90 s at 15× every
// 20 minutes) run through the simulator's world and the daemon's controller:
// the bet's numbers when the policy bet on an occurrence, the floor and the
// rate it sized for otherwise, and never the fallback "as expected" note
// when the forecast sized the fleet.
func TestForecastNoteFollowsTheDecisionOnCron(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("six simulated hours")
	}
	const duration, interval = 6 * time.Hour, 5 * time.Second
	sc, err := sim.Builtin(sim.ScenarioCron, 50, duration)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sim.Config{
		Start:    time.Date(2025, 3, 14, 0, 0, 0, 0, time.UTC),
		Scenario: sc, Service: sim.Service{Dist: sim.DistExponential, Mean: 200 * time.Millisecond},
		Concurrency: 1, StartDelay: time.Minute, Min: 1, Max: 200, Workers: 14,
		LatencyTarget: 10 * time.Second, Seed: 1, MetricDelay: time.Minute,
	}
	w, err := sim.NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := sim.Settings(cfg, interval, policy.PolicyModel)
	c, err := controller.New(controller.Options{Groups: []policy.Settings{s}, Observer: w, Actuator: w, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var bets, sized, forecasts int
	for at := time.Duration(0); at < duration; at += interval {
		ds, err := c.RunOnce(ctx, cfg.Start.Add(at))
		if err != nil {
			t.Fatalf("at %v: %v", at, err)
		}
		for i := range ds {
			d := &ds[i]
			note := forecastNote(s, d)
			f := d.Forecast
			if f == nil {
				if note != "" {
					t.Fatalf("at %v: no forecast, note %q", at, note)
				}
				continue
			}
			forecasts++
			if f.Floor == "" {
				continue
			}
			sized++
			if strings.Contains(note, "as expected") {
				t.Errorf("at %v: the forecast sized %s for %v msg/s, the note says %q", at, f.Floor, f.SizedFor, note)
			}
			if f.Bet == nil {
				continue
			}
			bets++
			b := f.Bet
			// The policy's own sentence for the bet, from the same facts.
			// (The reasons write percentages with their trailing zeros cut.)
			chance := strconv.FormatFloat(math.Round(b.Chance*1000)/10, 'g', -1, 64)
			when := "expected at"
			if !f.At.After(cfg.Start.Add(at)) {
				when = "due since" // a time past is not expected
			}
			said := fmt.Sprintf("seen %d of %d times, %s, chance %s %%: pre-starting %d of %d workers for the load %s %s",
				f.Seen, f.Of, f.Pattern, chance, b.Workers, b.Need, when, f.At.Format("15:04:05"))
			if !slices.ContainsFunc(d.Reasons, func(r string) bool { return strings.HasPrefix(r, said) }) {
				t.Errorf("at %v: the bet %+v is not what the reasons say: want %q in %q", at, *b, said, d.Reasons)
			}
			want := fmt.Sprintf("Seen %d of %d times (%s), chance %.1f %%: pre-starting %d of the %d workers %s asks for the %s msg/s expected at %s UTC; missed, about %s messages would wait past the promise.",
				f.Seen, f.Of, f.Pattern, 100*b.Chance, b.Workers, b.Need, floorName(f.Floor), formatNumber(f.SizedFor), f.At.UTC().Format("15:04:05"), formatNumber(b.LateIfMissed))
			if note != want {
				t.Errorf("at %v: note\n got %q\nwant %q", at, note, want)
			}
			if bets == 1 {
				// /api and `checker once` print the decision: the bet is there
				// as values.
				raw, err := json.Marshal(groupDoc{Decision: d})
				if err != nil {
					t.Fatal(err)
				}
				wantJSON := fmt.Sprintf(`"bet":{"workers":%d,"need":%d,"chance":%v,"late_if_missed":%v}`, b.Workers, b.Need, b.Chance, b.LateIfMissed)
				if !strings.Contains(string(raw), wantJSON) || !strings.Contains(string(raw), `"floor":"`+f.Floor+`"`) {
					t.Errorf("the group's JSON lacks %s and the floor %q: %s", wantJSON, f.Floor, raw)
				}
			}
		}
	}
	t.Logf("%d decisions with a forecast, %d sized for it, %d bets", forecasts, sized, bets)
	if bets == 0 || sized == bets {
		t.Fatalf("the run has %d bets and %d other forecasts that sized the fleet: it checks too little", bets, sized-bets)
	}
}
