package chart

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/sim"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path string
		want string
		ok   bool
	}{
		{"out/chart.svg", SVG, true},
		{"chart.PNG", PNG, true},
		{"chart.pdf", "", false},
		{"chart", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			got, err := Format(tt.path)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("Format(%q) = %q, %v; want %q, ok %v", tt.path, got, err, tt.want, tt.ok)
			}
		})
	}
}

// Write draws every format it names, and refuses others.
func TestWrite(t *testing.T) {
	t.Parallel()
	results := []sim.Result{
		{Policy: sim.PolicyModel, Series: []sim.Point{{T: 0, Backlog: 3, OldestAge: 1, Workers: 2}, {T: 60, Backlog: 0, Workers: 3}}},
		{Policy: sim.PolicyFixed, Series: []sim.Point{{T: 0, Workers: 2}, {T: 60, Backlog: 40, OldestAge: 12, Workers: 2}}},
	}
	for format, magic := range map[string]string{SVG: "<svg", PNG: "\x89PNG"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := Write(&b, format, "test", 10*time.Second, results); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b.Bytes()[:min(b.Len(), 512)], []byte(magic)) {
				t.Errorf("%s chart does not start like one (%q)", format, b.Bytes()[:min(b.Len(), 16)])
			}
		})
	}
	if err := Write(&bytes.Buffer{}, "pdf", "test", 10*time.Second, results); err == nil {
		t.Error("a pdf chart was written")
	}
}

// WriteFile writes the chart Write draws, titled with the run's scenario,
// latency target and start delay; a file it cannot create is an error.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	results := []sim.Result{{Policy: sim.PolicyModel, Series: []sim.Point{{T: 0, Workers: 2}, {T: 60, Backlog: 5, Workers: 3}}}}
	rc := sim.RunConfig{World: sim.Config{Scenario: sim.Scenario{Name: "spike"}, LatencyTarget: 10 * time.Second, StartDelay: time.Minute}}
	path := filepath.Join(t.TempDir(), "run.svg")
	if err := WriteFile(path, SVG, rc, results); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := Write(&want, SVG, "spike scenario, latency target 10s, start delay 1m0s", 10*time.Second, results); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("file of %d bytes differs from Write's %d bytes with the run's title", len(got), want.Len())
	}
	if err := WriteFile(filepath.Join(t.TempDir(), "no-dir", "run.svg"), SVG, rc, results); err == nil {
		t.Error("a chart in a missing directory: no error")
	}
}
