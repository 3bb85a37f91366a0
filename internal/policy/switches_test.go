package policy

import (
	"errors"
	"testing"

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
