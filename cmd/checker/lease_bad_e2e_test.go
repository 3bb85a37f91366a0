package main

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/lease"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/policy/policytest"
	"github.com/queuechecker/queue-checker/internal/web"
)

// TestE2EBadLeaseCounters runs a checker's loop, lease gate and HTTP
// handler against a lease table in moto whose group items have counters no
// checker writes (-1, -2, 1.5, 99999999999999999999999) and one whose
// owner has no heartbeat and a lease four minutes ahead. Every group is
// owned and acted on within a lease and two intervals, and /healthz
// answers 200 at every cycle (those a loaded machine's moto left calls
// unanswered in aside).
func TestE2EBadLeaseCounters(t *testing.T) {
	t.Parallel()
	f := direct(t)
	ctx := context.Background()
	db := f.DynamoDB(east)
	table := awstest.UniqueName(t, "leases")
	awstest.CreateLeaseTable(t, db, table)
	groups := []string{"neg1", "neg2", "frac", "huge", "ahead"}
	now := time.Now()
	put := func(item map[string]types.AttributeValue) {
		t.Helper()
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	soon := n(strconv.FormatInt(now.Add(time.Second).UnixMilli(), 10))
	for i, c := range []string{"-1", "-2", "1.5", "99999999999999999999999"} {
		put(map[string]types.AttributeValue{"key": s("group/" + groups[i]), "owner": s("ghost"), "counter": n(c), "expires": soon})
	}
	put(map[string]types.AttributeValue{"key": s("group/ahead"), "owner": s("gone"), "counter": n("3"),
		"expires": n(strconv.FormatInt(now.Add(4*time.Minute).UnixMilli(), 10))})

	const interval, duration = time.Second, 3 * time.Second
	// The checker reaches the table through a proxy that tells the calls
	// it gave up on (a loaded machine can keep the shared moto past the
	// exchange's deadline) from those answered.
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	leaseDB := awsclienttest.Factory(t, proxy.URL, awsclienttest.Region(east)).DynamoDB(east)
	reg := prometheus.NewRegistry()
	m, err := lease.New(leaseDB, lease.Options{Table: table, Identity: "x", Duration: duration, Interval: interval,
		ActionDeadline: 500 * time.Millisecond, Groups: groups, Logger: zap.NewNop(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	var settings []policy.Settings
	for _, g := range groups {
		settings = append(settings, policytest.Settings(g).WithDefaults())
	}
	obs := controllertest.NewObserver(func(_ context.Context, at time.Time) ([]model.Observation, error) {
		var out []model.Observation
		for _, g := range groups {
			out = append(out, model.Observation{
				Sample: model.GroupSample{Group: g, At: at, Visible: 50, Backlog: 50, Queues: 1, Answered: 1},
				Fleet:  model.Fleet{Kind: "autoscaling", Name: g, Known: true, Desired: 2, InService: 2, Max: 50, At: at}})
		}
		return out, nil
	})
	act := &controllertest.Actuator{}
	ctrl, err := controller.New(controller.Options{Groups: settings, Observer: obs, Actuator: act, Gate: leaseGate{Manager: m}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Handler(web.Options{Controller: ctrl, Gatherer: reg, Interval: interval, Started: time.Now()}))
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// A cycle in which the table left a call unanswered before the
	// checker gave up on it moves nothing forward: the window grows by an
	// interval for each, up to ten; the bad items are read at the first
	// cycle whose calls were all answered. After a lease with no good
	// exchange the checker acts on no group and /healthz fails, rightly:
	// it must answer 200 at every cycle after the first whose last lease
	// of cycles had every call answered.
	start := time.Now()
	window, unanswered, lastMiss := duration+2*interval+interval/2, 0, math.MinInt/2
	bad, scanned := -1.0, false
	for cycle := 0; time.Since(start) < window; cycle++ {
		calls, answered := proxy.Calls(""), proxy.Answered("")
		cctx, cancel := context.WithTimeout(ctx, 9*interval/10)
		_, _ = ctrl.RunOnce(cctx, time.Now())
		cancel()
		whole := proxy.Calls("")-calls == proxy.Answered("")-answered
		if !whole {
			lastMiss = cycle
			if unanswered < 10 {
				unanswered++
				window += interval
			}
		}
		if !scanned {
			bad, scanned = gauge(t, reg, "checker_lease_bad_items"), whole
		}
		if code, body := get("/healthz"); code != 200 && cycle > 0 && cycle-lastMiss > int(duration/interval) {
			t.Errorf("cycle %d: /healthz = %d %q, want 200", cycle, code, body)
		}
		time.Sleep(time.Until(start.Add(time.Duration(cycle+1) * interval)))
	}
	if unanswered > 0 {
		t.Logf("%d cycles left a call to the table unanswered; the window grew to %s", unanswered, window)
	}
	if bad != 5 {
		t.Errorf("checker_lease_bad_items at the first scan = %v, want 5", bad)
	}
	var acted []string
	for _, a := range act.Applied() {
		if !slices.Contains(acted, a.Decision.Group) {
			acted = append(acted, a.Decision.Group)
		}
	}
	for _, g := range groups {
		if st := m.Status(g); !st.Held || !slices.Contains(acted, g) {
			t.Errorf("group %s: held %t, acted on %t within a lease and two intervals", g, st.Held, slices.Contains(acted, g))
		}
	}
	// Readiness asks for a good exchange with the table within a lease; on a
	// loaded machine one renewal can miss its deadline, so the loop runs on
	// until an exchange succeeds, for at most ten more intervals.
	code, body := get("/readyz")
	for extra := 0; code != 200 && extra < 10; extra++ {
		cctx, cancel := context.WithTimeout(ctx, 9*interval/10)
		_, _ = ctrl.RunOnce(cctx, time.Now())
		cancel()
		code, body = get("/readyz")
		time.Sleep(interval / 2)
	}
	if code != 200 {
		t.Errorf("/readyz = %d %q once every group is owned, want 200", code, body)
	}
}

// gauge reads a gauge without labels from reg; -1 when there is none.
func gauge(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}
