package poller

import (
	"fmt"
	"math"

	"github.com/prometheus/client_golang/prometheus"
)

var inf = math.Inf(1)

// metrics are the poller's per-queue series.
type metrics struct {
	messages  *prometheus.GaugeVec
	oldest    *prometheus.GaugeVec
	sampleAge *prometheus.GaugeVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
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
				"+Inf until the first success.",
		}, queueLabels),
	}
	for _, c := range []prometheus.Collector{m.messages, m.oldest, m.sampleAge} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register poller metrics: %w", err)
		}
	}
	return m, nil
}
