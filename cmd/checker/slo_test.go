package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// sloConfig has three groups: the default objective and window, a
// stricter objective over 7 days, and a name OpenSLO cannot take as is.
const sloConfig = `
groups:
  - name: thumbnails
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/thumbnails"}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    fleet: {max: 10}
  - name: emails
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/emails"}]
    workers: {service_time: 1s}
    target: {latency: 2m, latency_quantile: 0.999, slo_window: 7d}
    fleet: {max: 10}
  - name: Video_Transcode.v2
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/video"}]
    workers: {service_time: 1s}
    target: {latency: 90s, latency_quantile: 0.95, slo_window: 36h}
    fleet: {max: 10}
`

func writeSLOConfig(t *testing.T, doc string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func runSLO(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"slo"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// openSLOv1 is an OpenSLO v1 SLO with its indicator inline, as the
// specification writes it; decoding is strict, so a key the
// specification does not have fails.
type openSLOv1 struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name        string `yaml:"name"`
		DisplayName string `yaml:"displayName"`
	} `yaml:"metadata"`
	Spec struct {
		Description string `yaml:"description"`
		Service     string `yaml:"service"`
		Indicator   struct {
			Metadata struct {
				Name        string `yaml:"name"`
				DisplayName string `yaml:"displayName"`
			} `yaml:"metadata"`
			Spec struct {
				RatioMetric struct {
					Counter bool            `yaml:"counter"`
					Good    openSLOv1Source `yaml:"good"`
					Total   openSLOv1Source `yaml:"total"`
				} `yaml:"ratioMetric"`
			} `yaml:"spec"`
		} `yaml:"indicator"`
		BudgetingMethod string `yaml:"budgetingMethod"`
		TimeWindow      []struct {
			Duration  string `yaml:"duration"`
			IsRolling bool   `yaml:"isRolling"`
		} `yaml:"timeWindow"`
		Objectives []struct {
			DisplayName string  `yaml:"displayName"`
			Target      float64 `yaml:"target"`
		} `yaml:"objectives"`
	} `yaml:"spec"`
}

type openSLOv1Source struct {
	MetricSource struct {
		Type string `yaml:"type"`
		Spec struct {
			Query string `yaml:"query"`
		} `yaml:"spec"`
	} `yaml:"metricSource"`
}

// `checker slo` writes an OpenSLO v1 SLO per group: the objective is
// target.latency_quantile, the window target.slo_window, and the
// indicator the share of the within counter in the sum of both.
func TestSLOCommandV1(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runSLO(t, "--config", writeSLOConfig(t, sloConfig))
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	want := []struct {
		group, name, window string
		target              float64
	}{
		{"thumbnails", "queue-checker-thumbnails", "30d", 0.99},
		{"emails", "queue-checker-emails", "7d", 0.999},
		{"Video_Transcode.v2", "queue-checker-video-transcode-v2", "36h", 0.95},
	}
	dec := yaml.NewDecoder(strings.NewReader(stdout))
	dec.KnownFields(true)
	promql := parser.NewParser(parser.Options{})
	for i := 0; ; i++ {
		var d openSLOv1
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			if i != len(want) {
				t.Errorf("%d documents, want %d", i, len(want))
			}
			break
		}
		if err != nil {
			t.Fatalf("document %d: %v\n%s", i, err, stdout)
		}
		if i >= len(want) {
			t.Fatalf("more documents than groups:\n%s", stdout)
		}
		w := want[i]
		s := d.Spec
		if d.APIVersion != "openslo/v1" || d.Kind != "SLO" || d.Metadata.Name != w.name || s.Service == "" ||
			s.BudgetingMethod != "Occurrences" || s.Indicator.Metadata.Name == "" {
			t.Errorf("document %d: %s %s %q, service %q, budgeting %q, indicator %q", i, d.APIVersion, d.Kind,
				d.Metadata.Name, s.Service, s.BudgetingMethod, s.Indicator.Metadata.Name)
		}
		if len(s.TimeWindow) != 1 || s.TimeWindow[0].Duration != w.window || !s.TimeWindow[0].IsRolling {
			t.Errorf("%s: time window %+v, want one rolling %s", w.group, s.TimeWindow, w.window)
		}
		if len(s.Objectives) != 1 || s.Objectives[0].Target != w.target {
			t.Errorf("%s: objectives %+v, want one of target %v", w.group, s.Objectives, w.target)
		}
		r := s.Indicator.Spec.RatioMetric
		if !r.Counter || r.Good.MetricSource.Type != "Prometheus" || r.Total.MetricSource.Type != "Prometheus" {
			t.Errorf("%s: ratio metric %+v, want counters from Prometheus", w.group, r)
		}
		sel := fmt.Sprintf("{group=%q}", w.group)
		good, total := r.Good.MetricSource.Spec.Query, r.Total.MetricSource.Spec.Query
		if good != "checker_slo_messages_within_promise_total"+sel ||
			total != "checker_slo_messages_within_promise_total"+sel+" + checker_slo_messages_late_total"+sel {
			t.Errorf("%s: good %q, total %q", w.group, good, total)
		}
		for _, q := range []string{good, total} {
			if _, err := promql.ParseExpr(q); err != nil {
				t.Errorf("%s: %q: %v", w.group, q, err)
			}
		}
	}
}

// Bad flags are usage errors; a window OpenSLO v1alpha cannot write names
// its group and writes nothing.
func TestSLOCommandErrors(t *testing.T) {
	t.Parallel()
	path := writeSLOConfig(t, sloConfig)
	tests := []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"unknown version", []string{"--config", path, "--openslo", "v2"}, []string{`--openslo must be v1 or v1alpha, not "v2"`}},
		{"no config", nil, []string{"--config is required"}},
		{"stray argument", []string{"--config", path, "extra"}, []string{`unexpected argument "extra"`}},
		{"v1alpha of a window in hours", []string{"--config", path, "--openslo", "v1alpha"}, []string{
			path + ": groups[2].target.slo_window: the window 36h is not a whole number of days, which OpenSLO v1alpha needs; write it in days or use --openslo v1",
			"1 group(s) cannot be written as OpenSLO v1alpha"}},
		{"invalid config", []string{"--config", writeSLOConfig(t, "groups: [{name: a}]\n")}, []string{"groups[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runSLO(t, tt.args...)
			if code != 2 || stdout != "" {
				t.Errorf("exit %d with stdout %q, want 2 and nothing written", code, stdout)
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}
