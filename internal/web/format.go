package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"
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
// "3d4h5m" (rounded to the second, to the minute from a day on).
func formatSeconds(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "never"
	case s < 0:
		return "-" + formatSeconds(-s)
	case s == 0:
		return "0 s"
	case s < 1:
		ms := s * 1000
		if ms >= 0.1 {
			return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
		}
		return strconv.FormatFloat(ms, 'g', 2, 64) + " ms"
	case s < 59.95:
		return trimZeros(strconv.FormatFloat(s, 'f', 1, 64)) + " s"
	case s >= 1000*86400:
		return formatNumber(s/86400) + " days"
	}
	total := int64(math.Round(s))
	if total >= 86400 {
		total = (total + 30) / 60 * 60
	}
	var b strings.Builder
	for _, p := range []struct {
		unit string
		size int64
	}{{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}} {
		if n := total / p.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, p.unit)
			total -= n * p.size
		}
	}
	return b.String()
}

// formatPercent writes a ratio as a percentage with one decimal: 0.625 is
// "62.5 %".
func formatPercent(ratio float64) string {
	return strconv.FormatFloat(100*ratio, 'f', 1, 64) + " %"
}

// formatClock writes a time of day in UTC, to the second.
func formatClock(t time.Time) string {
	return t.UTC().Format("15:04:05")
}

// trimZeros drops trailing zeros after a decimal point, and the point.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}
