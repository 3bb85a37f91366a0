package web

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// The status page's charts: the last hour of a group's history as inline
// SVG, drawn here so they show without JavaScript, and redrawn by the page's
// script from the same JSON after each refresh. assets/status.js mirrors
// the geometry and the arithmetic below step for step, so both draw the
// same path from the same points.

// chartGeometry is the SVG coordinate system of every chart.
type chartGeometry struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	Left   int `json:"left"` // margin for the value axis labels
	Right  int `json:"right"`
	Top    int `json:"top"`
	Bottom int `json:"bottom"` // margin for the time axis labels
	// The time axis ends at the document's time and reaches back to the
	// oldest point of the history, rounded up to a whole minute, within
	// MinWindowMs and WindowMs.
	WindowMs    int64 `json:"window_ms"`
	MinWindowMs int64 `json:"min_window_ms"`
}

var geometry = chartGeometry{Width: 400, Height: 170, Left: 52, Right: 10, Top: 10, Bottom: 22,
	WindowMs: time.Hour.Milliseconds(), MinWindowMs: (5 * time.Minute).Milliseconds()}

func (g chartGeometry) plotW() int { return g.Width - g.Left - g.Right }
func (g chartGeometry) plotH() int { return g.Height - g.Top - g.Bottom }

// seriesSpec is one line of a chart: a key of readmodel.Point.
type seriesSpec struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	// Step draws a count that changes in steps; otherwise a line through
	// the highest value of each pixel column.
	Step bool `json:"step"`
}

// chartSpec describes one chart of a group panel.
type chartSpec struct {
	ID     string       `json:"id"`
	Title  string       `json:"title"`
	Format string       `json:"format"` // of the value axis: count, rate (msg/s), seconds or percent (of a ratio)
	Series []seriesSpec `json:"series"`
	// Ref is a path into the group's JSON for a horizontal reference line
	// (the promise); empty for none. A value of 0 draws no line.
	Ref      string `json:"ref"`
	RefLabel string `json:"ref_label"`
}

var charts = []chartSpec{
	{ID: "backlog", Title: "Backlog", Format: "count",
		Series: []seriesSpec{{Key: "backlog", Label: "backlog"}}},
	{ID: "workers", Title: "Workers", Format: "count",
		Series: []seriesSpec{
			{Key: "current_workers", Label: "current", Step: true},
			{Key: "desired_workers", Label: "desired", Step: true},
			{Key: "recommended_workers", Label: "recommended", Step: true},
		}},
	{ID: "age", Title: "Oldest message age", Format: "seconds",
		Series: []seriesSpec{{Key: "oldest_age_seconds", Label: "oldest age"}},
		Ref:    "settings.latency_seconds", RefLabel: "promise"},
	{ID: "arrivals", Title: "Arrivals (msg/s)", Format: "rate",
		Series: []seriesSpec{
			{Key: "arrival_rate", Label: "arrivals"},
			{Key: "forecast_rate", Label: "forecast", Step: true},
		}},
	{ID: "budget", Title: "Error budget left", Format: "percent",
		Series: []seriesSpec{{Key: "budget_left", Label: "budget left"}}},
}

// chartView is one rendered chart.
type chartView struct {
	ID      string // unique in the page, for the text alternative's ids
	Spec    chartSpec
	Desc    string
	Geo     chartGeometry
	YLabels [3]string // at the bottom, the middle and the top
	XLabels [3]string // at the start, the middle and the end
	Paths   []pathView
	Ref     *refView
	RefY    float64 // where the reference line is, or the plot's top when none
	Empty   bool
	chartFrame
}

// chartFrame is the fixed places of a chart's grid and labels.
type chartFrame struct {
	GridY            [3]int // the value axis at 0, half and the top
	GridX            [3]int // the other axis at the start, the middle and the end
	Anchors          [3]string
	PlotRight        int
	YLabelX, XLabelY int
	MidX, MidY       int
}

func frameOf(geo chartGeometry) chartFrame {
	return chartFrame{
		GridY:     [3]int{geo.Top + geo.plotH(), geo.Top + geo.plotH()/2, geo.Top},
		GridX:     [3]int{geo.Left, geo.Left + geo.plotW()/2, geo.Width - geo.Right},
		Anchors:   [3]string{"start", "middle", "end"},
		PlotRight: geo.Width - geo.Right,
		YLabelX:   geo.Left - 6,
		XLabelY:   geo.Height - 6,
		MidX:      geo.Left + geo.plotW()/2,
		MidY:      geo.Top + geo.plotH()/2,
	}
}

type pathView struct {
	Key, Label, D string
}

type refView struct {
	Label string
}

// sample is one value of one series at a time, in milliseconds.
type sample struct {
	ms  int64
	v   float64
	nil bool
}

func pointValue(p readmodel.Point, key string) (float64, bool) {
	switch key {
	case "backlog":
		return float64(p.Backlog), true
	case "current_workers":
		return float64(p.Current), true
	case "desired_workers":
		return float64(p.Desired), true
	case "recommended_workers":
		return float64(p.Recommended), true
	case "oldest_age_seconds":
		if p.OldestAge == nil {
			return 0, false
		}
		return *p.OldestAge, true
	case "arrival_rate":
		if p.Arrival == nil {
			return 0, false
		}
		return *p.Arrival, true
	case "forecast_rate":
		if p.Forecast == nil {
			return 0, false
		}
		return *p.Forecast, true
	case "budget_left":
		if p.BudgetLeft == nil {
			return 0, false
		}
		return *p.BudgetLeft, true
	}
	return 0, false
}

// niceMax is the smallest of 1, 2, 2.5, 5 times a power of ten that is at
// least x, and at least 1.
func niceMax(x float64) float64 {
	if !(x > 1) || math.IsInf(x, 0) {
		return 1
	}
	p := 1.0
	for p*10 <= x {
		p *= 10
	}
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// coord writes an SVG coordinate rounded to a tenth.
func coord(x float64) string {
	return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
}

// pick reduces the samples in the window to at most one per pixel column:
// the highest (or, for steps, the last) value of the column; a column with
// values and no-values keeps the values, a column of no-values is a gap.
func pick(samples []sample, startMs, windowMs int64, step bool, g chartGeometry) []sample {
	cols := int64(g.plotW())
	var out []sample
	last := int64(-1)
	for _, s := range samples {
		if s.ms < startMs || s.ms > startMs+windowMs {
			continue
		}
		b := (s.ms - startMs) * cols / windowMs
		if b != last {
			out = append(out, s)
			last = b
			continue
		}
		cur := &out[len(out)-1]
		switch {
		case s.nil:
		case cur.nil, step, s.v > cur.v:
			*cur = s
		}
	}
	return out
}

func pathOf(picked []sample, startMs, windowMs int64, yMax float64, step bool, g chartGeometry) string {
	var b strings.Builder
	pen := false
	var py string
	for _, s := range picked {
		if s.nil {
			pen = false
			continue
		}
		x := coord(float64(g.Left) + float64(s.ms-startMs)/float64(windowMs)*float64(g.plotW()))
		y := coord(float64(g.Top) + float64(g.plotH()) - s.v/yMax*float64(g.plotH()))
		switch {
		case !pen:
			b.WriteString("M" + x + "," + y)
		case step:
			b.WriteString("H" + x)
			if y != py {
				b.WriteString("V" + y)
			}
		default:
			b.WriteString("L" + x + "," + y)
		}
		pen, py = true, y
	}
	return b.String()
}

// formatAxis writes an axis or summary value in the chart's format.
func formatAxis(format string, v float64) string {
	switch format {
	case "seconds":
		return formatSeconds(v)
	case "percent":
		return formatPercent(v)
	}
	return formatNumber(v)
}

// minuteClock writes the time of day in UTC to the minute.
func minuteClock(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("15:04")
}

// renderChart draws one chart of a group from its JSON document (the same
// generic form the script reads) and its history.
func renderChart(spec chartSpec, g map[string]any, history []readmodel.Point, generated time.Time) chartView {
	geo := geometry
	endMs := generated.UnixMilli()
	windowMs := chartWindow(history, endMs, geo)
	startMs := endMs - windowMs
	v := chartView{Spec: spec, Geo: geo, chartFrame: frameOf(geo), RefY: float64(geo.Top)}

	series := make([][]sample, len(spec.Series))
	maxV := 0.0
	var descs []string
	for i, s := range spec.Series {
		all := make([]sample, 0, len(history))
		for _, p := range history {
			val, ok := pointValue(p, s.Key)
			all = append(all, sample{ms: p.At.UnixMilli(), v: val, nil: !ok})
		}
		series[i] = pick(all, startMs, windowMs, s.Step, geo)
		var now *float64
		high := math.Inf(-1)
		for _, x := range all {
			if x.nil || x.ms < startMs || x.ms > endMs {
				continue
			}
			val := x.v
			now = &val
			high = math.Max(high, x.v)
		}
		if now == nil {
			descs = append(descs, s.Label+": no data")
			continue
		}
		maxV = math.Max(maxV, high)
		descs = append(descs, s.Label+": now "+formatAxis(spec.Format, *now)+", highest "+formatAxis(spec.Format, high))
	}
	ref := 0.0
	if spec.Ref != "" {
		if r, ok := lookup(g, spec.Ref).(float64); ok && r > 0 {
			ref = r
			maxV = math.Max(maxV, r)
			descs = append(descs, spec.RefLabel+" "+formatAxis(spec.Format, r))
		}
	}
	yMax := niceMax(maxV)
	for i, t := range [3]float64{0, yMax / 2, yMax} {
		v.YLabels[i] = formatAxis(spec.Format, t)
	}
	v.XLabels = [3]string{minuteClock(startMs), minuteClock(startMs + windowMs/2), minuteClock(endMs)}
	v.Empty = true
	for i, s := range spec.Series {
		d := pathOf(series[i], startMs, windowMs, yMax, s.Step, geo)
		if d != "" {
			v.Empty = false
		}
		v.Paths = append(v.Paths, pathView{Key: s.Key, Label: s.Label, D: d})
	}
	if ref > 0 {
		v.Ref = &refView{Label: spec.RefLabel + " " + formatAxis(spec.Format, ref)}
		v.RefY = math.Round((float64(geo.Top)+float64(geo.plotH())-ref/yMax*float64(geo.plotH()))*10) / 10
	}
	v.Desc = "Last " + formatSeconds(float64(windowMs/1000)) + ". " + strings.Join(descs, "; ") + "."
	return v
}

// chartWindow is the span of the time axis: back to the oldest point of
// the history within the longest window, rounded up to a whole minute, and
// at least the shortest window.
func chartWindow(history []readmodel.Point, endMs int64, g chartGeometry) int64 {
	for _, p := range history {
		ms := p.At.UnixMilli()
		if ms < endMs-g.WindowMs || ms > endMs {
			continue
		}
		w := (endMs - ms + 59_999) / 60_000 * 60_000
		return min(max(w, g.MinWindowMs), g.WindowMs)
	}
	return g.WindowMs
}
