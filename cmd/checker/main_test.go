package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestTopLevelFlags: -h and --help list every command with its line (not
// run's flags), --version prints what `checker version` prints, and both
// exit 0.
func TestTopLevelFlags(t *testing.T) {
	t.Parallel()
	out := func(args ...string) (int, string) {
		var b strings.Builder
		code := run(context.Background(), args, &b, io.Discard)
		return code, b.String()
	}
	for _, flag := range []string{"-h", "--help", "help"} {
		code, text := out(flag)
		if code != 0 {
			t.Errorf("checker %s: exit %d, want 0", flag, code)
		}
		for _, c := range commands() {
			if !strings.Contains(text, "  "+c.name) || !strings.Contains(text, c.summary) {
				t.Errorf("checker %s does not list %s with its line:\n%s", flag, c.name, text)
			}
		}
		if strings.Contains(text, "-config") {
			t.Errorf("checker %s prints run's flags:\n%s", flag, text)
		}
	}
	_, want := out("version")
	for _, flag := range []string{"--version", "-version"} {
		if code, got := out(flag); code != 0 || got != want || !strings.HasPrefix(got, "checker ") {
			t.Errorf("checker %s: exit %d, %q; want 0 and %q", flag, code, got, want)
		}
	}
}

// TestHelpOnStdoutMistakesOnStderr: every command's -h, --help and
// `checker help <command>` print its flags on stdout (so that `checker
// run -h | less` shows them) and exit 0 with nothing on stderr; a bad flag
// prints the error and the usage on stderr, nothing on stdout, and exits 2.
func TestHelpOnStdoutMistakesOnStderr(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "-h"}, {c.name, "--help"}, {"help", c.name}} {
			var stdout, stderr strings.Builder
			code := run(context.Background(), args, &stdout, &stderr)
			if code != 0 || stderr.Len() != 0 {
				t.Errorf("checker %s: exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), code, stderr.String())
			}
			if !strings.Contains(strings.ToLower(stdout.String()), "usage") || !strings.Contains(stdout.String(), "checker "+c.name) {
				t.Errorf("checker %s: stdout %q, want the command's usage", strings.Join(args, " "), stdout.String())
			}
		}
		var stdout, stderr strings.Builder
		code := run(context.Background(), []string{c.name, "--no-such-flag"}, &stdout, &stderr)
		if code != 2 || stdout.Len() != 0 {
			t.Errorf("checker %s --no-such-flag: exit %d, stdout %q; want 2 and nothing", c.name, code, stdout.String())
		}
		for _, want := range []string{"flag provided but not defined: -no-such-flag", "checker " + c.name} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("checker %s --no-such-flag: stderr lacks %q:\n%s", c.name, want, stderr.String())
			}
		}
	}
}

// TestUnknownCommandSuggests: an unknown command exits 2 with the usage
// on stderr, naming the command it was probably meant to be.
func TestUnknownCommandSuggests(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, first string }{
		{"rnu", `checker: unknown command "rnu"; did you mean run?`},
		{"vaildate", `checker: unknown command "vaildate"; did you mean validate?`},
		{"Demo", `checker: unknown command "Demo"; did you mean demo?`},
		{"vresion", `checker: unknown command "vresion"; did you mean version?`},
		{"sim", `checker: unknown command "sim"; did you mean simulate?`},
		{"plna", `checker: unknown command "plna"; did you mean plan?`},
		{"xyzzy", `checker: unknown command "xyzzy"`},
		{"help", ""}, // not unknown: the list of commands
	}
	for _, tt := range tests {
		var stdout, stderr strings.Builder
		code := run(context.Background(), []string{tt.name}, &stdout, &stderr)
		if tt.first == "" {
			if code != 0 || stderr.Len() != 0 {
				t.Errorf("checker %s: exit %d, stderr %q", tt.name, code, stderr.String())
			}
			continue
		}
		first, rest, _ := strings.Cut(stderr.String(), "\n")
		if code != 2 || first != tt.first || stdout.Len() != 0 || !strings.Contains(rest, "usage: checker <command>") {
			t.Errorf("checker %s: exit %d, stdout %q, stderr:\n%s\nwant 2 and first line %q, then the usage", tt.name, code, stdout.String(), stderr.String(), tt.first)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"run", "run", 0}, {"rnu", "run", 1}, {"ru", "run", 1}, {"runn", "run", 1},
		{"rum", "run", 1}, {"nur", "run", 2}, {"", "run", 3}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
