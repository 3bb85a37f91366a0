package policy

import (
	"errors"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

func TestUnreadFleetSaysSo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fleet model.Fleet
		want  string // "" : no such reason
	}{
		{"read", asg(4, 4, 0), ""},
		{"fixed size", model.Fleet{Kind: model.FleetFixed, Known: true, Desired: 4, InService: 4}, ""},
		{"read failed", model.Fleet{Kind: "autoscaling", Err: errors.New("not found")}, "the fleet was not read"},
		{"no fleet", model.Fleet{}, "no fleet is read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			smp := q(300, 0)
			smp.At = t0
			d := Decide(base(), smp, tt.fleet, &State{}, t0)
			for _, part := range []string{"the fleet was not read", "no fleet is read"} {
				if got := hasReason(d, part); got != (part == tt.want) {
					t.Errorf("reason %q present = %v, want %v: %q", part, got, part == tt.want, d.Reasons)
				}
			}
		})
	}
}

func TestSwitches(t *testing.T) {
	t.Parallel()
	since := t0.Add(-time.Hour)
	busy := q(3000, 0) // asks for far more than the current 4
	idle := q(0, 0)    // asks for fewer
	tests := []struct {
		name      string
		s         func(*Settings)
		sw        model.Switches
		sample    model.GroupSample
		want      int
		held      bool
		reason    string
		pausedBy  string
		scaleInOf bool
		// switchHeld: held for a switch not understood or refused.
		switchHeld bool
	}{
		{name: "no switch scales out", sample: busy, want: 100},
		{name: "paused by tag holds", sample: busy, sw: model.Switches{Paused: true, PausedBy: "alice", PausedSince: since},
			want: 4, held: true, reason: "paused by alice since 2025-03-01T11:00:00Z", pausedBy: "alice"},
		{name: "paused by tag, nobody named", sample: busy, sw: model.Switches{Paused: true, PausedSince: since},
			want: 4, held: true, reason: "paused by someone (no queue-checker:paused-by tag)"},
		{name: "paused by configuration", sample: idle, s: func(s *Settings) { s.Paused = true },
			want: 4, held: true, reason: "paused by the configuration (fleet.paused)", pausedBy: "configuration"},
		{name: "pause wins over pin", sample: busy, sw: model.Switches{Paused: true, Pinned: true, Pin: 9},
			want: 4, held: true, reason: "paused by"},
		{name: "pinned by tag", sample: busy, sw: model.Switches{Pinned: true, Pin: 7}, want: 7,
			reason: "pinned at 7 by tag queue-checker:pin on the fleet"},
		{name: "tag pin wins over configuration pin", sample: idle, s: func(s *Settings) { s.Pinned, s.Pin = true, 2 },
			sw: model.Switches{Pinned: true, Pin: 6}, want: 6, reason: "pinned at 6 by tag"},
		{name: "configuration pin", sample: busy, s: func(s *Settings) { s.Pinned, s.Pin = true, 2 }, want: 2,
			reason: "pinned at 2 by the configuration (fleet.pin)"},
		{name: "pin above max holds, not clamped", sample: idle, sw: model.Switches{Pinned: true, Pin: 900}, want: 4,
			reason: "pin=900 on the fleet is above the max (100): not clamped", switchHeld: true},
		{name: "pin above the cap holds", sample: busy, s: func(s *Settings) { s.Cap = 8 }, sw: model.Switches{Pinned: true, Pin: 9}, want: 4,
			reason: "pin=9 on the fleet is above the cap (8)", switchHeld: true},
		{name: "pin below min holds, not raised", sample: idle, s: func(s *Settings) { s.Min = 3 }, sw: model.Switches{Pinned: true, Pin: 0}, want: 4,
			reason: "pin=0 on the fleet is below the min (3)", switchHeld: true},
		{name: "pin at max is followed", sample: idle, sw: model.Switches{Pinned: true, Pin: 100}, want: 100, reason: "pinned at 100"},
		{name: "a switch not understood holds against scale-in", sample: idle, sw: model.Switches{NotUnderstood: []string{`tag "queue-checker:no-scale-in" is not a switch`}},
			want: 4, reason: `not understood: tag "queue-checker:no-scale-in" is not a switch`, switchHeld: true},
		{name: "a switch not understood holds against scale-out", sample: busy, sw: model.Switches{NotUnderstood: []string{`tag "queue-checker:unpaused" is not a switch`}},
			want: 4, reason: "holding at 4, neither in nor out", switchHeld: true},
		{name: "a switch not understood wins over a pin and scale-in off", sample: idle,
			sw:   model.Switches{Pinned: true, Pin: 2, ScaleInOff: true, NotUnderstood: []string{`tag "queue-checker:hold" is not a switch`}},
			want: 4, reason: "holding at 4", switchHeld: true},
		{name: "scale-in off by tag holds against scale-in", sample: idle, sw: model.Switches{ScaleInOff: true}, want: 4,
			reason: "scale-in is off by tag queue-checker:scale-in=false on the fleet: holding at 4", scaleInOf: true},
		{name: "scale-in off by configuration still scales out", sample: busy, s: func(s *Settings) { s.ScaleInOff = true }, want: 100,
			scaleInOf: true},
		{name: "scale-in off keeps a pin from scaling in", sample: busy, sw: model.Switches{ScaleInOff: true, Pinned: true, Pin: 2}, want: 4,
			reason: "scale-in is off", scaleInOf: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := base()
			s.Max = 100
			s.ScaleInStabilization = -1
			if tt.s != nil {
				tt.s(&s)
			}
			f := asg(4, 4, 0)
			f.Switches = tt.sw
			smp := tt.sample
			smp.At = t0
			d := Decide(s, smp, f, &State{}, t0)
			checkDecision(t, s, f, d)
			if held := tt.held || tt.switchHeld; d.DesiredWorkers != tt.want || d.Paused != tt.held || d.Held != held {
				t.Errorf("desired %d paused %v held %v, want %d, %v, %v; reasons %q", d.DesiredWorkers, d.Paused, d.Held, tt.want, tt.held, held, d.Reasons)
			}
			if tt.switchHeld != (len(d.SwitchProblems) > 0) || tt.switchHeld && d.HoldReason != HoldSwitchNotUnderstood {
				t.Errorf("switch problems %q, hold reason %q; want held for a switch: %v", d.SwitchProblems, d.HoldReason, tt.switchHeld)
			}
			if tt.reason != "" && !hasReason(d, tt.reason) {
				t.Errorf("no reason with %q: %q", tt.reason, d.Reasons)
			}
			if d.PausedBy != tt.pausedBy || d.ScaleInOff != tt.scaleInOf {
				t.Errorf("paused by %q, scale-in off %v; want %q, %v", d.PausedBy, d.ScaleInOff, tt.pausedBy, tt.scaleInOf)
			}
			if tt.held && d.HoldReason != "paused" {
				t.Errorf("hold reason %q, want paused", d.HoldReason)
			}
		})
	}
}

func TestSwitchWarningsReachTheDecision(t *testing.T) {
	t.Parallel()
	f := asg(4, 4, 0)
	f.Switches.Warnings = []string{`tag queue-checker:pin="lots" ignored`}
	smp := q(10, 0)
	smp.At = t0
	d := Decide(base(), smp, f, &State{}, t0)
	if len(d.Warnings) != 1 || d.Warnings[0] != f.Switches.Warnings[0] {
		t.Errorf("warnings %q, want %q", d.Warnings, f.Switches.Warnings)
	}
}

// A switch not understood keeps holding the group while the fleet cannot be
// read (its tags are not known then), and stops holding for it once a read
// shows it gone.
func TestSwitchNotUnderstoodHoldsThroughAFailedRead(t *testing.T) {
	t.Parallel()
	s := base()
	s.Max = 100
	s.ScaleInStabilization = -1
	st := &State{}
	problem := `tag "queue-checker:hold" is not a switch`
	f := asg(4, 4, 0)
	f.Switches = model.Switches{NotUnderstood: []string{problem}}
	busy := q(3000, 0)
	busy.At = t0
	d := Decide(s, busy, f, st, t0)
	if !d.Held || d.HoldReason != HoldSwitchNotUnderstood {
		t.Fatalf("read with the tag: held %v %q, want held for the switch", d.Held, d.HoldReason)
	}
	failed := model.Fleet{Kind: "autoscaling", Name: f.Name, At: t0.Add(5 * time.Second)}
	busy.At = t0.Add(5 * time.Second)
	d = Decide(s, busy, failed, st, busy.At)
	checkDecision(t, s, failed, d)
	if !d.Held || d.HoldReason != HoldSwitchNotUnderstood || len(d.SwitchProblems) != 1 || d.SwitchProblems[0] != problem {
		t.Errorf("failed read: held %v %q, problems %q; want still held for %q", d.Held, d.HoldReason, d.SwitchProblems, problem)
	}
	f.Switches = model.Switches{}
	busy.At = t0.Add(10 * time.Second)
	d = Decide(s, busy, f, st, busy.At)
	if len(d.SwitchProblems) != 0 || d.HoldReason == HoldSwitchNotUnderstood {
		t.Errorf("read without the tag: problems %q, hold %q; want no hold for a switch", d.SwitchProblems, d.HoldReason)
	}
}
