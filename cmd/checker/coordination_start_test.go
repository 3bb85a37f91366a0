package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/lease"
)

// A checker whose coordination block names a table that does not exist
// fails at start, naming the key, instead of running and acting on no
// group; with the table there, it starts.
func TestStartFailsWithoutTheLeaseTable(t *testing.T) {
	t.Parallel()
	f := direct(t)
	ctx := context.Background()
	q := makeQueue(t, f, queueSpec{region: east})
	groups := []e2eGroup{{name: "g", queues: []testQueue{q}, serviceTime: time.Second, latency: 10 * time.Second,
		asg: makeASG(t, f, 0, 3, 0), max: 3}}
	table := awstest.UniqueName(t, "leases")
	awstest.CreateLeaseTable(t, f.DynamoDB(east), table)
	for _, tc := range []struct {
		table string
		fail  bool
	}{{"nope", true}, {table, false}} {
		path := filepath.Join(t.TempDir(), "checker.yaml")
		// A 5 s interval: the start-up check of the table gets 80 % of it,
		// on a loaded emulator too.
		writeFile(t, path, leaseConfig(awstest.Shared(t).URL, tc.table, "a", 5*time.Second, groups))
		_, cfg, _, err := loadConfig(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := newLeases(ctx, cfg, prometheus.NewRegistry(), zap.NewNop())
		switch {
		case tc.fail && (!errors.Is(err, lease.ErrNoTable) || !strings.Contains(err.Error(), "coordination.dynamodb.table") || !strings.Contains(err.Error(), "nope")):
			t.Errorf("table %s: newLeases = %v, want an error naming coordination.dynamodb.table and the table", tc.table, err)
		case !tc.fail && (err != nil || m == nil):
			t.Errorf("table %s: newLeases = %v, %v, want a manager", tc.table, m, err)
		}
	}
}
