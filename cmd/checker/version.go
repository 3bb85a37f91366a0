package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// Set at build time: -ldflags "-X main.version=... -X main.commit=...".
var (
	version = "dev"
	commit  = "unknown"
)

func cmdVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "checker %s (commit %s, %s)\n", version, commit, runtime.Version())
	return err
}
