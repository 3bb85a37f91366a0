package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// slothModule is the Sloth release the OpenSLO output is checked against,
// built from the Go module proxy; it stays out of go.mod.
const slothModule = "github.com/slok/sloth/cmd/sloth@v0.16.0"

// proxyUnreachable matches what go install says when it cannot reach the
// module proxy at all (no network, no DNS, a refusing proxy).
var proxyUnreachable = regexp.MustCompile(`dial tcp|no such host|connection refused|i/o timeout|network is unreachable|proxyconnect|TLS handshake timeout`)

// buildSloth installs Sloth into a temporary directory and returns its
// path; the test is skipped only when the module proxy cannot be reached.
func buildSloth(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	cmd := exec.Command("go", "install", slothModule)
	cmd.Dir = t.TempDir() // outside this module: go.mod is not touched
	cmd.Env = append(os.Environ(), "GOBIN="+bin, "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		if proxyUnreachable.Match(out) {
			t.Skipf("the Go module proxy is unreachable, so Sloth cannot be built (%s):\n%s", slothModule, out)
		}
		t.Fatalf("go install %s: %v\n%s", slothModule, err, out)
	}
	return filepath.Join(bin, "sloth")
}

// Sloth reads `checker slo --openslo v1alpha`, generates its recording
// rules from it without error, promtool finds them valid, and
// Sloth's error ratio is the checker's late share: 10 late of 1,000
// messages a minute is 1 %.
func TestSLOOpenSLOReadBySloth(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds Sloth: not in -short")
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CHECKER_SKIP_PROMTOOL") != "" {
			t.Skip("promtool is not on PATH and CHECKER_SKIP_PROMTOOL is set")
		}
		t.Fatal("promtool is not on PATH: run scripts/test-deps (Debian's prometheus package), or set CHECKER_SKIP_PROMTOOL=1")
	}
	// Sloth's default windows are 30 days: the two groups of sloConfig that
	// keep the default window, and a stricter one.
	config := `
groups:
  - name: thumbnails
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/thumbnails"}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    fleet: {max: 10}
  - name: Video_Transcode.v2
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/video"}]
    workers: {service_time: 1s}
    target: {latency: 90s, latency_quantile: 0.999, slo_window: 30d}
    fleet: {max: 10}
`
	code, stdout, stderr := runSLO(t, "--config", writeSLOConfig(t, config), "--openslo", "v1alpha")
	if code != 0 {
		t.Fatalf("checker slo: exit %d; stderr:\n%s", code, stderr)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "slo.yaml")
	if err := os.WriteFile(in, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	sloth := buildSloth(t)
	rules := filepath.Join(dir, "rules.yaml")
	if out, err := exec.Command(sloth, "generate", "-i", in, "-o", rules).CombinedOutput(); err != nil {
		t.Fatalf("sloth generate: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(rules)
	if err != nil {
		t.Fatal(err)
	}
	// One rules document per SLO document; promtool reads one at a time.
	var docs []string
	for _, d := range regexp.MustCompile(`(?m)^---$`).Split(string(raw), -1) {
		if strings.TrimSpace(d) != "" {
			docs = append(docs, d)
		}
	}
	if len(docs) != 2 {
		t.Fatalf("sloth wrote %d rule documents, want 2:\n%s", len(docs), raw)
	}
	for i, doc := range docs {
		path := filepath.Join(dir, fmt.Sprintf("rules-%d.yaml", i))
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(promtool, "check", "rules", path).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check rules on Sloth's rules of document %d: %v\n%s\n%s", i, err, out, doc)
		}
		// Sloth writes no alerts from OpenSLO (its loader turns them off):
		// the recording rules are what it generates.
		for _, rec := range []string{"slo:sli_error:ratio_rate5m", "slo:sli_error:ratio_rate30d", "slo:period_error_budget_remaining:ratio"} {
			if !strings.Contains(doc, "record: "+rec) {
				t.Errorf("document %d: Sloth recorded no %s:\n%s", i, rec, doc)
			}
		}
	}

	// Sloth's SLI, evaluated by promtool on the checker's counters.
	const test = `rule_files: [rules-0.yaml]
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'checker_slo_messages_within_promise_total{job="queue-checker",instance="c:9102",group="thumbnails"}'
        values: '0+990x60'
      - series: 'checker_slo_messages_late_total{job="queue-checker",instance="c:9102",group="thumbnails"}'
        values: '0+10x60'
    promql_expr_test:
      - expr: abs(sum(slo:sli_error:ratio_rate5m{sloth_service="queue-checker"}) - 0.01) < bool 1e-12
        eval_time: 30m
        exp_samples:
          - labels: '{}'
            value: 1
      - expr: abs(sum(slo:sli_error:ratio_rate1h{sloth_service="queue-checker"}) - 0.01) < bool 1e-12
        eval_time: 60m
        exp_samples:
          - labels: '{}'
            value: 1
`
	testPath := filepath.Join(dir, "sli_test.yaml")
	if err := os.WriteFile(testPath, []byte(test), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "sli_test.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules on Sloth's SLI: %v\n%s\n%s", err, out, docs[0])
	}
}
