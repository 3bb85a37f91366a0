package capacity

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatSeconds writes a span of seconds for people: "136.4 ms", "12.5 s",
// "41m40s", "2h46m40s", "3d4h5m". Spans of a minute or more are rounded to
// the second (to the minute from a day on); NaN and ±Inf are written as
// "never".
func FormatSeconds(s float64) string {
	switch {
	case math.IsNaN(s) || math.IsInf(s, 0):
		return "never"
	case s < 0:
		return "-" + FormatSeconds(-s)
	case s == 0:
		return "0 s"
	case s < 1:
		msec := s * 1000
		if msec >= 0.1 {
			return strconv.FormatFloat(msec, 'f', 1, 64) + " ms"
		}
		return strconv.FormatFloat(msec, 'g', 2, 64) + " ms"
	case s < 59.95:
		return trimZeros(strconv.FormatFloat(s, 'f', 1, 64)) + " s"
	case s >= 1000*86400:
		return FormatNumber(s/86400) + " days"
	}
	total := int64(math.Round(s))
	parts := []struct {
		unit string
		size int64
	}{{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}}
	if total >= 86400 {
		total = (total + 30) / 60 * 60
	}
	var b strings.Builder
	for _, p := range parts {
		if n := total / p.size; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, p.unit)
			total -= n * p.size
		}
	}
	return b.String()
}

// FormatNumber writes a count or a rate for people: thousands grouped with
// commas and at most two decimals ("18,000", "19.2", "0.333"); very large
// and very small magnitudes in exponent form.
func FormatNumber(x float64) string {
	ax := math.Abs(x)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'g', -1, 64)
	case x == 0:
		return "0"
	case ax < 1:
		return strconv.FormatFloat(x, 'g', 3, 64)
	case ax >= 1e15:
		return strconv.FormatFloat(x, 'g', 4, 64)
	}
	decimals := 0
	switch {
	case ax < 100:
		decimals = 2
	case ax < 10_000:
		decimals = 1
	}
	s := trimZeros(strconv.FormatFloat(x, 'f', decimals, 64))
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// FormatPercent writes a ratio as a percentage with one decimal: 0.625 is
// "62.5 %".
func FormatPercent(ratio float64) string {
	return strconv.FormatFloat(100*ratio, 'f', 1, 64) + " %"
}

// trimZeros drops trailing zeros after a decimal point, and the point.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// FormatDollars writes an amount of money for people, rounded to the cent
// (the nearest cent of the float64 value, as strconv rounds it: an
// exact binary tie such as 0.125 goes to the even cent) with thousands grouped: 4342.624 is "$4,342.62",
// -12.5 is "-$12.50". A non-zero amount that rounds to zero cents is
// "< $0.01" (or "> -$0.01"), so that a small cost never reads as free.
func FormatDollars(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', 2, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	if s == "0.00" {
		switch {
		case x > 0:
			return "< $0.01"
		case x < 0:
			return "> -$0.01"
		}
		return "$0.00"
	}
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return sign + "$" + b.String() + "." + frac
}
