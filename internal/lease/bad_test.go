package lease

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Items no checker writes so cannot starve a group: an item with its key
// alone, one whose counter is a string, and a lease of a checker whose
// clock is ten years ahead (its heartbeat too). Two checkers take every
// group within a few syncs, count the bad items, and share the groups
// between the two of them (the far-future checker is not counted live).
func TestBadItemsAreTakenOver(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(4)
	put := func(item map[string]types.AttributeValue) { putItem(t, c, tbl, item) }
	s, n := str, number
	decade := clk.Now().AddDate(10, 0, 0).UnixMilli()
	put(map[string]types.AttributeValue{"key": s("group/g00")})
	put(map[string]types.AttributeValue{"key": s("group/g01"), "owner": s("ghost"), "counter": s("seven")})
	put(map[string]types.AttributeValue{"key": s("group/g02"), "owner": s("ghost"), "counter": n(3), "expires": n(decade)})
	put(map[string]types.AttributeValue{"key": s("checker/ghost"), "owner": s("ghost"), "expires": n(decade)})

	regA := prometheus.NewRegistry()
	a := newManager(t, c, tbl, "a", groups, clk, regA)
	b := newManager(t, c, tbl, "b", groups, clk, prometheus.NewRegistry())
	for range 4 {
		sync1(t, clk, a, b)
	}
	got := owners(readTable(t, c, tbl))
	if got["a"]+got["b"] != 4 || got["a"] != 2 || got["ghost"] != 0 || got[""] != 0 {
		t.Fatalf("owners after four syncs = %v, want a:2 b:2 and no group left to the bad items", got)
	}
	// The bad items were repaired by the takeover: none is left.
	if v := testutil.ToFloat64(a.metrics.bad); v != 1 {
		// The ghost's heartbeat stays (no checker rewrites another's).
		t.Errorf("checker_lease_bad_items = %v, want 1 (the far-future heartbeat)", v)
	}
}

// putItem writes an item into the table as it is, as something other than
// a checker would.
func putItem(t *testing.T, c *dynamodb.Client, tbl string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item}); err != nil {
		t.Fatal(err)
	}
}
