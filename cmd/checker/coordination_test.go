package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnceApplyRefusesCoordination: `once --apply` would act beside the
// checkers holding the leases, so a configuration with a coordination block
// is refused (exit 2) before any AWS call.
func TestOnceApplyRefusesCoordination(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, `interval: 2s
aws: {region: us-east-1, endpoint_url: "http://127.0.0.1:9"}
coordination: {dynamodb: {table: leases}}
groups:
  - name: jobs
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}]
    workers: {service_time: 200ms}
    target: {latency: 30s}
    fleet: {autoscaling_group: {name: jobs-workers}, max: 10}
    actions: {set_desired_capacity: true}
`)
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"once", "--config", path, "--apply"}, &stdout, &stderr)
	if code != 2 {
		t.Errorf("once --apply with coordination exited %d, want 2\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "coordination") {
		t.Errorf("the refusal does not name the coordination block: %q", stderr.String())
	}
}
