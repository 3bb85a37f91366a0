package controller

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// cronHistory is per-minute history ending at end: 2 msg/s, with a job of
// 40 msg/s for two minutes at :07, :27 and :47 of every hour.
func cronHistory(end time.Time, hours int) model.MinuteHistory {
	start := end.Add(-time.Duration(hours) * time.Hour).Truncate(time.Minute)
	n := int(end.Sub(start) / time.Minute)
	h := model.MinuteHistory{Start: start, Counts: make([]float64, n)}
	for i := range h.Counts {
		m := start.Add(time.Duration(i) * time.Minute).Minute()
		rate := 2.0
		if (m-7)%20 == 0 || (m-8)%20 == 0 {
			rate = 40
		}
		h.Counts[i] = rate * 60
	}
	return h
}

func forecastSettings(name string) policy.Settings {
	s := settings(name)
	s.ServiceTime = time.Second
	s.Latency = 30 * time.Second
	s.StartDelay = 90 * time.Second
	s.Max = 200
	return s
}

// steady observes 2 msg/s at 1 s per message: two in flight, nothing
// visible, on a fleet of four.
func steady(groups ...string) *controllertest.Observer {
	return controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		var out []model.Observation
		for _, g := range groups {
			o := observation(g, now, 0, 4)
			o.Sample.InFlight, o.Sample.Backlog = 2, 2
			out = append(out, o)
		}
		return out, nil
	})
}

func TestPreloadWarmsEachGroupsForecast(t *testing.T) {
	t.Parallel()
	// 10:05:30: the job due at 10:07 starts within the start delay and an
	// interval, so a forecaster that knows the rhythm expects it.
	start := time.Date(2026, 11, 30, 10, 3, 30, 0, time.UTC)
	off := forecastSettings("off")
	off.Forecast.Off = true
	bpw := forecastSettings("bpw")
	bpw.Policy = policy.PolicyBacklogPerWorker
	groups := []policy.Settings{forecastSettings("warm"), forecastSettings("cold"), off, bpw}
	names := []string{"warm", "cold", "off", "bpw"}

	core, logs := observer.New(zap.InfoLevel)
	reg := prometheus.NewRegistry()
	c, err := New(Options{Groups: groups, Observer: steady(names...), Registerer: reg, Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	hist := cronHistory(start, 8)
	// Two minutes the history does not know, and one it cannot use.
	hist.Counts[10], hist.Counts[11], hist.Counts[12] = math.NaN(), math.NaN(), -5
	usable := len(hist.Counts) - 3
	loaded := c.Preload(map[string]model.MinuteHistory{"warm": hist, "off": hist, "bpw": hist, "gone": hist})

	if got := loaded["warm"]; got != usable {
		t.Errorf("warm loaded %d minutes, want %d (%d offered, 3 unknown)", got, usable, len(hist.Counts))
	}
	// The forecast off, the burst learner takes the last hour.
	if got := loaded["off"]; got != 60 {
		t.Errorf("off loaded %d minutes, want the burst learner's 60", got)
	}
	if n := logs.FilterMessage("arrival history loaded into the burst learner").FilterField(zap.String("group", "off")).Len(); n != 1 {
		t.Errorf("%d log lines of the off group's minutes, want 1", n)
	}
	for _, g := range []string{"cold", "bpw", "gone"} {
		if n, ok := loaded[g]; ok {
			t.Errorf("%s loaded %d minutes, want none", g, n)
		}
	}
	if n := logs.FilterMessage("arrival history loaded into the forecast").FilterField(zap.String("group", "warm")).FilterField(zap.Int("minutes", usable)).Len(); n != 1 {
		t.Errorf("%d log lines of the warm group's minutes, want 1: %v", n, logs.All())
	}
	if n := logs.FilterMessage("no arrival history for the group: the forecast and the burst learner learn online").FilterField(zap.String("group", "cold")).Len(); n != 1 {
		t.Errorf("%d log lines of the cold group, want 1", n)
	}

	var ds []model.Decision
	for now := start; !now.After(start.Add(2 * time.Minute)); now = now.Add(5 * time.Second) {
		if ds, err = c.RunOnce(context.Background(), now); err != nil {
			t.Fatal(err)
		}
	}
	warm, cold := ds[0], ds[1]
	if warm.Forecast == nil || !(warm.Forecast.Rate > 20) {
		t.Fatalf("the warm group forecasts %+v, want the 40 msg/s job; reasons %q", warm.Forecast, warm.Reasons)
	}
	if cold.Forecast != nil && cold.Forecast.Pattern != "recent bursts" {
		t.Fatalf("the cold group forecasts a pattern it never saw: %+v", cold.Forecast)
	}
	if warm.DesiredWorkers <= cold.DesiredWorkers {
		t.Errorf("warm group desires %d, cold %d: want the warm one to pre-start for the job", warm.DesiredWorkers, cold.DesiredWorkers)
	}

	// The forecast's series is there while a forecast is, and only then.
	if got := testutil.ToFloat64(c.metrics.forecast.WithLabelValues("warm")); got != warm.Forecast.Rate {
		t.Errorf("forecast gauge %v, want %v", got, warm.Forecast.Rate)
	}
	for i, g := range names[1:] {
		d := ds[i+1]
		present := false
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() != "checker_group_forecast_arrival_messages_per_second" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "group" && l.GetValue() == g {
						present = true
					}
				}
			}
		}
		if present != (d.Forecast != nil) {
			t.Errorf("%s: forecast series present %v, forecast %+v", g, present, d.Forecast)
		}
	}
}

// A preload (of the arrivals and of the fleet) and the loop's cycles share
// the policy states without a race (run with -race).
func TestPreloadDuringCycles(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	c, err := New(Options{Groups: []policy.Settings{forecastSettings("a"), forecastSettings("b")}, Observer: steady("a", "b")})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 60 {
			if _, err := c.RunOnce(context.Background(), start.Add(time.Duration(i)*5*time.Second)); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	h := cronHistory(start, 2)
	// The history ends where the cycles' minutes begin, so the first
	// preload takes all of it; later ones find every minute known.
	if got := c.Preload(map[string]model.MinuteHistory{"a": h, "b": h}); got["a"] != len(h.Counts) || got["b"] != len(h.Counts) {
		t.Errorf("loaded %v, want %d minutes each", got, len(h.Counts))
	}
	for range 4 {
		c.Preload(map[string]model.MinuteHistory{"a": h, "b": h})
		c.PreloadFleet(map[string]model.FleetHistory{"a": fleetHistory(start), "b": fleetHistory(start)})
	}
	wg.Wait()
}

// expectingObserver is an observer with an idle backoff to be told of
// expected load.
type expectingObserver struct {
	*controllertest.Observer
	mu    sync.Mutex
	until map[string]time.Time
}

func (e *expectingObserver) SetExpectingLoad(group string, until time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.until[group] = until
}

// While a group's forecast expects load, the controller tells an observer
// that backs off idle queues to sample the group at full rate until a
// minute past the load's expected start; a group with no forecast is left
// to its backoff.
func TestForecastKeepsIdleQueuesSampled(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 30, 10, 3, 30, 0, time.UTC)
	obs := &expectingObserver{Observer: steady("warm", "cold"), until: map[string]time.Time{}}
	c, err := New(Options{Groups: []policy.Settings{forecastSettings("warm"), forecastSettings("cold")}, Observer: obs, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	c.Preload(map[string]model.MinuteHistory{"warm": cronHistory(start, 8)})
	var ds []model.Decision
	for now := start; !now.After(start.Add(2 * time.Minute)); now = now.Add(5 * time.Second) {
		if ds, err = c.RunOnce(context.Background(), now); err != nil {
			t.Fatal(err)
		}
	}
	if ds[0].Forecast == nil {
		t.Fatalf("no forecast for the warm group: %q", ds[0].Reasons)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if want := ds[0].Forecast.At.Add(time.Minute); !obs.until["warm"].Equal(want) {
		t.Errorf("warm group expected until %v, want %v", obs.until["warm"], want)
	}
	if u, ok := obs.until["cold"]; ok {
		t.Errorf("the cold group, with no forecast, was told to expect load until %v", u)
	}
}

// fleetHistory is 20 minutes ending two minutes before end at 30 msg/s
// with 12 in flight: 0.4 s by Little's law.
func fleetHistory(end time.Time) model.FleetHistory {
	h := model.FleetHistory{Start: end.Add(-22 * time.Minute), Deleted: make([]float64, 20), InFlight: make([]float64, 20)}
	for i := range h.Deleted {
		h.Deleted[i], h.InFlight[i] = 30, 12
	}
	return h
}

// The fleet history warms the measurement of the groups that measure: the
// first decision sizes with the measured service time. A group with
// learn: off, one with no entry (the poller reads none for a group without
// CloudWatch) and one no longer configured take nothing.
func TestPreloadFleetWarmsTheMeasurement(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 30, 10, 3, 30, 0, time.UTC)
	off := settings("off")
	off.Learn = policy.LearnOff
	groups := []policy.Settings{settings("warm"), settings("cold"), off}
	core, logs := observer.New(zap.InfoLevel)
	c, err := New(Options{Groups: groups, Observer: steady("warm", "cold", "off"), Logger: zap.New(core)})
	if err != nil {
		t.Fatal(err)
	}
	h := fleetHistory(start)
	loaded := c.PreloadFleet(map[string]model.FleetHistory{"warm": h, "off": h, "gone": h})
	if len(loaded) != 1 || loaded["warm"] != 20 {
		t.Fatalf("loaded %v, want warm: 20 alone", loaded)
	}
	if n := logs.FilterMessage("fleet history loaded into the measurement").FilterField(zap.String("group", "warm")).FilterField(zap.Int("minutes", 20)).Len(); n != 1 {
		t.Errorf("%d log lines of the warm group's minutes, want 1: %v", n, logs.All())
	}
	ds, err := c.RunOnce(context.Background(), start)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		m := d.Measured
		switch d.Group {
		case "warm":
			if m.SizingWith != "measured" || m.ServiceTimeSeconds == nil || math.Abs(*m.ServiceTimeSeconds-0.4) > 1e-9 ||
				m.Confidence == nil || *m.Confidence < policy.MeasuredConfidence {
				t.Errorf("warm: %+v, want sizing with a trusted 0.4 s; reasons %q", m, d.Reasons)
			}
		default:
			if m.SizingWith != "configured" || m.ServiceTimeSeconds != nil {
				t.Errorf("%s: %+v, want nothing measured", d.Group, m)
			}
		}
	}
}

// A warm start reads the forecast's history for a model group that
// forecasts, the burst learner's hour for one whose forecast is off, and
// nothing for the backlog_per_worker policy.
func TestHistorySpanCoversTheForecastAndTheBursts(t *testing.T) {
	t.Parallel()
	on := forecastSettings("on")
	on.Forecast.History = 48 * time.Hour
	off := forecastSettings("off")
	off.Forecast.Off = true
	bpw := forecastSettings("bpw")
	bpw.Policy = policy.PolicyBacklogPerWorker
	for _, tc := range []struct {
		groups []policy.Settings
		want   time.Duration
	}{
		{[]policy.Settings{on, off, bpw}, 48 * time.Hour},
		{[]policy.Settings{off, bpw}, time.Hour},
		{[]policy.Settings{bpw}, 0},
	} {
		if got := HistorySpan(tc.groups); got != tc.want {
			t.Errorf("HistorySpan of %d groups: %v, want %v", len(tc.groups), got, tc.want)
		}
	}
}
