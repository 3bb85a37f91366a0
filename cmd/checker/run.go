package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"syscall"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/decisionreport"
	"github.com/queuechecker/queue-checker/internal/lease"
	"github.com/queuechecker/queue-checker/internal/web"
)

// configHelp is the help of every command's --config flag.
const configHelp = "configuration: a YAML file, or ssm:/parameter/name for SSM Parameter Store (default $" + envConfig + ")"

// loadConfig reads and validates the configuration; any problem is exit 2.
func loadConfig(ctx context.Context, flagValue string) (*configSource, config.Config, [32]byte, error) {
	src, err := sourceFlag(flagValue)
	if err != nil {
		return nil, config.Config{}, [32]byte{}, err
	}
	cfg, sum, err := src.load(ctx)
	if err != nil {
		return nil, config.Config{}, sum, &exitError{code: 2, err: err}
	}
	return src, cfg, sum, nil
}

// runGCPercent is the collector's target for `checker run` when GOGC is
// not set: the heap may grow by half its live size before a collection,
// not by all of it as Go's default lets it. The daemon allocates little
// once it runs: at 10,000 queues its collections were under 1 % of its
// CPU at Go's default (a CPU profile), and halving the headroom at most
// doubles that, while the RSS, which follows the target, is some 10 MiB
// smaller (docs/scale.md).
const runGCPercent = 50

func cmdRun(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	path := fs.String("config", "", configHelp)
	listen := fs.String("listen", "", "override the configuration's listen address")
	refresh := fs.Duration("config-refresh", 0, "read the configuration again this often and reload it when it changed (0: only on SIGHUP)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *refresh < 0 || (*refresh > 0 && *refresh < time.Second) {
		return usageErr("--config-refresh must be 0 (off) or at least 1s, not %s", *refresh)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(runGCPercent)
	}
	src, cfg, sum, err := loadConfig(ctx, *path)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	d, err := newRunner(ctx, src, cfg, sum, log)
	if err != nil {
		return err
	}
	return d.run(ctx, *refresh)
}

// runner is `checker run` wired: the controller over the poller and the
// publisher, its registries, the leases when groups are shared, the HTTP
// handler and the KEDA scaler.
type runner struct {
	src      *configSource
	cfg      config.Config
	sum      [32]byte
	log      *zap.Logger
	asm      *assembly
	gatherer *metricsGatherer
	leases   *lease.Manager
	onTaken  *func([]string) // set once the warmer exists
	ctrl     *controller.Controller
	handler  http.Handler
	scaler   func(context.Context) error // nil without keda.listen
}

// newRunner wires the daemon of a loaded configuration.
func newRunner(ctx context.Context, src *configSource, cfg config.Config, sum [32]byte, log *zap.Logger) (*runner, error) {
	base, err := newBaseRegistry()
	if err != nil {
		return nil, err
	}
	d := &runner{src: src, cfg: cfg, sum: sum, log: log, onTaken: new(func([]string))}
	if d.asm, err = assemble(ctx, cfg, log); err != nil {
		return nil, err
	}
	d.gatherer = &metricsGatherer{base: base, gen: d.asm.registry}
	if d.leases, err = newLeases(ctx, cfg, base, log); err != nil {
		return nil, err
	}
	var gate controller.Gate
	if d.leases != nil {
		gate = leaseGate{Manager: d.leases, taken: d.onTaken, syncs: new(int)}
		log.Info("sharing the groups through leases", leaseStore(cfg.Coordination),
			zap.String("identity", d.leases.Identity()), zap.Duration("lease_duration", cfg.Coordination.LeaseDuration))
	}
	d.ctrl, err = controller.New(controller.Options{
		Groups: d.asm.groups, Observer: d.asm.observer, Actuator: d.asm.actuator,
		Logger: log.Named("controller"), Registerer: base, Gate: gate, Prices: awscost.FromConfig(cfg.AWS),
	})
	if err != nil {
		return nil, err
	}
	log.Info("starting", zap.String("version", version), zap.String("config", src.name),
		zap.Int("groups", len(cfg.Groups)), zap.Duration("interval", cfg.Interval),
		zap.String("listen", cfg.Listen), zap.Bool("dry_run", cfg.DryRun))
	d.handler = web.Handler(web.Options{Controller: d.ctrl, Gatherer: d.gatherer, Interval: cfg.Interval, Started: time.Now(),
		Pprof: cfg.Debug.Pprof})
	if d.scaler, err = kedaServer(cfg.KEDA, d.ctrl, base, log.Named("keda")); err != nil {
		return nil, err
	}
	return d, nil
}

// run runs the daemon until ctx ends or a part fails: the loop, the HTTP
// server, the KEDA scaler, the warm start and the reloader, each under one
// errgroup; then it releases the leases.
func (d *runner) run(ctx context.Context, refresh time.Duration) error {
	g, gctx := errgroup.WithContext(ctx)
	if d.scaler != nil {
		g.Go(func() error { return d.scaler(gctx) })
	}
	// The warm start runs beside the loop: the first cycle does not wait
	// for the history.
	warm := newWarmer(gctx, d.ctrl, d.log.Named("warm_start"))
	warm.start(d.asm.history, d.asm.groups)
	// A group taken from another checker warms up as well, beside the
	// loop: its history since this checker started is not in its state.
	*d.onTaken = warm.takeover
	g.Go(func() error {
		return d.ctrl.Run(gctx, controller.RunOptions{Interval: d.cfg.Interval})
	})
	g.Go(func() error {
		return web.Serve(gctx, d.cfg.Listen, d.handler, func(a net.Addr) {
			d.log.Info("listening", zap.String("addr", a.String()), zap.String("status_page", "http://"+a.String()+"/"))
		})
	})
	r := &reloader{src: d.src, sum: d.sum, ctrl: d.ctrl, gatherer: d.gatherer, warm: warm, leases: d.leases, log: d.log,
		coordination: d.cfg.Coordination, running: &d.cfg}
	g.Go(func() error { return r.run(gctx, refresh) })
	err := g.Wait()
	warm.wait()
	releaseLeases(d.leases, d.log)
	d.log.Info("stopped")
	return err
}

// reloader reloads the configuration on SIGHUP and, when refresh is set,
// every refresh period if the document changed, and warm-starts the groups'
// forecasts again from the new configuration. An invalid new configuration
// is logged and the running one kept.
type reloader struct {
	src      *configSource
	sum      [32]byte // digest of the document running
	bad      [32]byte // digest of the last invalid document logged
	unread   bool     // the last periodic read failed, and was logged
	ctrl     *controller.Controller
	gatherer *metricsGatherer
	warm     *warmer        // warm-starts the forecasts of the new configuration
	leases   *lease.Manager // nil when this checker runs alone
	log      *zap.Logger
	// coordination is the running configuration's coordination block: a
	// document that adds, removes or changes it is refused (see reload).
	coordination *config.Coordination
	// running is the configuration running, to tell which groups a new
	// one leaves acting on the same things (config.SameTargets); without
	// it every group counts as changed.
	running *config.Config
}

func (r *reloader) run(ctx context.Context, refresh time.Duration) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if refresh > 0 {
		t := time.NewTicker(refresh)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
			r.reload(ctx, true)
		case <-tick:
			r.reload(ctx, false)
		}
	}
}

// reload reads the configuration again and swaps it in. always is false for
// a periodic refresh: then an unchanged document is left alone, and an
// invalid one is logged once, not every period.
func (r *reloader) reload(ctx context.Context, always bool) {
	fail := func(err error) {
		r.log.Error("reload failed; keeping the running configuration", zap.String("config", r.src.name), zap.Error(err))
	}
	cfg, sum, err := r.src.load(ctx)
	if sum == [32]byte{} { // not read at all
		if !always && r.unread {
			return
		}
		r.unread = !always
		fail(err)
		return
	}
	r.unread = false
	if sum == r.sum {
		// The running document again: a restart is no longer needed for
		// a document it refused, and there is nothing to swap in (a storm
		// of SIGHUPs of one document changes nothing).
		r.ctrl.SetRestartNeeded("")
		if always {
			r.log.Info("configuration unchanged; nothing reloaded", zap.String("config", r.src.name))
		}
		return
	}
	if !always && sum == r.bad {
		return
	}
	if err != nil {
		r.bad = sum
		fail(err)
		return
	}
	if !reflect.DeepEqual(cfg.Coordination, r.coordination) {
		// Applied at once, a checker that starts sharing would act on every
		// group beside the checkers already holding their leases, and one
		// that stops sharing would act alone beside them. The running
		// configuration is kept but acts on nothing, and /healthz fails, so
		// that an orchestrator restarts the checker, which then starts with
		// the new block.
		r.bad = sum
		msg := "the coordination block was added, removed or changed: it takes a restart"
		r.ctrl.SetRestartNeeded(msg)
		r.log.Error("reload refused; keeping the running configuration", zap.String("config", r.src.name), zap.String("reason", msg))
		return
	}
	if err := r.swap(ctx, cfg, sum); err != nil {
		fail(err)
	}
}

// swap builds the AWS-facing parts of cfg, a valid document whose digest is
// sum, and puts them in the running ones' place: the controller's groups,
// the metrics registry, the warm start and the lease groups. On an error
// the running configuration stays.
func (r *reloader) swap(ctx context.Context, cfg config.Config, sum [32]byte) error {
	asm, err := assemble(ctx, cfg, r.log)
	if err != nil {
		return err
	}
	var unchanged []string
	if r.running != nil {
		unchanged = r.running.SameTargets(cfg)
	}
	if err := r.ctrl.Reload(asm.groups, asm.observer, asm.actuator, unchanged...); err != nil {
		return err
	}
	r.running = &cfg
	r.ctrl.Views().SetPrices(awscost.FromConfig(cfg.AWS))
	r.sum, r.bad = sum, [32]byte{}
	r.ctrl.SetRestartNeeded("")
	r.gatherer.swap(asm.registry)
	if r.warm != nil {
		r.warm.start(asm.history, asm.groups)
	}
	if r.leases != nil {
		r.leases.SetGroups(groupNames(cfg))
	}
	r.log.Info("configuration reloaded", zap.String("config", r.src.name), zap.Int("groups", len(cfg.Groups)),
		zap.String("note", "listen, interval, log and debug settings change only on restart"))
	return nil
}

func cmdOnce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("once", stderr)
	path := fs.String("config", "", configHelp)
	apply := fs.Bool("apply", false, "carry out the decisions (publish metrics, set desired counts); without it nothing changes")
	output := fs.String("output", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *output != "table" && *output != "json" {
		return usageErr("--output must be table or json, not %q", *output)
	}
	_, cfg, _, err := loadConfig(ctx, *path)
	if err != nil {
		return err
	}
	if *apply && cfg.Coordination != nil {
		return usageErr("--apply would act on every group beside the checkers that hold their leases (the configuration has a coordination block); run once without --apply")
	}
	if !*apply {
		cfg.DryRun = true
	}
	log, err := newLogger(cfg.Log, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync() }()
	asm, err := assemble(ctx, cfg, log)
	if err != nil {
		return err
	}
	ctrl, err := controller.New(controller.Options{
		Groups: asm.groups, Observer: asm.observer, Actuator: asm.actuator, Logger: log.Named("controller"),
	})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, max(cfg.Interval, 10*time.Second))
	defer cancel()
	decisions, runErr := ctrl.RunOnce(cctx, time.Now())
	if decisions == nil && runErr != nil {
		return runErr
	}
	if err := decisionreport.Write(stdout, *output, decisions); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("some actions failed: %w", runErr)
	}
	return nil
}
