package web

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

// The price of the promise on the planner page: what each latency promise
// and each utilisation ceiling costs in workers and, with a worker price,
// in dollars a month, as tables and as one chart of promise against cost
// with a line per ceiling and the current setting marked.

// promiseRow is one row of the promise or the ceiling table.
type promiseRow struct {
	Setting, Workers, Binding, PerHour, PerMonth string
	Current, Capped                              bool
}

// promiseView is the price of the promise, written for people.
type promiseView struct {
	Priced   bool   // a worker price was given
	Price    string // "$0.0416 an hour"
	Hours    int    // of a month
	Promises []promiseRow
	Ceilings []promiseRow
	Chart    promiseChart
	Summary  string // the trade in one sentence
}

// promiseChart is cost (dollars a month, or workers without a price)
// against the latency promise, one line per utilisation ceiling; the
// promises are evenly spaced, in order, as the table lists them.
type promiseChart struct {
	W, H, Left, Right, Top, Bottom int
	PlotRight, PlotBottom          int
	YLabels                        [3]string
	GridY                          [3]int
	XTicks                         []tick
	Lines                          []promiseLine
	Current                        *promiseMark
	YTitle                         string
	Desc                           string
	Empty                          bool
}

type promiseLine struct {
	D, Label, Class string
	LabelX, LabelY  float64
	Current         bool
}

type promiseMark struct {
	X, Y, LabelX, LabelY float64
	Label, Anchor        string
}

// chartCeilings are the ceilings drawn as lines, with the plan's own.
var chartCeilings = []float64{0.6, 0.8, 0.95}

func money(x *float64) string {
	if x == nil {
		return "no price set"
	}
	return capacity.FormatDollars(*x)
}

// priceText is a worker price an hour, to the tenth of a cent where it
// has one.
func priceText(x float64) string {
	if cents := math.Round(x * 100); math.Abs(cents-x*100) < 1e-9 {
		return capacity.FormatDollars(x) + " an hour"
	}
	return "$" + strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", x), "0"), ".") + " an hour"
}

func newPromiseView(p capacity.Plan) promiseView {
	in := p.Inputs
	v := promiseView{Priced: in.WorkerCostPerHour > 0, Hours: capacity.HoursPerMonth}
	if v.Priced {
		v.Price = priceText(in.WorkerCostPerHour)
	}
	for _, r := range p.PromiseCosts {
		v.Promises = append(v.Promises, promiseRow{Setting: formatSeconds(r.LatencySeconds), Workers: count(r.Workers),
			Binding: bindingText(r.Binding), PerHour: money(r.DollarsPerHour), PerMonth: money(r.DollarsPerMonth),
			Current: r.Current, Capped: r.Capped})
	}
	for _, r := range p.UtilizationCosts {
		v.Ceilings = append(v.Ceilings, promiseRow{Setting: formatPercent(r.Utilization), Workers: count(r.Workers),
			Binding: bindingText(r.Binding), PerHour: money(r.DollarsPerHour), PerMonth: money(r.DollarsPerMonth),
			Current: r.Current, Capped: r.Capped})
	}
	if n := len(p.PromiseCosts); n > 1 {
		tight, loose := p.PromiseCosts[0], p.PromiseCosts[n-1]
		v.Summary = fmt.Sprintf("A %s promise needs %s, a %s one %s", formatSeconds(tight.LatencySeconds),
			workersWord(tight.Workers), formatSeconds(loose.LatencySeconds), workersWord(loose.Workers))
		if v.Priced {
			v.Summary += fmt.Sprintf(": %s against %s a month", money(tight.DollarsPerMonth), money(loose.DollarsPerMonth))
		}
		v.Summary += "."
	}
	v.Chart = newPromiseChart(p)
	return v
}

func bindingText(b string) string {
	if b == capacity.BindingWait {
		return "the promise"
	}
	return "the ceiling"
}

func newPromiseChart(p capacity.Plan) promiseChart {
	c := promiseChart{W: 640, H: 260, Left: 84, Right: 72, Top: 30, Bottom: 30}
	c.PlotRight, c.PlotBottom = c.W-c.Right, c.H-c.Bottom
	pw, ph := float64(c.W-c.Left-c.Right), float64(c.H-c.Top-c.Bottom)
	rows := p.PromiseCosts
	if len(rows) == 0 {
		c.Empty = true
		c.Desc = "No latency promise could be priced."
		return c
	}
	in := p.Inputs
	priced := in.WorkerCostPerHour > 0
	value := func(w int) float64 {
		if priced {
			return capacity.WorkerDollarsPerMonth(w, in.WorkerCostPerHour)
		}
		return float64(w)
	}
	label := func(x float64) string {
		if priced {
			return "$" + formatNumber(x)
		}
		return formatNumber(x)
	}
	c.YTitle = "workers"
	if priced {
		c.YTitle = "$ a month"
	}
	ceilings := slices.Clone(chartCeilings)
	if !slices.Contains(ceilings, in.Utilization) {
		ceilings = append(ceilings, in.Utilization)
		slices.Sort(ceilings)
	}
	floorOf := map[float64]int{}
	for _, u := range p.UtilizationCosts {
		floorOf[u.Utilization] = u.UtilizationFloor
	}
	type line struct {
		u  float64
		ws []int
	}
	var lines []line
	top := 0.0
	for _, u := range ceilings {
		uf, ok := floorOf[u]
		if !ok {
			continue
		}
		l := line{u: u}
		for _, r := range rows {
			w, _ := capacity.SteadyWorkers(uf, r.WaitFloor, in.SafetyWorkers)
			l.ws = append(l.ws, w)
			top = math.Max(top, value(w))
		}
		lines = append(lines, l)
	}
	yMax := niceMax(top)
	c.GridY = [3]int{c.PlotBottom, c.Top + int(ph/2), c.Top}
	for i, t := range [3]float64{0, yMax / 2, yMax} {
		c.YLabels[i] = label(t)
	}
	step := pw / float64(max(len(rows)-1, 1))
	x := func(i int) float64 { return float64(c.Left) + float64(i)*step }
	y := func(v float64) float64 { return float64(c.Top) + ph - v/yMax*ph }
	for i, r := range rows {
		c.XTicks = append(c.XTicks, tick{X: math.Round(x(i)*10) / 10, Label: formatSeconds(r.LatencySeconds)})
	}
	var desc []string
	for _, l := range lines {
		cur := l.u == in.Utilization
		pl := promiseLine{D: pathSteps(l.ws, x, func(w int) float64 { return y(value(w)) }),
			Label: "ceiling " + formatPercent(l.u), Class: "ceiling", Current: cur,
			LabelX: float64(c.PlotRight) + 6, LabelY: y(value(l.ws[len(l.ws)-1]))}
		c.Lines = append(c.Lines, pl)
		desc = append(desc, fmt.Sprintf("under a %s ceiling from %s at %s to %s at %s", formatPercent(l.u),
			label(value(l.ws[0])), formatSeconds(rows[0].LatencySeconds), label(value(l.ws[len(l.ws)-1])),
			formatSeconds(rows[len(rows)-1].LatencySeconds)))
	}
	spreadLabels(c.Lines, 13)
	for i, r := range rows {
		if !r.Current {
			continue
		}
		amount := workersWord(r.Workers)
		if priced {
			amount = money(r.DollarsPerMonth) + " a month"
		}
		m := &promiseMark{X: x(i), Y: y(value(r.Workers)), Label: "current: " + formatSeconds(r.LatencySeconds) + ", " +
			amount, Anchor: "middle"}
		m.LabelX, m.LabelY = m.X, m.Y-10
		if m.LabelY < float64(c.Top)+4 {
			m.LabelY = m.Y + 18
		}
		switch {
		case m.X < float64(c.Left)+80:
			m.Anchor, m.LabelX = "start", m.X-4
		case m.X > float64(c.PlotRight)-80:
			m.Anchor, m.LabelX = "end", m.X+4
		}
		c.Current = m
	}
	what := "workers"
	if priced {
		what = "dollars a month at " + priceText(in.WorkerCostPerHour)
	}
	c.Desc = "Steady-state cost in " + what + " by latency promise (mean queue wait): " + strings.Join(desc, "; ") + "."
	if c.Current != nil {
		c.Desc += " The current setting is " + c.Current.Label[len("current: "):] + "."
	}
	return c
}

// pathSteps draws whole-worker counts as steps: level from one promise to
// the next, changing at each.
func pathSteps(ws []int, x func(int) float64, y func(int) float64) string {
	var d strings.Builder
	for i, w := range ws {
		if i == 0 {
			d.WriteString("M" + coord(x(0)) + "," + coord(y(w)))
			continue
		}
		d.WriteString("L" + coord(x(i)) + "," + coord(y(ws[i-1])))
		d.WriteString("L" + coord(x(i)) + "," + coord(y(w)))
	}
	return d.String()
}

// spreadLabels moves the lines' end labels apart so that none overlap:
// at least gap apart, in the order of their heights.
func spreadLabels(lines []promiseLine, gap float64) {
	idx := make([]int, len(lines))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case lines[a].LabelY < lines[b].LabelY:
			return -1
		case lines[a].LabelY > lines[b].LabelY:
			return 1
		}
		return 0
	})
	for k := 1; k < len(idx); k++ {
		prev, cur := &lines[idx[k-1]], &lines[idx[k]]
		if cur.LabelY-prev.LabelY < gap {
			cur.LabelY = prev.LabelY + gap
		}
	}
}
