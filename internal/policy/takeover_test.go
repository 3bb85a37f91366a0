package policy

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// For one scale-in window after this checker took a group's lease the
// group is not scaled in; scale-out goes ahead, and the count held stays
// within the bounds. A pin below the fleet stands for a scale-in.
func TestTakeoverHold(t *testing.T) {
	t.Parallel()
	since := t0.Add(-time.Minute)
	smp := model.GroupSample{Group: "g", At: t0, Visible: 10, Backlog: 10, Queues: 1, Answered: 1}
	fleet := asg(8, 8, 0)
	tests := []struct {
		name     string
		pin      int
		max      int
		since    time.Time
		fleet    model.Fleet
		now      time.Time
		want     int
		wantHeld bool
	}{
		{"scale-in within the window is held", 3, 50, since, fleet, t0, 8, true},
		{"scale-out within the window goes ahead", 12, 50, since, fleet, t0, 12, false},
		{"same count", 8, 50, since, fleet, t0, 8, false},
		{"scale-in at the window's end goes ahead", 3, 50, since, fleet, since.Add(5 * time.Minute), 3, false},
		{"scale-in just before the window's end is held", 3, 50, since, fleet, since.Add(5*time.Minute - time.Millisecond), 8, true},
		{"not taken over", 3, 50, time.Time{}, fleet, t0, 3, false},
		{"no fleet read", 3, 50, since, model.Fleet{}, t0, 3, false},
		// The fleet is above a max lowered since: held at the max, not above it.
		{"held within the bounds", 3, 6, since, fleet, t0, 6, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second, Max: tt.max,
				ScaleInStabilization: 5 * time.Minute, Pinned: true, Pin: tt.pin, TakenOver: tt.since}
			at := smp
			at.At = tt.now
			d := Decide(s, at, tt.fleet, nil, tt.now)
			if d.DesiredWorkers != tt.want || d.Held != tt.wantHeld {
				t.Errorf("desired %d held %t (%q), want %d %t; reasons %q", d.DesiredWorkers, d.Held, d.HoldReason, tt.want, tt.wantHeld, d.Reasons)
			}
			if tt.wantHeld && d.HoldReason == "" {
				t.Errorf("held without a reason: %+v", d)
			}
		})
	}
	// With scale-in stabilisation off (scale_in_stabilization: 0s) there is
	// no window to wait out, even for a lease dated a moment after the
	// cycle (a hold reason once read "one scale-in window (-1ns)").
	off := Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Latency: 10 * time.Second, Max: 50,
		ScaleInStabilization: -1, Pinned: true, Pin: 3, TakenOver: t0.Add(time.Millisecond)}
	if d := Decide(off, smp, fleet, nil, t0); d.Held || d.DesiredWorkers != 3 {
		t.Errorf("stabilisation off: desired %d held %t (%q), want 3 and no hold", d.DesiredWorkers, d.Held, d.HoldReason)
	}
}
