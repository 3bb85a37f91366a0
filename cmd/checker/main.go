// Command checker keeps worker fleets sized to the work waiting in their SQS
// queues. See README.md; `checker help` lists the commands.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
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
		{"slo", "print each group's latency promise as an OpenSLO SLO document", cmdSLO},
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
		if len(args) == 0 {
			printUsage(stdout)
			return 0
		}
		// `checker help run` is `checker run -h`.
		name, args = args[0], []string{"-h"}
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
			// Asked for: the help goes to stdout, to be paged or grepped.
			var h *helpError
			if errors.As(err, &h) {
				if _, werr := io.WriteString(stdout, h.text); werr != nil {
					return 1
				}
			}
			return 0
		}
		fmt.Fprintf(stderr, "checker %s: %v\n", name, err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	fmt.Fprintf(stderr, "checker: unknown command %q", name)
	if s := suggest(name); len(s) > 0 {
		fmt.Fprintf(stderr, "; did you mean %s?", strings.Join(s, " or "))
	}
	fmt.Fprint(stderr, "\n\n")
	printUsage(stderr)
	return 2
}

// suggest returns the commands an unknown name was probably meant to be:
// one it spells in other letter case, else those it begins (two letters or
// more: "sim" is simulate, though slo is two edits away), else those within
// two edits of it (a swap of two neighbouring letters is one); nearest
// first.
func suggest(name string) []string {
	var near [3][]string
	var prefixed []string
	lower := strings.ToLower(name)
	for _, c := range commands() {
		if len(name) >= 2 && strings.HasPrefix(c.name, lower) && c.name != lower {
			prefixed = append(prefixed, c.name)
		} else if d := editDistance(lower, c.name); d < len(near) && d < len(name) {
			near[d] = append(near[d], c.name)
		}
	}
	if len(near[0]) > 0 {
		return near[0]
	}
	if len(prefixed) > 0 {
		return prefixed
	}
	for _, n := range near[1:] {
		if len(n) > 0 {
			return n
		}
	}
	return nil
}

// editDistance is the optimal string alignment distance of a and b:
// insertions, deletions, substitutions and swaps of adjacent letters, each
// one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: checker <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\n`checker <command> -h` shows a command's flags.")
}

// newFlags makes a command's flag set: errors are returned, not fatal.
// The usage it prints goes to stderr, but for -h (see parseFlags).
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("checker "+name, flag.ContinueOnError)
	fs.SetOutput(&flagOutput{stderr: stderr})
	return fs
}

// flagOutput is a flag set's output. While the flag package parses, it
// holds what the package prints, the usage, until parseFlags knows
// whether it was asked for (-h: help, for stdout) or follows a mistake
// (stderr); at any other time it writes to stderr.
type flagOutput struct {
	stderr  io.Writer
	parsing bool
	held    bytes.Buffer
}

func (o *flagOutput) Write(p []byte) (int, error) {
	if o.parsing {
		return o.held.Write(p)
	}
	return o.stderr.Write(p)
}

// helpError is -h's answer: the command's help, which run prints on
// stdout. It is flag.ErrHelp.
type helpError struct{ text string }

func (*helpError) Error() string { return flag.ErrHelp.Error() }
func (*helpError) Unwrap() error { return flag.ErrHelp }

// parseFlags parses args into fs; a bad flag or a stray argument is a usage
// error (exit 2), its usage on stderr, and -h is a clean exit whose help
// run prints on stdout.
func parseFlags(fs *flag.FlagSet, args []string) error {
	out, held := fs.Output().(*flagOutput)
	if held {
		out.parsing = true
	}
	err := fs.Parse(args)
	if held {
		out.parsing = false
	}
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if held {
				return &helpError{text: out.held.String()}
			}
			return err
		}
		if held {
			if _, werr := out.stderr.Write(out.held.Bytes()); werr != nil {
				return werr
			}
		}
		return &exitError{code: 2, err: err}
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageErr("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
