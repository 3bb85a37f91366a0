package controller

import (
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/renamed"
	"github.com/queuechecker/queue-checker/internal/slo"
)

// Worker kinds of checker_group_workers.
var workerKinds = []string{"current", "in_service", "pending", "recommended", "desired", "draining"}

// metrics are the per-group and per-cycle series of the controller.
type metrics struct {
	backlog          *prometheus.GaugeVec
	backlogPerWorker *prometheus.GaugeVec
	target           *prometheus.GaugeVec
	ratio            *prometheus.GaugeVec
	workers          *prometheus.GaugeVec
	bounds           *prometheus.GaugeVec
	arrival          *prometheus.GaugeVec
	forecast         *prometheus.GaugeVec
	utilization      *prometheus.GaugeVec
	drain            *prometheus.GaugeVec
	oldestAge        *prometheus.GaugeVec
	latency          *prometheus.GaugeVec
	capped           *prometheus.GaugeVec
	held             *prometheus.GaugeVec
	switchProblems   *prometheus.GaugeVec
	partial          *prometheus.GaugeVec
	diagnosis        *prometheus.GaugeVec
	measuredService  *prometheus.GaugeVec
	measuredWorker   *prometheus.GaugeVec
	measuredConf     *prometheus.GaugeVec
	ceiling          *prometheus.GaugeVec
	cost             *prometheus.GaugeVec
	groupAWSCost     *prometheus.GaugeVec
	awsCost          *prometheus.GaugeVec
	actions          *prometheus.CounterVec
	actionErrors     *prometheus.CounterVec
	sloWithin        *prometheus.CounterVec
	sloLate          *prometheus.CounterVec
	sloObjective     *prometheus.GaugeVec
	sloWindow        *prometheus.GaugeVec
	sloBudget        *prometheus.GaugeVec
	sloTrusted       *prometheus.GaugeVec
	cycleDuration    prometheus.Histogram
	cycleFailures    prometheus.Counter
	lastSuccess      prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	m := &metrics{
		backlog:          g("checker_group_backlog_messages", "Messages the group sizes against: visible, plus in-flight and delayed as configured.", "group"),
		backlogPerWorker: g("checker_group_backlog_messages_per_worker", "Backlog divided by the current workers.", "group"),
		target:           g("checker_group_target_backlog_messages_per_worker", "Acceptable backlog per worker: latency / service time x concurrency.", "group"),
		ratio:            g("checker_group_backlog_per_worker_ratio", "Backlog per worker divided by its target; 1 is on target.", "group"),
		workers:          g("checker_group_workers", "Workers of the group by kind: current, in_service, pending, recommended (before guards), desired (to be set), draining (on their way out, not capacity).", "group", "kind"),
		bounds:           g("checker_group_worker_bounds", "Configured bounds on the group's workers: min, max, cap (0 = no cap).", "group", "bound"),
		arrival:          g("checker_group_arrival_messages_per_second", "Smoothed arrival rate estimate; absent while unknown.", "group"),
		forecast:         g("checker_group_forecast_arrival_messages_per_second", "Arrival rate the forecast expects within the next start delay (plus an interval), when above the smoothed estimate; absent while there is no such forecast.", "group"),
		utilization:      g("checker_group_utilization_ratio", "Arrivals over the capacity of the current workers; absent while unknown.", "group"),
		drain:            g("checker_group_drain_seconds", "Time to clear the backlog with the current workers; +Inf when it never drains.", "group"),
		oldestAge:        g("checker_group_oldest_message_age_seconds", "Age of the oldest message (CloudWatch ApproximateAgeOfOldestMessage); absent while unknown.", "group"),
		latency:          g("checker_group_latency_target_seconds", "The latency promise: how long a message may wait.", "group"),
		capped:           g("checker_group_capped", "1 when the cap or max keeps the group below its target.", "group"),
		held:             g("checker_group_held", "1 when the decision is held on missing, partial or stale data.", "group"),
		switchProblems:   g("checker_group_switch_problems", "Operator switches on the group's fleet (tags, annotations) not understood: keys in the checker's namespace that name no switch exactly, values not understood, a pin outside min and max. Above 0 the group is held, neither scaled in nor out.", "group"),
		partial:          g("checker_group_partial", "1 when only some of the group's queues answered.", "group"),
		diagnosis:        g("checker_group_diagnosis", "1 for the group's current diagnosis state, 0 for the others.", "group", "state"),
		measuredService:  g("checker_group_measured_service_time_seconds", "Time a message holds a worker's slot, measured by Little's law over the in-flight messages and CloudWatch's deleted count; absent while unknown.", "group"),
		measuredWorker:   g("checker_group_measured_worker_throughput_messages_per_second", "Completed messages per second one worker sustains, as measured (saturated minutes, else from the measured service time); absent while unknown.", "group"),
		measuredConf:     g("checker_group_measurement_confidence_ratio", "Confidence in the measured fleet, 0..1; the sizing uses the measurement from 0.5 on (workers.learn: act).", "group"),
		ceiling:          g("checker_group_ceiling_workers", "Learned downstream ceiling: the workers past which more workers added no throughput; absent while none is found.", "group"),
		cost:             g("checker_group_cost_dollars_per_hour", "What the group's current workers cost an hour at fleet.worker_cost_per_hour; absent while no price is set.", "group"),
		groupAWSCost: g("checker_group_aws_cost_dollars_per_month", "What the checker's own AWS calls for the group (SQS GetQueueAttributes, "+
			"CloudWatch GetMetricData and PutMetricData) cost over a 730-hour month at the last minute's rate and the aws.*_price_* keys.", "group"),
		awsCost: g("checker_aws_cost_dollars_per_month", "What the checker's own AWS calls cost over a 730-hour month at the last minute's rate and "+
			"the aws.*_price_* keys, by service (sqs, cloudwatch, dynamodb): the groups it acts on and its lease table.", "service"),
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_scaling_actions_total", Help: "Desired-count changes made, by direction (up, down).",
		}, []string{"group", "direction"}),
		actionErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_action_errors_total", Help: "Decisions whose actions (metrics or scaling) failed.",
		}, []string{"group"}),
		sloWithin: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_slo_messages_within_promise_total",
			Help: "Messages started within the latency promise, as estimated from the SQS counts and the arrival rate (not counted one by one).",
		}, []string{"group"}),
		sloLate: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_slo_messages_late_total",
			Help: "Messages started after waiting longer than the latency promise, as estimated from the SQS counts and the arrival rate.",
		}, []string{"group"}),
		sloObjective: g("checker_slo_objective_ratio", "The share of messages promised to start within the latency (target.latency_quantile): the SLO's objective.", "group"),
		sloWindow:    g("checker_slo_window_seconds", "The window of the promise's error budget (target.slo_window).", "group"),
		sloBudget: g("checker_slo_error_budget_remaining_ratio", "Share of the window's allowance of late messages ((1 - objective) x messages started) "+
			"not yet spent, over the part of the window this checker has seen: 1 untouched, 0 spent, below 0 overspent.", "group"),
		sloTrusted: g("checker_slo_estimate_trusted", "1 when every estimate of the last hour was trusted; 0 when one was rough or missing "+
			"(a standard queue, delayed or held messages, missing samples, the first promise-length after start).", "group"),
		cycleDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "checker_cycle_duration_seconds", Help: "Time one cycle took: observe, decide, act.",
			Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
		}),
		cycleFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "checker_cycle_failures_total", Help: "Cycles that learned nothing (every group's data missing, or the observer failed).",
		}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "checker_last_success_timestamp_seconds", Help: "Unix time of the last good cycle.",
		}),
	}
	for _, c := range []prometheus.Collector{m.backlog, m.backlogPerWorker, m.target, m.ratio, m.workers,
		m.bounds, m.arrival, m.forecast, m.utilization, m.drain, m.oldestAge, m.latency, m.capped, m.held, m.switchProblems, m.partial,
		m.diagnosis, m.measuredService, m.measuredWorker, m.measuredConf, m.ceiling, m.cost, m.groupAWSCost, m.awsCost, m.actions, m.actionErrors,
		m.sloWithin, m.sloLate, m.sloObjective, m.sloWindow, m.sloBudget, m.sloTrusted, m.cycleDuration, m.cycleFailures, m.lastSuccess,
		// The former names, for one release (docs/observability.md).
		renamed.NewGauge(m.backlogPerWorker, "checker_group_backlog_messages_per_worker", []string{"group"}, "checker_group_backlog_per_worker", 1),
		renamed.NewGauge(m.target, "checker_group_target_backlog_messages_per_worker", []string{"group"}, "checker_group_target_backlog_per_worker", 1),
		renamed.NewGauge(m.measuredWorker, "checker_group_measured_worker_throughput_messages_per_second", []string{"group"}, "checker_group_measured_per_worker_throughput", 1),
		renamed.NewGauge(m.measuredConf, "checker_group_measurement_confidence_ratio", []string{"group"}, "checker_group_measurement_confidence", 1),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register controller metrics: %w", err)
		}
	}
	return m, nil
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// setOrDelete sets a group's gauge to *v, or removes the series while v is unknown.
func setOrDelete(g *prometheus.GaugeVec, group string, v *float64) {
	if v == nil || math.IsNaN(*v) {
		g.DeleteLabelValues(group)
		return
	}
	g.WithLabelValues(group).Set(*v)
}

func (m *metrics) observe(s policy.Settings, d model.Decision, a *model.Action) {
	grp := s.Group
	m.backlog.WithLabelValues(grp).Set(float64(d.Backlog))
	m.backlogPerWorker.WithLabelValues(grp).Set(d.BacklogPerWorker)
	m.target.WithLabelValues(grp).Set(d.TargetBacklogPerWorker)
	if d.TargetBacklogPerWorker > 0 {
		m.ratio.WithLabelValues(grp).Set(d.BacklogPerWorker / d.TargetBacklogPerWorker)
	} else {
		m.ratio.DeleteLabelValues(grp)
	}
	counts := []int{d.CurrentWorkers, d.InServiceWorkers, d.PendingWorkers, d.RecommendedWorkers, d.DesiredWorkers, d.DrainingWorkers}
	for i, kind := range workerKinds {
		m.workers.WithLabelValues(grp, kind).Set(float64(counts[i]))
	}
	m.bounds.WithLabelValues(grp, "min").Set(float64(s.Min))
	m.bounds.WithLabelValues(grp, "max").Set(float64(s.Max))
	m.bounds.WithLabelValues(grp, "cap").Set(float64(s.Cap))
	setOrDelete(m.arrival, grp, d.ArrivalRate)
	if d.Forecast != nil {
		setOrDelete(m.forecast, grp, &d.Forecast.Rate)
	} else {
		m.forecast.DeleteLabelValues(grp)
	}
	setOrDelete(m.utilization, grp, d.Utilization)
	switch {
	case d.DrainSeconds != nil:
		m.drain.WithLabelValues(grp).Set(*d.DrainSeconds)
	case d.ArrivalRate != nil && d.Backlog > 0:
		m.drain.WithLabelValues(grp).Set(math.Inf(1)) // known rates, and it never drains
	default:
		m.drain.DeleteLabelValues(grp)
	}
	setOrDelete(m.oldestAge, grp, d.OldestAgeSeconds)
	m.latency.WithLabelValues(grp).Set(s.Latency.Seconds())
	m.capped.WithLabelValues(grp).Set(boolGauge(d.Capped))
	m.held.WithLabelValues(grp).Set(boolGauge(d.Held))
	m.switchProblems.WithLabelValues(grp).Set(float64(len(d.SwitchProblems)))
	m.partial.WithLabelValues(grp).Set(boolGauge(d.Partial))
	for _, state := range model.Diagnoses {
		m.diagnosis.WithLabelValues(grp, state).Set(boolGauge(d.Diagnosis == state))
	}
	setOrDelete(m.measuredService, grp, d.Measured.ServiceTimeSeconds)
	setOrDelete(m.measuredWorker, grp, d.Measured.PerWorkerThroughput)
	setOrDelete(m.measuredConf, grp, d.Measured.Confidence)
	if c := d.Measured.CeilingWorkers; c != nil {
		m.ceiling.WithLabelValues(grp).Set(float64(*c))
	} else {
		m.ceiling.DeleteLabelValues(grp)
	}
	if s.WorkerCostPerHour > 0 {
		m.cost.WithLabelValues(grp).Set(float64(max(d.CurrentWorkers, 0)) * s.WorkerCostPerHour)
	} else {
		m.cost.DeleteLabelValues(grp)
	}
	if a != nil && a.Scaled && !a.DryRun {
		dir := "up"
		if a.To < a.From {
			dir = "down"
		}
		m.actions.WithLabelValues(grp, dir).Inc()
	}
}

// forget removes every series of a group that is no longer configured.
func (m *metrics) forget(group string) {
	for _, v := range []*prometheus.GaugeVec{m.backlog, m.backlogPerWorker, m.target, m.ratio, m.workers,
		m.bounds, m.arrival, m.forecast, m.utilization, m.drain, m.oldestAge, m.latency, m.capped, m.held, m.switchProblems, m.partial, m.diagnosis,
		m.measuredService, m.measuredWorker, m.measuredConf, m.ceiling, m.cost, m.groupAWSCost,
		m.sloObjective, m.sloWindow, m.sloBudget, m.sloTrusted} {
		v.DeletePartialMatch(prometheus.Labels{"group": group})
	}
	m.actions.DeletePartialMatch(prometheus.Labels{"group": group})
	m.actionErrors.DeletePartialMatch(prometheus.Labels{"group": group})
	m.sloWithin.DeletePartialMatch(prometheus.Labels{"group": group})
	m.sloLate.DeletePartialMatch(prometheus.Labels{"group": group})
}

// observeSLO exports a cycle's estimate of the promise: the step's
// messages added to the counters (whose series exist from the first
// cycle, at 0), and the budget's status.
func (m *metrics) observeSLO(group string, step slo.Step, s slo.Status) {
	m.sloWithin.WithLabelValues(group).Add(nonNegative(step.Within))
	m.sloLate.WithLabelValues(group).Add(nonNegative(step.Late))
	m.sloObjective.WithLabelValues(group).Set(s.Objective)
	m.sloWindow.WithLabelValues(group).Set(s.Window.Seconds())
	m.sloBudget.WithLabelValues(group).Set(s.BudgetLeft)
	m.sloTrusted.WithLabelValues(group).Set(boolGauge(s.Trust == slo.TrustGood))
}

// nonNegative is x, or 0 when x is negative or not a number: a counter
// only goes up.
func nonNegative(x float64) float64 {
	if x > 0 && !math.IsInf(x, 1) {
		return x
	}
	return 0
}

// exportAWSCost sets checker_aws_cost_dollars_per_month by service.
func (c *Controller) exportAWSCost() {
	if c.metrics == nil {
		return
	}
	b := c.views.AWSCost().Bill
	for _, s := range awscost.Services {
		c.metrics.awsCost.WithLabelValues(s).Set(b.ByService(s))
	}
}
