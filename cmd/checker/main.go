// Command checker keeps worker fleets sized to the work waiting in their SQS
// queues. See README.md; `checker help` lists the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

// command is one subcommand: its name, one line of help, and its body.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "the daemon: sample, decide and act every interval (the default)", cmdRun},
		{"once", "one sample-decide cycle, printed; nothing changed without --apply", cmdOnce},
		{"validate", "check a configuration file; exit 2 naming every problem", cmdValidate},
		{"plan", "the offline capacity calculator (Little's law, drain, Erlang C)", cmdPlan},
		{"simulate", "replay a traffic scenario against policies and score them", cmdSimulate},
		{"demo", "the daemon against a built-in simulated queue and fleet: no AWS needed", cmdDemo},
		{"health", "probe a running checker's /livez, or --url's endpoint (for container health checks)", cmdHealth},
		{"version", "print version, commit and Go version", cmdVersion},
	}
}

// exitError carries an exit code other than 1 out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr marks an error as a usage problem: exit code 2.
func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...)}
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code:
// 0 on success, 2 on bad usage or invalid configuration, 1 otherwise.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	name := "run"
	if len(args) > 0 {
		switch args[0] {
		case "-h", "-help", "--help":
			// The commands, not run's flags: `checker run -h` has those.
			printUsage(stdout)
			return 0
		case "-version", "--version":
			name, args = "version", args[1:]
		default:
			if len(args[0]) == 0 || args[0][0] != '-' {
				name, args = args[0], args[1:]
			}
		}
	}
	if name == "help" {
		printUsage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, args, stdout, stderr)
		if err == nil {
			return 0
		}
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "checker %s: %v\n", name, err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	fmt.Fprintf(stderr, "checker: unknown command %q\n\n", name)
	printUsage(stderr)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: checker <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n`checker <command> -h` shows a command's flags.")
}

// newFlags makes a command's flag set: errors are returned, not fatal, and
// the usage goes to stderr.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("checker "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args into fs; a bad flag or a stray argument is a usage
// error (exit 2), and -h is a clean exit.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
