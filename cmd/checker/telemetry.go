package main

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/queuechecker/queue-checker/internal/config"
)

// metricsGatherer serves the process-wide registry together with the
// current assembly's, which a reload swaps.
type metricsGatherer struct {
	base prometheus.Gatherer
	mu   sync.RWMutex
	gen  prometheus.Gatherer
}

func (m *metricsGatherer) Gather() ([]*dto.MetricFamily, error) {
	m.mu.RLock()
	gen := m.gen
	m.mu.RUnlock()
	if gen == nil {
		return m.base.Gather()
	}
	return prometheus.Gatherers{m.base, gen}.Gather()
}

func (m *metricsGatherer) swap(gen prometheus.Gatherer) {
	m.mu.Lock()
	m.gen = gen
	m.mu.Unlock()
}

// baseRegistry is the process-wide registry: the process, Go runtime and
// build-info series, and what the controller, the leases and the scaler
// register. Its Gather leaves out the one Go runtime series that breaks
// OpenMetrics (see openMetricsClash).
type baseRegistry struct {
	*prometheus.Registry
}

// openMetricsClash is the Go collector's counter of bytes allocated. In
// OpenMetrics a counter's family is its name without _total, so it and
// the gauge go_memstats_alloc_bytes (the bytes in use) are two families
// of one name, which strict parsers (Python's prometheus_client) refuse
// outright. The gauge stays, being the one dashboards read; the counter's
// value is served as go_gc_heap_allocs_bytes_total, its name in Go's
// runtime/metrics (/gc/heap/allocs:bytes), which clashes with nothing.
const openMetricsClash = "go_memstats_alloc_bytes_total"

// Gather is the registry's, without openMetricsClash.
func (r *baseRegistry) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := r.Registry.Gather()
	return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == openMetricsClash }), err
}

// newBaseRegistry holds the process, Go runtime and build-info series.
func newBaseRegistry() (*baseRegistry, error) {
	reg := prometheus.NewRegistry()
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "checker_build_info", Help: "Build of the running checker; always 1.",
	}, []string{"version", "commit", "goversion"})
	info.WithLabelValues(version, commit, runtime.Version()).Set(1)
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(
			collectors.GoRuntimeMetricsRule{Matcher: regexp.MustCompile(`^/gc/heap/allocs:bytes$`)})),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		info,
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register process metrics: %w", err)
		}
	}
	return &baseRegistry{reg}, nil
}

// newLogger writes structured logs to w at the configured level and format.
func newLogger(c config.Log, w io.Writer) (*zap.Logger, error) {
	level, err := zapcore.ParseLevel(c.Level)
	if err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.TimeKey = "ts"
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	var encoder zapcore.Encoder
	switch c.Format {
	case "console":
		encoder = zapcore.NewConsoleEncoder(enc)
	default:
		encoder = zapcore.NewJSONEncoder(enc)
	}
	return zap.New(zapcore.NewCore(encoder, zapcore.Lock(zapcore.AddSync(w)), level)), nil
}
