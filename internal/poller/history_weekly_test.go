package poller

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// TestWeeklyHistoryCallsFor1000Queues reads, for 1,000 queues in one
// region, 8 days of minutes and the 27 days of five minutes before them (a
// warm start's five weeks): the minutes 8 queues a call (125 calls), the
// five minutes 12 (7,776 datapoints a queue; 84 calls), 209 in all, each
// within GetMetricData's 500 queries and one page; the five-minute sums
// are summed over a group's queues as the minutes are.
func TestWeeklyHistoryCallsFor1000Queues(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 1,000 queues' history from moto")
	}
	awstest.Shared(t)
	moto, err := awstest.Start(context.Background())
	if err != nil {
		t.Fatalf("start moto: %v", err)
	}
	t.Cleanup(moto.Close)
	f, err := awsclient.New(context.Background(), awsclient.Options{
		Region: east, EndpointURL: moto.URL, CloudWatchProtocol: awsclient.ProtocolJSON,
	})
	if err != nil {
		t.Fatal(err)
	}
	to := time.Now().UTC().Truncate(time.Minute)
	from := to.Add(-8 * 24 * time.Hour)
	weeklyFrom := to.Add(-35 * 24 * time.Hour).Truncate(5 * time.Minute)
	prefix := awstest.UniqueName(t, "w")
	var groups []config.Group
	for g := range 100 {
		grp := config.Group{Name: fmt.Sprintf("g%03d", g)}
		for q := range 10 {
			grp.Queues = append(grp.Queues, sqsURL(east, fmt.Sprintf("%s-%03d-%d", prefix, g, q)))
		}
		groups = append(groups, grp)
	}
	// Two queues of g042 in the same five minutes, a month ago.
	at := weeklyFrom.Add(time.Hour)
	plantSent(t, f, east, queueName(groups[42].Queues[3]), []datum{{at.Add(time.Minute), 5}})
	plantSent(t, f, east, queueName(groups[42].Queues[9]), []datum{{at.Add(3 * time.Minute), 6}})

	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(groups...), factory(t, moto.URL, reg), reg)
	got, err := p.History(context.Background(), HistoryRequest{From: from, To: to, WeeklyFrom: weeklyFrom})
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	calls := requestCount(t, reg, "cloudwatch", "GetMetricData")
	t.Logf("GetMetricData calls for 1,000 queues, 8 days of minutes and 27 days of five minutes: %d", calls)
	buckets := int(from.Truncate(5*time.Minute).Sub(weeklyFrom) / (5 * time.Minute))
	perMinuteCall, perWeeklyCall := 100_800/int(to.Sub(from)/time.Minute), 100_800/buckets
	if want := (1000+perMinuteCall-1)/perMinuteCall + (1000+perWeeklyCall-1)/perWeeklyCall; calls != want {
		t.Errorf("calls = %d, want %d (%d and %d queues a call)", calls, want, perMinuteCall, perWeeklyCall)
	}
	h := got.Arrivals["g042"]
	if len(h.Weekly) != buckets || !h.WeeklyStart.Equal(weeklyFrom) {
		t.Fatalf("g042: %d buckets from %v, want %d from %v", len(h.Weekly), h.WeeklyStart, buckets, weeklyFrom)
	}
	if c := h.Weekly[12]; c != 11 {
		t.Errorf("g042 bucket 12 = %v, want 11", c)
	}
	if c := got.Arrivals["g000"].Weekly[12]; !math.IsNaN(c) {
		t.Errorf("g000 bucket 12 = %v, want NaN", c)
	}
	if len(h.Counts) != int(to.Sub(from)/time.Minute) {
		t.Errorf("g042: %d minutes, want %d", len(h.Counts), int(to.Sub(from)/time.Minute))
	}
}
