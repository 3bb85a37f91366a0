package lease

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons of checker_lease_changes_total.
const (
	ReasonAcquired = "acquired" // a free or expired lease taken
	ReasonStolen   = "stolen"   // a lease taken from a checker above its share
	ReasonLost     = "lost"     // a lease another checker took, or that expired unrenewed
	ReasonReleased = "released" // a lease given up on shutdown
)

// metrics are the manager's series.
type metrics struct {
	held    prometheus.Gauge
	changes *prometheus.CounterVec
	bad     prometheus.Gauge
	unowned prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "checker_leases_held", Help: "Group leases this checker holds in the coordination table.",
		}),
		changes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_lease_changes_total",
			Help: "Changes of this checker's leases, by reason: acquired (free or expired), stolen (from a checker above its share), lost, released.",
		}, []string{"reason"}),
		bad: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "checker_lease_bad_items",
			Help: "Items of the lease table, at the last scan, that no checker writes so: a counter that is not a whole number >= 0 (taken over on its stored value), an expiry beyond the lease and five minutes of clock skew, or a lease of an owner with no heartbeat beyond the lease and an interval (both taken over as free).",
		}),
		unowned: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "checker_groups_unowned",
			Help: "Groups this checker serves that no live checker has held for more than a lease duration, at the last scan of the lease table: nobody acts on them. Every checker serving them reports them.",
		}),
	}
	for _, r := range []string{ReasonAcquired, ReasonStolen, ReasonLost, ReasonReleased} {
		m.changes.WithLabelValues(r)
	}
	for _, c := range []prometheus.Collector{m.held, m.changes, m.bad, m.unowned} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register lease metrics: %w", err)
		}
	}
	return m, nil
}

// reportBad sets the count of bad items the last scan found.
func (m *Manager) reportBad() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.metrics != nil {
		m.metrics.bad.Set(float64(len(m.bad)))
	}
}
