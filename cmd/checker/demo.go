package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim"
	"github.com/queuechecker/queue-checker/internal/web"
)

// demoGroup is one simulated worker group of the demo.
type demoGroup struct {
	name        string
	scenario    string
	period      time.Duration // the scenario repeats with this period
	rate        float64       // base arrivals, msg/s
	service     sim.Service
	concurrency int
	startDelay  time.Duration
	latency     time.Duration
	min, max    int
	cap         int
	workers     int
}

// demoGroups are chosen to show the checker at work within minutes: a daily
// curve compressed into 30 minutes, and short bursts against a downstream
// cap that the target sometimes exceeds.
var demoGroups = []demoGroup{
	{name: "thumbnails", scenario: sim.ScenarioDiurnal, period: 30 * time.Minute, rate: 40,
		service:     sim.Service{Dist: sim.DistLognormal, Mean: 200 * time.Millisecond, CV: 1.5},
		concurrency: 1, startDelay: 45 * time.Second, latency: 10 * time.Second, min: 2, max: 60, workers: 4},
	{name: "emails", scenario: sim.ScenarioBursty, rate: 12,
		service:     sim.Service{Dist: sim.DistExponential, Mean: 800 * time.Millisecond},
		concurrency: 4, startDelay: 30 * time.Second, latency: 20 * time.Second, min: 1, max: 30, cap: 6, workers: 2},
}

func cmdDemo(ctx context.Context, args []string, _, stderr io.Writer) error {
	o, err := parseDemoFlags(newFlags("demo", stderr), args)
	if err != nil {
		return err
	}
	log, err := newLogger(config.Log{Level: "info", Format: o.logFormat}, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if o.forDur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.forDur)
		defer cancel()
	}

	start := time.Now()
	clock := func() time.Time {
		return start.Add(time.Duration(float64(time.Since(start)) * o.speed))
	}
	worlds, settings, err := newDemoWorlds(start, o.interval, o.seed)
	if err != nil {
		return err
	}
	base, err := newBaseRegistry()
	if err != nil {
		return err
	}
	ctrl, err := controller.New(controller.Options{
		Groups: settings, Observer: worlds, Actuator: worlds, Logger: log.Named("controller"), Registerer: base,
		// The liveness series on the wall clock, as Prometheus's time():
		// the alerts on them work against the demo as against a daemon.
		Wall: time.Now,
	})
	if err != nil {
		return err
	}
	wallInterval := time.Duration(float64(o.interval) / o.speed)
	handler := web.Handler(web.Options{Controller: ctrl, Gatherer: base, Interval: o.interval,
		Refresh: wallInterval, Now: clock})
	log.Info("demo starting: simulated queues and fleets, no AWS", zap.Float64("speed", o.speed),
		zap.Duration("interval", o.interval), zap.Int("groups", len(settings)))

	scaler, err := kedaServer(config.KEDA{Listen: o.kedaListen}, ctrl, base, log.Named("keda"))
	if err != nil {
		return err
	}
	err = serveDemo(ctx, ctrl, scaler, handler, o.listen, controller.RunOptions{Interval: wallInterval, Now: clock}, log)
	log.Info("demo stopped")
	return err
}

// demoOptions are the demo's flags.
type demoOptions struct {
	listen, logFormat, kedaListen string
	speed                         float64
	interval, forDur              time.Duration
	seed                          uint64
}

// parseDemoFlags reads and checks the demo's flags; a bad one is a usage
// error.
func parseDemoFlags(fs *flag.FlagSet, args []string) (demoOptions, error) {
	var o demoOptions
	fs.StringVar(&o.listen, "listen", "127.0.0.1:9102", "address of /, /plan, /metrics, /healthz, /readyz and /livez")
	fs.Float64Var(&o.speed, "speed", 1, "simulated seconds per wall-clock second (1 = real time)")
	fs.DurationVar(&o.interval, "interval", 5*time.Second, "sampling interval, in simulated time")
	fs.DurationVar(&o.forDur, "for", 0, "stop after this long (wall clock); 0 runs until SIGINT or SIGTERM")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed of the simulated traffic")
	fs.StringVar(&o.logFormat, "log-format", "json", "log format: json or console")
	fs.StringVar(&o.kedaListen, "keda-listen", "", "serve KEDA's external scaler (gRPC, with reflection) for the demo's groups on this address, such as 127.0.0.1:9103")
	if err := parseFlags(fs, args); err != nil {
		return o, err
	}
	switch {
	case !(o.speed > 0) || o.speed > 1000:
		return o, usageErr("--speed must be in (0, 1000], not %v", o.speed)
	case o.interval < time.Second:
		return o, usageErr("--interval must be at least 1s, not %v", o.interval)
	case o.forDur < 0:
		return o, usageErr("--for must be >= 0, not %v", o.forDur)
	case o.logFormat != "json" && o.logFormat != "console":
		return o, usageErr("--log-format must be json or console, not %q", o.logFormat)
	}
	return o, nil
}

// serveDemo runs the demo's loop, at the simulated clock of loop, beside
// its HTTP server and, when set, the KEDA scaler, until ctx ends or one
// fails.
func serveDemo(ctx context.Context, ctrl *controller.Controller, scaler func(context.Context) error, handler http.Handler,
	listen string, loop controller.RunOptions, log *zap.Logger) error {
	g, gctx := errgroup.WithContext(ctx)
	if scaler != nil {
		g.Go(func() error { return scaler(gctx) })
	}
	g.Go(func() error { return ctrl.Run(gctx, loop) })
	g.Go(func() error {
		return web.Serve(gctx, listen, handler, func(a net.Addr) {
			log.Info("listening", zap.String("addr", a.String()), zap.String("status_page", "http://"+a.String()+"/"))
		})
	})
	return g.Wait()
}

// newDemoWorlds makes the simulated groups and the policy settings the
// checker runs them with.
// demoWorkerCost is the demo fleets' price of a worker-hour, dollars.
const demoWorkerCost = 0.0416

func newDemoWorlds(start time.Time, interval time.Duration, seed uint64) (demoWorlds, []policy.Settings, error) {
	var ws demoWorlds
	var settings []policy.Settings
	for i, g := range demoGroups {
		period := g.period
		if period == 0 {
			period = time.Hour
		}
		sc, err := sim.Builtin(g.scenario, g.rate, period)
		if err != nil {
			return nil, nil, fmt.Errorf("demo group %s: %w", g.name, err)
		}
		if sc.Period == 0 {
			sc.Period = period
		}
		cfg := sim.Config{
			Group: g.name, Start: start, Scenario: sc, Service: g.service, Concurrency: g.concurrency,
			StartDelay: g.startDelay, Min: g.min, Max: g.max, Workers: g.workers,
			LatencyTarget: g.latency, Seed: seed + uint64(i), ReportOldestAge: true, MetricDelay: time.Minute,
		}
		w, err := sim.NewWorld(cfg)
		if err != nil {
			return nil, nil, fmt.Errorf("demo group %s: %w", g.name, err)
		}
		s := sim.Settings(cfg, interval, policy.PolicyModel)
		s.Cap = g.cap
		// An on-demand t3.medium in us-east-1, so that the page shows the
		// fleet's bill.
		s.WorkerCostPerHour = demoWorkerCost
		ws = append(ws, w)
		settings = append(settings, s)
	}
	return ws, settings, nil
}

// demoWorlds stands in for SQS and the fleets: the controller observes and
// acts on it exactly as on the AWS poller and publisher.
type demoWorlds []*sim.World

var (
	_ controller.Observer = demoWorlds(nil)
	_ controller.Actuator = demoWorlds(nil)
)

func (ws demoWorlds) Observe(ctx context.Context, now time.Time) ([]model.Observation, error) {
	out := make([]model.Observation, 0, len(ws))
	for _, w := range ws {
		o, err := w.Observe(ctx, now)
		if err != nil {
			return nil, err
		}
		out = append(out, o...)
	}
	return out, nil
}

func (ws demoWorlds) Apply(ctx context.Context, d model.Decision, f model.Fleet) (model.Action, error) {
	for _, w := range ws {
		if w.Config().Group == d.Group {
			return w.Apply(ctx, d, f)
		}
	}
	return model.Action{}, fmt.Errorf("no simulated group %q", d.Group)
}
