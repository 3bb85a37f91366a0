package simulate

import (
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/sim"
)

func TestParseServiceChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []sim.ServiceChange
	}{
		{"", nil},
		{"1h=2", []sim.ServiceChange{{At: time.Hour, Factor: 2}}},
		{"1h=2,2h=1", []sim.ServiceChange{{At: time.Hour, Factor: 2}, {At: 2 * time.Hour, Factor: 1}}},
		{" 90m = 0.5 , 1d12h=3", []sim.ServiceChange{{At: 90 * time.Minute, Factor: 0.5}, {At: 36 * time.Hour, Factor: 3}}},
		{"0s=1.25", []sim.ServiceChange{{At: 0, Factor: 1.25}}},
	}
	for _, tt := range tests {
		got, err := parseServiceChanges(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parseServiceChanges(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestParsePoolChanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []sim.PoolChange
	}{
		{"", nil},
		{"1h=240", []sim.PoolChange{{At: time.Hour, Connections: 240}}},
		{"1h=240, 2h = 0", []sim.PoolChange{{At: time.Hour, Connections: 240}, {At: 2 * time.Hour, Connections: 0}}},
		{"1d12h=60", []sim.PoolChange{{At: 36 * time.Hour, Connections: 60}}},
	}
	for _, tt := range tests {
		got, err := parsePoolChanges(tt.in)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("parsePoolChanges(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
