// Package planreport renders a capacity plan for people and programs: an
// aligned text table, Markdown, CSV and JSON. The text forms and the CSV
// are built from the same Sections, so a web page can show, copy or export
// any one table the way the command line prints it.
package planreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

// Section is one table of a plan.
type Section struct {
	Name    string // machine name, first column of every CSV row: "plan_points"
	Title   string // heading for people: "Worker plan"
	Columns []Column
	Rows    [][]Cell
}

// Column is one column of a Section.
type Column struct {
	Key     string // CSV header: "drain_seconds"
	Title   string // text and Markdown header: "Drain time"
	CSVOnly bool   // a machine detail (a unit) the text forms fold into the value
}

// Cell is one value, written for people (Text) and for programs (Raw: a
// plain number in msg/s, seconds or a 0..1 ratio, "" for none).
type Cell struct {
	Text string
	Raw  string
}

// Section names, in the order Sections returns them.
const (
	SectionInputs      = "inputs"
	SectionSummary     = "summary"
	SectionPlanPoints  = "plan_points"
	SectionErlang      = "erlang_table"
	SectionSensitivity = "sensitivity"
	SectionBurnDown    = "burn_down"
	SectionCheckpoints = "checkpoints"
	SectionPromise     = "promise_costs"
	SectionCeilings    = "utilization_costs"
	SectionWarnings    = "warnings"
)

// Sections lays a plan out as tables: inputs, summary, plan points, the
// Erlang C table, sensitivity, burn-down (every sample), checkpoints, the
// price of each latency promise and of each utilisation ceiling, and
// warnings. The warnings section is left out when there are none.
func Sections(p capacity.Plan) []Section {
	out := []Section{
		inputs(p), summary(p), planPoints(p), erlangTable(p),
		sensitivity(p), burnDown(p.BurnDown), checkpoints(p), promiseCosts(p), ceilingCosts(p),
	}
	if len(p.Warnings) > 0 {
		w := Section{Name: SectionWarnings, Title: "Warnings", Columns: []Column{{Key: "warning", Title: "Warning"}}}
		for _, s := range p.Warnings {
			w.Rows = append(w.Rows, []Cell{text(s)})
		}
		out = append(out, w)
	}
	return out
}

func inputs(p capacity.Plan) Section {
	in := p.Inputs
	s := Section{Name: SectionInputs, Title: "Inputs", Columns: []Column{
		{Key: "field", Title: "Input"}, {Key: "value", Title: "Value"}, {Key: "unit", Title: "Unit", CSVOnly: true},
	}}
	add := func(key, title string, v Cell, unit string) {
		s.Rows = append(s.Rows, []Cell{{Text: title, Raw: key}, v, text(unit)})
	}
	add(capacity.FieldQueue, "Queue name", text(queueName(p.Queue)), "")
	add(capacity.FieldArrivalRate, "Arrival rate", unitNum(in.ArrivalRate, "msg/s"), "msg/s")
	add(capacity.FieldWorkers, "Current workers", count(in.Workers), "workers")
	if in.ServiceTime > 0 {
		add(capacity.FieldServiceTime, "Service time", secs(in.ServiceTime), "s")
		add(capacity.FieldConcurrency, "Concurrency", count(in.Concurrency), "messages at once")
	} else {
		add(capacity.FieldPerWorker, "Per-worker throughput", unitNum(in.PerWorker, "msg/s"), "msg/s")
	}
	add(capacity.FieldBacklog, "Current backlog", unitNum(in.Backlog, "messages"), "messages")
	add(capacity.FieldDrainTarget, "Target drain time", secs(in.DrainTarget), "s")
	add(capacity.FieldUtilization, "Utilization ceiling", ratio(in.Utilization), "ratio")
	add(capacity.FieldBurstPercent, "Arrival burst reserve", percentNum(in.BurstPercent), "%")
	add(capacity.FieldOverheadPercent, "Retry or overhead reserve", percentNum(in.OverheadPercent), "%")
	add(capacity.FieldStartDelay, "Worker start delay", secs(in.StartDelay), "s")
	add(capacity.FieldSafetyWorkers, "Fixed safety workers", count(in.SafetyWorkers), "workers")
	capCell := count(in.Cap)
	if in.Cap == 0 {
		capCell.Text = "none"
	}
	add(capacity.FieldCap, "Worker cap", capCell, "workers")
	lat := Cell{Text: "none", Raw: ""}
	if in.LatencyTarget > 0 {
		lat = secs(in.LatencyTarget)
	}
	add(capacity.FieldLatencyTarget, "Latency target (how long a message may wait)", lat, "s")
	add(capacity.FieldLatencyQuantile, "Messages within the target", Cell{Text: capacity.FormatPercent(in.LatencyQuantile), Raw: raw(in.LatencyQuantile)}, "ratio")
	if in.ServiceTimeCV > 0 {
		add(capacity.FieldServiceTimeCV, "Service time spread (cv; waits × (1 + cv²) ÷ 2)", Cell{Text: strconv.FormatFloat(in.ServiceTimeCV, 'g', -1, 64), Raw: raw(in.ServiceTimeCV)}, "ratio")
	}
	add(capacity.FieldHorizon, "Burn-down horizon", secs(in.Horizon), "s")
	price := Cell{Text: "no price set", Raw: ""}
	if in.WorkerCostPerHour > 0 {
		price = Cell{Text: capacity.FormatDollars(in.WorkerCostPerHour) + " an hour", Raw: raw(in.WorkerCostPerHour)}
		if in.WorkerCostPerHour < 0.01 {
			price.Text = "$" + raw(in.WorkerCostPerHour) + " an hour"
		}
	}
	add(capacity.FieldWorkerCost, "Worker price", price, "$/h")
	return s
}

func summary(p capacity.Plan) Section {
	in := p.Inputs
	s := Section{Name: SectionSummary, Title: "Queue metrics", Columns: []Column{
		{Key: "metric", Title: "Metric"}, {Key: "value", Title: "Value"},
		{Key: "unit", Title: "Unit", CSVOnly: true}, {Key: "detail", Title: "Detail"},
	}}
	add := func(key, title string, v Cell, unit, detail string) {
		s.Rows = append(s.Rows, []Cell{{Text: title, Raw: key}, v, text(unit), text(detail)})
	}
	add("queue", "Queue", text(queueName(p.Queue)), "", "")
	add("modeled_arrival_rate", "Modeled arrival rate", unitNum(p.ModeledArrivalRate, "msg/s"), "msg/s",
		fmt.Sprintf("%s measured + %s %% burst reserve", capacity.FormatNumber(in.ArrivalRate), capacity.FormatNumber(in.BurstPercent)))
	add("effective_per_worker", "Per-worker effective throughput", unitNum(p.EffectivePerWorker, "msg/s"), "msg/s",
		fmt.Sprintf("after a %s %% retry or overhead reserve", capacity.FormatNumber(in.OverheadPercent)))
	add("service_time_seconds", "Effective service time", secs(p.ServiceTime), "s",
		fmt.Sprintf("per message; a worker is %s in the queueing model", plural(p.ServersPerWorker, "server")))
	add("offered_load", "Offered load", unitNum(p.OfferedLoad, "workers"), "workers",
		"λ_eff / μ_eff: workers busy on average (Little's law)")
	add("backlog_at_start", "Backlog at added-worker start", unitNum(p.BacklogAtStart, "messages"), "messages",
		fmt.Sprintf("after the %s start delay", capacity.FormatSeconds(in.StartDelay)))
	c := p.Current
	add("current_service_rate", "Current service rate", unitNum(c.ServiceRate, "msg/s"), "msg/s", plural(c.Workers, "worker"))
	add("current_net_drain", "Current net drain", unitNum(c.NetDrain, "msg/s"), "msg/s", "service rate − modeled arrivals")
	add("current_drain_seconds", "Current drain time", drain(c.DrainSeconds), "s",
		fmt.Sprintf("target %s", capacity.FormatSeconds(in.DrainTarget)))
	add("current_utilization", "Current utilization", ratioPtr(c.Utilization), "ratio",
		fmt.Sprintf("ceiling %s", capacity.FormatPercent(in.Utilization)))
	add("drain_floor", "Drain floor", workers(p.DrainFloor), "workers", "keeps pace and clears the backlog within the target")
	add("utilization_floor", "Utilization floor", workers(p.UtilizationFloor), "workers", "keeps steady utilization under the ceiling")
	if p.WaitFloor != nil {
		add("wait_floor", "Wait floor", workers(*p.WaitFloor), "workers",
			fmt.Sprintf("%s of messages start within %s (%s), the daemon's promise", capacity.FormatPercent(in.LatencyQuantile), capacity.FormatSeconds(in.LatencyTarget), in.WaitModel()))
	} else {
		add("wait_floor", "Wait floor", Cell{Text: "—"}, "workers", "no latency target")
	}
	if p.MeanWaitFloor != nil {
		add("mean_wait_floor", "Mean wait floor", workers(*p.MeanWaitFloor), "workers",
			fmt.Sprintf("mean queue wait within %s alone: a weaker promise, not sized for", capacity.FormatSeconds(in.LatencyTarget)))
	}
	add("recommended_workers", "Recommended worker target", workers(p.RecommendedWorkers), "workers",
		fmt.Sprintf("largest floor + %s", plural(in.SafetyWorkers, "safety worker")))
	add("steady_state_workers", "Steady-state workers", workers(p.SteadyStateWorkers), "workers", "once the backlog is gone")
	capDetail := "no cap"
	switch {
	case p.Capped:
		capDetail = fmt.Sprintf("capped at %d: the target is blocked", in.Cap)
	case in.Cap > 0:
		capDetail = fmt.Sprintf("the cap of %d does not bind", in.Cap)
	}
	add("capped", "Worker cap outcome", Cell{Text: yesNo(p.Capped), Raw: strconv.FormatBool(p.Capped)}, "", capDetail)
	add("planned_workers", "Planned workers", workers(p.PlannedWorkers), "workers", "the target, or the cap when it binds")

	q := p.Queueing
	detail := fmt.Sprintf("Erlang C at %s", plural(q.Servers, "server"))
	if !q.Stable {
		detail = "not stable: arrivals at or above capacity, no finite wait"
	}
	add("queueing_stable", "Queueing estimate", Cell{Text: yesNo(q.Stable), Raw: strconv.FormatBool(q.Stable)}, "", detail)
	add("queueing_wait_probability", "Jobs that wait", ratioPtr(q.WaitProbability), "ratio", "share of messages that queue at all")
	add("queueing_mean_wait_seconds", "Mean queue wait", secsPtr(q.MeanWaitSeconds), "s", "before a worker takes the message")
	add("queueing_mean_queue_length", "Mean queue length", numPtr(q.MeanQueueLength, "messages"), "messages", "λ_eff × mean wait")
	if c := p.Cost; c != nil {
		add("cost_dollars_per_hour", "Target cost an hour", money(c.DollarsPerHour), "$",
			fmt.Sprintf("%s × %s", plural(c.Workers, "worker"), capacity.FormatDollars(c.WorkerCostPerHour)))
		add("cost_dollars_per_month", "Target cost a month", money(c.DollarsPerMonth), "$",
			fmt.Sprintf("%d hours", capacity.HoursPerMonth))
		add("steady_state_dollars_per_month", "Steady-state cost a month", money(c.SteadyStateDollarsPerMonth), "$",
			plural(c.SteadyStateWorkers, "worker")+", once the backlog is gone")
	}
	return s
}

// promiseCosts is the price of each latency promise: the steady-state
// pool that holds it under the plan's ceiling, in workers and dollars.
func promiseCosts(p capacity.Plan) Section {
	s := Section{Name: SectionPromise, Title: fmt.Sprintf("Price of the promise (%s of messages start within it, ceiling %s)",
		capacity.FormatPercent(p.Inputs.LatencyQuantile), capacity.FormatPercent(p.Inputs.Utilization)), Columns: costColumns(Column{Key: "latency_seconds", Title: "Promise"})}
	for _, r := range p.PromiseCosts {
		s.Rows = append(s.Rows, costRow(secs(r.LatencySeconds), r.Current, r.Workers, r.Capped, r.Binding,
			r.DollarsPerHour, r.DollarsPerMonth))
	}
	return s
}

// ceilingCosts is the price of each utilisation ceiling, holding the
// plan's latency target.
func ceilingCosts(p capacity.Plan) Section {
	title := "Price of the utilization ceiling"
	if p.Inputs.LatencyTarget > 0 {
		title += " (promise " + capacity.FormatSeconds(p.Inputs.LatencyTarget) + ")"
	}
	s := Section{Name: SectionCeilings, Title: title, Columns: costColumns(Column{Key: "utilization", Title: "Ceiling"})}
	for _, r := range p.UtilizationCosts {
		s.Rows = append(s.Rows, costRow(ratio(r.Utilization), r.Current, r.Workers, r.Capped, r.Binding,
			r.DollarsPerHour, r.DollarsPerMonth))
	}
	return s
}

// costColumns are the columns of a price table: the setting it varies,
// then the workers, the floor that binds and the dollars.
func costColumns(setting Column) []Column {
	return []Column{setting, {Key: "workers", Title: "Workers"},
		{Key: "binding", Title: "Bound by"}, {Key: "dollars_per_hour", Title: "$ an hour"},
		{Key: "dollars_per_month", Title: "$ a month"}, {Key: "current", Title: "Current", CSVOnly: true},
	}
}

// costRow is one row of a price table, its setting marked when it is the
// plan's own and its workers when they are above the cap.
func costRow(setting Cell, current bool, workers int, capped bool, binding string, perHour, perMonth *float64) []Cell {
	if current {
		setting.Text += " (current)"
	}
	w := count(workers)
	if capped {
		w.Text += " (above the cap)"
	}
	return []Cell{setting, w, text(binding), moneyPtr(perHour), moneyPtr(perMonth),
		{Text: yesNo(current), Raw: strconv.FormatBool(current)}}
}

func planPoints(p capacity.Plan) Section {
	s := Section{Name: SectionPlanPoints, Title: "Worker plan", Columns: []Column{
		{Key: "point", Title: "Plan point"}, {Key: "workers", Title: "Workers"},
		{Key: "net_drain", Title: "Net drain"}, {Key: "drain_seconds", Title: "Drain time"},
		{Key: "utilization", Title: "Utilization"}, {Key: "note", Title: "Operator note"},
	}}
	for _, r := range p.PlanPoints {
		s.Rows = append(s.Rows, []Cell{
			text(r.Point), count(r.Workers), unitNum(r.NetDrain, "msg/s"),
			drain(r.DrainSeconds), ratioPtr(r.Utilization), text(r.Note),
		})
	}
	return s
}

func erlangTable(p capacity.Plan) Section {
	cols := []Column{{Key: "workers", Title: "Pool size"}}
	if p.ServersPerWorker > 1 {
		cols = append(cols, Column{Key: "servers", Title: "Servers"})
	} else {
		cols = append(cols, Column{Key: "servers", Title: "Servers", CSVOnly: true})
	}
	cols = append(cols,
		Column{Key: "utilization", Title: "Utilization"}, Column{Key: "wait_probability", Title: "Jobs that wait"},
		Column{Key: "mean_wait_seconds", Title: "Queue wait"}, Column{Key: "mean_queue_length", Title: "Queue length"},
		Column{Key: "total_latency_seconds", Title: "Total latency"})
	s := Section{Name: SectionErlang, Title: fmt.Sprintf("Erlang C by pool size (service time %s)",
		capacity.FormatSeconds(p.ServiceTime)), Columns: cols}
	for _, r := range p.ErlangTable {
		s.Rows = append(s.Rows, []Cell{
			workers(r.Workers), count(r.Servers), ratio(r.Utilization), ratio(r.WaitProbability),
			secs(r.MeanWaitSeconds), unitNum(r.MeanQueueLength, ""), secs(r.TotalLatencySeconds),
		})
	}
	return s
}

func sensitivity(p capacity.Plan) Section {
	s := Section{Name: SectionSensitivity, Title: "Worker sensitivity", Columns: []Column{
		{Key: "workers", Title: "Workers"}, {Key: "net_drain", Title: "Net drain"},
		{Key: "drain_seconds", Title: "Drain time"}, {Key: "utilization", Title: "Utilization"},
		{Key: "wait_probability", Title: "Jobs that wait"}, {Key: "mean_wait_seconds", Title: "Queue wait"},
	}}
	for _, r := range p.Sensitivity {
		w := count(r.Workers)
		if r.Workers == p.RecommendedWorkers {
			w.Text += " (target)"
		}
		s.Rows = append(s.Rows, []Cell{
			w, unitNum(r.NetDrain, "msg/s"), drain(r.DrainSeconds), ratioPtr(r.Utilization),
			ratioPtr(r.WaitProbability), secsPtr(r.MeanWaitSeconds),
		})
	}
	return s
}

func burnDown(samples []capacity.BurnDownPoint) Section {
	s := Section{Name: SectionBurnDown, Title: "Backlog burn-down", Columns: []Column{
		{Key: "t_seconds", Title: "Time"}, {Key: "backlog", Title: "Backlog"},
	}}
	for _, b := range samples {
		s.Rows = append(s.Rows, []Cell{
			{Text: "+" + capacity.FormatSeconds(b.T), Raw: raw(b.T)},
			unitNum(b.Backlog, ""),
		})
	}
	return s
}

func checkpoints(p capacity.Plan) Section {
	s := Section{Name: SectionCheckpoints, Title: "Checkpoints", Columns: []Column{
		{Key: "checkpoint", Title: "Checkpoint"}, {Key: "signal", Title: "Signal"},
		{Key: "action", Title: "Action"}, {Key: "note", Title: "Operator note"},
	}}
	for _, c := range p.Checkpoints {
		s.Rows = append(s.Rows, []Cell{text(c.Checkpoint), text(c.Signal), text(c.Action), text(c.Note)})
	}
	return s
}

// Cell builders.

func text(s string) Cell { return Cell{Text: s, Raw: s} }

// raw writes a number the way encoding/json does: plain decimals, with an
// exponent only for magnitudes below 1e-6 or from 1e21 up.
func raw(x float64) string {
	if ax := math.Abs(x); ax != 0 && (ax < 1e-6 || ax >= 1e21) {
		return strconv.FormatFloat(x, 'e', -1, 64)
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}

// money is dollars, rounded to the cent for people, raw for programs.
func money(x float64) Cell { return Cell{Text: capacity.FormatDollars(x), Raw: raw(x)} }

// moneyPtr is dollars, "no price set" when there are none.
func moneyPtr(x *float64) Cell {
	if x == nil {
		return Cell{Text: "no price set"}
	}
	return money(*x)
}

func count(n int) Cell { return Cell{Text: strconv.Itoa(n), Raw: strconv.Itoa(n)} }

func workers(n int) Cell { return Cell{Text: plural(n, "worker"), Raw: strconv.Itoa(n)} }

func unitNum(x float64, unit string) Cell {
	t := capacity.FormatNumber(x)
	if unit != "" {
		t += " " + unit
	}
	return Cell{Text: t, Raw: raw(x)}
}

func numPtr(x *float64, unit string) Cell {
	if x == nil {
		return Cell{Text: "—"}
	}
	return unitNum(*x, unit)
}

func secs(x float64) Cell { return Cell{Text: capacity.FormatSeconds(x), Raw: raw(x)} }

func secsPtr(x *float64) Cell {
	if x == nil {
		return Cell{Text: "—"}
	}
	return secs(*x)
}

// drain is a drain time, "never" when there is none.
func drain(x *float64) Cell {
	if x == nil {
		return Cell{Text: "never"}
	}
	return secs(*x)
}

func ratio(x float64) Cell { return Cell{Text: capacity.FormatPercent(x), Raw: raw(x)} }

func ratioPtr(x *float64) Cell {
	if x == nil {
		return Cell{Text: "—"}
	}
	return ratio(*x)
}

func percentNum(x float64) Cell { return Cell{Text: capacity.FormatNumber(x) + " %", Raw: raw(x)} }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func queueName(q string) string {
	if strings.TrimSpace(q) == "" {
		return "(unnamed)"
	}
	return q
}
