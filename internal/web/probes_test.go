package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// /livez fails only when the loop stops (or a restart is asked for), never
// because AWS fails: an outage leaves it 200 while /readyz and /healthz say
// why the checker is not ready.
func TestProbes(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Second
	w := &world{backlog: 2000, step: 150, desired: 4}
	var down atomic.Bool
	obs := controllertest.NewObserver(func(ctx context.Context, now time.Time) ([]model.Observation, error) {
		if down.Load() {
			return nil, errors.New("sqs: dial tcp 127.0.0.1:1: connection refused")
		}
		return w.observe(ctx, now)
	})
	c, err := controller.New(controller.Options{Groups: testGroups(), Observer: obs, Actuator: worldActuator{w: w}})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		code int
		body string
	}
	check := func(step string, now time.Time, live, ready, health want) {
		t.Helper()
		h := newTestHandler(c, now)
		for _, p := range []struct {
			path string
			want want
		}{{"/livez", live}, {"/readyz", ready}, {"/healthz", health}} {
			rec := get(t, h, p.path)
			if rec.Code != p.want.code || !strings.Contains(rec.Body.String(), p.want.body) {
				t.Errorf("%s: %s = %d %q, want %d containing %q", step, p.path, rec.Code, strings.TrimSpace(rec.Body.String()), p.want.code, p.want.body)
			}
		}
	}
	now := testStart
	check("before the first cycle", now,
		want{503, "starting: the first cycle is still running"}, want{503, "not ready: starting"}, want{503, "starting"})

	for range 3 {
		_, _ = c.RunOnce(context.Background(), now)
		now = now.Add(interval)
	}
	now = now.Add(-interval)
	check("good cycles", now, want{200, "ok"}, want{200, "ready"}, want{200, "ok"})

	// Twenty intervals of an AWS outage: every cycle fails.
	down.Store(true)
	for range 20 {
		now = now.Add(interval)
		_, _ = c.RunOnce(context.Background(), now)
	}
	check("AWS down for 20 intervals", now, want{200, "ok"},
		want{503, "not ready: unhealthy: last good cycle 1m40s ago (limit 15s): "}, want{503, "unhealthy"})
	if rec := get(t, newTestHandler(c, now), "/readyz"); !strings.Contains(rec.Body.String(), "connection refused") {
		t.Errorf("/readyz during the outage = %q, want the error's text", rec.Body.String())
	}

	// AWS back: ready again.
	down.Store(false)
	now = now.Add(interval)
	_, _ = c.RunOnce(context.Background(), now)
	check("AWS back", now, want{200, "ok"}, want{200, "ready"}, want{200, "ok"})

	// The loop stops: three intervals are allowed, the fourth is wedged.
	check("3 intervals without a cycle", now.Add(3*interval), want{200, "ok"}, want{200, "ready"}, want{200, "ok"})
	check("3 intervals and 1s without a cycle", now.Add(3*interval+time.Second),
		want{503, "wedged: the last cycle to finish started 16s ago (limit 15s)"}, want{503, "unhealthy"}, want{503, "unhealthy"})

	c.SetRestartNeeded("the coordination block was added")
	check("restart needed", now, want{503, "unhealthy: restart needed"}, want{503, "restart needed"}, want{503, "restart needed"})
}

// /metrics answers OpenMetrics to a scraper that asks for it, and the
// Prometheus text format otherwise.
func TestMetricsNegotiatesOpenMetrics(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 1, 5*time.Second)
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "checker_test_gauge", Help: "A gauge."})
	reg.MustRegister(g)
	h := Handler(Options{Controller: c, Gatherer: reg, Interval: 5 * time.Second, Now: func() time.Time { return now }})
	for _, tt := range []struct {
		accept, contentType string
		eof                 bool
	}{
		{"application/openmetrics-text; version=1.0.0", "application/openmetrics-text", true},
		{"", "text/plain", false},
	} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		ct := rec.Header().Get("Content-Type")
		if !strings.HasPrefix(ct, tt.contentType) || strings.HasSuffix(strings.TrimSpace(rec.Body.String()), "# EOF") != tt.eof {
			t.Errorf("Accept %q: Content-Type %q, body ends %q; want %s", tt.accept, ct, rec.Body.String()[max(0, rec.Body.Len()-20):], tt.contentType)
		}
	}
}
