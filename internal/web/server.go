// Package web serves the checker over HTTP: Prometheus metrics, health and
// readiness probes, and the pages on-call engineers read.
package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// Options configure the handler.
type Options struct {
	// Controller answers the probes: /healthz, /livez and /readyz.
	Controller *controller.Controller
	// Views is what the pages and /api show of the groups; nil means the
	// read model the Controller feeds.
	Views    *readmodel.Model
	Gatherer prometheus.Gatherer
	// Interval is the cycle interval; /healthz fails when the last good cycle
	// is older than three of them.
	Interval time.Duration
	// Refresh is how often the status page reloads its numbers, in wall-clock
	// time; 0 means Interval. The demo, whose cycles run faster than its
	// simulated interval, sets it.
	Refresh time.Duration
	// Now is the clock of the cycles (the demo runs a faster one); nil means time.Now.
	Now func() time.Time
	// Started is when the loop started, on the clock of Now; /healthz says
	// "starting" until a good cycle or three intervals from it. Zero means
	// the time of the first cycle.
	Started time.Time
	// Pprof serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/; off unless the configuration's debug.pprof is true.
	Pprof bool
}

// views is the read model the pages show.
func (o Options) views() *readmodel.Model {
	if o.Views != nil {
		return o.Views
	}
	return o.Controller.Views()
}

// Handler returns the checker's HTTP routes.
func Handler(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	mux := http.NewServeMux()
	// OpenMetrics for a scraper that asks for it (Accept:
	// application/openmetrics-text), the text format otherwise.
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		// ok is 200; starting and unhealthy are 503, told apart by the first
		// word; degraded is alive, 200, and not ready.
		h := o.Controller.Health(o.Now(), o.Started, model.StaleAfter(o.Interval))
		if h.State == controller.HealthDegraded {
			fmt.Fprintln(w, h.State+": "+h.Detail)
			return
		}
		if h.State != controller.HealthOK {
			http.Error(w, h.State+": "+h.Detail, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	// /livez is the liveness probe: 503 only while the first cycle runs
	// (a startup probe covers it), when the loop has stopped (wedged) or a
	// restart is needed; never for AWS errors, held groups or leases.
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		h := o.Controller.Live(o.Now(), model.StaleAfter(o.Interval))
		if h.State != controller.HealthOK {
			http.Error(w, h.State+": "+h.Detail, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	// /readyz is the readiness probe: what /healthz says, with the reason
	// in the body of a 503; degraded is not ready.
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		h := o.Controller.Health(o.Now(), o.Started, model.StaleAfter(o.Interval))
		if h.State != controller.HealthOK {
			http.Error(w, "not ready: "+h.State+": "+h.Detail, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	if o.Pprof {
		registerPprof(mux)
	}
	registerPages(mux, o)
	return mux
}

// registerPprof serves net/http/pprof's handlers on mux, not on
// http.DefaultServeMux, which the checker never serves.
func registerPprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

// Serve listens on addr and serves h until ctx is done, then shuts down
// gracefully within a few seconds. ready, when not nil, receives the bound
// address once listening (useful with port 0).
func Serve(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve HTTP: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down HTTP server: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve HTTP: %w", err)
	}
	return nil
}
