package config

import (
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"8d", 8 * day, true},
		{"1d12h", 36 * time.Hour, true},
		{"1d30m", day + 30*time.Minute, true},
		{"0d", 0, true},
		{"192h", 192 * time.Hour, true},
		{"90m", 90 * time.Minute, true},
		{"1h30m", 90 * time.Minute, true},
		{"", 0, false},
		{"d", 0, false},
		{"8", 0, false},
		{"8 days", 0, false},
		{"1.5d", 0, false},
		{"-1d", 0, false},
		{"1d-2h", 0, false},
		{"2h3d", 0, false},
		{"1dd", 0, false},
		{"99999999999d", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDuration(tt.in)
			if (err == nil) != tt.ok {
				t.Fatalf("ParseDuration(%q) error %v, want ok %v", tt.in, err, tt.ok)
			}
			if tt.ok && got.D() != tt.want {
				t.Errorf("ParseDuration(%q) = %s, want %s", tt.in, got.D(), tt.want)
			}
		})
	}
}

func TestDurationString(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		8 * 24 * time.Hour: "8d",
		36 * time.Hour:     "36h",
		time.Hour:          "1h",
		90 * time.Minute:   "1h30m0s",
		0:                  "0s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%s).String() = %q, want %q", d, got, want)
		}
		if d <= 0 {
			continue
		}
		back, err := ParseDuration(Duration(d).String())
		if err != nil || back.D() != d {
			t.Errorf("ParseDuration(%q) = %s, %v: does not round-trip", Duration(d).String(), back.D(), err)
		}
	}
}
