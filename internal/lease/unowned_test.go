package lease

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// Three checkers meet a table with garbage in it: an item with its key
// alone, a counter that is a string, a lease and a heartbeat of a checker
// whose clock is ten years ahead, a lease freed by its owner, and a lease
// of a checker that died (no heartbeat). Every group has a live owner
// within a lease duration and two intervals of the first sync, the groups
// are shared two each, and no checker reports a group without owner.
func TestThreeCheckersTakeEveryGroupFromGarbage(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(6)
	put := func(item map[string]types.AttributeValue) { putItem(t, c, tbl, item) }
	s, n := str, number
	start := clk.Now()
	decade := start.AddDate(10, 0, 0).UnixMilli()
	put(map[string]types.AttributeValue{"key": s("group/g00")})
	put(map[string]types.AttributeValue{"key": s("group/g01"), "owner": s("ghost"), "counter": s("seven")})
	put(map[string]types.AttributeValue{"key": s("group/g02"), "owner": s("ghost"), "counter": n(3), "expires": n(decade)})
	put(map[string]types.AttributeValue{"key": s("checker/ghost"), "owner": s("ghost"), "expires": n(decade)})
	put(map[string]types.AttributeValue{"key": s("group/g03"), "owner": s(""), "counter": n(5), "expires": n(start.UnixMilli())})
	put(map[string]types.AttributeValue{"key": s("group/g04"), "owner": s("dead"), "counter": n(9), "expires": n(start.Add(time.Second).UnixMilli())})

	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry(), prometheus.NewRegistry()}
	ms := []*Manager{
		newManager(t, c, tbl, "a", groups, clk, regs[0]),
		newManager(t, c, tbl, "b", groups, clk, regs[1]),
		newManager(t, c, tbl, "c", groups, clk, regs[2]),
	}
	bound := duration + 2*interval
	owned := time.Duration(-1)
	for clk.Now().Sub(start) < bound {
		sync1(t, clk, ms...)
		got := owners(readTable(t, c, tbl))
		if got["a"]+got["b"]+got["c"] == len(groups) {
			owned = clk.Now().Sub(start)
			break
		}
	}
	if owned < 0 {
		t.Fatalf("after %s (a lease and two intervals) owners = %v, want every group held by a, b or c",
			bound, owners(readTable(t, c, tbl)))
	}
	// Balancing may take a few more intervals; no group loses its owner.
	for range 4 {
		sync1(t, clk, ms...)
	}
	got := owners(readTable(t, c, tbl))
	if got["a"] != 2 || got["b"] != 2 || got["c"] != 2 {
		t.Errorf("owners = %v, want two groups each", got)
	}
	for _, m := range ms {
		if un := m.Unowned(); len(un) != 0 {
			t.Errorf("%s reports %v without owner", m.Identity(), un)
		}
		if v := testutil.ToFloat64(m.metrics.unowned); v != 0 {
			t.Errorf("%s: checker_groups_unowned = %v, want 0", m.Identity(), v)
		}
		if err := m.Healthy(); err != nil {
			t.Errorf("%s unhealthy: %v", m.Identity(), err)
		}
	}
	t.Logf("every group owned %s after the first sync", owned)
}

// A group whose lease no checker can take (every write of it fails its
// condition, as against an item that something else keeps rewriting) is
// reported by every checker serving it within a lease duration and two
// intervals: Unowned names it, checker_groups_unowned counts it, Degraded
// names it (Healthy stays nil). Each checker warns of the failed takes once, not at
// every sync; when the writes go through again the group is taken and the
// report clears.
func TestUnownedGroupIsReportedEverywhere(t *testing.T) {
	t.Parallel()
	_, tbl := table(t)
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	stop := proxy.Inject(func(r *awstest.Request) bool {
		return awstest.MatchOperation("UpdateItem")(r) && awstest.MatchBody(`"group/g01"`)(r)
	}, awstest.Fault{Kind: awstest.FaultThrottle, Code: "ConditionalCheckFailedException"})
	clk := newClock()
	start := clk.Now()
	groups := groupNames(3)
	type checker struct {
		m    *Manager
		logs *observer.ObservedLogs
	}
	var cs []checker
	for _, id := range []string{"a", "b"} {
		core, logs := observer.New(zapcore.DebugLevel)
		m, err := New(client(t, proxy.URL), Options{
			Table: tbl, Identity: id, Duration: duration, Interval: interval, ActionDeadline: deadline,
			Groups: groups, Logger: zap.New(core), Registerer: prometheus.NewRegistry(), Now: clk.Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, checker{m, logs})
	}
	syncAll := func() {
		t.Helper()
		clk.Add(interval)
		for _, c := range cs {
			if err := syncNow(c.m); err != nil {
				t.Fatalf("%s: sync: %v", c.m.Identity(), err)
			}
		}
	}
	bound := duration + 2*interval
	for clk.Now().Sub(start) < bound {
		syncAll()
	}
	for _, c := range cs {
		id := c.m.Identity()
		if un := c.m.Unowned(); len(un) != 1 || un[0] != "g01" {
			t.Errorf("%s: Unowned() = %v after %s, want [g01]", id, un, bound)
		}
		if v := testutil.ToFloat64(c.m.metrics.unowned); v != 1 {
			t.Errorf("%s: checker_groups_unowned = %v, want 1", id, v)
		}
		if err := c.m.Degraded(); err == nil || !strings.Contains(err.Error(), "g01") {
			t.Errorf("%s: Degraded() = %v, want an error naming g01", id, err)
		}
		if err := c.m.Healthy(); err != nil {
			t.Errorf("%s: Healthy() = %v, want nil: a group nobody can take is no liveness failure", id, err)
		}
	}
	// More syncs, more failed takes: still one warning each.
	for range 3 {
		syncAll()
	}
	for _, c := range cs {
		warned := c.logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("lease not taken").Len()
		tries := c.logs.FilterMessageSnippet("lease not taken").Len()
		if warned > 1 {
			t.Errorf("%s warned %d times of failed takes of g01, want once an episode", c.m.Identity(), warned)
		}
		if tries > 1 && warned != 1 {
			t.Errorf("%s failed %d takes of g01 and warned %d times, want once", c.m.Identity(), tries, warned)
		}
	}
	stop()
	for range 3 {
		syncAll()
	}
	for _, c := range cs {
		if un := c.m.Unowned(); len(un) != 0 {
			t.Errorf("%s: Unowned() = %v once the writes go through, want none", c.m.Identity(), un)
		}
		if err := c.m.Degraded(); err != nil {
			t.Errorf("%s: Degraded() = %v once g01 is taken", c.m.Identity(), err)
		}
	}
}

// The manager's own clock carries no monotonic reading: the expiry it
// checks its actions against is the wall-clock time its peers read in the
// table, even across a pause of the machine.
func TestDefaultClockIsWallClock(t *testing.T) {
	t.Parallel()
	m, err := New(scanFails{}, Options{Table: "t", Identity: "a", Duration: duration, Interval: interval})
	if err != nil {
		t.Fatal(err)
	}
	now := m.now()
	if strings.Contains(now.String(), " m=") {
		t.Errorf("the lease clock reads %s, with a monotonic reading", now)
	}
	if d := time.Since(now); d < -time.Second || d > time.Second {
		t.Errorf("the lease clock is %s off the time", d)
	}
}
