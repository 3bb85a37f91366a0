package poller

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// plantMetric puts datapoints of one metric into the AWS/SQS namespace of
// a region for a queue.
func plantMetric(t testing.TB, f *awsclient.Factory, region, queue, metric string, ds []datum) {
	t.Helper()
	for first := 0; first < len(ds); first += putChunk {
		chunk := ds[first:min(first+putChunk, len(ds))]
		md := make([]cwtypes.MetricDatum, len(chunk))
		for i, d := range chunk {
			md[i] = cwtypes.MetricDatum{
				MetricName: aws.String(metric),
				Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(queue)}},
				Timestamp:  aws.Time(d.at),
				Value:      aws.Float64(d.value),
			}
		}
		if _, err := f.CloudWatch(region).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
			Namespace: aws.String("AWS/SQS"), MetricData: md,
		}, func(o *cloudwatch.Options) { o.DisableRequestCompression = true }); err != nil {
			t.Fatalf("put metric data: %v", err)
		}
	}
}

// plantFleet plants, for the minutes of [from, from + n min) that have(m),
// a deleted count of deleted a minute and a mean in flight of inFlight,
// each as two datapoints 20 s apart (the deleted count halved, so the
// minute's Sum is the count; in flight ±2, so its Average is inFlight and its
// Sum is not).
func plantFleet(t testing.TB, f *awsclient.Factory, region, queue string, from time.Time, n int, deleted, inFlight float64, have func(m int) bool) {
	t.Helper()
	var del, nv []datum
	for m := range n {
		if !have(m) {
			continue
		}
		at := from.Add(time.Duration(m) * time.Minute)
		del = append(del, datum{at.Add(10 * time.Second), deleted / 2}, datum{at.Add(30 * time.Second), deleted / 2})
		nv = append(nv, datum{at.Add(10 * time.Second), inFlight - 2}, datum{at.Add(30 * time.Second), inFlight + 2})
	}
	plantMetric(t, f, region, queue, "NumberOfMessagesDeleted", del)
	plantMetric(t, f, region, queue, "ApproximateNumberOfMessagesNotVisible", nv)
}

func cwQueue(region, name string) config.Queue { return sqsURL(region, name) }

func cwGroup(name string, cw bool, queues ...config.Queue) config.Group {
	return config.Group{Name: name, Queues: queues, OldestAge: config.OldestAge{CloudWatch: cw}}
}

// bodies records the GetMetricData request bodies the proxy sees.
func bodies(t testing.TB, proxy *awstest.Proxy) func() []string {
	var mu sync.Mutex
	var got []string
	t.Cleanup(proxy.Observe(func(r *awstest.Request, _ time.Time) {
		if r.Operation() == "GetMetricData" {
			mu.Lock()
			got = append(got, string(r.Body))
			mu.Unlock()
		}
	}))
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestFleetHistoryFromMoto reads the arrivals and the fleet's minutes in
// one pass, and sums the fleet's per group: a queue that has published
// adds its minutes, a minute it then misses makes the group's minute
// unknown, and a queue that never published adds 0. Groups without
// CloudWatch, and groups not asked for, are not read.
func TestFleetHistoryFromMoto(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	to := time.Now().UTC().Truncate(time.Minute)
	fleetFrom := to.Add(-30 * time.Minute)
	qa, qb, qc, qd := awstest.UniqueName(t, "fa"), awstest.UniqueName(t, "fb"), awstest.UniqueName(t, "fc"), awstest.UniqueName(t, "fd")

	// qa: minutes 8..27 of the span (20 minutes ending two before to), 30
	// msg/s and 12 in flight; qb: minutes 0..25 but 15, 10 msg/s and 3 in
	// flight; qc: nothing at all; qd: data, but its group reads no CloudWatch.
	plantFleet(t, f, east, qa, fleetFrom.Add(8*time.Minute), 20, 1800, 12, func(int) bool { return true })
	plantFleet(t, f, west, qb, fleetFrom, 26, 600, 3, func(m int) bool { return m != 15 })
	plantFleet(t, f, east, qd, fleetFrom, 30, 60, 1, func(int) bool { return true })
	plantSent(t, f, east, qa, []datum{{to.Add(-10 * time.Minute), 120}})

	groups := []config.Group{
		cwGroup("a", true, cwQueue(east, qa)),
		cwGroup("abc", true, cwQueue(east, qa), cwQueue(west, qb), cwQueue(east, qc)),
		cwGroup("nocw", false, cwQueue(east, qd)),
		cwGroup("unasked", true, cwQueue(east, qa)),
	}
	reg := prometheus.NewRegistry()
	proxy := awstest.NewProxy(t, moto.URL)
	seen := bodies(t, proxy)
	p := newTestPoller(t, baseConfig(groups...), factory(t, proxy.URL, reg), reg)
	h, err := p.History(context.Background(), HistoryRequest{
		From: to.Add(-2 * time.Hour), To: to, FleetFrom: fleetFrom, Fleet: []string{"a", "abc", "nocw"},
	})
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	// Arrivals: one call per region; the fleet: one per region of the
	// groups asked for.
	if n := proxy.Calls("GetMetricData"); n != 4 {
		t.Errorf("GetMetricData calls = %d, want 4 (arrivals and fleet, each in two regions)", n)
	}
	if len(h.Arrivals) != 4 {
		t.Errorf("arrivals of %d groups, want all 4", len(h.Arrivals))
	}
	if c := h.Arrivals["a"].Counts[110]; c != 120 {
		t.Errorf("arrivals of a, minute 110 = %v, want 120", c)
	}
	for _, g := range []string{"nocw", "unasked"} {
		if _, ok := h.Fleet[g]; ok {
			t.Errorf("fleet history for %s", g)
		}
	}
	for _, b := range seen() {
		if strings.Contains(b, "NumberOfMessagesDeleted") && strings.Contains(b, qd) {
			t.Errorf("the fleet of a group without CloudWatch was asked for: %s", b)
		}
	}

	nan := math.NaN()
	want := map[string]func(m int) (deleted, inFlight float64){
		"a": func(m int) (float64, float64) {
			if m >= 8 && m < 28 {
				return 30, 12
			}
			return nan, nan
		},
		"abc": func(m int) (float64, float64) {
			switch {
			case m < 8:
				return 10, 3 // qa has not published yet: it adds 0
			case m == 15 || m >= 26 && m < 28:
				return nan, nan // qb, which has published, has no datapoint
			case m < 26:
				return 40, 15
			}
			return nan, nan // no queue has a datapoint
		},
	}
	for g, w := range want {
		fh, ok := h.Fleet[g]
		if !ok {
			t.Fatalf("no fleet history for %s", g)
		}
		if !fh.Start.Equal(fleetFrom) || len(fh.Deleted) != 30 || len(fh.InFlight) != 30 {
			t.Fatalf("%s: start %v, %d and %d minutes; want %v, 30", g, fh.Start, len(fh.Deleted), len(fh.InFlight), fleetFrom)
		}
		for m := range 30 {
			wd, wl := w(m)
			if !same(fh.Deleted[m], wd) || !same(fh.InFlight[m], wl) {
				t.Errorf("%s minute %d: deleted %v, in flight %v; want %v, %v", g, m, fh.Deleted[m], fh.InFlight[m], wd, wl)
			}
		}
	}
}

// same reports whether a and b are equal within rounding, or both NaN.
func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b))
}

// The warm start end to end: 20 minutes of 1,800 deletions and 12 in
// flight a minute planted in CloudWatch, read back, preloaded into a
// group's policy state: the first decision sizes with the measured 0.4 s
// (12 ÷ 30 msg/s) where the settings say 1 s, before any live minute. A
// group with learn: off takes nothing from the same history.
func TestFleetHistoryWarmsTheFirstDecision(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	now := time.Now().UTC()
	to := now.Truncate(time.Minute)
	q := awstest.UniqueName(t, "fw")
	plantFleet(t, f, east, q, to.Add(-22*time.Minute), 20, 1800, 12, func(int) bool { return true })

	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(cwGroup("w", true, cwQueue(east, q))), factory(t, moto.URL, reg), reg)
	h, err := p.History(context.Background(), HistoryRequest{To: to, FleetFrom: to.Add(-30 * time.Minute), Fleet: []string{"w"}})
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if h.Arrivals != nil {
		t.Errorf("arrivals read though none were asked for: %v", h.Arrivals)
	}
	fh, ok := h.Fleet["w"]
	if !ok {
		t.Fatalf("no fleet history: %+v", h)
	}
	for _, learn := range []string{policy.LearnAct, policy.LearnOff} {
		t.Run(learn, func(t *testing.T) {
			s := policy.Settings{Group: "w", ServiceTime: time.Second, Latency: 10 * time.Second, Min: 1, Max: 100,
				Learn: learn, Forecast: policy.ForecastSettings{Off: true}}
			var st policy.State
			n := st.PreloadFleet(s, fh)
			sample := model.GroupSample{Group: "w", At: now, InFlight: 12, Backlog: 12, Queues: 1, Answered: 1}
			fleet := model.Fleet{Kind: "autoscaling", Name: "w", Known: true, Desired: 12, InService: 12}
			d := policy.Decide(s, sample, fleet, &st, now)
			m := d.Measured
			if learn == policy.LearnOff {
				if n != 0 || m.ServiceTimeSeconds != nil || m.SizingWith != "configured" {
					t.Errorf("learn: off took %d minutes and measured %+v", n, m)
				}
				return
			}
			if n != 20 {
				t.Errorf("preloaded %d minutes, want 20", n)
			}
			if m.ServiceTimeSeconds == nil || math.Abs(*m.ServiceTimeSeconds-0.4) > 1e-9 {
				t.Fatalf("measured service time %v, want 0.4 s; reasons %q", m.ServiceTimeSeconds, d.Reasons)
			}
			if m.Confidence == nil || *m.Confidence < policy.MeasuredConfidence || m.SizingWith != "measured" {
				t.Fatalf("confidence %v, sizing with %q; want at least %v, measured", m.Confidence, m.SizingWith, policy.MeasuredConfidence)
			}
		})
	}
}

// A failed fleet read leaves the groups with a queue there out of the fleet
// history only: their arrivals are kept, and the error names the series and
// the region.
func TestFleetHistoryRegionFails(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	to := time.Now().UTC().Truncate(time.Minute)
	qe, qw := awstest.UniqueName(t, "fe"), awstest.UniqueName(t, "fx")
	plantFleet(t, f, east, qe, to.Add(-10*time.Minute), 5, 60, 1, func(int) bool { return true })
	plantFleet(t, f, west, qw, to.Add(-10*time.Minute), 5, 60, 1, func(int) bool { return true })
	groups := []config.Group{
		cwGroup("east-only", true, cwQueue(east, qe)),
		cwGroup("both", true, cwQueue(east, qe), cwQueue(west, qw)),
	}
	reg := prometheus.NewRegistry()
	proxy := awstest.NewProxy(t, moto.URL)
	proxy.Inject(awstest.And(awstest.MatchOperation("GetMetricData"), awstest.MatchBody(qw), awstest.MatchBody("NumberOfMessagesDeleted")),
		awstest.Fault{Kind: awstest.FaultServerError})
	p := newTestPoller(t, baseConfig(groups...), factory(t, proxy.URL, reg), reg)
	h, err := p.History(context.Background(), HistoryRequest{
		From: to.Add(-time.Hour), To: to, FleetFrom: to.Add(-30 * time.Minute), Fleet: []string{"east-only", "both"},
	})
	if err == nil || !strings.Contains(err.Error(), "fleet history in "+west) || strings.Contains(err.Error(), "arrival history") {
		t.Fatalf("error = %v, want one naming the fleet history in %s alone", err, west)
	}
	if _, ok := h.Fleet["both"]; ok {
		t.Errorf("group both has a fleet history though its %s queue failed", west)
	}
	if _, ok := h.Arrivals["both"]; !ok {
		t.Errorf("group both lost its arrivals to the fleet's failure")
	}
	if fh, ok := h.Fleet["east-only"]; !ok || fh.Deleted[20] != 1 || fh.InFlight[24] != 1 {
		t.Errorf("east-only: %+v (%v), want 1 msg/s and 1 in flight from minute 20", fh, ok)
	}
}

// Requests that read nothing, and spans CloudWatch does not keep, call no
// AWS.
func TestHistoryRequests(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// No clients: a call to AWS would panic. One group, without CloudWatch.
	p := &Poller{groups: []*group{{name: "x"}}}
	if _, err := p.History(context.Background(), HistoryRequest{To: now, FleetFrom: now}); err == nil {
		t.Error("an empty request: no error")
	}
	if _, err := p.History(context.Background(), HistoryRequest{To: now, FleetFrom: now.Add(-HistoryMaxSpan - time.Hour), Fleet: []string{"x"}}); err == nil {
		t.Error("a fleet span longer than CloudWatch keeps: no error")
	}
	h, err := p.History(context.Background(), HistoryRequest{To: now, FleetFrom: now.Add(-30 * time.Minute), Fleet: []string{"x", "unknown"}})
	if err != nil || len(h.Fleet) != 0 || h.Arrivals != nil {
		t.Errorf("the fleet of a group without CloudWatch: %+v, %v; want nothing read, no error", h, err)
	}
}
