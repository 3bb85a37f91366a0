package web

import (
	"fmt"
	"math"
	"strings"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

// planView is a capacity plan written for people: the tables and charts of
// the planner page.
type planView struct {
	Headline string // "10 workers"
	Summary  string
	Capped   bool
	Metrics  []metricRow
	Points   []pointRow
	Sens     []sensRow
	Erlang   []erlangRow
	BurnDown burnDownChart
	SensBars sensChart
	Promise  promiseView
}

type metricRow struct{ Metric, Value, Detail string }

type pointRow struct {
	Point, Workers, NetDrain, Drain, Utilization, Note string
	Target                                             bool
}

type sensRow struct {
	Workers, NetDrain, Drain, Utilization, WaitProb, MeanWait string
	Target                                                    bool
}

type erlangRow struct {
	Workers, Servers, Utilization, WaitProb, MeanWait, Total string
	Planned                                                  bool
}

func rate(x float64) string { return formatNumber(x) + " msg/s" }

func optSeconds(x *float64, null string) string {
	if x == nil {
		return null
	}
	return formatSeconds(*x)
}

func optPercent(x *float64, null string) string {
	if x == nil {
		return null
	}
	return formatPercent(*x)
}

func count(n int) string { return formatNumber(float64(n)) }

func workersWord(n int) string {
	if n == 1 {
		return "1 worker"
	}
	return count(n) + " workers"
}

func newPlanView(p capacity.Plan) planView {
	in := p.Inputs
	v := planView{Capped: p.Capped}
	v.Headline = workersWord(p.RecommendedWorkers)
	switch {
	case p.Capped:
		v.Summary = fmt.Sprintf("The target of %s is above the cap of %s: the plan is blocked at %s.",
			workersWord(p.RecommendedWorkers), count(in.Cap), workersWord(p.PlannedWorkers))
	case in.Workers < p.RecommendedWorkers:
		v.Summary = fmt.Sprintf("Scale out from %s to %s.", workersWord(in.Workers), workersWord(p.RecommendedWorkers))
	case in.Workers > p.RecommendedWorkers:
		v.Summary = fmt.Sprintf("%s are enough; the current %s can scale in once the backlog is gone.",
			workersWord(p.RecommendedWorkers), count(in.Workers))
	default:
		v.Summary = fmt.Sprintf("The current %s meet the plan.", workersWord(in.Workers))
	}

	perWorker := "measured"
	if in.ServiceTime > 0 {
		perWorker = fmt.Sprintf("%d at once, %s each", p.ServersPerWorker, formatSeconds(in.ServiceTime))
	}
	if in.OverheadPercent > 0 {
		perWorker += fmt.Sprintf(", less %s %% overhead", formatNumber(in.OverheadPercent))
	}
	arrival := "as measured"
	if in.BurstPercent > 0 {
		arrival = fmt.Sprintf("%s measured + %s %% burst reserve", rate(in.ArrivalRate), formatNumber(in.BurstPercent))
	}
	cur := p.Current
	waitFloor, waitDetail := "none", "no latency target given"
	if p.WaitFloor != nil {
		waitFloor = workersWord(*p.WaitFloor)
		waitDetail = "smallest pool that starts " + formatPercent(in.LatencyQuantile) + " of messages within " + formatSeconds(in.LatencyTarget) + " (" + in.WaitModel() + "), as the daemon sizes"
	}
	meanFloor, meanDetail := "none", "no latency target given"
	if p.MeanWaitFloor != nil {
		meanFloor = workersWord(*p.MeanWaitFloor)
		meanDetail = "smallest pool whose mean queue wait is within " + formatSeconds(in.LatencyTarget) + ": a weaker promise, not sized for"
	}
	planned := workersWord(p.PlannedWorkers)
	plannedDetail := "the target is reachable"
	if in.Cap > 0 && !p.Capped {
		plannedDetail = fmt.Sprintf("the cap of %s does not bind", count(in.Cap))
	}
	if p.Capped {
		planned += " (capped)"
		plannedDetail = fmt.Sprintf("the cap of %s keeps the pool %s below the target", count(in.Cap), count(p.RecommendedWorkers-in.Cap))
	}
	q := p.Queueing
	wait := "no finite wait: arrivals reach capacity"
	if q.Stable && q.MeanWaitSeconds != nil {
		wait = formatSeconds(*q.MeanWaitSeconds)
	}
	v.Metrics = []metricRow{
		{"Modeled arrival rate", rate(p.ModeledArrivalRate), arrival},
		{"Per-worker effective throughput", rate(p.EffectivePerWorker), perWorker},
		{"Offered load", formatNumber(p.OfferedLoad) + " workers", "arrivals ÷ per-worker throughput: busy workers at 100 % utilization"},
		{"Current service rate", rate(cur.ServiceRate), workersWord(cur.Workers) + " × per-worker throughput"},
		{"Current net drain", rate(cur.NetDrain), "service rate − arrivals; the backlog shrinks only when positive"},
		{"Current drain time", optSeconds(cur.DrainSeconds, "never"), "target " + formatSeconds(in.DrainTarget)},
		{"Current utilization", optPercent(cur.Utilization, "no workers"), "ceiling " + formatPercent(in.Utilization)},
		{"Backlog when added workers start", formatNumber(p.BacklogAtStart) + " messages", "after the " + formatSeconds(in.StartDelay) + " start delay"},
		{"Drain floor", workersWord(p.DrainFloor), "keeps pace with arrivals and clears the backlog within the target"},
		{"Utilization floor", workersWord(p.UtilizationFloor), "keeps steady utilization at or below the ceiling"},
		{"Wait floor", waitFloor, waitDetail},
		{"Mean wait floor", meanFloor, meanDetail},
		{"Recommended worker target", workersWord(p.RecommendedWorkers), fmt.Sprintf("the largest floor + %s safety", count(in.SafetyWorkers))},
		{"Planned workers", planned, plannedDetail},
		{"Steady-state workers", workersWord(p.SteadyStateWorkers), "once the backlog is gone"},
		{"Queue wait at the planned pool", wait, "mean wait in the queue, Erlang C (a best case)"},
		{"Messages that wait", optPercent(q.WaitProbability, "all"), "share of arrivals that find every worker busy"},
	}
	for _, pt := range p.PlanPoints {
		v.Points = append(v.Points, pointRow{
			Point: pt.Point, Workers: count(pt.Workers), NetDrain: rate(pt.NetDrain),
			Drain: optSeconds(pt.DrainSeconds, "never"), Utilization: optPercent(pt.Utilization, "—"),
			Note: pt.Note, Target: pt.Point == capacity.PointTarget,
		})
	}
	for _, r := range p.Sensitivity {
		v.Sens = append(v.Sens, sensRow{
			Workers: count(r.Workers), NetDrain: rate(r.NetDrain), Drain: optSeconds(r.DrainSeconds, "never"),
			Utilization: optPercent(r.Utilization, "—"), WaitProb: optPercent(r.WaitProbability, "unstable"),
			MeanWait: optSeconds(r.MeanWaitSeconds, "unstable"), Target: r.Workers == p.RecommendedWorkers,
		})
	}
	for _, r := range p.ErlangTable {
		v.Erlang = append(v.Erlang, erlangRow{
			Workers: count(r.Workers), Servers: count(r.Servers), Utilization: formatPercent(r.Utilization),
			WaitProb: formatPercent(r.WaitProbability), MeanWait: formatSeconds(r.MeanWaitSeconds),
			Total: formatSeconds(r.TotalLatencySeconds), Planned: r.Workers == p.PlannedWorkers,
		})
	}
	v.BurnDown = newBurnDown(p)
	v.SensBars = newSensChart(p)
	v.Promise = newPromiseView(p)
	if c := p.Cost; c != nil {
		v.Metrics = append(v.Metrics,
			metricRow{"Target cost", money(&c.DollarsPerMonth) + " a month",
				fmt.Sprintf("%s × %s × %d hours; %s an hour", workersWord(c.Workers), priceText(c.WorkerCostPerHour),
					capacity.HoursPerMonth, money(&c.DollarsPerHour))},
			metricRow{"Steady-state cost", money(&c.SteadyStateDollarsPerMonth) + " a month", workersWord(c.SteadyStateWorkers) + ", once the backlog is gone"})
	} else {
		v.Metrics = append(v.Metrics, metricRow{"Target cost", "no price set", "give a worker price to see the plan in dollars"})
	}
	return v
}

// burnDownChart is the modeled backlog over the horizon as an SVG line.
type burnDownChart struct {
	W, H, Left, Right, Top, Bottom int
	PlotRight, PlotBottom          int
	D                              string // the backlog line
	Area                           string // the same, closed to the axis
	YLabels                        [3]string
	GridY                          [3]int
	XTicks                         []tick
	Marks                          []mark
	Desc                           string
	Empty                          bool
}

type tick struct {
	X     float64
	Label string
}

type mark struct {
	X        float64
	Label    string
	Class    string
	LabelY   int
	Anchor   string
	LabelPad float64
}

func newBurnDown(p capacity.Plan) burnDownChart {
	c := burnDownChart{W: 640, H: 240, Left: 76, Right: 20, Top: 30, Bottom: 30}
	c.PlotRight, c.PlotBottom = c.W-c.Right, c.H-c.Bottom
	pw, ph := float64(c.W-c.Left-c.Right), float64(c.H-c.Top-c.Bottom)
	pts := p.BurnDown
	if len(pts) == 0 {
		c.Empty = true
		return c
	}
	h := pts[len(pts)-1].T
	if !(h > 0) {
		h = 1
	}
	top := 0.0
	for _, b := range pts {
		top = math.Max(top, b.Backlog)
	}
	yMax := niceMax(top)
	c.GridY = [3]int{c.PlotBottom, c.Top + int(ph/2), c.Top}
	for i, t := range [3]float64{0, yMax / 2, yMax} {
		c.YLabels[i] = formatNumber(t)
	}
	x := func(t float64) float64 { return float64(c.Left) + t/h*pw }
	y := func(b float64) float64 { return float64(c.Top) + ph - b/yMax*ph }
	var d strings.Builder
	for i, b := range pts {
		if i == 0 {
			d.WriteString("M")
		} else {
			d.WriteString("L")
		}
		d.WriteString(coord(x(b.T)) + "," + coord(y(b.Backlog)))
	}
	c.D = d.String()
	c.Area = c.D + "L" + coord(x(pts[len(pts)-1].T)) + "," + coord(float64(c.PlotBottom)) +
		"L" + coord(x(pts[0].T)) + "," + coord(float64(c.PlotBottom)) + "Z"
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		c.XTicks = append(c.XTicks, tick{X: math.Round(x(f*h)*10) / 10, Label: formatSeconds(f * h)})
	}
	in := p.Inputs
	if in.StartDelay > 0 && in.StartDelay < h {
		c.Marks = append(c.Marks, mark{X: math.Round(x(in.StartDelay)*10) / 10, Label: "workers start", Class: "mark-start"})
	}
	if t := in.StartDelay + in.DrainTarget; t <= h {
		c.Marks = append(c.Marks, mark{X: math.Round(x(t)*10) / 10, Label: "drain target", Class: "mark-target"})
	}
	for i := range c.Marks {
		m := &c.Marks[i]
		m.LabelY = c.Top - 8
		m.Anchor = "middle"
		if m.X > float64(c.PlotRight)-50 {
			m.Anchor = "end"
		}
		if m.X < float64(c.Left)+50 {
			m.Anchor = "start"
		}
	}
	if len(c.Marks) == 2 && c.Marks[1].X-c.Marks[0].X < 110 {
		c.Marks[0].Anchor, c.Marks[1].Anchor = "end", "start"
		c.Marks[0].LabelPad, c.Marks[1].LabelPad = -4, 4
	}
	clear := "the backlog is not cleared within the horizon"
	for _, b := range pts {
		if b.Backlog == 0 && b.T > 0 {
			clear = "the backlog is cleared " + formatSeconds(b.T) + " from now"
			break
		}
		if b.Backlog == 0 && b.T == 0 {
			clear = "there is no backlog"
			break
		}
	}
	c.Desc = fmt.Sprintf("Modeled backlog over %s with %s after the start delay: from %s messages now; %s.",
		formatSeconds(h), workersWord(p.PlannedWorkers), formatNumber(pts[0].Backlog), clear)
	return c
}

// sensChart is the drain time of each sensitivity row as horizontal bars,
// against the drain target.
type sensChart struct {
	W, H, Left, Right, Top int
	Bars                   []bar
	TargetX                float64
	TargetLabel            string
	TargetAnchor           string
	ShowTarget             bool
	Desc                   string
}

type bar struct {
	Y, W, LabelX   float64
	Label, Value   string
	Never, Target  bool
	TextY, BarH    float64
	ValueAnchorEnd bool
}

func newSensChart(p capacity.Plan) sensChart {
	const rowH, barH = 30.0, 18.0
	c := sensChart{W: 640, Left: 120, Right: 100, Top: 30}
	c.H = c.Top + int(rowH)*len(p.Sensitivity) + 8
	pw := float64(c.W - c.Left - c.Right)
	target := p.Inputs.DrainTarget
	top := target
	for _, r := range p.Sensitivity {
		if r.DrainSeconds != nil {
			top = math.Max(top, *r.DrainSeconds)
		}
	}
	if !(top > 0) {
		top = 1
	}
	scale := func(s float64) float64 { return math.Round(s/top*pw*10) / 10 }
	var desc []string
	for i, r := range p.Sensitivity {
		b := bar{
			Y:      float64(c.Top) + float64(i)*rowH + (rowH-barH)/2,
			BarH:   barH,
			Label:  workersWord(r.Workers),
			Target: r.Workers == p.RecommendedWorkers,
		}
		b.TextY = b.Y + barH/2
		if r.DrainSeconds == nil {
			b.Never, b.Value = true, "never drains"
			b.W = pw
		} else {
			b.W = math.Max(scale(*r.DrainSeconds), 1)
			b.Value = formatSeconds(*r.DrainSeconds)
		}
		b.LabelX = float64(c.Left) + b.W + 6
		desc = append(desc, b.Label+": "+b.Value)
		c.Bars = append(c.Bars, b)
	}
	if target > 0 {
		c.ShowTarget = true
		c.TargetX = float64(c.Left) + scale(target)
		c.TargetLabel = "target " + formatSeconds(target)
		c.TargetAnchor = "middle"
		if c.TargetX > float64(c.W-c.Right)-40 {
			c.TargetAnchor = "end"
		}
	}
	c.Desc = "Drain time of the backlog at start by pool size, against the " + formatSeconds(target) + " target: " +
		strings.Join(desc, "; ") + "."
	return c
}
