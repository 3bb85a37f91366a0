package main

import (
	"strings"
	"testing"
)

func TestSimulateScaleInRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, flag, value string }{
		{"unknown mode", "--scale-in", "drop"},
		{"zero visibility timeout", "--visibility-timeout", "0s"},
		{"visibility timeout above SQS's limit", "--visibility-timeout", "13h"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, errOut := runSimulate(t, tt.flag, tt.value)
			if code != 2 || !strings.Contains(errOut, tt.flag) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, errOut, tt.flag)
			}
		})
	}
}

// The same traffic with the two scale-in modes: graceful delivers nothing
// twice; kill delivers again the messages of the busy workers it removed,
// so a policy that scales in often gets duplicates, and a fixed fleet,
// which never scales in, none.
func TestSimulateScaleInModes(t *testing.T) {
	t.Parallel()
	args := []string{"--scenario", "bursty", "--duration", "40m", "--policy", "all"}
	graceful := simJSON(t, append(args, "--scale-in", "graceful")...)
	kill := simJSON(t, append(args, "--scale-in", "kill", "--visibility-timeout", "45s")...)
	if len(graceful) != len(kill) {
		t.Fatalf("%d and %d results", len(graceful), len(kill))
	}
	killed := 0
	for i, g := range graceful {
		k := kill[i]
		if g.Policy != k.Policy || g.Messages != k.Messages {
			t.Fatalf("%s/%s: %d and %d messages: the two runs must see the same traffic", g.Policy, k.Policy, g.Messages, k.Messages)
		}
		if g.Duplicates != 0 {
			t.Errorf("%s graceful: %d duplicates", g.Policy, g.Duplicates)
		}
		if k.Duplicates > 0 {
			killed++
			// A message delivered again waited at least until its
			// visibility timeout ran out.
			if k.MaxWait < 45 {
				t.Errorf("%s kill: %d duplicates but max wait %v s, under the 45 s visibility timeout", k.Policy, k.Duplicates, k.MaxWait)
			}
		}
		if k.Policy == "fixed" && k.Duplicates != 0 {
			t.Errorf("fixed fleet: %d duplicates without a scale-in", k.Duplicates)
		}
	}
	if killed == 0 {
		t.Error("no policy had a duplicate delivery under bursty traffic in kill mode")
	}
	code, out, errOut := runSimulate(t, append(args, "--scale-in", "kill", "--policy", "model")...)
	if code != 0 || !strings.Contains(out, "duplicate deliveries: model ") {
		t.Errorf("table in kill mode: exit %d, %q %q; want the duplicate deliveries under it", code, out, errOut)
	}
}
