package web

import (
	"math"
	"strconv"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// The chart of throughput against workers: one dot for each recent good
// minute of the fleet's measurement, at its mean workers in service and its
// completions, filled when the minute was saturated; and the learned
// downstream ceiling as a dashed vertical line (see docs/measuring.md). A
// fleet that meets a downstream limit shows as dots that climb with the
// workers up to the knee and lie flat past it. Drawn here from the group's
// JSON and redrawn by assets/status.js (renderKnee) from the same JSON,
// with the same arithmetic.

// kneeSpec describes the chart; the script gets it in the page's config.
type kneeSpec struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Ceiling is a path into the group's JSON for the vertical line; a
	// value missing, null or not above 0 draws none.
	Ceiling      string `json:"ceiling"`
	CeilingLabel string `json:"ceiling_label"`
	// MaxPoints is how many of the newest minutes are drawn; Radius the
	// dots' radius; LabelGap the room between the ceiling and its label.
	MaxPoints int `json:"max_points"`
	Radius    int `json:"radius"`
	LabelGap  int `json:"label_gap"`
}

var knee = kneeSpec{ID: "knee", Title: "Throughput against workers (msg/s)",
	Ceiling: "decision.measured.ceiling_workers", CeilingLabel: "ceiling", MaxPoints: 24, Radius: 3, LabelGap: 4}

// kneeView is the rendered chart.
type kneeView struct {
	ID      string // unique in the page, for the text alternative's ids
	Spec    kneeSpec
	Desc    string
	Geo     chartGeometry
	YLabels [3]string // completions at the bottom, the middle and the top
	XLabels [3]string // workers at the left, the middle and the right
	Points  []kneePoint
	Ceiling *kneeCeiling
	// CeilingX is where the line is, or the plot's left edge when none.
	CeilingX      string
	CeilingLabelX string
	CeilingAnchor string
	CeilingBottom int // the plot's bottom edge
	Empty         bool
	chartFrame
}

type kneePoint struct {
	X, Y      string
	Saturated bool
}

type kneeCeiling struct {
	Label string
}

// kneeMinutes are the newest n minutes of the group with finite,
// non-negative values.
func kneeMinutes(minutes []readmodel.FleetMinute, n int) []readmodel.FleetMinute {
	out := make([]readmodel.FleetMinute, 0, len(minutes))
	for _, m := range minutes {
		if finite(m.Workers) && finite(m.Completions) && m.Workers >= 0 && m.Completions >= 0 {
			out = append(out, m)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// renderKnee draws the chart from the group's JSON document (for the
// ceiling, as the script reads it) and its fleet minutes.
func renderKnee(spec kneeSpec, g map[string]any, minutes []readmodel.FleetMinute) kneeView {
	geo := geometry
	v := kneeView{Spec: spec, Geo: geo, chartFrame: frameOf(geo), CeilingAnchor: "start",
		CeilingBottom: geo.Top + geo.plotH()}
	v.CeilingX = coord(float64(geo.Left))
	v.CeilingLabelX = coord(float64(geo.Left + spec.LabelGap))

	pts := kneeMinutes(minutes, spec.MaxPoints)
	maxW, maxY := 0.0, 0.0
	minW, minY := math.Inf(1), math.Inf(1)
	saturated := 0
	for _, m := range pts {
		maxW, maxY = math.Max(maxW, m.Workers), math.Max(maxY, m.Completions)
		minW, minY = math.Min(minW, m.Workers), math.Min(minY, m.Completions)
		if m.Saturated {
			saturated++
		}
	}
	ceiling := 0.0
	if c, ok := lookup(g, spec.Ceiling).(float64); ok && c > 0 {
		ceiling = c
	}
	xMax, yMax := niceMax(math.Max(maxW, ceiling)), niceMax(maxY)
	xOf := func(w float64) float64 { return float64(geo.Left) + w/xMax*float64(geo.plotW()) }
	yOf := func(c float64) float64 { return float64(geo.Top) + float64(geo.plotH()) - c/yMax*float64(geo.plotH()) }
	for i, t := range [3]float64{0, yMax / 2, yMax} {
		v.YLabels[i] = formatNumber(t)
	}
	unit := " workers"
	if xMax == 1 {
		unit = " worker"
	}
	v.XLabels = [3]string{formatNumber(0), formatNumber(xMax / 2), formatNumber(xMax) + unit}
	for _, m := range pts {
		v.Points = append(v.Points, kneePoint{X: coord(xOf(m.Workers)), Y: coord(yOf(m.Completions)), Saturated: m.Saturated})
	}
	v.Empty = len(pts) == 0

	var desc string
	if v.Empty {
		desc = "No good minute of the fleet measured yet."
	} else {
		last := pts[len(pts)-1]
		desc = "Last " + minutesText(len(pts)) + ": " + rangeText(minW, maxW) +
			" workers in service completed " + rangeText(minY, maxY) + " msg/s; " +
			strconv.Itoa(saturated) + " saturated (filled dots); newest " + formatNumber(last.Workers) +
			" workers at " + formatNumber(last.Completions) + " msg/s."
	}
	if ceiling > 0 {
		label := spec.CeilingLabel + " " + formatNumber(ceiling)
		v.Ceiling = &kneeCeiling{Label: label}
		x := xOf(ceiling)
		v.CeilingX = coord(x)
		if x > float64(v.MidX) {
			v.CeilingLabelX, v.CeilingAnchor = coord(x-float64(spec.LabelGap)), "end"
		} else {
			v.CeilingLabelX = coord(x + float64(spec.LabelGap))
		}
		desc += " Downstream ceiling near " + formatNumber(ceiling) + " workers (dashed line)."
	} else if !v.Empty {
		desc += " No downstream ceiling found."
	}
	v.Desc = desc
	return v
}

// rangeText is "lo to hi", or one number when they are the same.
func rangeText(lo, hi float64) string {
	if a, b := formatNumber(lo), formatNumber(hi); a != b {
		return a + " to " + b
	}
	return formatNumber(hi)
}

// minutesText is "1 good minute" or "n good minutes".
func minutesText(n int) string {
	if n == 1 {
		return "1 good minute"
	}
	return strconv.Itoa(n) + " good minutes"
}
