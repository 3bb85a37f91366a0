package poller

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// sqsURL is the URL of a queue that need not exist: the history read only
// asks CloudWatch.
func sqsURL(region, name string) config.Queue {
	return config.Queue{URL: fmt.Sprintf("https://sqs.%s.amazonaws.com/123456789012/%s", region, name), Region: region}
}

// datum is one planted NumberOfMessagesSent datapoint.
type datum struct {
	at    time.Time
	value float64
}

// plantSent puts the datapoints into the AWS/SQS namespace of a region for
// a queue, putChunk to a call.
func plantSent(t testing.TB, f *awsclient.Factory, region, queue string, ds []datum) {
	t.Helper()
	for first := 0; first < len(ds); first += putChunk {
		chunk := ds[first:min(first+putChunk, len(ds))]
		md := make([]cwtypes.MetricDatum, len(chunk))
		for i, d := range chunk {
			md[i] = cwtypes.MetricDatum{
				MetricName: aws.String("NumberOfMessagesSent"),
				Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(queue)}},
				Timestamp:  aws.Time(d.at),
				Value:      aws.Float64(d.value),
			}
		}
		if _, err := f.CloudWatch(region).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
			Namespace: aws.String("AWS/SQS"), MetricData: md,
		}, func(o *cloudwatch.Options) {
			// The SDK gzips bodies over 10 KB; moto's server reads them as plain.
			o.DisableRequestCompression = true
		}); err != nil {
			t.Fatalf("put metric data: %v", err)
		}
	}
}

// TestArrivalHistoryFromMoto plants two days of per-minute datapoints, with
// gaps, for queues in two regions and reads them back summed per group.
func TestArrivalHistoryFromMoto(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	const minutes = 2 * 24 * 60
	to := time.Now().UTC().Truncate(time.Minute).Add(-5 * time.Minute)
	from := to.Add(-minutes * time.Minute)

	type plantedQueue struct {
		region, name string
		value        func(m int) (float64, bool) // the minute's count, or no datapoint
	}
	qs := []plantedQueue{
		{east, awstest.UniqueName(t, "ha"), func(m int) (float64, bool) { return float64(m%17 + 1), m%5 != 0 }},
		{west, awstest.UniqueName(t, "hb"), func(m int) (float64, bool) { return float64((m * 7) % 23), m%3 != 0 }},
		{east, awstest.UniqueName(t, "hc"), func(m int) (float64, bool) { return float64(m % 4), m%7 != 0 }},
	}
	for _, q := range qs {
		var ds []datum
		for m := range minutes {
			if v, ok := q.value(m); ok {
				// Two datapoints a minute, 20 s apart: the minute's Sum adds them.
				at := from.Add(time.Duration(m) * time.Minute)
				ds = append(ds, datum{at.Add(10 * time.Second), v / 2}, datum{at.Add(30 * time.Second), v / 2})
			}
		}
		// Outside the span: before it and in its end minute.
		ds = append(ds, datum{from.Add(-30 * time.Second), 1000}, datum{to.Add(10 * time.Second), 1000})
		plantSent(t, f, q.region, q.name, ds)
	}

	// Group a: the first two queues (two regions); group b: the second and
	// third (the second shared, the third listed twice).
	groups := []config.Group{
		{Name: "a", Queues: []config.Queue{sqsURL(east, qs[0].name), sqsURL(west, qs[1].name)}},
		{Name: "b", Queues: []config.Queue{sqsURL(west, qs[1].name), sqsURL(east, qs[2].name), sqsURL(east, qs[2].name)}},
	}
	reg := prometheus.NewRegistry()
	proxy := awstest.NewProxy(t, moto.URL)
	p := newTestPoller(t, baseConfig(groups...), factory(t, proxy.URL, reg), reg)
	got, err := p.ArrivalHistory(context.Background(), from, to)
	if err != nil {
		t.Fatalf("ArrivalHistory: %v", err)
	}
	// One call per region: three queues, each fits.
	if n := proxy.Calls("GetMetricData"); n != 2 {
		t.Errorf("GetMetricData calls = %d, want 2 (one per region)", n)
	}
	members := map[string][]int{"a": {0, 1}, "b": {1, 2}}
	for g, idx := range members {
		h, ok := got[g]
		if !ok {
			t.Fatalf("no history for group %s", g)
		}
		if !h.Start.Equal(from) || len(h.Counts) != minutes {
			t.Fatalf("group %s: start %v, %d minutes; want %v, %d", g, h.Start, len(h.Counts), from, minutes)
		}
		mismatches := 0
		for m := range minutes {
			want, seen := 0.0, false
			for _, i := range idx {
				if v, ok := qs[i].value(m); ok {
					want += v
					seen = true
				}
			}
			c := h.Counts[m]
			if !seen && !math.IsNaN(c) || seen && math.Abs(c-want) > 1e-9 {
				if mismatches < 5 {
					t.Errorf("group %s minute %d (%s): got %v, want %v (data: %v)", g, m, from.Add(time.Duration(m)*time.Minute).Format(time.RFC3339), c, want, seen)
				}
				mismatches++
			}
		}
		if mismatches > 0 {
			t.Errorf("group %s: %d of %d minutes differ", g, mismatches, minutes)
		}
	}
}

// TestArrivalHistoryRegionFails fails one region's GetMetricData: the group
// with a queue there gets no history, the other group gets its own, and
// the error names the region.
func TestArrivalHistoryRegionFails(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	to := time.Now().UTC().Truncate(time.Minute)
	from := to.Add(-30 * time.Minute)
	qe, qw := awstest.UniqueName(t, "he"), awstest.UniqueName(t, "hw")
	plantSent(t, f, east, qe, []datum{{from.Add(3 * time.Minute), 12}})
	plantSent(t, f, west, qw, []datum{{from.Add(4 * time.Minute), 7}})
	groups := []config.Group{
		{Name: "east-only", Queues: []config.Queue{sqsURL(east, qe)}},
		{Name: "both", Queues: []config.Queue{sqsURL(east, qe), sqsURL(west, qw)}},
	}
	reg := prometheus.NewRegistry()
	proxy := awstest.NewProxy(t, moto.URL)
	proxy.Inject(awstest.And(awstest.MatchOperation("GetMetricData"), awstest.MatchBody(qw)), awstest.Fault{Kind: awstest.FaultServerError})
	p := newTestPoller(t, baseConfig(groups...), factory(t, proxy.URL, reg), reg)
	got, err := p.ArrivalHistory(context.Background(), from, to)
	if err == nil || !strings.Contains(err.Error(), "arrival history in "+west) {
		t.Fatalf("error = %v, want one naming %s", err, west)
	}
	if strings.Contains(err.Error(), "in "+east) {
		t.Errorf("error names %s, which answered: %v", east, err)
	}
	if _, ok := got["both"]; ok {
		t.Errorf("group both has a history though its %s queue failed", west)
	}
	h, ok := got["east-only"]
	if !ok {
		t.Fatalf("group east-only has no history: %v", got)
	}
	for m, c := range h.Counts {
		switch {
		case m == 3 && c != 12:
			t.Errorf("east-only minute 3 = %v, want 12", c)
		case m != 3 && !math.IsNaN(c):
			t.Errorf("east-only minute %d = %v, want NaN (no datapoint)", m, c)
		}
	}
}

// TestArrivalHistoryBadSpan refuses spans with no whole minute and spans
// longer than CloudWatch keeps 1-minute data, without calling AWS.
func TestArrivalHistoryBadSpan(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		from, to time.Time
	}{
		{"empty", now, now},
		{"within one minute", now.Truncate(time.Minute).Add(time.Second), now},
		{"reversed", now, now.Add(-time.Hour)},
		{"too long", now.Add(-HistoryMaxSpan - time.Hour), now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &Poller{} // no clients: a call to AWS would panic
			if _, err := p.ArrivalHistory(context.Background(), tc.from, tc.to); err == nil {
				t.Errorf("[%v, %v): no error", tc.from, tc.to)
			}
		})
	}
}

// TestArrivalHistoryCallsFor1000Queues counts the GetMetricData calls that
// read 8 days of history for 1,000 queues in one region: 8 queues a call
// (8 × 11,520 datapoints fit the 100,800 of one page), so 125.
func TestArrivalHistoryCallsFor1000Queues(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1,000 queues' history from moto")
	}
	// A server of its own: moto answers each query by scanning every
	// datapoint of the region once a minute of the span, so the other
	// tests' days of datapoints would make this one take hours.
	awstest.Shared(t) // the emulator's environment
	moto, err := awstest.Start(context.Background())
	if err != nil {
		t.Fatalf("start moto: %v", err)
	}
	t.Cleanup(moto.Close)
	f := awsclienttest.Factory(t, moto.URL, awsclienttest.Region(east))
	to := time.Now().UTC().Truncate(time.Minute)
	from := to.Add(-8 * 24 * time.Hour)
	prefix := awstest.UniqueName(t, "k")
	var groups []config.Group
	for g := range 100 {
		grp := config.Group{Name: fmt.Sprintf("g%03d", g)}
		for q := range 10 {
			grp.Queues = append(grp.Queues, sqsURL(east, fmt.Sprintf("%s-%03d-%d", prefix, g, q)))
		}
		groups = append(groups, grp)
	}
	// Two queues of group g042 and one of g099 carry data.
	plantSent(t, f, east, queueName(groups[42].Queues[3]), []datum{{from.Add(time.Hour), 5}})
	plantSent(t, f, east, queueName(groups[42].Queues[9]), []datum{{from.Add(time.Hour + 20*time.Second), 6}})
	plantSent(t, f, east, queueName(groups[99].Queues[0]), []datum{{to.Add(-time.Minute), 9}})

	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(groups...), factory(t, moto.URL, reg), reg)
	got, err := p.ArrivalHistory(context.Background(), from, to)
	if err != nil {
		t.Fatalf("ArrivalHistory: %v", err)
	}
	calls := requestCount(t, reg, "cloudwatch", "GetMetricData")
	t.Logf("GetMetricData calls for 1,000 queues over 8 days: %d", calls)
	minutes := int(to.Sub(from) / time.Minute)
	perCall := 100_800 / minutes
	if want := (1000 + perCall - 1) / perCall; calls != want {
		t.Errorf("calls = %d, want %d (%d queues a call)", calls, want, perCall)
	}
	if len(got) != 100 {
		t.Fatalf("%d groups have a history, want 100", len(got))
	}
	if c := got["g042"].Counts[60]; c != 11 {
		t.Errorf("g042 minute 60 = %v, want 11", c)
	}
	if c := got["g099"].Counts[minutes-1]; c != 9 {
		t.Errorf("g099 last minute = %v, want 9", c)
	}
	if c := got["g000"].Counts[60]; !math.IsNaN(c) {
		t.Errorf("g000 minute 60 = %v, want NaN", c)
	}
}

// requestCount reads checker_aws_requests_total for a service and
// operation, all outcomes.
func requestCount(t testing.TB, reg *prometheus.Registry, service, op string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "checker_aws_requests_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["service"] == service && labels["operation"] == op {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n)
}

// putChunk is how many datapoints one PutMetricData call carries, the
// most CloudWatch takes.
const putChunk = 1000
