package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// TestE2EActivationWakesFromZero: an Auto Scaling group at zero with
// min 0 and activation 3 stays at zero while two messages wait, and
// `once --apply` sets it to one worker or more as soon as a third arrives.
// A paused twin (fleet.paused) sees the same messages and is never scaled.
func TestE2EActivationWakesFromZero(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	q := makeQueue(t, f, queueSpec{region: east, visible: 2})
	asg := makeASG(t, f, 0, 10, 0)
	pausedASG := makeASG(t, f, 0, 10, 0)
	doc := fmt.Sprintf(`interval: 5s
aws: {region: %[1]s, endpoint_url: %[2]s, cloudwatch_protocol: json}
groups:
  - name: sleepy
    queues: [{url: %[3]q}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    fleet: {autoscaling_group: {name: %[4]s}, min: 0, max: 10, activation: 3}
    actions: {set_desired_capacity: true}
  - name: paused
    queues: [{url: %[3]q, shared: true}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    fleet: {autoscaling_group: {name: %[5]s}, min: 0, max: 10, paused: true}
    actions: {set_desired_capacity: true}
`, east, moto.URL, q.url, asg, pausedASG)
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, doc)

	code, ds, _, stderr := runOnce(t, path, "--apply")
	if code != 0 {
		t.Fatalf("once --apply: exit %d: %s", code, stderr)
	}
	if got := asgDesired(t, f, asg); got != 0 || byGroup(ds)["sleepy"].DesiredWorkers != 0 {
		t.Errorf("two messages below activation 3: desired %d (decision %d), want 0; %q", got, byGroup(ds)["sleepy"].DesiredWorkers, byGroup(ds)["sleepy"].Reasons)
	}
	sendMessages(t, f, q, 1, 0)
	start := time.Now()
	code, ds, _, stderr = runOnce(t, path, "--apply")
	if code != 0 {
		t.Fatalf("once --apply: exit %d: %s", code, stderr)
	}
	if got := asgDesired(t, f, asg); got < 1 {
		t.Errorf("three messages reach activation 3: desired %d, want at least 1; %q", got, byGroup(ds)["sleepy"].Reasons)
	}
	t.Logf("woken on the first cycle after the third message, %s later", time.Since(start).Round(time.Millisecond))
	if got := asgDesired(t, f, pausedASG); got != 0 || !byGroup(ds)["paused"].Paused {
		t.Errorf("paused group: desired %d, paused %v; want 0 and paused", got, byGroup(ds)["paused"].Paused)
	}
}
