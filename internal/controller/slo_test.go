package controller

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/policy/policytest"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// sloObservation is a group whose queue holds visible messages and 10 in
// flight at 10 workers: at 0.2 s a message, 50 msg/s start.
func sloObservation(group string, at time.Time, visible int64) model.Observation {
	o := observation(group, at, visible, 10)
	o.Sample.InFlight, o.Sample.Backlog = 10, visible+10
	return o
}

// The controller feeds each group's estimate with the cycle's sample and
// fleet (the arrivals by conservation at the settings' service time): a
// FIFO queue kept at 3,000 visible (a minute of waiting at
// 50 msg/s against a 10 s promise) starts its messages late, an empty one
// starts them within the promise, and a standard queue's estimate is
// rough. The counters and the view hold what an estimate fed the same
// inputs by hand says.
func TestSLOEstimateFollowsTheQueue(t *testing.T) {
	fifo := func(name string) policy.Settings {
		return policytest.Settings(name, func(s *policy.Settings) { s.FIFO = true }).WithDefaults()
	}
	groups := []policy.Settings{fifo("late"), fifo("fresh"), settings("standard")}
	visible := map[string]int64{"late": 3000, "fresh": 0, "standard": 0}
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		var out []model.Observation
		for _, g := range groups {
			out = append(out, sloObservation(g.Group, now, visible[g.Group]))
		}
		return out, nil
	})
	reg := prometheus.NewRegistry()
	c, err := New(Options{Groups: groups, Observer: obs, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	// The same estimate, fed by hand from the decisions.
	mirror := map[string]*slo.Tracker{}
	sums := map[string][2]float64{}
	for _, g := range groups {
		mirror[g.Group] = slo.NewTracker(g.Latency, g.LatencyQuantile, 30*24*time.Hour)
	}
	const cycles = 75 * 12 // 75 minutes at 5 s
	var now time.Time
	for i := range cycles {
		now = t0.Add(time.Duration(i) * 5 * time.Second)
		ds, err := c.RunOnce(context.Background(), now)
		if err != nil {
			t.Fatal(err)
		}
		for j, d := range ds {
			g := groups[j]
			in := slo.Input{At: now, Visible: float64(visible[g.Group]), OldestAge: -1, Unordered: !g.FIFO,
				Held: d.Diagnosis == model.DiagMessagesHeld}
			if i > 0 {
				// The queue neither grows nor shrinks: what arrived is what
				// 10 slots completed in 5 s at 0.2 s a message.
				counts := slo.Counts{Visible: float64(visible[g.Group]), InFlight: 10, Slots: 10}
				in.Arrived = slo.Arrived(counts, counts, 5, 0.2)
				if in.Arrived != 250 {
					t.Fatalf("slo.Arrived = %v, want 250", in.Arrived)
				}
			}
			st := mirror[g.Group].Observe(in)
			s := sums[g.Group]
			sums[g.Group] = [2]float64{s[0] + st.Within, s[1] + st.Late}
		}
	}
	views := c.Views().Groups()
	for i, g := range groups {
		name := g.Group
		want := mirror[name].Status(now)
		got := views[i].SLO
		if got == nil {
			t.Fatalf("%s: no SLO in the view", name)
		}
		if *got != want {
			t.Errorf("%s: view's SLO %+v, want %+v", name, *got, want)
		}
		within := testutil.ToFloat64(c.metrics.sloWithin.WithLabelValues(name))
		late := testutil.ToFloat64(c.metrics.sloLate.WithLabelValues(name))
		if !near(within, sums[name][0]) || !near(late, sums[name][1]) {
			t.Errorf("%s: counters within %v late %v, want the steps' sums %v", name, within, late, sums[name])
		}
		if b := testutil.ToFloat64(c.metrics.sloBudget.WithLabelValues(name)); b != want.BudgetLeft {
			t.Errorf("%s: budget remaining %v, want %v", name, b, want.BudgetLeft)
		}
		if o := testutil.ToFloat64(c.metrics.sloObjective.WithLabelValues(name)); o != 0.99 {
			t.Errorf("%s: objective %v, want 0.99", name, o)
		}
		if w := testutil.ToFloat64(c.metrics.sloWindow.WithLabelValues(name)); w != 30*24*3600 {
			t.Errorf("%s: window %v s, want 30 days", name, w)
		}
		if p := views[i].History[len(views[i].History)-1].BudgetLeft; p == nil || *p != math.Max(want.BudgetLeft, 0) {
			t.Errorf("%s: the history's last budget %v, want %v", name, p, math.Max(want.BudgetLeft, 0))
		}
	}
	// What the estimate says of each queue.
	late, fresh, standard := views[0].SLO, views[1].SLO, views[2].SLO
	if late.HourLate == 0 || late.HourShare > 0.05 || late.BudgetLeft >= 0 {
		t.Errorf("late: %+v, want its hour's messages late and the budget overspent", *late)
	}
	if fresh.HourWithin == 0 || fresh.HourLate != 0 || fresh.BudgetLeft != 1 || fresh.Trust != slo.TrustGood {
		t.Errorf("fresh: %+v, want every message within the promise, trusted", *fresh)
	}
	if standard.Trust != slo.TrustRough || standard.Why != slo.WhyUnordered {
		t.Errorf("standard: trust %v (%q), want rough for a standard queue", standard.Trust, standard.Why)
	}
	want := `
# HELP checker_slo_estimate_trusted 1 when every estimate of the last hour was trusted; 0 when one was rough or missing (a standard queue, delayed or held messages, missing samples, the first promise-length after start).
# TYPE checker_slo_estimate_trusted gauge
checker_slo_estimate_trusted{group="fresh"} 1
checker_slo_estimate_trusted{group="late"} 1
checker_slo_estimate_trusted{group="standard"} 0
# HELP checker_slo_objective_ratio The share of messages promised to start within the latency (target.latency_quantile): the SLO's objective.
# TYPE checker_slo_objective_ratio gauge
checker_slo_objective_ratio{group="fresh"} 0.99
checker_slo_objective_ratio{group="late"} 0.99
checker_slo_objective_ratio{group="standard"} 0.99
# HELP checker_slo_window_seconds The window of the promise's error budget (target.slo_window).
# TYPE checker_slo_window_seconds gauge
checker_slo_window_seconds{group="fresh"} 2.592e+06
checker_slo_window_seconds{group="late"} 2.592e+06
checker_slo_window_seconds{group="standard"} 2.592e+06
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"checker_slo_estimate_trusted", "checker_slo_objective_ratio", "checker_slo_window_seconds"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c.metrics.sloWithin) + testutil.CollectAndCount(c.metrics.sloLate); n != 6 {
		t.Errorf("%d series of the two counters, want one each per group (6)", n)
	}
	trusted := map[string]float64{"late": 1, "fresh": 1, "standard": 0}
	for name, want := range trusted {
		if got := testutil.ToFloat64(c.metrics.sloTrusted.WithLabelValues(name)); got != want {
			t.Errorf("%s: checker_slo_estimate_trusted %v, want %v", name, got, want)
		}
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A reload keeps a group's estimate while its promise, objective and
// window stay, and starts a new one when the promise changes; the
// counters go on counting.
func TestSLOEstimateAcrossReloads(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{sloObservation("a", now, 0)}, nil
	})
	reg := prometheus.NewRegistry()
	a := settings("a")
	c, err := New(Options{Groups: []policy.Settings{a}, Observer: obs, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	run := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			if _, err := c.RunOnce(context.Background(), t0.Add(time.Duration(i)*5*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	started := func() float64 { s := c.Views().Groups()[0].SLO; return s.Within + s.Late }
	run(0, 24)
	before := started()
	if before == 0 {
		t.Fatal("nothing started in two minutes at 50 msg/s")
	}
	counted := testutil.ToFloat64(c.metrics.sloWithin.WithLabelValues("a"))

	// The same promise, a different max: the estimate goes on.
	b := a
	b.Max++
	if err := c.Reload([]policy.Settings{b}, obs, nil); err != nil {
		t.Fatal(err)
	}
	run(24, 1)
	if got := started(); got <= before {
		t.Errorf("after a reload that kept the promise, %v started, want more than the %v before", got, before)
	}

	// A new promise: a new estimate, which knows only the cycle since.
	b.Latency *= 2
	if err := c.Reload([]policy.Settings{b}, obs, nil); err != nil {
		t.Fatal(err)
	}
	run(25, 1)
	if got := started(); got >= before {
		t.Errorf("after the promise changed, %v started, want only the last cycle's (fewer than %v)", got, before)
	}
	if got := testutil.ToFloat64(c.metrics.sloWithin.WithLabelValues("a")); got < counted {
		t.Errorf("the within counter went from %v to %v: a counter never goes down", counted, got)
	}
}

// A cycle without data counts no arrivals and keeps the last counts: the
// next cycle with data reckons the arrivals over both intervals. Without
// a known fleet the slots are unknown, and the in-flight count stands.
func TestSLOInputAcrossAMissingCycle(t *testing.T) {
	t.Parallel()
	s := policytest.Settings("a", func(s *policy.Settings) { s.FIFO = true }).WithDefaults() // 0.2 s a message
	d := model.Decision{InServiceWorkers: 10}
	var e groupSLO
	ok := func(at time.Time, visible int64) model.Observation { return sloObservation("a", at, visible) }
	missing := model.Observation{Sample: model.GroupSample{Group: "a", At: t0.Add(5 * time.Second), Queues: 1}}

	first := ok(t0, 100)
	// CloudWatch's minute from 11:58 holds the largest age of that minute:
	// it is read as of the minute's end.
	first.Sample.OldestAge = &model.Reading{Value: 42, At: t0.Add(-2 * time.Minute)}
	if in := e.sloInput(s, first, d, t0); in.Arrived != 0 || in.Missing || in.Unordered || in.Visible != 100 ||
		in.OldestAge != 42 || !in.OldestAt.Equal(t0.Add(-time.Minute)) {
		t.Errorf("first cycle: %+v, want no arrivals yet, 100 visible, ordered, age 42 s as of %s", in, t0.Add(-time.Minute))
	}
	if in := e.sloInput(s, missing, d, t0.Add(5*time.Second)); !in.Missing || in.Arrived != 0 {
		t.Errorf("missing cycle: %+v, want missing and no arrivals", in)
	}
	// 10 s later: 40 more visible, and 10 slots × 10 s / 0.2 s = 500 completed.
	if in := e.sloInput(s, ok(t0.Add(10*time.Second), 140), d, t0.Add(10*time.Second)); in.Arrived != 540 {
		t.Errorf("after the gap: arrived %v, want 540", in.Arrived)
	}
	// A fleet not read: the in-flight count (10) is taken as it is.
	o := ok(t0.Add(15*time.Second), 140)
	o.Fleet.Known = false
	o.Sample.InFlight = 30
	if in := e.sloInput(s, o, d, t0.Add(15*time.Second)); in.Arrived != 20+(10+30)/2.0*5/0.2 {
		t.Errorf("fleet unknown: arrived %v, want %v", in.Arrived, 20+(10+30)/2.0*5/0.2)
	}
}

// Little's law in the arrivals takes the measured service time only while
// the policy sizes with it.
func TestSLOServiceTime(t *testing.T) {
	t.Parallel()
	s := policytest.Settings("g").WithDefaults()
	configured := float64(max(s.Concurrency, 1)) / s.PerWorker()
	measured := configured / 2
	tests := []struct {
		name string
		m    model.Measured
		want float64
	}{
		{"nothing measured", model.Measured{}, configured},
		{"measured, not trusted yet", model.Measured{ServiceTimeSeconds: &measured, SizingWith: "configured"}, configured},
		{"measured and sized with", model.Measured{ServiceTimeSeconds: &measured, SizingWith: "measured"}, measured},
	}
	for _, tt := range tests {
		if got := sloServiceTime(s, model.Decision{Measured: tt.m}); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
