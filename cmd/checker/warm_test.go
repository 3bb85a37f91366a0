package main

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// fakeHistory answers ArrivalHistory with its function and records the
// spans asked for.
type fakeHistory struct {
	mu    sync.Mutex
	spans [][2]time.Time
	read  func(ctx context.Context) (map[string]model.MinuteHistory, error)
}

func (f *fakeHistory) ArrivalHistory(ctx context.Context, from, to time.Time) (map[string]model.MinuteHistory, error) {
	f.mu.Lock()
	f.spans = append(f.spans, [2]time.Time{from, to})
	f.mu.Unlock()
	return f.read(ctx)
}

// fakePreloader records what it is given and loads every minute offered.
type fakePreloader struct {
	mu    sync.Mutex
	calls []map[string]model.MinuteHistory
}

func (f *fakePreloader) Preload(h map[string]model.MinuteHistory) map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, h)
	out := map[string]int{}
	for g, m := range h {
		out[g] = len(m.Counts)
	}
	return out
}

func minutes(start time.Time, n int) model.MinuteHistory {
	return model.MinuteHistory{Start: start, Counts: make([]float64, n)}
}

func TestWarmStart(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 10, 4, 31, 0, time.UTC)
	end := time.Date(2026, 11, 30, 10, 4, 0, 0, time.UTC)
	model36h := policy.Settings{Group: "a", Forecast: policy.ForecastSettings{History: 36 * time.Hour}}
	report := policy.Settings{Group: "r", Forecast: policy.ForecastSettings{ReportOnly: true, History: 2 * time.Hour}}
	off := policy.Settings{Group: "off", Forecast: policy.ForecastSettings{Off: true, History: 100 * time.Hour}}
	bpw := policy.Settings{Group: "b", Policy: policy.PolicyBacklogPerWorker}
	defaulted := policy.Settings{Group: "d"} // the model policy, history left to its default
	sample := map[string]model.MinuteHistory{"a": minutes(end.Add(-time.Hour), 60), "r": minutes(end.Add(-time.Hour), 30)}

	cases := []struct {
		name     string
		groups   []policy.Settings
		read     func(context.Context) (map[string]model.MinuteHistory, error)
		wantSpan time.Duration // 0: nothing read
		preload  bool
		warns    int
	}{
		{"the longest history of the forecasting groups", []policy.Settings{model36h, report, off, bpw},
			func(context.Context) (map[string]model.MinuteHistory, error) { return sample, nil }, 36 * time.Hour, true, 0},
		{"the default history, 8 days", []policy.Settings{report, defaulted},
			func(context.Context) (map[string]model.MinuteHistory, error) { return sample, nil }, policy.DefaultForecastHistory, true, 0},
		{"no group forecasts: nothing read", []policy.Settings{off, bpw},
			func(context.Context) (map[string]model.MinuteHistory, error) { t.Error("read"); return nil, nil }, 0, false, 0},
		{"a failure is logged once, nothing loaded", []policy.Settings{model36h},
			func(context.Context) (map[string]model.MinuteHistory, error) { return nil, errors.New("throttled") }, 36 * time.Hour, false, 1},
		{"what came with a failure is loaded", []policy.Settings{model36h, report},
			func(context.Context) (map[string]model.MinuteHistory, error) {
				return map[string]model.MinuteHistory{"a": sample["a"]}, errors.New("one region failed")
			}, 36 * time.Hour, true, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &fakeHistory{read: tc.read}
			to := &fakePreloader{}
			core, logs := observer.New(zap.InfoLevel)
			warmStart(context.Background(), src, to, tc.groups, now, zap.New(core))

			if tc.wantSpan == 0 {
				if len(src.spans) != 0 {
					t.Fatalf("read %v, want nothing", src.spans)
				}
			} else {
				if len(src.spans) != 1 {
					t.Fatalf("read %d times, want once", len(src.spans))
				}
				if got := src.spans[0]; !got[1].Equal(end) || got[1].Sub(got[0]) != tc.wantSpan {
					t.Errorf("read [%s, %s), want %s up to %s", got[0], got[1], tc.wantSpan, end)
				}
			}
			if got := len(to.calls) == 1; got != tc.preload {
				t.Errorf("preloaded %d times, want preload %v", len(to.calls), tc.preload)
			}
			if n := logs.FilterLevelExact(zap.WarnLevel).Len(); n != tc.warns {
				t.Errorf("%d warnings, want %d: %v", n, tc.warns, logs.All())
			}
		})
	}
}

// A warm start does not outlive its deadline, and a new one (after a
// reload) cancels the one still running.
func TestWarmerCancelsAndTimesOut(t *testing.T) {
	t.Parallel()
	blocked := make(chan struct{}, 2)
	src := &fakeHistory{read: func(ctx context.Context) (map[string]model.MinuteHistory, error) {
		blocked <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	to := &fakePreloader{}
	core, logs := observer.New(zap.InfoLevel)
	w := newWarmer(context.Background(), to, zap.New(core))
	groups := []policy.Settings{{Group: "a"}}

	w.timeout = time.Hour
	w.start(src, groups)
	<-blocked
	w.timeout = 50 * time.Millisecond
	w.start(src, groups) // cancels the first, times out itself
	<-blocked
	w.start(nil, groups) // nothing to read: starts nothing
	done := make(chan struct{})
	go func() { w.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the warm starts did not end")
	}
	warns := logs.FilterLevelExact(zap.WarnLevel).All()
	if len(warns) != 2 {
		t.Fatalf("%d warnings, want one per warm start: %v", len(warns), warns)
	}
	var reasons []string
	for _, e := range warns {
		reasons = append(reasons, e.ContextMap()["error"].(string))
	}
	slices.Sort(reasons) // the order the two goroutines log in is not fixed
	if reasons[0] != context.Canceled.Error() || reasons[1] != context.DeadlineExceeded.Error() {
		t.Errorf("warm starts ended with %q, want canceled then deadline exceeded", reasons)
	}
	if len(to.calls) != 0 {
		t.Errorf("preloaded %d times", len(to.calls))
	}
}
