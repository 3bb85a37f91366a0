package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// validate --check-aws reads what a valid configuration names, against
// moto: a lease table, queues and an Auto Scaling group that exist pass;
// a missing table, a missing queue and a missing group are each a line
// naming its YAML path, and exit 1. Nothing is created or changed.
func TestE2EValidateCheckAWS(t *testing.T) {
	moto := awstest.Shared(t)
	f := direct(t)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	q := makeQueue(t, f, queueSpec{region: east, visible: 2})
	q2 := makeQueue(t, f, queueSpec{region: east})
	table := awstest.UniqueName(t, "leases")
	awstest.CreateLeaseTable(t, f.DynamoDB(east), table)
	asg := awstest.UniqueName(t, "workers")
	awstest.CreateAutoScalingGroup(t, f.AutoScaling(east), east, asg, 0, 5, 1)

	doc := func(table, queue2, asg string) string {
		// 10 s: each check's call gets 80 % of it, on a loaded emulator too.
		return fmt.Sprintf(`interval: 10s
aws: {region: %[1]s, endpoint_url: %[2]s, cloudwatch_protocol: json}
coordination: {dynamodb: {table: %[3]s}}
groups:
  - name: jobs
    queues: [{url: %[4]q}, {url: %[5]q}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    fleet: {autoscaling_group: {name: %[6]s}, max: 5}
`, east, moto.URL, table, q.url, queue2, asg)
	}
	write := func(name, text string) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}

	good := write("good.yaml", doc(table, q2.url, asg))
	code, stdout, stderr := runValidate(t, "--config", good, "--check-aws")
	if code != 0 || !strings.Contains(stdout, "ok (1 group; checked against AWS)") {
		t.Fatalf("good configuration: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}

	missingQueue := strings.TrimSuffix(q.url, "/") + "-gone"
	bad := write("bad.yaml", doc(table+"-gone", missingQueue, asg+"-gone"))
	code, stdout, stderr = runValidate(t, "--config", bad, "--check-aws")
	if code != 1 {
		t.Fatalf("bad configuration: exit %d, want 1; stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		bad + ": aws: coordination.dynamodb.table: lease table " + table + "-gone does not exist",
		bad + ": aws: groups[0].queues[1].url: " + missingQueue[strings.LastIndex(missingQueue, "/")+1:] + " (client_error)",
		bad + ": aws: groups[0].fleet: ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "groups[0].queues[0]") {
		t.Errorf("the queue that exists is reported:\n%s", stderr)
	}
	// Without the flag the same file is valid: nothing is read.
	if code, _, stderr := runValidate(t, "--config", bad); code != 0 {
		t.Errorf("without --check-aws: exit %d, want 0; stderr:\n%s", code, stderr)
	}
}
