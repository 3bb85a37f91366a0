// Package renamed serves a renamed Prometheus series under its old name as
// well, for one release, so that queries, alerts and dashboards written
// against the old name keep working while they move to the new one
// (docs/observability.md lists the renames).
package renamed

import (
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Gauge is a collector of a GaugeVec's series under the vector's former
// name: the same labels, each value times a scale (1 for a new name alone,
// another for a change of unit). It reads the vector at every collection,
// so a series set or deleted under the new name is set or deleted under
// the old one too; nothing else writes to it.
type Gauge struct {
	vec    *prometheus.GaugeVec
	desc   *prometheus.Desc
	labels []string
	scale  float64
}

// NewGauge serves vec, whose series are named now and carry labels (in the
// order the vector declares them), under the name old as well: a series of
// old is vec's value times scale.
func NewGauge(vec *prometheus.GaugeVec, now string, labels []string, old string, scale float64) *Gauge {
	help := fmt.Sprintf("Deprecated: renamed %s; this name is removed in the next release.", now)
	if scale != 1 {
		help = fmt.Sprintf("Deprecated: renamed %s, in its unit (this is %g times it); this name is removed in the next release.", now, scale)
	}
	return &Gauge{
		vec:    vec,
		desc:   prometheus.NewDesc(old, help, labels, nil),
		labels: slices.Clone(labels),
		scale:  scale,
	}
}

// Describe sends the old name's description.
func (g *Gauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

// Collect sends each series of the vector under the old name.
func (g *Gauge) Collect(ch chan<- prometheus.Metric) {
	series := make(chan prometheus.Metric)
	go func() {
		g.vec.Collect(series)
		close(series)
	}()
	for m := range series { // drained to the end: the goroutine above returns
		ch <- g.alias(m)
	}
}

// alias is one series of the vector under the old name.
func (g *Gauge) alias(m prometheus.Metric) prometheus.Metric {
	var d dto.Metric
	if err := m.Write(&d); err != nil {
		return prometheus.NewInvalidMetric(g.desc, err)
	}
	values := make([]string, len(g.labels))
	for _, lp := range d.GetLabel() {
		if i := slices.Index(g.labels, lp.GetName()); i >= 0 {
			values[i] = lp.GetValue()
		}
	}
	alias, err := prometheus.NewConstMetric(g.desc, prometheus.GaugeValue, d.GetGauge().GetValue()*g.scale, values...)
	if err != nil {
		return prometheus.NewInvalidMetric(g.desc, err)
	}
	return alias
}
