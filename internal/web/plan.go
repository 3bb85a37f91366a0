package web

import (
	"errors"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// The planner (docs/planning.md) as a GET form, computed here by
// internal/capacity, so a plan is a URL that can be shared and exported.

// planField is one input of the planner form.
type planField struct {
	Name     string  // query parameter and input id
	Field    string  // the capacity.PlanInput field it fills, as FieldError names it
	Label    string  // the field's label
	Unit     string  // shown after the input
	Hint     string  // the field's hint
	Kind     string  // "text", "float" or "int"
	Scale    float64 // multiplies the form's number into PlanInput's unit (minutes: 60)
	Default  string  // the value of an empty form
	Required bool
	Section  int // index into planSections

	Value string // as submitted or prefilled
	Error string
}

// planSections group the form's fields.
var planSections = []string{"Queue and workers", "Backlog and targets", "Reserves and limits"}

// planFields are the calculator's inputs, in the order of the form, with
// their hints.
func planFields() []planField {
	return []planField{
		{Name: "queue", Field: capacity.FieldQueue, Label: "Queue name", Kind: "text",
			Hint: "Shown in exports so the capacity run stays traceable."},
		{Name: "arrival_rate", Field: capacity.FieldArrivalRate, Label: "Arrival rate", Unit: "msg/s", Kind: "float", Required: true,
			Hint: "Use the sustained peak interval, not a full-day average when traffic is bursty."},
		{Name: "workers", Field: capacity.FieldWorkers, Label: "Current workers", Unit: "workers", Kind: "int", Required: true,
			Hint: "Enter the active consumer count you want to compare against the target worker plan."},
		{Name: "per_worker", Field: capacity.FieldPerWorker, Label: "Per-worker throughput", Unit: "msg/s", Kind: "float",
			Hint: "Use measured completion rate per worker from logs or queue metrics. Or leave it empty and give a service time and a concurrency below."},
		{Name: "service_time", Field: capacity.FieldServiceTime, Label: "Service time", Unit: "s", Kind: "float",
			Hint: "Instead of a throughput: the time one message takes from pick-up to delete. Use a high percentile, not the median."},
		{Name: "concurrency", Field: capacity.FieldConcurrency, Label: "Concurrency", Unit: "at once", Kind: "int", Default: "1",
			Hint: "With a service time: the messages one worker handles at once."},

		{Name: "backlog", Field: capacity.FieldBacklog, Label: "Current backlog", Unit: "messages", Kind: "float", Required: true, Section: 1,
			Hint: "Enter visible queue depth, pending jobs, or delayed messages that must be drained."},
		{Name: "drain_target", Field: capacity.FieldDrainTarget, Label: "Target drain time", Unit: "min", Kind: "float", Scale: 60, Required: true, Section: 1, Default: "15",
			Hint: "The worker recommendation must keep pace with arrivals and clear this backlog inside the target."},
		{Name: "utilization", Field: capacity.FieldUtilization, Label: "Utilization ceiling", Unit: "ratio, 0 to 1", Kind: "float", Required: true, Section: 1, Default: "0.8",
			Hint: "Common production targets sit around 70-85% when arrival bursts and retries are possible."},
		{Name: "latency_target", Field: capacity.FieldLatencyTarget, Label: "Latency target", Unit: "s", Kind: "float", Section: 1,
			Hint: "Optional: how long a message may wait before a worker takes it. The Erlang C wait floor then joins the recommendation; leave it empty for none."},
		{Name: "latency_quantile", Field: capacity.FieldLatencyQuantile, Label: "Messages within the latency target", Unit: "ratio, 0 to 1", Kind: "float", Section: 1, Default: "0.99",
			Hint: "The share of messages that must start within the latency target, as the checker promises (target.latency_quantile). The mean wait's floor is shown beside it."},

		{Name: "service_time_cv", Field: capacity.FieldServiceTimeCV, Label: "Service time spread", Unit: "cv", Kind: "float", Section: 2, Default: "0",
			Hint: "Standard deviation ÷ mean of one message's service time: the wait floor's waits stretch by (1 + cv²) ÷ 2. Leave 0 for exponential service (cv 1), as Erlang C assumes."},
		{Name: "burst", Field: capacity.FieldBurstPercent, Label: "Arrival burst reserve", Unit: "%", Kind: "float", Section: 2, Default: "0",
			Hint: "Leave 0 for the measured average; raise it when queue metrics show frequent short spikes."},
		{Name: "overhead", Field: capacity.FieldOverheadPercent, Label: "Retry or overhead reserve", Unit: "%", Kind: "float", Section: 2, Default: "0",
			Hint: "Leave 0 when the per-worker throughput already includes normal retry and coordination overhead."},
		{Name: "start_delay", Field: capacity.FieldStartDelay, Label: "Worker start delay", Unit: "sec", Kind: "float", Section: 2, Default: "0",
			Hint: "Leave 0 when current workers are already active or scale-out is immediate."},
		{Name: "safety", Field: capacity.FieldSafetyWorkers, Label: "Fixed safety workers", Unit: "workers", Kind: "int", Section: 2, Default: "0",
			Hint: "Use 0 for pure math; add workers when downstream variance or rollout risk deserves a fixed buffer."},
		{Name: "cap", Field: capacity.FieldCap, Label: "Worker cap", Unit: "workers", Kind: "int", Section: 2, Default: "0",
			Hint: "Leave 0 for no cap; set a limit to flag when the plan cannot be reached."},
		{Name: "worker_cost", Field: capacity.FieldWorkerCost, Label: "Worker price", Unit: "$/hour", Kind: "float", Section: 2,
			Hint: "Optional: what one worker costs an hour (an instance's or a task's on-demand price). The plan and the price of each promise are then in dollars; leave it empty for workers only."},
		{Name: "horizon", Field: capacity.FieldHorizon, Label: "Burn-down horizon", Unit: "min", Kind: "float", Scale: 60, Section: 2,
			Hint: "How far the burn-down chart looks ahead; empty means the start delay plus twice the drain target."},
	}
}

// planForm is the parsed form: its fields, the input they make, and the
// problems found.
type planForm struct {
	Fields    []planField
	Input     capacity.PlanInput
	Submitted bool     // some input was given (or prefilled from a group)
	Errors    []string // problems not tied to a field
	Group     string   // the group the form was prefilled from
}

// HasErrors reports whether any field or the form has a problem.
func (f planForm) HasErrors() bool {
	if len(f.Errors) > 0 {
		return true
	}
	for _, x := range f.Fields {
		if x.Error != "" {
			return true
		}
	}
	return false
}

// Query is the form as a query string, for the export links.
func (f planForm) Query() string {
	q := url.Values{}
	for _, x := range f.Fields {
		if x.Value != "" {
			q.Set(x.Name, x.Value)
		}
	}
	return q.Encode()
}

// JSONHref and CSVHref are the export links of the form's plan.
func (f planForm) JSONHref() template.URL { return template.URL("plan.json?" + f.Query()) }
func (f planForm) CSVHref() template.URL  { return template.URL("plan.csv?" + f.Query()) }

// parsePlanForm reads the planner's query. Fields absent from the query are
// prefilled from the named group's settings and last decision, when a group
// is named, else left at their defaults.
func parsePlanForm(q url.Values, groups []readmodel.GroupView) planForm {
	f := planForm{Fields: planFields()}
	for _, x := range f.Fields {
		if q.Has(x.Name) {
			f.Submitted = true
		}
	}
	prefill := map[string]string{}
	if name := q.Get("group"); name != "" {
		found := false
		for _, g := range groups {
			if g.Settings.Group == name {
				prefill, found = groupPrefill(g), true
				break
			}
		}
		if found {
			f.Group = name
			f.Submitted = true
		} else {
			f.Errors = append(f.Errors, "There is no group named "+echoName(name)+".")
		}
	}
	for i := range f.Fields {
		x := &f.Fields[i]
		switch v, ok := prefill[x.Name]; {
		case q.Has(x.Name):
			x.Value = strings.TrimSpace(q.Get(x.Name))
		case ok:
			x.Value = v
		default:
			x.Value = x.Default
		}
	}
	if !f.Submitted {
		return f
	}
	f.Input = f.input()
	if err := f.Input.Validate(); err != nil {
		f.addErrors(err)
	}
	return f
}

// input converts the fields to a PlanInput, recording what does not parse.
func (f *planForm) input() capacity.PlanInput {
	var in capacity.PlanInput
	for i := range f.Fields {
		x := &f.Fields[i]
		if x.Kind == "text" {
			in.Queue = x.Value
			continue
		}
		v := strings.NewReplacer(",", "", "_", "").Replace(x.Value)
		if v == "" {
			if x.Required {
				x.Error = "required"
			}
			continue
		}
		var n float64
		if x.Kind == "int" {
			i, err := strconv.Atoi(v)
			if err != nil {
				x.Error = "must be a whole number"
				continue
			}
			n = float64(i)
		} else {
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
				x.Error = "must be a number"
				continue
			}
			n = p
		}
		if x.Scale != 0 {
			n *= x.Scale
		}
		setInput(&in, x.Field, n)
	}
	return in
}

func setInput(in *capacity.PlanInput, field string, n float64) {
	toInt := func(x float64) int {
		if x > math.MaxInt32 {
			return math.MaxInt32
		}
		if x < math.MinInt32 {
			return math.MinInt32
		}
		return int(x)
	}
	switch field {
	case capacity.FieldArrivalRate:
		in.ArrivalRate = n
	case capacity.FieldWorkers:
		in.Workers = toInt(n)
	case capacity.FieldPerWorker:
		in.PerWorker = n
	case capacity.FieldServiceTime:
		in.ServiceTime = n
	case capacity.FieldConcurrency:
		in.Concurrency = toInt(n)
	case capacity.FieldBacklog:
		in.Backlog = n
	case capacity.FieldDrainTarget:
		in.DrainTarget = n
	case capacity.FieldUtilization:
		in.Utilization = n
	case capacity.FieldBurstPercent:
		in.BurstPercent = n
	case capacity.FieldOverheadPercent:
		in.OverheadPercent = n
	case capacity.FieldStartDelay:
		in.StartDelay = n
	case capacity.FieldSafetyWorkers:
		in.SafetyWorkers = toInt(n)
	case capacity.FieldCap:
		in.Cap = toInt(n)
	case capacity.FieldLatencyTarget:
		in.LatencyTarget = n
	case capacity.FieldLatencyQuantile:
		in.LatencyQuantile = n
	case capacity.FieldServiceTimeCV:
		in.ServiceTimeCV = n
	case capacity.FieldHorizon:
		in.Horizon = n
	case capacity.FieldWorkerCost:
		in.WorkerCostPerHour = n
	}
}

// addErrors puts Validate's errors next to their fields; a field that did
// not parse keeps its parse error.
func (f *planForm) addErrors(err error) {
	fes := capacity.FieldErrors(err)
	if len(fes) == 0 {
		f.Errors = append(f.Errors, err.Error())
		return
	}
	for _, fe := range fes {
		placed := false
		for i := range f.Fields {
			x := &f.Fields[i]
			if x.Field != fe.Field {
				continue
			}
			placed = true
			if x.Error == "" {
				x.Error = inFormUnits(*x, fe.Message)
			}
		}
		if !placed {
			f.Errors = append(f.Errors, fe.Error())
		}
	}
}

// inFormUnits rewords a message about seconds for a field the form asks in
// minutes.
func inFormUnits(x planField, msg string) string {
	if x.Scale == 60 {
		return msg + " (in seconds; the form takes minutes)"
	}
	return msg
}

// groupPrefill is the planner's form filled from a group's settings and
// last decision.
func groupPrefill(g readmodel.GroupView) map[string]string {
	s := g.Settings.WithDefaults()
	num := func(x float64) string {
		return strconv.FormatFloat(math.Round(x*1e4)/1e4, 'f', -1, 64)
	}
	p := map[string]string{
		"queue":        s.Group,
		"drain_target": num(s.DrainTime.Minutes()),
		"utilization":  num(s.Utilization),
		"burst":        num(s.BurstReserve),
		"overhead":     num(s.OverheadReserve),
		"start_delay":  num(s.StartDelay.Seconds()),
		"safety":       strconv.Itoa(s.SafetyWorkers),
		"cap":          strconv.Itoa(groupCap(s, s.Cap, g.Fleet)),
		"concurrency":  "1",
	}
	if s.Latency > 0 {
		p["latency_target"] = num(s.Latency.Seconds())
		p["latency_quantile"] = num(s.LatencyQuantile)
	}
	if s.Throughput > 0 {
		p["per_worker"] = num(s.Throughput)
	} else if s.ServiceTime > 0 {
		p["service_time"] = num(s.ServiceTime.Seconds())
		p["concurrency"] = strconv.Itoa(s.Concurrency)
	}
	if d := g.Decision; d != nil {
		p["workers"] = strconv.Itoa(d.CurrentWorkers)
		p["backlog"] = strconv.FormatInt(d.Backlog, 10)
		if d.ArrivalRate != nil {
			p["arrival_rate"] = num(*d.ArrivalRate)
		}
		// What the fleet was measured to do, where the sizing uses it:
		// the plan starts from the numbers the checker sizes with.
		m := d.Measured
		if m.SizingWith == "measured" && m.ServiceTimeSeconds != nil && m.PerWorkerThroughput != nil {
			delete(p, "service_time")
			p["per_worker"], p["concurrency"] = num(*m.PerWorkerThroughput), "1"
		}
		if m.StartDelaySeconds != nil && s.Learn == policy.LearnAct {
			p["start_delay"] = num(*m.StartDelaySeconds)
		}
		if m.CeilingWorkers != nil && s.Learn == policy.LearnAct {
			limit := *m.CeilingWorkers
			if s.Cap > 0 {
				limit = min(limit, s.Cap)
			}
			p["cap"] = strconv.Itoa(groupCap(s, limit, g.Fleet))
		}
	}
	return p
}

// groupCap is the planner's worker cap for a group: the ceiling its
// bounds set on the fleet f as the policy and the publisher bound it
// (model.Limits.For), with limit as its cap: the lowest of limit, the
// group's max and the fleet's own max, the ones set; 0 when none is.
func groupCap(s policy.Settings, limit int, f model.Fleet) int {
	l := s.Limits()
	l.Cap = limit
	if hi := l.For(f).Hi; hi < math.MaxInt {
		return hi
	}
	return 0
}

// planPage is what the plan template renders.
type planPage struct {
	Title    string
	Form     planForm
	Sections []planSection
	Plan     *capacity.Plan
	View     *planView
	Example  template.URL // the planner with the worked example
}

type planSection struct {
	Legend string
	Fields []planField
	Open   bool // shown unfolded
}

// exampleQuery is the worked example of docs/model.md, section 10.4: 10 workers.
const exampleQuery = "queue=example&arrival_rate=12&workers=8&per_worker=2.4&backlog=18000&drain_target=30&utilization=0.8"

func newPlanPage(f planForm) planPage {
	p := planPage{Title: "Capacity plan", Form: f, Example: template.URL("plan?" + exampleQuery)}
	for i, legend := range planSections {
		s := planSection{Legend: legend, Open: i < 2}
		for _, x := range f.Fields {
			if x.Section != i {
				continue
			}
			s.Fields = append(s.Fields, x)
			if x.Error != "" || (x.Value != x.Default && x.Value != "") {
				s.Open = true
			}
		}
		p.Sections = append(p.Sections, s)
	}
	return p
}

func (s *site) servePlan(w http.ResponseWriter, r *http.Request) {
	f := parsePlanForm(r.URL.Query(), s.o.views().Groups())
	p := newPlanPage(f)
	status := http.StatusOK
	if f.HasErrors() {
		status = http.StatusBadRequest
	} else if f.Submitted {
		plan, err := capacity.NewPlan(f.Input)
		if err != nil {
			// Validate passed, so this is not expected; say it, do not fail.
			p.Form.addErrors(err)
			p = newPlanPage(p.Form)
			status = http.StatusBadRequest
		} else {
			p.Plan = &plan
			v := newPlanView(plan)
			p.View = &v
		}
	}
	s.render(w, r, "plan", status, p)
}

// planFromQuery is the plan of a query, or the form with its problems.
func planFromQuery(q url.Values, groups []readmodel.GroupView) (capacity.Plan, planForm, error) {
	f := parsePlanForm(q, groups)
	if !f.Submitted {
		f.Errors = append(f.Errors, "no plan inputs given: use the query of /plan")
	}
	if f.HasErrors() {
		return capacity.Plan{}, f, errors.New("invalid plan inputs")
	}
	plan, err := capacity.NewPlan(f.Input)
	if err != nil {
		f.addErrors(err)
		return capacity.Plan{}, f, err
	}
	return plan, f, nil
}

// formErrors lists the form's problems for the export endpoints.
type formError struct {
	Field   string `json:"field,omitempty"` // the query parameter
	Message string `json:"message"`
}

func (f *planForm) errorList() []formError {
	var out []formError
	for _, m := range f.Errors {
		out = append(out, formError{Message: m})
	}
	for _, x := range f.Fields {
		if x.Error != "" {
			out = append(out, formError{Field: x.Name, Message: x.Label + ": " + x.Error})
		}
	}
	return out
}
