package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// groupsDoc is the JSON of GET /api/v1/groups, and the data the status page
// is rendered from: the page and the endpoint always agree.
type groupsDoc struct {
	Groups      []groupDoc `json:"groups"`
	GeneratedAt time.Time  `json:"generated_at"`
	// RefreshSeconds is how often the status page asks again.
	RefreshSeconds float64 `json:"refresh_seconds"`
	// Coordination lists the checkers sharing the groups; absent when this
	// checker runs alone.
	Coordination *readmodel.Coordination `json:"coordination,omitempty"`
	// Health is what /healthz answers, when it is not ok: starting, or
	// unhealthy and why (a restart needed, groups without owner, no good
	// cycle). Absent when ok.
	Health *healthDoc `json:"health,omitempty"`
	// AWSCost is what the checker's own AWS calls cost a month, every
	// group it acts on and its lease table together (awscost.go).
	AWSCost awsCostDoc `json:"aws_cost"`
}

// healthDoc is the checker's health when it is not ok.
type healthDoc struct {
	State  string `json:"state"`
	Detail string `json:"detail"`
}

// groupDoc is one group: its settings, its last decision and what the
// checker saw and did.
type groupDoc struct {
	Name     string          `json:"name"`
	Settings settingsDoc     `json:"settings"`
	Decision *model.Decision `json:"decision"` // null before the first cycle
	Queues   queuesDoc       `json:"queues"`
	Fleet    fleetDoc        `json:"fleet"`
	// Bounds are the counts the group's fleet may be set to, as the policy
	// bounds its decision and the publisher the count it sets.
	Bounds      boundsDoc            `json:"bounds"`
	Failures    []model.QueueFailure `json:"failures"`
	LastAction  *model.Action        `json:"last_action"`
	ActionError string               `json:"action_error"`
	History     []readmodel.Point    `json:"history"`
	Changes     []readmodel.Change   `json:"changes"` // most recent last
	// FleetMinutes are the recent good minutes of the fleet's
	// measurement, oldest first (the chart of throughput against workers).
	FleetMinutes []readmodel.FleetMinute `json:"fleet_minutes"`
	// ForecastNote says what the forecast does for the fleet now (see
	// forecastNote); BacklogTrend which way the backlog is going (see
	// backlogTrend). Empty when there is nothing to say.
	ForecastNote string `json:"forecast_note"`
	// BurstNote says what the group's recent bursts were like and what
	// keeping capacity warm for them costs against relaunching it (see
	// burstNote); empty before a burst is known.
	BurstNote    string `json:"burst_note"`
	BacklogTrend string `json:"backlog_trend"`
	// Ages say how old the figures are when the document is made.
	Ages agesDoc `json:"ages"`
	// Switches are the operator switches holding the group and the switch
	// tags ignored, one sentence each.
	Switches []string `json:"switches"`
	// Lease is the group's lease (its owner among the checkers); absent
	// when this checker runs alone.
	Lease *model.LeaseStatus `json:"lease,omitempty"`
	// Cost is the fleet in dollars: now, over the last day, per million
	// messages served, and against the same rule without the forecast.
	Cost costDoc `json:"cost"`
	// SLO is the promise read as a service level objective: the share of
	// messages started within it, the error budget left and its burn;
	// null before the first cycle and while another checker holds the
	// group.
	SLO *sloDoc `json:"slo"`
}

// sloDoc is a group's promise as an SLO (docs/observability.md, "The
// promise as an SLO"): estimates, from the SQS counts, of the messages
// started within the promise and after it.
type sloDoc struct {
	// Objective is target.latency_quantile; WindowSeconds
	// target.slo_window, whose part this checker has seen the window's
	// figures cover.
	Objective     float64 `json:"objective"`
	WindowSeconds float64 `json:"window_seconds"`
	// ShareHour and ShareWindow are the shares of the messages started
	// within the promise over the last hour and the window; 1 when none
	// started.
	ShareHour   float64 `json:"share_hour"`
	ShareWindow float64 `json:"share_window"`
	// Kept is whether the last hour kept the objective.
	Kept bool `json:"kept"`
	// BudgetLeft is the share of the window's allowance of late messages
	// not yet spent: 1 untouched, 0 spent, below 0 overspent.
	BudgetLeft float64 `json:"budget_left"`
	// BurnRate is the last hour's late share over the allowance: 1 spends
	// the budget exactly over the window.
	BurnRate float64 `json:"burn_rate"`
	// Trust is how far the last hour's estimate can be relied on: good,
	// rough or none; Why says why it is not good ("" when it is).
	Trust string `json:"trust"`
	Why   string `json:"why"`
	// The messages started within and after the promise, estimated.
	WithinHour   float64 `json:"within_hour"`
	LateHour     float64 `json:"late_hour"`
	WithinWindow float64 `json:"within_window"`
	LateWindow   float64 `json:"late_window"`
}

func sloOf(s *slo.Status) *sloDoc {
	if s == nil {
		return nil
	}
	return &sloDoc{
		Objective: s.Objective, WindowSeconds: s.Window.Seconds(),
		ShareHour: s.HourShare, ShareWindow: s.Share, Kept: s.Kept(),
		BudgetLeft: s.BudgetLeft, BurnRate: s.BurnRate,
		Trust: s.Trust.String(), Why: s.Why,
		WithinHour: s.HourWithin, LateHour: s.HourLate, WithinWindow: s.Within, LateWindow: s.Late,
	}
}

// costDoc is the group's bill with its sentences for the status page,
// rounded to the cent there; the numbers are not rounded.
type costDoc struct {
	readmodel.Bill
	Summary         string `json:"summary"`
	ForecastSummary string `json:"forecast_summary"`
	// AWS is what the checker's own AWS calls for the group cost a month.
	AWS groupAWSCostDoc `json:"aws"`
}

func costOf(b readmodel.Bill) costDoc {
	d := costDoc{Bill: b}
	hours := spanText(b.BilledSeconds)
	if !b.Priced {
		d.Summary = fmt.Sprintf("no price set (fleet.worker_cost_per_hour): %s worker-hours over the last %s", formatNumber(b.WorkerHours), hours)
		return d
	}
	d.Summary = fmt.Sprintf("%s an hour now (%s × %s); %s over the last %s", capacity.FormatDollars(b.DollarsPerHour),
		workersWord(b.Workers), priceText(b.WorkerCostPerHour), capacity.FormatDollars(b.Dollars), hours)
	if b.PerMillionMessages != nil {
		d.Summary += fmt.Sprintf(", %s per million messages served", capacity.FormatDollars(*b.PerMillionMessages))
	}
	saving := "saved " + capacity.FormatDollars(b.ForecastSavingDollars)
	if b.ForecastSavingDollars < 0 {
		saving = "cost " + capacity.FormatDollars(-b.ForecastSavingDollars)
	}
	d.ForecastSummary = fmt.Sprintf("sized by the same rule without the forecast, the last %s would have cost %s, with it %s: the forecast %s",
		hours, capacity.FormatDollars(b.SizedWithoutForecastDollars), capacity.FormatDollars(b.SizedWithForecastDollars), saving)
	return d
}

// spanText is a billed span in words: "45 s", "10 min", "3 h 20 min".
func spanText(seconds float64) string {
	s := int(math.Round(seconds))
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		return fmt.Sprintf("%d min", s/60)
	case s%3600/60 == 0:
		return fmt.Sprintf("%d h", s/3600)
	}
	return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
}

// settingsDoc is policy.Settings with durations in seconds and percents as
// percent numbers.
type settingsDoc struct {
	Policy string `json:"policy"`
	Min    int    `json:"min"`
	Max    int    `json:"max"`
	Cap    int    `json:"cap"` // 0: none

	LatencySeconds float64 `json:"latency_seconds"` // 0: no promise
	// LatencyQuantile is the share of messages promised to start within
	// LatencySeconds (target.latency_quantile).
	LatencyQuantile  float64 `json:"latency_quantile"`
	DrainTimeSeconds float64 `json:"drain_time_seconds"`
	// Utilization is the busy ceiling set, or when UtilizationMeasured
	// (target.utilization unset) the bound of the measured one: the
	// decision's utilisation floor reason gives the ceiling measured.
	Utilization         float64 `json:"utilization"`
	UtilizationMeasured bool    `json:"utilization_measured"`

	ServiceTimeSeconds float64 `json:"service_time_seconds"`
	Concurrency        int     `json:"concurrency"`
	Throughput         float64 `json:"throughput"` // measured msg/s per worker; 0: from the service time
	// PerWorker is the throughput the policy sizes with: Throughput when
	// set, else Concurrency / ServiceTime; 0 when neither is known.
	PerWorker float64 `json:"per_worker"`

	BurstReservePercent    float64 `json:"burst_reserve_percent"`
	OverheadReservePercent float64 `json:"overhead_reserve_percent"`
	SafetyWorkers          int     `json:"safety_workers"`

	StartDelaySeconds           float64 `json:"start_delay_seconds"`
	ScaleInStabilizationSeconds float64 `json:"scale_in_stabilization_seconds"`
	Deadband                    float64 `json:"deadband"`
	MaxStepOut                  int     `json:"max_step_out"`
	StaleAfterSeconds           float64 `json:"stale_after_seconds"`
	ArrivalSmoothingSeconds     float64 `json:"arrival_smoothing_seconds"`
	// Forecast is what the forecast does: act (sizes the fleet), report
	// (computed and shown only) or off (also under backlog_per_worker).
	Forecast               string  `json:"forecast"`
	ForecastHistorySeconds float64 `json:"forecast_history_seconds"`
}

// queuesDoc says how many of the group's queues answered the last sample,
// and what sampling them costs.
type queuesDoc struct {
	Configured int        `json:"configured"`
	Answered   int        `json:"answered"`
	SampledAt  *time.Time `json:"sampled_at"` // null before the first sample
	// Asked is the queues asked in the last interval; the others were idle
	// and their last counts (zero) stand.
	Asked              int     `json:"asked"`
	RequestsPerMinute  float64 `json:"requests_per_minute"`
	MonthlyCostDollars float64 `json:"monthly_cost_dollars"`
	// The CloudWatch metrics read for the group each minute (the oldest
	// age, sent and deleted counts, which measuring the fleet needs) and
	// their monthly price; 0 when it reads none.
	CloudWatchMetricsPerMinute   float64 `json:"cloudwatch_metrics_per_minute"`
	CloudWatchMonthlyCostDollars float64 `json:"cloudwatch_monthly_cost_dollars"`
	// Notice says why sampling did not fit its deadline; "" when it did.
	Notice string `json:"notice"`
}

func queuesOf(s model.GroupSample) queuesDoc {
	return queuesDoc{
		Configured: s.Queues, Answered: s.Answered, SampledAt: timePtr(s.At),
		Asked: s.Polling.Asked, RequestsPerMinute: s.Polling.RequestsPerMinute,
		MonthlyCostDollars: s.Polling.MonthlyCost, Notice: strings.Join(s.Polling.Notices, "; "),
		CloudWatchMetricsPerMinute:   s.Polling.CloudWatchMetricsPerMinute,
		CloudWatchMonthlyCostDollars: s.Polling.CloudWatchMonthlyCost,
	}
}

// fleetDoc is the worker fleet as read back from Auto Scaling or ECS.
type fleetDoc struct {
	Kind         string      `json:"kind"` // "autoscaling", "ecs", "kubernetes", "fixed" or "" (no fleet to read)
	Name         string      `json:"name"`
	At           *time.Time  `json:"at"`
	Known        bool        `json:"known"`
	Error        string      `json:"error"`
	Desired      int         `json:"desired"`
	Min          int         `json:"min"`
	Max          int         `json:"max"`
	InService    int         `json:"in_service"`
	Pending      int         `json:"pending"`
	Draining     int         `json:"draining"`
	PendingSince []time.Time `json:"pending_since"`
}

// boundsDoc is model.Bounds: the group's min, max and cap on the fleet as
// read (model.Limits.For).
type boundsDoc struct {
	Lo int  `json:"lo"`
	Hi *int `json:"hi"` // null: no ceiling
	// HiBy and LoBy name the limits that set them ("max", "cap", "group's
	// max"; "min", "group's min"), "" when none does.
	HiBy string `json:"hi_by"`
	LoBy string `json:"lo_by"`
	// Crossed: a floor was above a ceiling, which wins; Refused: the
	// fleet's own minimum is above a ceiling, so no count can be set.
	Crossed bool `json:"crossed"`
	Refused bool `json:"refused"`
}

func boundsOf(s policy.Settings, f model.Fleet) boundsDoc {
	b := s.Limits().For(f)
	d := boundsDoc{Lo: b.Lo, HiBy: b.HiBy, LoBy: b.LoBy, Crossed: b.Crossed, Refused: b.Refused}
	if b.Hi < math.MaxInt {
		d.Hi = &b.Hi
	}
	return d
}

func settingsOf(s policy.Settings) settingsDoc {
	s = s.WithDefaults()
	d := settingsDoc{
		Policy: s.Policy, Min: s.Min, Max: s.Max, Cap: s.Cap,
		LatencySeconds:              s.Latency.Seconds(),
		LatencyQuantile:             s.LatencyQuantile,
		DrainTimeSeconds:            s.DrainTime.Seconds(),
		Utilization:                 s.Utilization,
		UtilizationMeasured:         s.MeasuredCeiling,
		ServiceTimeSeconds:          s.ServiceTime.Seconds(),
		Concurrency:                 s.Concurrency,
		Throughput:                  s.Throughput,
		BurstReservePercent:         s.BurstReserve,
		OverheadReservePercent:      s.OverheadReserve,
		SafetyWorkers:               s.SafetyWorkers,
		StartDelaySeconds:           s.StartDelay.Seconds(),
		ScaleInStabilizationSeconds: s.ScaleInStabilization.Seconds(),
		Deadband:                    s.Deadband,
		MaxStepOut:                  s.MaxStepOut,
		StaleAfterSeconds:           s.StaleAfter.Seconds(),
		ArrivalSmoothingSeconds:     s.ArrivalSmoothing.Seconds(),
	}
	d.PerWorker = s.PerWorker()
	d.Forecast, d.ForecastHistorySeconds = forecastMode(s), s.Forecast.History.Seconds()
	return d
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func fleetOf(f model.Fleet) fleetDoc {
	d := fleetDoc{
		Kind: f.Kind, Name: f.Name, At: timePtr(f.At), Known: f.Known,
		Desired: f.Desired, Min: f.Min, Max: f.Max, InService: f.InService, Pending: f.Pending,
		Draining:     f.Draining,
		PendingSince: f.PendingSince,
	}
	if f.Err != nil {
		d.Error = f.Err.Error()
	}
	if d.PendingSince == nil {
		d.PendingSince = []time.Time{}
	}
	return d
}

// groupOf turns a controller view into its JSON document.
func groupOf(v readmodel.GroupView, now time.Time) groupDoc {
	g := groupDoc{
		Name:         v.Settings.Group,
		Settings:     settingsOf(v.Settings),
		Decision:     v.Decision,
		Queues:       queuesOf(v.Sample),
		Fleet:        fleetOf(v.Fleet),
		Bounds:       boundsOf(v.Settings, v.Fleet),
		Failures:     v.Sample.Failures,
		LastAction:   v.LastAction,
		ActionError:  v.ActionError,
		History:      v.History,
		Changes:      v.Changes,
		FleetMinutes: v.FleetMinutes,

		ForecastNote: forecastNoteAt(v.Settings, v.Decision, now),
		Ages:         agesOf(v.Decision, now),
		BurstNote:    burstNote(v.Decision),
		BacklogTrend: backlogTrend(v.Decision, v.History),
		Switches:     switchNotes(v.Decision, v.Settings.Limits().For(v.Fleet)),
		Lease:        v.Lease,
		Cost:         costOf(v.Bill),
		SLO:          sloOf(v.SLO),
	}
	g.Cost.AWS = groupAWSCostOf(v.AWSCost)
	// Lists are always arrays in the JSON, never null.
	if g.Failures == nil {
		g.Failures = []model.QueueFailure{}
	}
	if g.History == nil {
		g.History = []readmodel.Point{}
	}
	if g.Changes == nil {
		g.Changes = []readmodel.Change{}
	}
	if g.FleetMinutes == nil {
		g.FleetMinutes = []readmodel.FleetMinute{}
	}
	for i, c := range g.Changes {
		if c.Reasons == nil {
			g.Changes[i].Reasons = []string{}
		}
	}
	if g.Decision != nil && g.Decision.Reasons == nil {
		d := *g.Decision
		d.Reasons = []string{}
		g.Decision = &d
	}
	return g
}

// refreshInterval is the wall-clock time between refreshes of the page.
func (o Options) refreshInterval() time.Duration {
	if o.Refresh > 0 {
		return o.Refresh
	}
	return o.Interval
}

// refreshEvery is how often the status page refreshes: the cycle interval,
// within 1 to 10 seconds.
func refreshEvery(interval time.Duration) time.Duration {
	switch {
	case interval <= 0:
		return 5 * time.Second
	case interval < time.Second:
		return time.Second
	case interval > 10*time.Second:
		return 10 * time.Second
	}
	return interval
}

// groupsOf builds the document of every group from the controller's views.
func groupsOf(o Options) groupsDoc {
	views := o.views().Groups()
	doc := groupsDoc{
		Groups:         make([]groupDoc, 0, len(views)),
		GeneratedAt:    o.Now(),
		RefreshSeconds: refreshEvery(o.refreshInterval()).Seconds(),
		Coordination:   o.views().Coordination(),
		AWSCost:        awsCostOf(o.views().AWSCost()),
	}
	if h := o.Controller.Health(o.Now(), o.Started, model.StaleAfter(o.Interval)); h.State != controller.HealthOK {
		doc.Health = &healthDoc{State: h.State, Detail: h.Detail}
	}
	for _, v := range views {
		doc.Groups = append(doc.Groups, groupOf(v, doc.GeneratedAt))
	}
	return doc
}

// serveGroups is GET /api/v1/groups, or with ?group=NAME that group alone
// (404 when there is none).
func serveGroups(o Options) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if name, one := groupParam(r); one {
			doc, ok := oneGroupDoc(o, name)
			if !ok {
				writeJSON(w, http.StatusNotFound, map[string]string{"error": "no group named " + echoName(name)})
				return
			}
			writeJSON(w, http.StatusOK, doc)
			return
		}
		writeJSON(w, http.StatusOK, groupsOf(o))
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, "encode JSON: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
