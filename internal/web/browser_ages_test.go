package web

import (
	"context"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/forecast/forecasttest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// testMisleadingMoments opens, in the browser, a page whose last cycle ran
// 4 min 52 s before the page's time, as on-call may meet it: a burst group
// with 576 messages waiting whose oldest age (0.5 s) comes from a
// CloudWatch minute 2–3 minutes old, during a job its forecast expected at
// a time now past; and a group whose workers keep pace while its oldest
// message, by a fresh reading, waited 26.3 s against a 20 s promise. The
// page shows each figure with its age and says the oldest age is not now,
// names no time past as expected, and calls the second group late, not
// healthy. A third group, held at its cap, keeps its badge over cycles
// with the same numbers.
func testMisleadingMoments(t *testing.T, ctx context.Context) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	settings := func(name string) policy.Settings {
		return policy.Settings{Group: name, Policy: policy.PolicyModel, ServiceTime: time.Second, Concurrency: 1,
			Latency: 20 * time.Second, Max: 500, StartDelay: time.Minute, StaleAfter: time.Minute}.WithDefaults()
	}
	counts := forecasttest.Minutes(5, 4*60, func(i int) float64 {
		if i%20 == 7 || i%20 == 8 {
			return 200
		}
		return 10
	})
	decided := start.Add(4*time.Hour + 7*time.Minute + 30*time.Second) // during the job due at 13:07
	pageNow := decided.Add(4*time.Minute + 52*time.Second)
	minute := decided.Truncate(time.Minute).Add(-2 * time.Minute) // ended 1m30s before the decision
	cycle := 0
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		fleet := func(n int) model.Fleet {
			return model.Fleet{Kind: "autoscaling", Name: "w", Known: true, Desired: n, InService: n, Max: 500, At: now}
		}
		cycle++
		wobble := int64(20 + 5*(cycle%2)) // the depth of a busy fleet, up and down
		return []model.Observation{
			{Sample: model.GroupSample{Group: "capped", At: now, Visible: wobble, InFlight: 17, Backlog: wobble + 17, Queues: 1, Answered: 1,
				Deleted: &model.Reading{Value: 13, At: now}}, Fleet: fleet(17)},
			{Sample: model.GroupSample{Group: "burst", At: now, Visible: 576, InFlight: 40, Backlog: 616, Queues: 1, Answered: 1,
				OldestAge: &model.Reading{Value: 0.5, At: minute}, Deleted: &model.Reading{Value: 40, At: minute}}, Fleet: fleet(40)},
			{Sample: model.GroupSample{Group: "late", At: now, Visible: 5, InFlight: 10, Backlog: 15, Queues: 1, Answered: 1,
				OldestAge: &model.Reading{Value: 26.3, At: now}}, Fleet: fleet(20)},
		}, nil
	})
	capped := settings("capped")
	capped.Cap = 17
	c, err := controller.New(controller.Options{Groups: []policy.Settings{capped, settings("burst"), settings("late")}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	c.Preload(map[string]model.MinuteHistory{"burst": {Start: start, Counts: counts}, "capped": {Start: start, Counts: counts}})
	for i := range 3 {
		_, _ = c.RunOnce(context.Background(), decided.Add(time.Duration(i-2)*5*time.Second))
	}
	srv := httptest.NewServer(Handler(Options{Controller: c, Gatherer: prometheus.NewRegistry(), Interval: 5 * time.Second,
		Now: func() time.Time { return pageNow }}))
	t.Cleanup(srv.Close)

	// A tab of its own: the first tab's watch holds it to the demo.
	ctx, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // opens the tab, on a context that lasts
		t.Fatalf("open a tab: %v", err)
	}
	within(t, ctx, 30*time.Second, chromedp.Navigate(srv.URL+"/"))
	within(t, ctx, 30*time.Second, chromedp.Poll[bool](`!!window.checker && window.checker.applied > 0`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))
	type groupText struct{ Name, Badge, Sample, OldestNote, Forecast, Reasons string }
	texts := within(t, ctx, 30*time.Second, chromedp.Evaluate[[]groupText](`window.checker.refresh().then(() =>
	  [...document.querySelectorAll("section.group")].map((s) => {
	    const shown = (sel) => { const n = s.querySelector(sel); return n && !n.hidden ? n.textContent.replace(/\s+/g, " ").trim() : ""; };
	    return {
	      Name: s.dataset.group,
	      Badge: shown(".badge"),
	      Sample: shown('[data-age="sample"]'),
	      OldestNote: shown('[data-show="ages.oldest_age_note"]'),
	      Forecast: shown('[data-show="forecast_note"]'),
	      Reasons: s.textContent.replace(/\s+/g, " "),
	    };
	  }))`, chromedp.EvalAwaitPromise))
	byName := map[string]groupText{}
	for _, g := range texts {
		byName[g.Name] = g
	}
	burst, late := byName["burst"], byName["late"]
	if burst.Sample != "counted 4m52s ago" {
		t.Errorf("burst: the backlog's age reads %q, want \"counted 4m52s ago\" (the last cycle at %s, the page at %s)",
			burst.Sample, formatClock(decided), formatClock(pageNow))
	}
	if !strings.Contains(burst.OldestNote, "not now") || !strings.Contains(burst.OldestNote, "ago") {
		t.Errorf("burst: the oldest age's note reads %q, want it to say how old it is and that it is not now", burst.OldestNote)
	}
	past := regexp.MustCompile(`(?:expected at|expects[^.]* from) (\d\d:\d\d:\d\d)`)
	// The forecast note is the page's, as of the page's time; the reasons
	// are the decision's, as of its own (and the page says how old it is).
	clockOf := func(t time.Time) time.Time { c, _ := time.Parse("15:04:05", formatClock(t)); return c }
	for _, g := range texts {
		for _, check := range []struct {
			text string
			now  time.Time
		}{{g.Forecast, pageNow}, {g.Reasons, decided}} {
			for _, m := range past.FindAllStringSubmatch(check.text, -1) {
				if at, _ := time.Parse("15:04:05", m[1]); !at.After(clockOf(check.now)) {
					t.Errorf("%s: the page names %s as expected at %s: %q", g.Name, m[1], formatClock(check.now), m[0])
				}
			}
		}
	}
	if burst.Forecast == "" {
		t.Errorf("burst: no forecast note; the scene needs the job's forecast (reasons: %s)", burst.Reasons)
	}
	if late.Badge != "Late" {
		t.Errorf("late: the badge reads %q, want Late (oldest 26.3 s against a 20 s promise)", late.Badge)
	}
	t.Logf("burst: %q; forecast: %q", burst.OldestNote, burst.Forecast)

	// More cycles with the same numbers on a group held at its cap of 17
	// below the forecast's count (recommended and desired unchanged, every
	// worker busy, the depth wobbling): its badge holds, where it used to
	// turn from under-provisioned to draining and back each cycle.
	type capText struct{ Badge, Recommended, Desired string }
	seen := map[capText]int{}
	for i := range 6 {
		_, _ = c.RunOnce(context.Background(), decided.Add(time.Duration(i+1)*5*time.Second))
		got := within(t, ctx, 30*time.Second, chromedp.Evaluate[capText](`window.checker.refresh().then(() => {
		  const s = document.querySelector('section.group[data-group="capped"]');
		  const f = (p) => (s.querySelector('[data-field="' + p + '"]') || {}).textContent || "";
		  return {Badge: s.querySelector(".badge").textContent.trim(), Recommended: f("decision.recommended_workers"), Desired: f("decision.desired_workers")};
		})`, chromedp.EvalAwaitPromise))
		seen[got]++
	}
	if len(seen) != 1 {
		t.Errorf("capped group over six cycles with the same numbers: %v, want one badge", seen)
	}
	t.Logf("capped group over six cycles: %v", seen)
}
