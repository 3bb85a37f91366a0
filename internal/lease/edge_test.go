package lease

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// actGaps follows, interval by interval, how long each group has gone
// without a checker that may act on it (Permit), from the test's start.
type actGaps struct {
	since   map[string]time.Time // when each group was last acted on
	longest map[string]time.Duration
}

func newActGaps(groups []string, start time.Time) *actGaps {
	g := &actGaps{since: map[string]time.Time{}, longest: map[string]time.Duration{}}
	for _, n := range groups {
		g.since[n] = start
	}
	return g
}

// look records who may act now; it fails the test when two may.
func (g *actGaps) look(t *testing.T, now time.Time, ms ...*Manager) {
	t.Helper()
	for n, since := range g.since {
		actors := 0
		for _, m := range ms {
			if _, ok := m.Permit(n); ok {
				actors++
			}
		}
		if actors > 1 {
			t.Errorf("%s: %d checkers may act at once", n, actors)
		}
		if actors == 1 {
			g.since[n] = now
			continue
		}
		g.longest[n] = max(g.longest[n], now.Sub(since))
	}
}

// setCounter rewrites one lease's counter in place, as something other
// than a checker would, leaving its owner, session and expiry.
func setCounter(t *testing.T, c *dynamodb.Client, tbl, group string, v types.AttributeValue) {
	t.Helper()
	if _, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
		TableName: aws.String(tbl), Key: keyOf(groupPrefix + group),
		UpdateExpression:          aws.String("SET #c = :v"),
		ExpressionAttributeNames:  map[string]string{"#c": attrCounter},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": v},
	}); err != nil {
		t.Fatal(err)
	}
}

// Lease counters at the edges of int64 and beyond: 9223372036854775807
// and ...806 (the renewal's ADD would carry past 64 bits), 0, -1, the
// smallest int64, one past the largest, and a string; first as leases of
// a checker that is gone, then written in place under the live owner.
// Every group is acted on by exactly one checker within a lease and two
// intervals of the start, never loses its owner once taken, and is never
// without an actor for longer than a lease and two intervals.
func TestCounterEdgesKeepGroupsOwned(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	start := clk.Now()
	groups := groupNames(7)
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	edges := []types.AttributeValue{
		n("9223372036854775807"), n("9223372036854775806"), n("0"), n("-1"),
		n("-9223372036854775808"), n("9223372036854775808"), str("12"),
	}
	exp := number(start.Add(time.Second).UnixMilli())
	for i, v := range edges {
		putItem(t, c, tbl, map[string]types.AttributeValue{"key": str(groupPrefix + groups[i]), "owner": str("gone"), "counter": v, "expires": exp})
	}
	regs := []*prometheus.Registry{prometheus.NewRegistry(), prometheus.NewRegistry()}
	a := newManager(t, c, tbl, "a", groups, clk, regs[0])
	b := newManager(t, c, tbl, "b", groups, clk, regs[1])
	bound := duration + 2*interval
	gaps := newActGaps(groups, start)
	step := func() {
		t.Helper()
		sync1(t, clk, a, b)
		gaps.look(t, clk.Now(), a, b)
	}
	for clk.Now().Sub(start) < bound {
		step()
	}
	for _, g := range groups {
		if now := clk.Now(); !now.Equal(gaps.since[g]) {
			t.Errorf("%s: no checker may act %s after the start (last at %s), want one within %s", g, now.Sub(start), gaps.since[g].Sub(start), bound)
		}
	}
	lost := func() float64 {
		return testutil.ToFloat64(a.metrics.changes.WithLabelValues(ReasonLost)) + testutil.ToFloat64(b.metrics.changes.WithLabelValues(ReasonLost))
	}
	lostBefore := lost()
	// Several leases' worth of renewals: the counters at 64 bits' end
	// start over instead of overflowing.
	for range 8 {
		step()
	}
	rows := readTable(t, c, tbl)
	for _, g := range groups[:2] {
		if r := rows[g]; r.counter > 100 {
			t.Errorf("%s: counter %d after renewals from the 64-bit edge, want it started over", g, r.counter)
		}
	}
	// In place, under the live owner: the counter at the largest int64, a
	// string, a negative number.
	ownerBefore := map[string]string{}
	for g, r := range readTable(t, c, tbl) {
		ownerBefore[g] = r.owner
	}
	setCounter(t, c, tbl, groups[2], n("9223372036854775807"))
	setCounter(t, c, tbl, groups[3], str("garbage"))
	setCounter(t, c, tbl, groups[4], n("-5"))
	for range 8 {
		step()
	}
	for g, r := range readTable(t, c, tbl) {
		if r.owner != ownerBefore[g] {
			t.Errorf("%s: owner %q, was %q before its counter was rewritten in place; want it kept", g, r.owner, ownerBefore[g])
		}
	}
	if l := lost() - lostBefore; l != 0 {
		t.Errorf("%v leases lost after every group was taken, want 0", l)
	}
	for _, g := range groups {
		if gaps.longest[g] > bound {
			t.Errorf("%s: %s without a checker that may act, want at most %s (a lease and two intervals)", g, gaps.longest[g], bound)
		}
	}
	t.Logf("longest time without an actor, by group: %v", gaps.longest)
}

// A ghost heartbeat: a checker item that no process writes, with an
// expiry 4.5 minutes ahead (within the clock-skew bound, so its expiry
// alone does not give it away). The live checkers would give it its share
// of the groups, which it never takes; its heartbeat never changing gives
// it away after a lease, and every group is acted on within a lease and
// two intervals of the start. Later a second ghost appears just as a live
// checker dies: the dead checker's groups are acted on again within a
// lease and two intervals of its last renewal.
func TestGhostHeartbeatLeavesNoGroupUnowned(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	start := clk.Now()
	groups := groupNames(6)
	ghost := func(id string) {
		putItem(t, c, tbl, map[string]types.AttributeValue{"key": str(checkerPrefix + id), "owner": str(id), "session": str("none"),
			"counter": number(1), "expires": number(clk.Now().Add(270 * time.Second).UnixMilli())})
	}
	ghost("ghost")
	regA := prometheus.NewRegistry()
	a := newManager(t, c, tbl, "a", groups, clk, regA)
	b := newManager(t, c, tbl, "b", groups, clk, prometheus.NewRegistry())
	c3 := newManager(t, c, tbl, "c", groups, clk, prometheus.NewRegistry())
	bound := duration + 2*interval
	gaps := newActGaps(groups, start)
	live := []*Manager{a, b, c3}
	step := func() {
		t.Helper()
		sync1(t, clk, live...)
		gaps.look(t, clk.Now(), a, b, c3)
	}
	for clk.Now().Sub(start) < bound+4*interval {
		step()
	}
	for _, g := range groups {
		if gaps.longest[g] > bound {
			t.Errorf("%s: %s without a checker that may act, with a ghost heartbeat; want at most %s", g, gaps.longest[g], bound)
		}
	}
	if got := owners(readTable(t, c, tbl)); got["a"]+got["b"]+got["c"] != len(groups) {
		t.Errorf("owners = %v, want every group held by a, b or c", got)
	}
	if v := testutil.ToFloat64(a.metrics.bad); v != 1 {
		t.Errorf("checker_lease_bad_items = %v, want 1 (the ghost's heartbeat)", v)
	}
	// c dies (no release); a second ghost appears at once.
	died := clk.Now()
	live = []*Manager{a, b}
	ghost("ghost2")
	for clk.Now().Sub(died) < bound+3*interval {
		step()
	}
	for _, g := range groups {
		if gaps.longest[g] > bound {
			t.Errorf("%s: %s without a checker that may act after c died (at %s), with a new ghost; want at most %s",
				g, gaps.longest[g], died.Sub(start), bound)
		}
	}
	if got := owners(readTable(t, c, tbl)); got["a"]+got["b"] != len(groups) {
		t.Errorf("owners = %v, want every group held by a or b", got)
	}
	t.Logf("longest time without an actor, by group: %v", gaps.longest)
}
