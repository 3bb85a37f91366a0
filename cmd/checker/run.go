package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/lease"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/web"
)

// loadConfig reads and validates a configuration file; any problem is exit 2.
func loadConfig(path string) (config.Config, error) {
	if path == "" {
		return config.Config{}, usageErr("--config is required")
	}
	cfg, err := config.Load(path)
	if err != nil {
		return config.Config{}, &exitError{code: 2, err: err}
	}
	return cfg, nil
}

func cmdRun(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags("run", stderr)
	path := fs.String("config", "", "configuration file (YAML)")
	listen := fs.String("listen", "", "override the configuration's listen address")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := loadConfig(*path)
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

	base, err := newBaseRegistry()
	if err != nil {
		return err
	}
	asm, err := assemble(ctx, cfg, log)
	if err != nil {
		return err
	}
	gatherer := &metricsGatherer{base: base, gen: asm.registry}
	leases, err := newLeases(ctx, cfg, base, log)
	if err != nil {
		return err
	}
	var gate controller.Gate
	if leases != nil {
		gate = leaseGate{leases}
		log.Info("sharing the groups through a lease table", zap.String("table", cfg.Coordination.DynamoDB.Table),
			zap.String("identity", leases.Identity()), zap.Duration("lease_duration", cfg.Coordination.LeaseDuration))
	}
	ctrl, err := controller.New(controller.Options{
		Groups: asm.groups, Observer: asm.observer, Actuator: asm.actuator,
		Logger: log.Named("controller"), Registerer: base, Gate: gate,
	})
	if err != nil {
		return err
	}
	log.Info("starting", zap.String("version", version), zap.String("config", *path),
		zap.Int("groups", len(cfg.Groups)), zap.Duration("interval", cfg.Interval),
		zap.String("listen", cfg.Listen), zap.Bool("dry_run", cfg.DryRun))

	handler := web.Handler(web.Options{Controller: ctrl, Gatherer: gatherer, Interval: cfg.Interval})
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return ctrl.Run(gctx, controller.RunOptions{Interval: cfg.Interval})
	})
	g.Go(func() error {
		return web.Serve(gctx, cfg.Listen, handler, func(a net.Addr) {
			log.Info("listening", zap.String("addr", a.String()), zap.String("status_page", "http://"+a.String()+"/"))
		})
	})
	g.Go(func() error { return reloadOnHangup(gctx, *path, ctrl, gatherer, leases, log) })
	err = g.Wait()
	releaseLeases(leases, log)
	log.Info("stopped")
	return err
}

// reloadOnHangup reloads the configuration on SIGHUP until ctx is done. An
// invalid new configuration is logged and the running one kept.
func reloadOnHangup(ctx context.Context, path string, ctrl *controller.Controller, gatherer *metricsGatherer, leases *lease.Manager, log *zap.Logger) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-hup:
		}
		cfg, err := config.Load(path)
		if err != nil {
			log.Error("reload failed; keeping the running configuration", zap.String("config", path), zap.Error(err))
			continue
		}
		asm, err := assemble(ctx, cfg, log)
		if err != nil {
			log.Error("reload failed; keeping the running configuration", zap.String("config", path), zap.Error(err))
			continue
		}
		if err := ctrl.Reload(asm.groups, asm.observer, asm.actuator); err != nil {
			log.Error("reload failed; keeping the running configuration", zap.String("config", path), zap.Error(err))
			continue
		}
		gatherer.swap(asm.registry)
		if leases != nil {
			leases.SetGroups(groupNames(cfg))
		}
		log.Info("configuration reloaded", zap.String("config", path), zap.Int("groups", len(cfg.Groups)),
			zap.String("note", "listen, interval, log and coordination settings change only on restart"))
	}
}

func cmdOnce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("once", stderr)
	path := fs.String("config", "", "configuration file (YAML)")
	apply := fs.Bool("apply", false, "carry out the decisions (publish metrics, set desired counts); without it nothing changes")
	output := fs.String("output", "table", "output format: table or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *output != "table" && *output != "json" {
		return usageErr("--output must be table or json, not %q", *output)
	}
	cfg, err := loadConfig(*path)
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
	if err := printDecisions(stdout, *output, decisions); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("some actions failed: %w", runErr)
	}
	return nil
}

func printDecisions(w io.Writer, format string, ds []model.Decision) error {
	if ds == nil {
		ds = []model.Decision{}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Decisions []model.Decision `json:"decisions"`
		}{ds})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tBACKLOG\tVISIBLE\tIN FLIGHT\tCURRENT\tRECOMMENDED\tDESIRED\tDIAGNOSIS\tSTATE")
	for _, d := range ds {
		state := "ok"
		switch {
		case d.Held:
			state = "held: " + d.HoldReason
		case d.Capped:
			state = "capped"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", d.Group, d.Backlog, d.Visible, d.InFlight,
			d.CurrentWorkers, d.RecommendedWorkers, d.DesiredWorkers, d.Diagnosis, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range ds {
		if len(d.Reasons) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", d.Group)
		for _, r := range d.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
	}
	return nil
}
