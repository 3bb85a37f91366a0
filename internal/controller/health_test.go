package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// TestHealthStates walks a run whose cycles fail fast from the start, then
// recover, then fail again, and checks the state at each point against the
// staleness period of 15 s counted from the start.
func TestHealthStates(t *testing.T) {
	fail := true
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		if fail {
			return nil, errors.New("credentials expired")
		}
		return []model.Observation{observation("a", now, 100, 3)}, nil
	})
	c, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	const stale = 15 * time.Second
	started := t0.Add(-time.Second)
	check := func(what string, now time.Time, state, detail string) {
		t.Helper()
		h := c.Health(now, started, stale)
		if h.State != state || !strings.Contains(h.Detail, detail) {
			t.Errorf("%s: %+v, want %s with %q", what, h, state, detail)
		}
	}
	check("first cycle running", t0, HealthStarting, "the first cycle is still running")
	check("first cycle running past the period", started.Add(16*time.Second), HealthUnhealthy, "has not finished after 16s")

	for i := range 3 {
		_, _ = c.RunOnce(context.Background(), t0.Add(time.Duration(i)*5*time.Second))
	}
	check("failing, within the period", t0.Add(10*time.Second), HealthStarting, "no good cycle yet: 3 failed in 11s: observe: credentials expired")
	check("failing at the limit", started.Add(stale), HealthStarting, "3 failed")
	check("failing past the period", started.Add(stale+time.Second), HealthUnhealthy, "no good cycle in 16s since the start")

	fail = false
	if _, err := c.RunOnce(context.Background(), t0.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	check("after a good cycle", t0.Add(20*time.Second), HealthOK, "")
	check("good cycle getting old", t0.Add(35*time.Second), HealthOK, "")
	check("good cycle too old", t0.Add(36*time.Second), HealthUnhealthy, "last good cycle 16s ago")

	// Without a start time, the first cycle's time stands in for it.
	c2, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if h := c2.Health(t0.Add(time.Hour), time.Time{}, stale); h.State != HealthStarting {
		t.Errorf("no start time, no cycle: %+v, want starting", h)
	}
}

// TestLiveAndReady reads both answers of one run: the loop that runs is
// live whatever its cycles learn, and ready only after a recent good cycle.
func TestLiveAndReady(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, _ time.Time) ([]model.Observation, error) {
		return nil, errors.New("credentials expired")
	})
	c, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	const stale = 15 * time.Second
	check := func(what string, now time.Time, live, ready string) {
		t.Helper()
		if l, r := c.Live(now, stale), c.Health(now, t0, stale); l.State != live || r.State != ready {
			t.Errorf("%s: live %+v, ready %+v; want %s and %s", what, l, r, live, ready)
		}
	}
	check("first cycle running", t0, HealthStarting, HealthStarting)
	now := t0
	for i := range 10 {
		now = t0.Add(time.Duration(i) * 5 * time.Second)
		_, _ = c.RunOnce(context.Background(), now)
	}
	check("every cycle failing", now, HealthOK, HealthUnhealthy)
	check("the loop stopped", now.Add(stale+time.Second), HealthWedged, HealthUnhealthy)
	c.SetRestartNeeded("the coordination block was added")
	check("restart needed", now, HealthUnhealthy, HealthUnhealthy)
}
