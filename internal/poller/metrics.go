package poller

import (
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/renamed"
)

var inf = math.Inf(1)

// Which per-queue series are kept (metrics.per_queue).
const (
	perQueueAll = iota
	perQueueOff
	perQueueFailedOnly
)

// metrics are the poller's series: per queue (as metrics.per_queue says),
// per region and per group.
type metrics struct {
	perQueue int

	messages  *prometheus.GaugeVec
	oldest    *prometheus.GaugeVec
	sampleAge *prometheus.GaugeVec

	concurrency *prometheus.GaugeVec
	latency     *prometheus.GaugeVec
	fits        *prometheus.GaugeVec
	unanswered  *prometheus.CounterVec

	requests      *prometheus.CounterVec
	requestRate   *prometheus.GaugeVec
	monthlyCost   *prometheus.GaugeVec
	queuesSkipped *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer, perQueue config.PerQueue) (*metrics, error) {
	queueLabels := []string{"group", "queue", "region"}
	m := &metrics{
		messages: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_queue_messages",
			Help: "Messages in a queue at its last good sample, by state (visible, in_flight, delayed). " +
				"checker_queue_sample_age_seconds says how old that sample is.",
		}, append(queueLabels, "state")),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_queue_oldest_message_age_seconds",
			Help: "ApproximateAgeOfOldestMessage of a queue from CloudWatch (1-minute Maximum, newest datapoint).",
		}, queueLabels),
		sampleAge: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_queue_sample_age_seconds",
			Help: "Time since the queue last answered with good counts; 0 when the last poll succeeded, " +
				"up to idle_sample_interval for an idle queue asked less often, +Inf until the first success.",
		}, queueLabels),
		concurrency: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_region_concurrency",
			Help: "SQS calls in flight at once in the region's last round, sized from the measured latency " +
				"within aws.concurrency_per_region.",
		}, []string{"region"}),
		latency: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_region_call_latency_seconds",
			Help: "Estimated latency of one GetQueueAttributes call in the region (0 until measured).",
		}, []string{"region"}),
		fits: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_region_cycle_fits",
			Help: "1 when the region's last round of calls fit its deadline at the allowed concurrency, " +
				"0 when it did not or would not (the status page says why).",
		}, []string{"region"}),
		unanswered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_region_unanswered_queues_total",
			Help: "Queues of the region due in a round that got no answer before the deadline (not asked in time, or timed out).",
		}, []string{"region"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_group_sqs_requests_total",
			Help: "GetQueueAttributes calls made for the group's queues.",
		}, []string{"group"}),
		requestRate: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_group_sqs_requests_per_second",
			Help: "GetQueueAttributes calls per second for the group's queues, over the last minute.",
		}, []string{"group"}),
		monthlyCost: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_group_sqs_cost_dollars_per_month",
			Help: "Estimated cost of a 730-hour month of the group's SQS requests at the last minute's rate " +
				"and aws.sqs_price_per_million_requests.",
		}, []string{"group"}),
		queuesSkipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "checker_group_idle_queues_skipped",
			Help: "Queues of the group not asked in the last interval because they are idle; their last counts (zero) stand.",
		}, []string{"group"}),
	}
	switch perQueue {
	case config.PerQueueOff:
		m.perQueue = perQueueOff
	case config.PerQueueFailedOnly:
		m.perQueue = perQueueFailedOnly
	default:
		m.perQueue = perQueueAll
	}
	for _, c := range []prometheus.Collector{m.messages, m.oldest, m.sampleAge, m.concurrency, m.latency, m.fits,
		m.unanswered, m.requests, m.requestRate, m.monthlyCost, m.queuesSkipped,
		// The former names, for one release (docs/observability.md).
		renamed.NewGauge(m.requestRate, "checker_group_sqs_requests_per_second", []string{"group"}, "checker_group_sqs_requests_per_minute", 60),
		renamed.NewGauge(m.monthlyCost, "checker_group_sqs_cost_dollars_per_month", []string{"group"}, "checker_group_sqs_monthly_cost_dollars", 1),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register poller metrics: %w", err)
		}
	}
	return m, nil
}

// regionGauges are one region's series.
type regionGauges struct {
	concurrency, latency, fits prometheus.Gauge
	unanswered                 prometheus.Counter
}

func (g *regionGauges) init(m *metrics, region string) {
	g.concurrency = m.concurrency.WithLabelValues(region)
	g.latency = m.latency.WithLabelValues(region)
	g.fits = m.fits.WithLabelValues(region)
	g.unanswered = m.unanswered.WithLabelValues(region)
}

func (g *regionGauges) set(r *region, unanswered int) {
	g.concurrency.Set(float64(r.pace.limit))
	g.latency.Set(r.pace.latency.Seconds())
	if r.notice == "" {
		g.fits.Set(1)
	} else {
		g.fits.Set(0)
	}
	g.unanswered.Add(float64(unanswered))
}

// groupGauges are one group's polling series.
type groupGauges struct {
	requests         prometheus.Counter
	rate, cost, idle prometheus.Gauge
}

func (g *groupGauges) init(m *metrics, group string) {
	g.requests = m.requests.WithLabelValues(group)
	g.rate = m.requestRate.WithLabelValues(group)
	g.cost = m.monthlyCost.WithLabelValues(group)
	g.idle = m.queuesSkipped.WithLabelValues(group)
}

func (g *groupGauges) set(asked, skipped int, perMinute, monthlyCost float64) {
	g.requests.Add(float64(asked))
	g.rate.Set(perMinute / 60)
	g.cost.Set(monthlyCost)
	g.idle.Set(float64(skipped))
}
