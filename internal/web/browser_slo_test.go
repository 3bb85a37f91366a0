package web

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// testPromiseBudget opens, in the browser, a page of three groups after 65
// minutes of cycles, each with 10 messages in flight at 0.2 s a message
// (50 msg/s started): "kept", a FIFO queue that holds nothing back, so
// that every message starts within its 10 s promise; "late", a FIFO queue
// holding 3,000 messages, a minute's wait, whose budget is overspent; and
// "rough", a standard queue, whose estimate the page calls rough and says
// why. The page's figures and its chart of the budget left are the
// document's, as the script and the server both write them.
func testPromiseBudget(t *testing.T, ctx context.Context) {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	settings := func(name string, fifo bool) policy.Settings {
		return policy.Settings{Group: name, Policy: policy.PolicyModel, ServiceTime: 200 * time.Millisecond, Concurrency: 1,
			Latency: 10 * time.Second, Max: 500, StartDelay: time.Minute, FIFO: fifo}.WithDefaults()
	}
	visible := map[string]int64{"kept": 0, "late": 3000, "rough": 0}
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		var out []model.Observation
		for _, g := range []string{"kept", "late", "rough"} {
			v := visible[g]
			out = append(out, model.Observation{
				Sample: model.GroupSample{Group: g, At: now, Visible: v, InFlight: 10, Backlog: v + 10, Queues: 1, Answered: 1},
				Fleet:  model.Fleet{Kind: "autoscaling", Name: g, Known: true, Desired: 10, InService: 10, Max: 500, At: now},
			})
		}
		return out, nil
	})
	c, err := controller.New(controller.Options{Groups: []policy.Settings{settings("kept", true), settings("late", true), settings("rough", false)},
		Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for i := range 65 * 12 {
		last = start.Add(time.Duration(i) * 5 * time.Second)
		if _, err := c.RunOnce(context.Background(), last); err != nil {
			t.Fatal(err)
		}
	}
	pageNow := last.Add(2 * time.Second)
	srv := httptest.NewServer(Handler(Options{Controller: c, Gatherer: prometheus.NewRegistry(), Interval: 5 * time.Second,
		Now: func() time.Time { return pageNow }}))
	t.Cleanup(srv.Close)

	ctx, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	within(t, ctx, 30*time.Second, chromedp.Navigate(srv.URL+"/"))
	within(t, ctx, 30*time.Second, chromedp.Poll[bool](`!!window.checker && window.checker.applied > 0`,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(30*time.Second)))

	// Every figure and chart, the budget's among them, as the server
	// writes them from the document the script rendered.
	raw := within(t, ctx, 30*time.Second, chromedp.Evaluate[json.RawMessage](
		`window.checker.refresh().then(() => `+snapshotJS+`)`, chromedp.EvalAwaitPromise))
	var snap pageSnapshot
	if err := json.Unmarshal(raw, &snap); err != nil {
		t.Fatalf("decode the page snapshot: %v", err)
	}
	rendered, err := parseDoc(snap.Last)
	if err != nil {
		t.Fatalf("the page's last document: %v", err)
	}
	checkAgainstRendered(t, snap, rendered)
	budgetPaths := map[string]string{}
	for _, ch := range snap.Charts {
		if ch.Chart == "budget" {
			budgetPaths[ch.Group] = ch.Paths["budget_left"]
		}
	}

	// What on-call reads in each group's figure.
	type sloText struct{ Name, Figure, Why string }
	texts := within(t, ctx, 30*time.Second, chromedp.Evaluate[[]sloText](`[...document.querySelectorAll("section.group")].map((s) => {
	  const f = s.querySelector("[data-slo]");
	  const why = f && f.querySelector('[data-show="slo.why"]');
	  return { Name: s.dataset.group, Figure: f ? f.textContent.replace(/\s+/g, " ").trim() : "",
	    Why: why && !why.hidden ? why.textContent.trim() : "" };
	})`))
	byName := map[string]sloText{}
	for _, g := range texts {
		byName[g.Name] = g
	}
	views := map[string]*slo.Status{}
	for _, v := range c.Views().Groups() {
		views[v.Settings.Group] = v.SLO
	}
	for _, name := range []string{"kept", "late", "rough"} {
		if views[name] == nil {
			t.Fatalf("%s: no estimate in the view", name)
		}
		if budgetPaths[name] == "" || !strings.Contains(budgetPaths[name], "L") {
			t.Errorf("%s: the budget chart draws %q, want a line", name, budgetPaths[name])
		}
	}
	kept, late, rough := byName["kept"], byName["late"], byName["rough"]
	want := []struct {
		name, text, says string
	}{
		{"kept", kept.Figure, "100.0 % of the last hour's messages"},
		{"kept", kept.Figure, "error budget left 100.0 %"},
		{"kept", kept.Figure, "estimate good"},
		{"kept", kept.Figure, "objective 99.0 %"},
		{"late", late.Figure, "estimate good"},
		{"late", late.Figure, "error budget left " + formatPercent(views["late"].BudgetLeft)},
		{"rough", rough.Figure, "estimate rough"},
		{"rough", rough.Why, slo.WhyUnordered},
	}
	for _, w := range want {
		if !strings.Contains(w.text, w.says) {
			t.Errorf("%s: the page reads %q, want it to say %q", w.name, w.text, w.says)
		}
	}
	if views["late"].BudgetLeft >= 0 || views["late"].HourShare > 0.05 {
		t.Errorf("late: %+v, want its messages late and its budget overspent", *views["late"])
	}
	if kept.Why != "" || late.Why != "" {
		t.Errorf("trusted estimates with a reason shown: kept %q, late %q", kept.Why, late.Why)
	}
	t.Logf("kept: %s | late: %s | rough: %s (%s)", kept.Figure, late.Figure, rough.Figure, rough.Why)
}
