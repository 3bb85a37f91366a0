package lease

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Lease items whose counter is a number but not one a checker writes (a
// whole number >= 0): negative, fractional, beyond 64 bits; and a lease of
// an owner with no heartbeat that runs four minutes ahead, far beyond a
// lease duration. Each is taken on a condition on its exact stored value,
// counted as bad at the first scan, and every group has an owner within a
// lease duration and two intervals; Healthy stays nil throughout (a data
// problem is no liveness failure).
func TestUnparsableCountersAreTaken(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	start := clk.Now()
	groups := groupNames(6)
	put := func(item map[string]types.AttributeValue) { putItem(t, c, tbl, item) }
	num := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	exp := number(start.Add(time.Second).UnixMilli())
	for i, v := range []string{"-1", "-2", "1.5", "99999999999999999999999"} {
		put(map[string]types.AttributeValue{"key": str("group/" + groups[i]), "owner": str("ghost"), "counter": num(v), "expires": exp})
	}
	put(map[string]types.AttributeValue{"key": str("group/g04"), "owner": str("gone"), "counter": number(3),
		"expires": number(start.Add(4 * time.Minute).UnixMilli())})

	regA := prometheus.NewRegistry()
	a := newManager(t, c, tbl, "a", groups, clk, regA)
	b := newManager(t, c, tbl, "b", groups, clk, prometheus.NewRegistry())
	if err := syncNow(a); err != nil {
		t.Fatal(err)
	}
	if v := testutil.ToFloat64(a.metrics.bad); v != 5 {
		t.Errorf("checker_lease_bad_items at the first scan = %v, want 5 (four counters, one expiry)", v)
	}
	bound := duration + 2*interval
	owned := time.Duration(-1)
	for clk.Now().Sub(start) < bound {
		sync1(t, clk, a, b)
		for _, m := range []*Manager{a, b} {
			if err := m.Healthy(); err != nil {
				t.Errorf("%s: Healthy() = %v at %s, want nil: a bad item is no liveness failure", m.Identity(), err, clk.Now().Sub(start))
			}
		}
		if got := owners(readTable(t, c, tbl)); got["a"]+got["b"] == len(groups) {
			owned = clk.Now().Sub(start)
			break
		}
	}
	if owned < 0 {
		t.Fatalf("after %s (a lease and two intervals) owners = %v, want every group held by a or b",
			bound, owners(readTable(t, c, tbl)))
	}
	t.Logf("every group owned %s after the first sync", owned)
}
