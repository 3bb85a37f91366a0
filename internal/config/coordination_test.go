package config

import (
	"strings"
	"testing"
	"time"
)

const coordinationGroups = `
groups:
  - name: jobs
    queues:
      - url: https://sqs.us-east-1.amazonaws.com/123456789012/jobs
    workers: {service_time: 200ms}
    target: {latency: 30s}
    fleet: {max: 10}
`

// TestCoordinationBlock decodes the coordination block: absent means none,
// an absent lease_duration is 3 intervals, and the bounds hold.
func TestCoordinationBlock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, c Config)
		want  []string // problems, exactly; none means valid
	}{
		{name: "absent", yaml: "interval: 2s\n", check: func(t *testing.T, c Config) {
			if c.Coordination != nil {
				t.Errorf("coordination = %+v, want nil", c.Coordination)
			}
		}},
		{name: "defaults", yaml: "interval: 2s\ncoordination: {dynamodb: {table: leases}}\n", check: func(t *testing.T, c Config) {
			check(t, "lease_duration", c.Coordination.LeaseDuration, 6*time.Second)
			check(t, "table", c.Coordination.DynamoDB.Table, "leases")
			check(t, "region", c.Coordination.DynamoDB.Region, "")
			check(t, "identity", c.Coordination.Identity, "")
		}},
		{name: "everything set", yaml: "interval: 2s\ncoordination:\n  dynamodb: {table: queue-checker.leases_1, region: eu-west-1}\n" +
			"  lease_duration: 4s\n  identity: arn:aws:ecs:eu-west-1:123456789012:task/jobs/0a1b\n", check: func(t *testing.T, c Config) {
			check(t, "lease_duration", c.Coordination.LeaseDuration, 4*time.Second)
			check(t, "region", c.Coordination.DynamoDB.Region, "eu-west-1")
			check(t, "identity", c.Coordination.Identity, "arn:aws:ecs:eu-west-1:123456789012:task/jobs/0a1b")
		}},
		{name: "lease just under two intervals", yaml: "interval: 2s\ncoordination: {dynamodb: {table: leases}, lease_duration: 3999ms}\n",
			want: []string{"coordination.lease_duration: must be at least 2 intervals (4s), got 3.999s (line 2)"}},
		{name: "no table", yaml: "coordination: {lease_duration: 1m}\n",
			want: []string{"coordination.dynamodb.table: required: the DynamoDB table of the leases, such as queue-checker-leases (or coordination.kubernetes for Leases) (line 1)"}},
		{name: "empty block", yaml: "interval: 2s\ncoordination: {}\n",
			want: []string{"coordination.dynamodb.table: required: the DynamoDB table of the leases, such as queue-checker-leases (or coordination.kubernetes for Leases) (line 2)"}},
		{name: "table name too long", yaml: "coordination: {dynamodb: {table: " + strings.Repeat("t", 256) + "}}\n",
			want: []string{`coordination.dynamodb.table: must be 3 to 255 letters, digits, '_', '-' or '.', got "` + strings.Repeat("t", 256) + `" (line 1)`}},
		{name: "identity too long", yaml: "coordination: {dynamodb: {table: leases}, identity: " + strings.Repeat("i", 129) + "}\n",
			want: []string{`coordination.identity: must be 1 to 128 letters, digits and ._:@/+-, starting with a letter or digit; got "` + strings.Repeat("i", 129) + `" (line 1)`}},
		{name: "kubernetes", yaml: "interval: 2s\ncoordination: {kubernetes: {namespace: queue-checker}, identity: pod-0}\n", check: func(t *testing.T, c Config) {
			if c.Coordination.Kubernetes == nil {
				t.Fatal("coordination.kubernetes: nil")
			}
			check(t, "namespace", c.Coordination.Kubernetes.Namespace, "queue-checker")
			check(t, "lease_duration", c.Coordination.LeaseDuration, 6*time.Second)
			check(t, "table", c.Coordination.DynamoDB.Table, "")
		}},
		{name: "kubernetes without a namespace", yaml: "coordination: {kubernetes: {}}\n",
			want: []string{"coordination.kubernetes.namespace: required: the namespace of the Leases, the checker's own, such as queue-checker (line 1)"}},
		{name: "kubernetes namespace not a name", yaml: "coordination: {kubernetes: {namespace: Queue_Checker}}\n",
			want: []string{`coordination.kubernetes.namespace: must be a namespace name (at most 63 lower-case letters, digits and '-'), got "Queue_Checker" (line 1)`}},
		{name: "both stores", yaml: "coordination: {kubernetes: {namespace: qc}, dynamodb: {table: leases}}\n",
			want: []string{"coordination: set one of dynamodb and kubernetes, not both: the leases live in one place (line 1)"}},
		{name: "kubernetes unknown key", yaml: "coordination: {kubernetes: {namespace: qc, name: leases}}\n",
			want: []string{"coordination.kubernetes.name"}},
		{name: "unknown key", yaml: "coordination: {dynamodb: {table: leases, billing: on-demand}}\n",
			want: []string{"coordination.dynamodb.billing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := Parse([]byte(tt.yaml + coordinationGroups))
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				tt.check(t, c)
				return
			}
			if err == nil {
				t.Fatalf("Parse accepted it, want %q", tt.want)
			}
			got := strings.Split(err.Error(), "\n")
			if len(got) != len(tt.want) {
				t.Fatalf("problems:\n%s\nwant %d: %q", err, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}
