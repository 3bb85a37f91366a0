package web

import (
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

// The formats of the status page's numbers. The page's script formats the
// JSON the same way (assets/status.js mirrors every function here), so a
// number reads the same before and after a refresh.
//
// Rounding is to nearest, ties to even, on the exact binary value, as Go's
// strconv does.

// formatNumber writes a count or a rate: thousands grouped with commas and
// at most two decimals ("18,000", "19.2", "0.333"); very large and very
// small magnitudes in exponent form.
func formatNumber(x float64) string {
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "-∞"
	}
	return capacity.FormatNumber(x)
}

// formatSeconds writes a span: "136.4 ms", "12.5 s", "41m40s", "2h46m40s",
// "3d4h5m" (rounded to the second, to the minute from a day on); NaN and
// ±Inf are "never".
func formatSeconds(s float64) string { return capacity.FormatSeconds(s) }

// formatPercent writes a ratio as a percentage with one decimal: 0.625 is
// "62.5 %".
func formatPercent(ratio float64) string { return capacity.FormatPercent(ratio) }

// formatClock writes a time of day in UTC, to the second.
func formatClock(t time.Time) string {
	return t.UTC().Format("15:04:05")
}
