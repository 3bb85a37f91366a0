package lease

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(awstest.M(m)) }

const (
	interval = time.Second
	duration = 3 * time.Second
	deadline = 800 * time.Millisecond
)

// clock is a wall clock the test moves by hand, shared by every manager of
// a test, starting at the real time (so that the items' ttl makes sense).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Truncate(time.Millisecond)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// client returns a DynamoDB client of endpoint (moto, or a proxy to it).
func client(t *testing.T, endpoint string) *dynamodb.Client {
	t.Helper()
	return awsclienttest.Factory(t, endpoint, awsclienttest.MaxAttempts(3)).DynamoDB("us-east-1")
}

// table creates a lease table in moto and returns a client to moto and
// the table's name.
func table(t *testing.T) (*dynamodb.Client, string) {
	t.Helper()
	c := client(t, awstest.Shared(t).URL)
	name := awstest.UniqueName(t, "leases")
	awstest.CreateLeaseTable(t, c, name)
	return c, name
}

func groupNames(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("g%02d", i))
	}
	return out
}

func newManager(t *testing.T, api dynamoAPI, tbl, id string, groups []string, clk *clock, reg prometheus.Registerer) *Manager {
	t.Helper()
	m, err := New(api, Options{
		Table: tbl, Identity: id, Duration: duration, Interval: interval, ActionDeadline: deadline,
		Groups: groups, Logger: zaptest.NewLogger(t).Named(id), Registerer: reg, Now: clk.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// row is a lease item read straight from the table.
type row struct {
	owner   string
	counter int64
	expires time.Time
}

// readTable reads every group lease of the table with a scan of its own.
func readTable(t *testing.T, c *dynamodb.Client, tbl string) map[string]row {
	t.Helper()
	out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(tbl), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("scan %s: %v", tbl, err)
	}
	rows := map[string]row{}
	for _, it := range out.Items {
		k := it["key"].(*types.AttributeValueMemberS).Value
		if !strings.HasPrefix(k, "group/") {
			continue
		}
		var r row
		if v, ok := it["owner"].(*types.AttributeValueMemberS); ok {
			r.owner = v.Value
		}
		if v, ok := it["counter"].(*types.AttributeValueMemberN); ok {
			r.counter, _ = strconv.ParseInt(v.Value, 10, 64)
		}
		if v, ok := it["expires"].(*types.AttributeValueMemberN); ok {
			ms, _ := strconv.ParseInt(v.Value, 10, 64)
			r.expires = time.UnixMilli(ms)
		}
		rows[strings.TrimPrefix(k, "group/")] = r
	}
	return rows
}

// owners counts the groups each owner holds in the table.
func owners(rows map[string]row) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		n[r.owner]++
	}
	return n
}

// syncNow runs one Sync with time to spare: the test's clock, not the
// real one, says when leases expire, and a busy emulator may be slow.
func syncNow(m *Manager) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return m.Sync(ctx, m.now())
}

// syncFailing runs one Sync that is expected to fail, under the cycle's
// deadline as the daemon does, so that the retryer's backoff does not
// hold the test up.
func syncFailing(m *Manager) error {
	ctx, cancel := context.WithTimeout(context.Background(), interval*9/10)
	defer cancel()
	return m.Sync(ctx, m.now())
}

// sync1 runs one Sync of each manager, in order, after moving the clock by
// one interval, and fails the test on an error.
func sync1(t *testing.T, clk *clock, ms ...*Manager) {
	t.Helper()
	clk.Add(interval)
	for _, m := range ms {
		if err := syncNow(m); err != nil {
			t.Fatalf("%s: sync: %v", m.Identity(), err)
		}
	}
}

// permitted lists the groups m may act on now.
func permitted(m *Manager, groups []string) []string {
	var out []string
	for _, g := range groups {
		if _, ok := m.Permit(g); ok {
			out = append(out, g)
		}
	}
	return out
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	_, err := New(nil, Options{Duration: time.Second, Interval: time.Second, ActionDeadline: 2 * time.Second})
	if err == nil {
		t.Fatal("New accepted no client, no table, no identity, a lease of one interval")
	}
	for _, want := range []string{"client", "table", "identity", "two intervals", "action deadline"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// TestShareRenewAndAct: two checkers share six groups three and three,
// each renewal increments the counter and pushes the expiry, and each may
// act only on its own groups.
func TestShareRenewAndAct(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(6)
	regA := prometheus.NewRegistry()
	a := newManager(t, c, tbl, "a", groups, clk, regA)
	b := newManager(t, c, tbl, "b", groups, clk, nil)

	sync1(t, clk, a, b) // both learn who is there; nothing is taken
	if rows := readTable(t, c, tbl); len(rows) != 0 {
		t.Fatalf("leases written on the first sync: %v", rows)
	}
	sync1(t, clk, a, b)
	rows := readTable(t, c, tbl)
	if got := owners(rows); got["a"] != 3 || got["b"] != 3 || len(rows) != 6 {
		t.Fatalf("owners after the second sync = %v, want a:3 b:3", got)
	}
	pa, pb := permitted(a, groups), permitted(b, groups)
	if len(pa) != 3 || len(pb) != 3 {
		t.Fatalf("permitted a=%v b=%v, want three each", pa, pb)
	}
	for _, g := range pa {
		if rows[g].owner != "a" || slices.Contains(pb, g) {
			t.Errorf("a may act on %s, owned by %q in the table, b permitted too: %t", g, rows[g].owner, slices.Contains(pb, g))
		}
	}
	if got := testutil.ToFloat64(a.metrics.held); got != 3 {
		t.Errorf("checker_leases_held = %v, want 3", got)
	}

	before := rows
	sync1(t, clk, a, b)
	after := readTable(t, c, tbl)
	for g, r := range after {
		if r.owner != before[g].owner || r.counter != before[g].counter+1 {
			t.Errorf("%s after a renewal: owner %q counter %d, want %q %d", g, r.owner, r.counter, before[g].owner, before[g].counter+1)
		}
		if want := clk.Now().Add(duration); !r.expires.Equal(want) {
			t.Errorf("%s expires %s, want now + lease duration = %s", g, r.expires, want)
		}
	}
	for _, p := range a.Peers() {
		if p.Leases != 3 {
			t.Errorf("peer %s holds %d leases, want 3", p.Identity, p.Leases)
		}
	}
	if got := len(a.Peers()); got != 2 {
		t.Errorf("a sees %d peers, want 2", got)
	}
	// The lease is valid for longer than the action deadline until the
	// deadline reaches the expiry.
	clk.Add(duration - deadline)
	if _, ok := a.Permit(pa[0]); !ok {
		t.Errorf("no permit with exactly the action deadline left")
	}
	clk.Add(time.Millisecond)
	if _, ok := a.Permit(pa[0]); ok {
		t.Errorf("permit with less than the action deadline left")
	}
}

// TestExpiryTakeover: a checker that stops renewing loses its groups to the
// other once its leases expire, not before; the new owner acts at once, as
// the old lease is over.
func TestExpiryTakeover(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(4)
	a := newManager(t, c, tbl, "a", groups, clk, prometheus.NewRegistry())
	b := newManager(t, c, tbl, "b", groups, clk, prometheus.NewRegistry())
	sync1(t, clk, a, b)
	sync1(t, clk, a, b)
	lastRenewal := clk.Now()
	firstTaken := b.Taken() // b's first two, free
	if len(firstTaken) != 2 || len(b.Taken()) != 0 {
		t.Fatalf("b took %v, and %v on asking again; want its two groups once", firstTaken, b.Taken())
	}
	// a stops. b syncs every interval; a's leases last until lastRenewal+duration.
	for clk.Now().Add(interval).Before(lastRenewal.Add(duration)) {
		sync1(t, clk, b)
		if got := owners(readTable(t, c, tbl)); got["a"] != 2 {
			t.Fatalf("at %s after a's last renewal, owners = %v: a's live leases taken", clk.Now().Sub(lastRenewal), got)
		}
	}
	sync1(t, clk, b) // now past a's expiry
	if got := owners(readTable(t, c, tbl)); got["b"] != 4 {
		t.Fatalf("owners one sync after a's leases expired = %v, want b:4", got)
	}
	// The two taken over are told, to be warmed up, and only they.
	if got := b.Taken(); len(got) != 2 || slices.ContainsFunc(got, func(g string) bool { return slices.Contains(firstTaken, g) }) {
		t.Errorf("b took over %v, want a's two groups (b had %v)", got, firstTaken)
	}
	if got := len(permitted(b, groups)); got != 4 {
		t.Errorf("b may act on %d groups right after taking expired leases, want 4", got)
	}
	if got := len(permitted(a, groups)); got != 0 {
		t.Errorf("a, its leases expired, may still act on %d groups", got)
	}
	if got := testutil.ToFloat64(b.metrics.changes.WithLabelValues(ReasonAcquired)); got != 4 {
		t.Errorf("b's acquired changes = %v, want 4 (2 free + 2 expired)", got)
	}
	// a comes back: it learns from the table that its leases are gone, and
	// may take one back from b (above its share) but not act on it before
	// b's lease of it runs out.
	sync1(t, clk, a)
	if got := len(permitted(a, groups)); got != 0 {
		t.Errorf("a may act on %d groups after coming back, want 0", got)
	}
	if got := owners(readTable(t, c, tbl)); got["b"] < 3 {
		t.Errorf("owners after a came back = %v, want b to keep at least 3", got)
	}
	if got := testutil.ToFloat64(a.metrics.changes.WithLabelValues(ReasonLost)); got != 2 {
		t.Errorf("a counted %v lost leases, want 2", got)
	}
}

// TestStealBalancesWithoutPingPong: a checker that holds every group gives
// them up one per cycle to a newcomer, which acts on each only after the old
// lease would have run out; once balanced, nothing moves.
func TestStealBalancesWithoutPingPong(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(7)
	ra, rb := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := newManager(t, c, tbl, "a", groups, clk, ra)
	sync1(t, clk, a)
	sync1(t, clk, a)
	if got := owners(readTable(t, c, tbl)); got["a"] != 7 {
		t.Fatalf("a alone holds %v, want all 7", got)
	}
	b := newManager(t, c, tbl, "b", groups, clk, rb)
	sync1(t, clk, b, a) // b learns
	sync1(t, clk, b, a) // b steals one; a learns it at once
	rows := readTable(t, c, tbl)
	if got := owners(rows); got["a"] != 6 || got["b"] != 1 {
		t.Fatalf("after one steal, owners = %v, want a:6 b:1", got)
	}
	var stolen string
	for g, r := range rows {
		if r.owner == "b" {
			stolen = g
		}
	}
	if _, ok := b.Permit(stolen); ok {
		t.Errorf("b may act on %s at once, while a's lease still runs", stolen)
	}
	if _, ok := a.Permit(stolen); ok {
		t.Errorf("a may still act on %s after losing it", stolen)
	}
	for range 10 {
		sync1(t, clk, b, a)
	}
	if got := owners(readTable(t, c, tbl)); got["a"] != 4 || got["b"] != 3 {
		t.Fatalf("balanced owners = %v, want a:4 b:3", got)
	}
	if _, ok := b.Permit(stolen); !ok {
		t.Errorf("b may not act on %s a lease duration after taking it", stolen)
	}
	steals := testutil.ToFloat64(b.metrics.changes.WithLabelValues(ReasonStolen))
	losses := testutil.ToFloat64(a.metrics.changes.WithLabelValues(ReasonLost))
	if steals != 3 || losses != 3 {
		t.Errorf("steals by b = %v, losses of a = %v, want 3 and 3", steals, losses)
	}
	if got := testutil.ToFloat64(a.metrics.changes.WithLabelValues(ReasonStolen)); got != 0 {
		t.Errorf("a stole %v leases back", got)
	}
}

// TestFencing: a write made on a stale counter fails, and the checker whose
// lease was written over stops acting at its next renewal.
func TestFencing(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	a := newManager(t, c, tbl, "a", []string{"g"}, clk, nil)
	sync1(t, clk, a)
	sync1(t, clk, a)
	r := readTable(t, c, tbl)["g"]
	// Another writer takes the lease with the counter it read.
	intruder := newManager(t, c, tbl, "x", []string{"g"}, clk, nil)
	if _, failed, err := intruder.write(context.Background(), "g", "x", "s", r.counter, nil, clk.Now().Add(duration)); err != nil || failed {
		t.Fatalf("write with the current counter: failed=%t err=%v", failed, err)
	}
	// A second write with the same, now stale, counter fails.
	if _, failed, err := intruder.write(context.Background(), "g", "y", "s", r.counter, nil, clk.Now().Add(duration)); err != nil || !failed {
		t.Fatalf("write with a stale counter: failed=%t err=%v, want a failed condition", failed, err)
	}
	if got := readTable(t, c, tbl)["g"]; got.owner != "x" || got.counter != r.counter+1 {
		t.Fatalf("after the two writes the lease is %+v, want x at counter %d", got, r.counter+1)
	}
	if _, ok := a.Permit("g"); !ok {
		t.Fatalf("a has not learned yet; it still may act until its next sync")
	}
	// a's renewal, made without the table's answer to warn it (the scan is
	// made to fail), fails on its condition.
	a.st.(*dynamoStore).api = scanFails{a.st.(*dynamoStore).api}
	clk.Add(interval)
	_ = a.Sync(context.Background(), a.now())
	if _, ok := a.Permit("g"); ok {
		t.Errorf("a may act on g after its renewal failed on the counter")
	}
	if a.Status("g").Held {
		t.Errorf("a still holds g")
	}
}

// scanFails is a client whose scans fail.
type scanFails struct{ dynamoAPI }

func (scanFails) Scan(context.Context, *dynamodb.ScanInput, ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	return nil, errors.New("scan refused")
}

// TestReleaseHandsOverAtOnce: released leases are taken by the other checker
// at its next sync and acted on at once.
func TestReleaseHandsOverAtOnce(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(4)
	a := newManager(t, c, tbl, "a", groups, clk, nil)
	b := newManager(t, c, tbl, "b", groups, clk, nil)
	sync1(t, clk, a, b)
	sync1(t, clk, a, b)
	if err := a.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := owners(readTable(t, c, tbl)); got[""] != 2 || got["b"] != 2 {
		t.Fatalf("after a's release owners = %v, want 2 free, b:2", got)
	}
	sync1(t, clk, b)
	if got := owners(readTable(t, c, tbl)); got["b"] != 4 {
		t.Fatalf("one sync after the release owners = %v, want b:4", got)
	}
	if got := len(permitted(b, groups)); got != 4 {
		t.Errorf("b may act on %d groups, want 4", got)
	}
}

// TestRestartWaitsOutItsPredecessor: a checker restarted with the same
// identity does not act on the leases of its previous run before they
// expire.
func TestRestartWaitsOutItsPredecessor(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	old := newManager(t, c, tbl, "a", []string{"g"}, clk, nil)
	sync1(t, clk, old)
	sync1(t, clk, old)
	expires := readTable(t, c, tbl)["g"].expires
	restarted := newManager(t, c, tbl, "a", []string{"g"}, clk, nil)
	for clk.Now().Add(interval).Before(expires) {
		sync1(t, clk, restarted)
		if _, ok := restarted.Permit("g"); ok {
			t.Fatalf("the restarted checker acts on g %s before its predecessor's lease ends", expires.Sub(clk.Now()))
		}
	}
	sync1(t, clk, restarted)
	if _, ok := restarted.Permit("g"); !ok {
		t.Errorf("the restarted checker does not act on g after the old lease ended")
	}
}

// TestThrottlingDoesNotFlap: while DynamoDB throttles one checker for
// less than a lease duration, it stops acting but keeps its leases; the
// other checker takes none of them; afterwards it acts again. Requests are
// throttled through a fault proxy in front of moto.
func TestThrottlingDoesNotFlap(t *testing.T) {
	t.Parallel()
	direct, tbl := table(t)
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	clk := newClock()
	groups := groupNames(6)
	ra := prometheus.NewRegistry()
	a := newManager(t, client(t, proxy.URL), tbl, "a", groups, clk, ra)
	b := newManager(t, direct, tbl, "b", groups, clk, nil)
	sync1(t, clk, a, b)
	sync1(t, clk, a, b)
	before := readTable(t, direct, tbl)

	// Every other request is throttled: some calls get through on a retry,
	// some not within the cycle.
	stop := proxy.Inject(everyOther(), awstest.Fault{Kind: awstest.FaultThrottle, Code: "ProvisionedThroughputExceededException"})
	for range 2 {
		clk.Add(interval)
		_ = syncFailing(a)
		if err := syncNow(b); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if n := proxy.Injected(awstest.FaultThrottle); n == 0 {
		t.Fatalf("no request was throttled")
	}
	sync1(t, clk, a, b)
	if got := len(permitted(a, groups)); got != 3 {
		t.Errorf("a acts on %d groups after intermittent throttling, want 3", got)
	}
	// Every request is throttled for two intervals, less than a lease:
	// renewals fail.
	stop = proxy.Inject(awstest.MatchAll(), awstest.Fault{Kind: awstest.FaultThrottle, Code: "ProvisionedThroughputExceededException"})
	for range 2 {
		clk.Add(interval)
		if err := syncFailing(a); err == nil {
			t.Fatalf("a's sync succeeded while every request is throttled")
		}
		if got := permitted(a, groups); len(got) != 0 {
			t.Errorf("a acts on %v while its renewals fail", got)
		}
		if err := syncNow(b); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	sync1(t, clk, a, b)
	after := readTable(t, direct, tbl)
	for g, r := range after {
		if r.owner != before[g].owner {
			t.Errorf("%s moved from %s to %s during throttling", g, before[g].owner, r.owner)
		}
	}
	if got := len(permitted(a, groups)); got != 3 {
		t.Errorf("a acts on %d groups after throttling ended, want 3", got)
	}
	if got := testutil.ToFloat64(a.metrics.changes.WithLabelValues(ReasonLost)); got != 0 {
		t.Errorf("a counted %v lost leases", got)
	}
	if err := a.Healthy(); err != nil {
		t.Errorf("a unhealthy after throttling of two intervals: %v", err)
	}
}

// everyOther matches every second request.
func everyOther() awstest.Match {
	var mu sync.Mutex
	n := 0
	return func(*awstest.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		n++
		return n%2 == 0
	}
}

// TestCutOffIsUnhealthy: a checker that cannot reach the table stops acting
// at once and is unhealthy after a lease duration.
func TestCutOffIsUnhealthy(t *testing.T) {
	t.Parallel()
	_, tbl := table(t)
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	clk := newClock()
	a := newManager(t, client(t, proxy.URL), tbl, "a", []string{"g"}, clk, nil)
	sync1(t, clk, a)
	sync1(t, clk, a)
	proxy.Inject(awstest.MatchAll(), awstest.Fault{Kind: awstest.FaultServerError})
	clk.Add(interval)
	_ = syncFailing(a)
	if _, ok := a.Permit("g"); ok {
		t.Errorf("a acts on g after its renewal failed")
	}
	if err := a.Healthy(); err != nil {
		t.Errorf("unhealthy after one failed sync: %v", err)
	}
	for range int(duration/interval) + 1 {
		clk.Add(interval)
		_ = syncFailing(a)
		if a.Healthy() != nil {
			break
		}
	}
	if err := a.Healthy(); err == nil || !strings.Contains(err.Error(), tbl) {
		t.Errorf("Healthy() = %v after a lease duration cut off, want an error naming the table", err)
	}
}

func TestDefaultIdentity(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	host := func(h string, err error) func() (string, error) { return func() (string, error) { return h, err } }
	tests := []struct {
		name   string
		getenv func(string) string
		host   func() (string, error)
		want   string
	}{
		{"ECS v4", env(map[string]string{"ECS_CONTAINER_METADATA_URI_V4": "http://169.254.170.2/v4/6d0a1c2b3e4f-1234567890"}),
			host("ip-10-0-0-1", nil), "ecs-6d0a1c2b3e4f-1234567890"},
		{"ECS v3, trailing slash", env(map[string]string{"ECS_CONTAINER_METADATA_URI": "http://169.254.170.2/v3/abc123/"}),
			host("ip-10-0-0-1", nil), "ecs-abc123"},
		{"host and pid", env(nil), host("ip-10-0-0-1.ec2.internal", nil), "ip-10-0-0-1.ec2.internal-4242"},
		{"no host name", env(nil), host("", errors.New("no name")), "checker-4242"},
		{"odd characters", env(nil), host("my host*", nil), "my-host--4242"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := DefaultIdentity(tt.getenv, tt.host, 4242); got != tt.want {
				t.Errorf("DefaultIdentity = %q, want %q", got, tt.want)
			}
		})
	}
}

// counting counts the calls made through a client.
type counting struct {
	dynamoAPI
	mu    sync.Mutex
	calls int
}

func (c *counting) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.dynamoAPI.Scan(ctx, in, opts...)
}

func (c *counting) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.dynamoAPI.UpdateItem(ctx, in, opts...)
}

// TestCallsPerSync: in steady state a Sync makes one scan, one heartbeat
// and one write per lease held.
func TestCallsPerSync(t *testing.T) {
	t.Parallel()
	c, tbl := table(t)
	clk := newClock()
	groups := groupNames(10)
	ca, cb := &counting{dynamoAPI: c}, &counting{dynamoAPI: c}
	a := newManager(t, ca, tbl, "a", groups, clk, nil)
	b := newManager(t, cb, tbl, "b", groups, clk, nil)
	for range 3 {
		sync1(t, clk, a, b)
	}
	for _, tc := range []struct {
		m *Manager
		c *counting
	}{{a, ca}, {b, cb}} {
		tc.c.calls = 0
		sync1(t, clk, tc.m)
		held := len(permitted(tc.m, groups))
		if held != 5 || tc.c.calls != held+2 {
			t.Errorf("%s: %d calls in a steady sync holding %d leases, want 5 leases and %d calls", tc.m.Identity(), tc.c.calls, held, held+2)
		}
	}
}
