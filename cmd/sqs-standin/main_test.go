package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/queuechecker/queue-checker/internal/config"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRegionLatencyFlag(t *testing.T) {
	t.Parallel()
	r := regionLatency{}
	if err := r.Set("eu-west-1=150ms,us-east-1=0s"); err != nil {
		t.Fatal(err)
	}
	if r["eu-west-1"] != 150*time.Millisecond || r["us-east-1"] != 0 || len(r) != 2 {
		t.Fatalf("parsed %v", r)
	}
	for _, bad := range []string{"eu-west-1", "=1s", "eu-west-1=fast", "eu-west-1=-1s"} {
		if err := (regionLatency{}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}

func TestRegionOf(t *testing.T) {
	t.Parallel()
	auth := "AWS4-HMAC-SHA256 Credential=AKID/20260101/ap-southeast-2/sqs/aws4_request, SignedHeaders=host, Signature=x"
	if got := regionOf(auth); got != "ap-southeast-2" {
		t.Errorf("regionOf = %q", got)
	}
	if got := regionOf("Bearer x"); got != "" {
		t.Errorf("regionOf(no credential) = %q, want empty", got)
	}
}

// TestWriteConfig checks that the benchmark's configuration is one the
// checker accepts, with the queues spread as asked.
func TestWriteConfig(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.yaml")
	err := run([]string{"-write-config", path, "-endpoint", "https://127.0.0.1:8443", "-queues", "1001", "-groups", "10",
		"-interval", "5s", "-idle-sample-interval", "1m", "-per-queue", "failed_only"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	queues, regions := 0, map[string]int{}
	for _, g := range cfg.Groups {
		queues += len(g.Queues)
		if g.IdleSampleInterval != time.Minute {
			t.Errorf("%s: idle_sample_interval %s", g.Name, g.IdleSampleInterval)
		}
		for _, q := range g.Queues {
			regions[q.Region]++
		}
	}
	if queues != 1001 || len(cfg.Groups) != 10 || len(regions) != 4 || cfg.Interval != 5*time.Second ||
		cfg.Metrics.PerQueue != config.PerQueueFailedOnly || !cfg.DryRun {
		t.Errorf("%d queues in %d groups over %v, interval %s, per_queue %q, dry run %v",
			queues, len(cfg.Groups), regions, cfg.Interval, cfg.Metrics.PerQueue, cfg.DryRun)
	}
	if err := run([]string{"-write-config", path}, io.Discard, io.Discard); err == nil {
		t.Error("-write-config without -endpoint accepted")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
