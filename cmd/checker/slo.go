package main

import (
	"context"
	"fmt"
	"io"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/openslo"
)

// cmdSLO prints each group's latency promise as an OpenSLO SLO document
// (docs/observability.md, "The promise as an SLO"): a YAML stream, one
// document per group, in OpenSLO v1 or, with --openslo v1alpha, in the
// version Sloth reads.
func cmdSLO(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("slo", stderr)
	path := fs.String("config", "", configHelp)
	version := fs.String("openslo", openslo.V1, "OpenSLO version: v1, or v1alpha (what Sloth reads; the window in whole days)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *version != openslo.V1 && *version != openslo.V1Alpha {
		fs.Usage()
		return usageErr("--openslo must be %s or %s, not %q", openslo.V1, openslo.V1Alpha, *version)
	}
	src, cfg, _, err := loadConfig(ctx, *path)
	if err != nil {
		return err
	}
	out, problems, err := openslo.Documents(sloGroups(cfg), *version)
	if err != nil {
		return err
	}
	if len(problems) > 0 {
		for _, p := range problems {
			line := fmt.Sprintf("%s: groups[%d].target.slo_window: %s", src.name, p.Index, p.Msg)
			if _, err := fmt.Fprintln(stderr, line); err != nil {
				return err
			}
		}
		return &exitError{code: 2, err: fmt.Errorf("%s: %d group(s) cannot be written as OpenSLO %s", src.name, len(problems), *version)}
	}
	_, err = stdout.Write(out)
	return err
}

// sloGroups are the configuration's groups as OpenSLO writes them.
func sloGroups(cfg config.Config) []openslo.Group {
	out := make([]openslo.Group, 0, len(cfg.Groups))
	for _, g := range cfg.Groups {
		out = append(out, openslo.Group{Name: g.Name, Promise: g.Target.Latency,
			Objective: g.Target.LatencyQuantile, Window: g.Target.SLOWindow.D()})
	}
	return out
}
