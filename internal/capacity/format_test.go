package capacity

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestFormatSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    float64
		want string
	}{
		{"zero", 0, "0 s"},
		{"Erlang C example wait", 0.1364, "136.4 ms"},
		{"Erlang C example smallest wait", 0.0002, "0.2 ms"},
		{"below a tenth of a millisecond", 0.00004, "0.04 ms"},
		{"seconds", 12.5, "12.5 s"},
		{"whole seconds", 30, "30 s"},
		{"rounds up to a minute", 59.97, "1m"},
		{"planner example drain time", 2500, "41m40s"},
		{"model 10.1 drain time", 10_000, "2h46m40s"},
		{"whole hour", 3600, "1h"},
		{"days round to the minute", 2*86400 + 3*3600 + 4*60 + 31, "2d3h5m"},
		{"thousands of days", 5000 * 86400, "5,000 days"},
		{"negative", -90, "-1m30s"},
		{"infinite", math.Inf(1), "never"},
		{"NaN", math.NaN(), "never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := FormatSeconds(tt.s); got != tt.want {
				t.Errorf("FormatSeconds(%v) = %q, want %q", tt.s, got, tt.want)
			}
		})
	}
}

func TestFormatNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		x    float64
		want string
	}{
		{"zero", 0, "0"},
		{"planner example service rate", 19.2, "19.2"},
		{"float noise is hidden", 7.199999999999999, "7.2"},
		{"backlog", 18_000, "18,000"},
		{"million", 1_000_000, "1,000,000"},
		{"hundreds keep one decimal", 123.45, "123.5"},
		{"negative with grouping", -22_320, "-22,320"},
		{"below one", 0.333333, "0.333"},
		{"tiny", 0.0000123, "1.23e-05"},
		{"huge", 1e20, "1e+20"},
		{"infinite", math.Inf(1), "+Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := FormatNumber(tt.x); got != tt.want {
				t.Errorf("FormatNumber(%v) = %q, want %q", tt.x, got, tt.want)
			}
		})
	}
	if got := FormatPercent(0.625); got != "62.5 %" {
		t.Errorf("FormatPercent(0.625) = %q", got)
	}
}

func TestNiceStep(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x, want float64
	}{
		{0.013, 0.02}, {1, 1}, {1.5, 2}, {3, 5}, {7, 10}, {12, 20}, {25, 30},
		{3600.0 / 60, 60}, {61, 120}, {1800.0 / 60 * 2, 60}, {4000, 7200},
		{86400, 86400}, {2 * 86400, 2 * 86400}, {3 * 86400, 5 * 86400}, {0, 1}, {math.NaN(), 1},
	}
	for _, tt := range tests {
		if got := niceStep(tt.x); got != tt.want {
			t.Errorf("niceStep(%v) = %v, want %v", tt.x, got, tt.want)
		}
	}
}

// TestSig12 checks the fast rounding against the decimal text it stands for.
func TestSig12(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x, want float64
	}{
		{18000 / (8*2.4 - 12), 2500},
		{8*2.4 - 12, 7.2},
		{8 * 2.4, 19.2},
		{0.1 + 0.2, 0.3},
		{1.0 / 3, 0.333333333333},
		{-2.0 / 3, -0.666666666667},
		{123456789012345, 123456789012000},
		{1e-300 / 3, 3.33333333333e-301},
		{5e40 / 3, 1.66666666667e40},
		{0, 0},
	}
	for _, tt := range tests {
		if got := sig12(tt.x); got != tt.want {
			t.Errorf("sig12(%v) = %v, want %v", tt.x, got, tt.want)
		}
	}
	// Against the decimal text over many magnitudes.
	r := rand.New(rand.NewPCG(7, 7))
	for range 100_000 {
		x := math.Ldexp(r.Float64()+0.5, r.IntN(200)-100)
		want, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
		if got := sig12(x); got != want {
			t.Fatalf("sig12(%v) = %v, the 12-digit decimal is %v", x, got, want)
		}
	}
}
