package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// A reload that lands while a cycle observes takes effect between cycles:
// the running cycle acts no more (its decisions say why), Reload returns
// only once it has ended, and the next cycle acts with the new actuator on
// the new groups alone.
func TestReloadMidCycleActsOnNothingOld(t *testing.T) {
	inObserve, release := make(chan struct{}), make(chan struct{})
	slow := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		close(inObserve)
		<-release
		return []model.Observation{observation("moved", now, 1500, 1), observation("removed", now, 1500, 1)}, nil
	})
	oldAct, newAct := &controllertest.Actuator{}, &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("moved"), settings("removed")}, Observer: slow,
		Actuator: oldAct, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cycle := make(chan []model.Decision)
	go func() {
		ds, _ := c.RunOnce(context.Background(), t0)
		cycle <- ds
	}()
	<-inObserve
	fresh := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("moved", now, 1500, 1)}, nil
	})
	reloaded := make(chan error)
	go func() { reloaded <- c.Reload([]policy.Settings{settings("moved")}, fresh, newAct) }()
	select {
	case <-reloaded:
		t.Fatal("Reload returned while a cycle was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	ds := <-cycle
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	if n := len(oldAct.Applied()); n != 0 {
		t.Errorf("the old actuator acted %d times after the reload was called, want 0", n)
	}
	for _, d := range ds {
		if d.NotActed == nil || d.NotActed.Cause != model.NotActedReload || !strings.Contains(d.NotActed.Message, "reloaded during this cycle") {
			t.Errorf("%s: not acted %+v, want the reload", d.Group, d.NotActed)
		}
		if slices.ContainsFunc(d.Reasons, func(r string) bool { return strings.Contains(r, "reloaded") }) {
			t.Errorf("%s: the controller wrote into the policy's reasons %q", d.Group, d.Reasons)
		}
	}
	if _, err := c.RunOnce(context.Background(), t0.Add(5*time.Second)); err != nil {
		t.Fatal(err)
	}
	if got := newAct.Applied(); len(got) != 1 || got[0].Decision.Group != "moved" {
		t.Errorf("the next cycle applied %+v with the new actuator, want the moved group alone", got)
	}
}

// A checker running a configuration that a refused reload says needs a
// restart acts on nothing until the restart (or until the running document
// is back): it still decides and says why it does not act.
func TestRestartNeededActsOnNothing(t *testing.T) {
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{observation("a", now, 1500, 1)}, nil
	})
	act := &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("a")}, Observer: obs, Actuator: act, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	c.SetRestartNeeded("the coordination block was added, removed or changed: it takes a restart")
	ds, err := c.RunOnce(context.Background(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(act.Applied()); n != 0 {
		t.Errorf("acted %d times while a restart is needed, want 0", n)
	}
	if len(ds) != 1 || ds[0].NotActed == nil || ds[0].NotActed.Cause != model.NotActedRestartNeeded ||
		!strings.Contains(ds[0].NotActed.Message, "the coordination block was added") {
		t.Errorf("decisions %+v do not say a restart is needed", ds)
	}
	c.SetRestartNeeded("")
	ds, err = c.RunOnce(context.Background(), t0.Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(act.Applied()); n != 1 {
		t.Errorf("acted %d times once the restart is no longer needed, want 1", n)
	}
	if len(ds) != 1 || ds[0].NotActed != nil {
		t.Errorf("decisions %+v still say they were not acted on", ds)
	}
}

// A reload that leaves a group acting on the same fleet and metrics
// (unchanged) lets the cycle running act for it: only the groups whose
// targets change wait for the next cycle, so that a storm of reloads
// cannot keep a group from acting.
func TestReloadMidCycleActsForUnchangedGroups(t *testing.T) {
	inObserve, release := make(chan struct{}), make(chan struct{})
	slow := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		close(inObserve)
		<-release
		return []model.Observation{observation("kept", now, 1500, 1), observation("moved", now, 1500, 1)}, nil
	})
	oldAct := &controllertest.Actuator{}
	c, err := New(Options{Groups: []policy.Settings{settings("kept"), settings("moved")}, Observer: slow,
		Actuator: oldAct, Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	cycle := make(chan []model.Decision)
	go func() {
		ds, _ := c.RunOnce(context.Background(), t0)
		cycle <- ds
	}()
	<-inObserve
	reloaded := make(chan error)
	go func() {
		reloaded <- c.Reload([]policy.Settings{settings("kept"), settings("moved")}, slow, &controllertest.Actuator{}, "kept")
	}()
	for !c.reloading.Load() { // the reload is called, and waits for the cycle
		time.Sleep(time.Millisecond)
	}
	close(release)
	ds := <-cycle
	if err := <-reloaded; err != nil {
		t.Fatal(err)
	}
	applied := oldAct.Applied()
	if len(applied) != 1 || applied[0].Decision.Group != "kept" {
		t.Errorf("the cycle running applied %+v, want the unchanged group alone", applied)
	}
	for _, d := range ds {
		said := d.NotActed != nil && d.NotActed.Cause == model.NotActedReload
		if said != (d.Group == "moved") {
			t.Errorf("%s: not acted %+v; want the reload only for the moved group", d.Group, d.NotActed)
		}
	}
}
