// Package chart draws a simulator comparison over time: backlog, age of the
// oldest message against the latency target, and workers, one line per
// policy, as SVG or PNG.
package chart

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/queuechecker/queue-checker/internal/sim"
)

// Chart formats.
const (
	SVG = "svg"
	PNG = "png"
)

// Format is the chart format a file name asks for, by its extension.
func Format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	default:
		return "", fmt.Errorf("chart file %q: want a .svg or .png name", path)
	}
}

// chart size
const (
	chartWidth  = 28 * vg.Centimeter
	chartHeight = 24 * vg.Centimeter
	chartDPI    = 110
)

// panel is one of the chart's stacked panels: its axis label and the value
// of a point it plots.
type panel struct {
	label string
	y     func(sim.Point) float64
}

// panels are the chart's panels, top to bottom.
var panels = []panel{
	{"backlog (messages)", func(p sim.Point) float64 { return float64(p.Backlog) }},
	{"oldest message age (s)", func(p sim.Point) float64 { return p.OldestAge }},
	{"workers (running or starting)", func(p sim.Point) float64 { return float64(p.Workers) }},
}

// Write draws three stacked panels over a shared time axis: backlog,
// age of the oldest message (with the latency target), and workers, one line
// per result, with a legend, and writes it as SVG or PNG.
func Write(w io.Writer, format, title string, latency time.Duration, results []sim.Result) error {
	end := 0.0
	for _, r := range results {
		if n := len(r.Series); n > 0 {
			end = max(end, r.Series[n-1].T/60)
		}
	}
	plots := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p, err := drawPanel(i, pn, end, results)
		if err != nil {
			return err
		}
		if i == 0 {
			p.Title.Text = title
			p.Legend.Top = true
			p.Legend.Left = true
		}
		if i == 1 && latency > 0 {
			target := plotter.NewFunction(func(float64) float64 { return latency.Seconds() })
			target.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			target.Color = color.Black
			p.Add(target)
			p.Legend.Add("latency target", target)
		}
		plots[i] = []*plot.Plot{p}
	}
	return render(w, format, plots)
}

// drawPanel is the i-th panel up to end minutes: a line per result, the
// model's wider, named in the top panel's legend; only the bottom panel
// labels the time axis.
func drawPanel(i int, pn panel, end float64, results []sim.Result) (*plot.Plot, error) {
	p := plot.New()
	p.Y.Label.Text = pn.label
	p.Y.Min = 0
	p.X.Min, p.X.Max = 0, end
	if i < len(panels)-1 {
		p.X.Tick.Marker = unlabeled{plot.DefaultTicks{}}
	} else {
		p.X.Label.Text = "time (minutes)"
	}
	p.Add(plotter.NewGrid())
	for k, r := range results {
		xys := make(plotter.XYs, len(r.Series))
		for j, pt := range r.Series {
			xys[j].X = pt.T / 60
			xys[j].Y = pn.y(pt)
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("chart %s of %s: %w", pn.label, r.Policy, err)
		}
		line.Color = palette[k%len(palette)]
		line.Width = vg.Points(1)
		if r.Policy == sim.PolicyModel {
			line.Width = vg.Points(2)
		}
		p.Add(line)
		if i == 0 {
			p.Legend.Add(r.Policy, line)
		}
	}
	return p, nil
}

// render lays the panels out in a column and writes them as SVG or PNG.
func render(w io.Writer, format string, plots [][]*plot.Plot) error {
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter, PadY: vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	var (
		canvas draw.Canvas
		out    io.WriterTo
	)
	switch format {
	case SVG:
		c := vgsvg.New(chartWidth, chartHeight)
		canvas, out = draw.New(c), c
	case PNG:
		c := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(chartDPI))
		canvas, out = draw.New(c), vgimg.PngCanvas{Canvas: c}
	default:
		return fmt.Errorf("chart format %q: want %s or %s", format, SVG, PNG)
	}
	canvases := plot.Align(plots, tiles, canvas)
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	if _, err := out.WriteTo(w); err != nil {
		return fmt.Errorf("write chart: %w", err)
	}
	return nil
}

// WriteFile draws a run's results as Write does into the file at path, in
// the format Format names, titled with the run's scenario, latency target
// and start delay.
func WriteFile(path, format string, rc sim.RunConfig, results []sim.Result) (err error) {
	file, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	defer func() {
		if cerr := file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("chart: %w", cerr)
		}
	}()
	title := fmt.Sprintf("%s scenario, latency target %v, start delay %v", rc.World.Scenario.Name, rc.World.LatencyTarget, rc.World.StartDelay)
	return Write(file, format, title, rc.World.LatencyTarget, results)
}

// palette tells up to eight lines apart (Okabe and Ito's colour-blind-safe
// set, with black for the eighth).
var palette = []color.Color{
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{120, 120, 120, 255}, // grey
	color.RGBA{0, 0, 0, 255},       // black
}

// unlabeled keeps a ticker's ticks and drops their labels, for the panels
// above the one that labels the shared time axis.
type unlabeled struct{ plot.Ticker }

func (u unlabeled) Ticks(lo, hi float64) []plot.Tick {
	ts := u.Ticker.Ticks(lo, hi)
	for i := range ts {
		ts[i].Label = ""
	}
	return ts
}
