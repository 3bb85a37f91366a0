package controller

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// measuredObservation is a group of 12 workers in service deleting 20 msg/s,
// with CloudWatch's deleted count of each minute 90 s after it starts
// (stamped at the minute's start); with a visible backlog every slot is
// busy (saturated), without one 9 messages are in flight.
func measuredObservation(group string, now time.Time, backlog bool) model.Observation {
	o := observation(group, now, 0, 12)
	o.Fleet.At = now
	o.Sample.InFlight = 9
	if backlog {
		o.Sample.Visible, o.Sample.InFlight = 500, 12
	}
	o.Sample.Backlog = o.Sample.Visible + o.Sample.InFlight
	if now.Sub(t0) >= 90*time.Second {
		o.Sample.Deleted = &model.Reading{Value: 20, At: now.Add(-90 * time.Second).Truncate(time.Minute)}
	}
	return o
}

func TestGroupViewHasTheFleetMinutes(t *testing.T) {
	off := settings("off")
	off.Learn = policy.LearnOff
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		return []model.Observation{measuredObservation("busy", now, true), measuredObservation("calm", now, false),
			measuredObservation("off", now, false)}, nil
	})
	c, err := New(Options{Groups: []policy.Settings{settings("busy"), settings("calm"), off}, Observer: obs,
		Logger: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range c.Views().Groups() {
		if v.FleetMinutes != nil {
			t.Errorf("%s: minutes %v before the first cycle", v.Settings.Group, v.FleetMinutes)
		}
	}

	// 40 minutes of samples 5 s apart, while the page reads the views.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = c.Views().Groups()
			}
		}
	}()
	for i := range 40 * 12 {
		if _, err := c.RunOnce(context.Background(), t0.Add(time.Duration(i)*5*time.Second)); err != nil {
			t.Fatalf("RunOnce: %v", err)
		}
	}
	close(stop)
	wg.Wait()

	views := c.Views().Groups()
	for _, tt := range []struct {
		group     string
		saturated bool
		none      bool
	}{
		{group: "busy", saturated: true},
		{group: "calm", saturated: false},
		{group: "off", none: true},
	} {
		var v readmodel.GroupView
		for _, x := range views {
			if x.Settings.Group == tt.group {
				v = x
			}
		}
		if tt.none {
			if len(v.FleetMinutes) != 0 {
				t.Errorf("%s: %d minutes with learning off", tt.group, len(v.FleetMinutes))
			}
			continue
		}
		// The measurement keeps the last 24 good minutes.
		if len(v.FleetMinutes) != 24 {
			t.Fatalf("%s: %d minutes, want the last 24", tt.group, len(v.FleetMinutes))
		}
		for i, m := range v.FleetMinutes {
			if m.Saturated != tt.saturated || math.Abs(m.Workers-12) > 1e-9 || math.Abs(m.Completions-20) > 1e-9 {
				t.Errorf("%s: minute %d is %+v, want 12 workers, 20 msg/s, saturated %v", tt.group, i, m, tt.saturated)
			}
		}
	}

	// The view is a copy.
	views[0].FleetMinutes[0].Workers = -1
	if again := c.Views().Groups(); again[0].FleetMinutes[0].Workers != 12 {
		t.Errorf("changing a view changed the controller's minutes")
	}
}
