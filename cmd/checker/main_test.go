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
