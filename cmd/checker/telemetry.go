package main

import (
	"fmt"
	"io"
	"runtime"
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
	base *prometheus.Registry
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

// newBaseRegistry holds the process, Go runtime and build-info series.
func newBaseRegistry() (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	info := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "checker_build_info", Help: "Build of the running checker; always 1.",
	}, []string{"version", "commit", "goversion"})
	info.WithLabelValues(version, commit, runtime.Version()).Set(1)
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		info,
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register process metrics: %w", err)
		}
	}
	return reg, nil
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
