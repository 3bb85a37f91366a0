package config

import (
	"fmt"
	"strings"
	"testing"
)

// manyGroups writes a configuration of n groups, written out (no alias),
// each shaped like the example's: every block present.
func manyGroups(n int) []byte {
	var b strings.Builder
	b.WriteString("interval: 5s\naws: {region: us-east-1}\ngroups:\n")
	for i := range n {
		fmt.Fprintf(&b, `  - name: group-%05d
    queues:
      - url: https://sqs.us-east-1.amazonaws.com/123456789012/q-%05d
    count: {in_flight: true, delayed: false}
    oldest_age: {cloudwatch: false, stale_after: 5m}
    workers: {service_time: 800ms, concurrency: 4}
    target:
      policy: model
      latency: 30s
      latency_quantile: 0.99
      drain_time: 15m
      utilization: 0.8
      burst_reserve: 25
      overhead_reserve: 10
      safety_workers: 1
      deadband: 0.1
    fleet:
      autoscaling_group: {name: workers-%05d, region: us-east-1}
      min: 0
      max: 60
      cap: 40
      start_delay: 90s
      scale_in_stabilization: 5m
      activation: 1
    actions:
      set_desired_capacity: true
      cloudwatch_metrics: {namespace: QueueChecker}
`, i, i, i)
	}
	return []byte(b.String())
}

// TestLargeConfigAccepted: ten thousand groups written out have far more
// than maxVisits values, none of them through an alias, and are accepted.
func TestLargeConfigAccepted(t *testing.T) {
	t.Parallel()
	c, err := Parse(manyGroups(10_000))
	if err != nil {
		t.Fatalf("10,000 groups: %v", err)
	}
	if len(c.Groups) != 10_000 || c.Groups[9999].Name != "group-09999" {
		t.Errorf("parsed %d groups", len(c.Groups))
	}
}

// TestAliasesStillCounted: a list shared through an alias by many groups
// counts each expansion, so sharing it a few times is fine and sharing it
// past 100,000 values is refused as a bomb.
func TestAliasesStillCounted(t *testing.T) {
	t.Parallel()
	doc := func(groups int) []byte {
		var b strings.Builder
		b.WriteString("groups:\n  - name: g0\n    workers: {service_time: 1s}\n    target: {latency: 30s}\n    fleet: {max: 5}\n    queues: &qs\n")
		for i := range 100 { // 100 entries of one key: 200 values per expansion
			fmt.Fprintf(&b, "      - {url: \"https://sqs.us-east-1.amazonaws.com/1/q%d\"}\n", i)
		}
		for i := 1; i < groups; i++ {
			fmt.Fprintf(&b, "  - {name: g%d, queues: *qs, workers: {service_time: 1s}, target: {latency: 30s}, fleet: {max: 5}}\n", i)
		}
		return []byte(b.String())
	}
	for _, tt := range []struct {
		groups int
		bomb   bool
	}{{10, false}, {600, true}} {
		_, err := Parse(doc(tt.groups))
		got := err != nil && strings.Contains(err.Error(), "through aliases and merges")
		if got != tt.bomb {
			t.Errorf("%d groups sharing a list of 100 queues: refused as a bomb %v, want %v (%.300v)", tt.groups, got, tt.bomb, err)
		}
	}
}

func BenchmarkParseLarge(b *testing.B) {
	data := manyGroups(5_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
