package lease

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// TestTakeSeenToFailWaitsOutThePreviousLease: a checker steals a lease, the
// write lands but its answer is lost (the retry then fails on the condition
// the first attempt changed). When the next scan shows the lease its own,
// it holds it, and acts only once the lease it took over has ended, as a
// take it saw succeed would.
func TestTakeSeenToFailWaitsOutThePreviousLease(t *testing.T) {
	t.Parallel()
	direct, tbl := table(t)
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	clk := newClock()
	groups := groupNames(4)
	a := newManager(t, direct, tbl, "a", groups, clk, prometheus.NewRegistry())
	sync1(t, clk, a)
	sync1(t, clk, a)
	b := newManager(t, client(t, proxy.URL), tbl, "b", groups, clk, prometheus.NewRegistry())
	sync1(t, clk, b, a) // b learns
	before := readTable(t, direct, tbl)

	stop := proxy.Inject(func(r *awstest.Request) bool {
		body := string(r.Body)
		return r.Operation() == "UpdateItem" && strings.Contains(body, `"S":"group/`) && strings.Contains(body, `":o":{"S":"b"}`)
	}, awstest.Fault{Kind: awstest.FaultLoseAnswer, Times: 1})
	clk.Add(interval)
	_ = syncNow(b) // b steals one lease; it sees the write fail
	stop()
	if proxy.Injected(awstest.FaultLoseAnswer) != 1 {
		t.Fatal("b's take was not sent through the fault")
	}
	rows := readTable(t, direct, tbl)
	stolen := ""
	for g, r := range rows {
		if r.owner == "b" {
			stolen = g
		}
	}
	if stolen == "" {
		t.Fatalf("the take did not land: owners %v", owners(rows))
	}
	prev := before[stolen].expires     // a's lease as b saw it when it took it
	if err := syncNow(a); err != nil { // a learns it lost the lease
		t.Fatal(err)
	}

	for clk.Now().Before(prev) {
		clk.Add(interval / 2)
		if err := syncNow(b); err != nil {
			t.Fatal(err)
		}
		if _, ok := b.Permit(stolen); ok && clk.Now().Before(prev) {
			t.Fatalf("b acts on %s %s before the lease it took over ends", stolen, prev.Sub(clk.Now()))
		}
	}
	sync1(t, clk, b)
	if _, ok := b.Permit(stolen); !ok {
		t.Errorf("b does not act on %s after the lease it took over ended", stolen)
	}
	if _, ok := a.Permit(stolen); ok {
		t.Errorf("a still acts on %s after losing it", stolen)
	}
}
