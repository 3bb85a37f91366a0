package controller

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// callsObserver reports fixed polling figures per group.
type callsObserver struct {
	polling map[string]model.Polling
}

func (o callsObserver) Observe(_ context.Context, now time.Time) ([]model.Observation, error) {
	var out []model.Observation
	for _, g := range []string{"a", "b"} {
		out = append(out, model.Observation{
			Sample: model.GroupSample{Group: g, At: now, Queues: 1, Answered: 1, Polling: o.polling[g]},
			Fleet:  model.Fleet{Known: true, At: now, Desired: 1, InService: 1, Min: 0, Max: 10},
		})
	}
	return out, nil
}

// callsActuator makes a fixed number of PutMetricData requests per group.
type callsActuator struct {
	requests map[string]int
}

func (a callsActuator) Apply(_ context.Context, d model.Decision, f model.Fleet) (model.Action, error) {
	return model.Action{Group: d.Group, From: f.Desired, To: f.Desired, MetricRequests: a.requests[d.Group]}, nil
}

// tableGate holds every lease and reports its table's request units.
type tableGate struct{ reads, writes float64 }

func (tableGate) Sync(context.Context, time.Time) error { return nil }
func (tableGate) Permit(string) (time.Time, bool) {
	return time.Now().Add(time.Hour), true
}
func (tableGate) Lease(string) model.LeaseStatus {
	return model.LeaseStatus{Owner: "me", Held: true, Acting: true}
}
func (tableGate) Peers() []model.Peer { return []model.Peer{{Identity: "me", Leases: 2}} }
func (tableGate) Identity() string    { return "me" }
func (tableGate) Healthy() error      { return nil }
func (g tableGate) RequestUnits() (float64, float64) {
	return g.reads, g.writes
}

func closeTo(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

var listPrices = awscost.Prices{SQSPerMillionRequests: 0.40, CloudWatchPerThousandMetrics: 0.01,
	PutMetricDataPerThousandRequests: 0.01, DynamoDBPerMillionWrites: 0.625, DynamoDBPerMillionReads: 0.125}

// Group a: 10 queues asked every 10 s (60 requests a minute) and read for
// 3 CloudWatch metrics each (30 a minute), one PutMetricData request every
// 5 s cycle (12 a minute). Group b: 12 requests a minute, no metrics. The
// lease table: 12 read and 36 write units a minute.
//
//	a: SQS 60 × 43,800 × 0.40e-6 = $1.0512; CloudWatch reads 30 × 43,800 ×
//	   0.01e-3 = $13.14; metrics published 12 × 43,800 × 0.01e-3 = $5.256;
//	   together $19.4472.
//	b: SQS 12 × 43,800 × 0.40e-6 = $0.21024.
//	lease table: 12 × 43,800 × 0.125e-6 + 36 × 43,800 × 0.625e-6 =
//	   $0.0657 + $0.9855 = $1.0512.
//	total: 19.4472 + 0.21024 + 1.0512 = $20.70864; by service: sqs
//	   $1.26144, cloudwatch $18.396, dynamodb $1.0512.
func TestTheCheckersOwnAWSBill(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c, err := New(Options{
		Groups: []policy.Settings{billSettings("a"), billSettings("b")},
		Observer: callsObserver{polling: map[string]model.Polling{
			"a": {RequestsPerMinute: 60, CloudWatchMetricsPerMinute: 30},
			"b": {RequestsPerMinute: 12},
		}},
		Actuator:   callsActuator{requests: map[string]int{"a": 1}},
		Gate:       tableGate{reads: 12, writes: 36},
		Registerer: reg,
		Prices:     listPrices,
	})
	if err != nil {
		t.Fatal(err)
	}
	// 13 cycles 5 s apart: the last minute holds the 12 after the first,
	// 12 requests of group a over the 60 s they stand for.
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 13 {
		if _, err := c.RunOnce(context.Background(), start.Add(time.Duration(i)*5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}

	views := c.Views().Groups()
	a, b := views[0].AWSCost, views[1].AWSCost
	if a.Rates.PutMetricDataRequests != 12 {
		t.Errorf("group a: %v PutMetricData requests a minute, want 12", a.Rates.PutMetricDataRequests)
	}
	for _, x := range []struct {
		what      string
		got, want float64
	}{
		{"a: SQS", a.Bill.SQS, 1.0512},
		{"a: CloudWatch reads", a.Bill.CloudWatchReads, 13.14},
		{"a: metrics published", a.Bill.MetricsPublished, 5.256},
		{"a: DynamoDB (the table is no group's)", a.Bill.DynamoDB, 0},
		{"a: total", a.Bill.Total, 19.4472},
		{"b: SQS", b.Bill.SQS, 0.21024},
		{"b: metrics published", b.Bill.MetricsPublished, 0},
		{"b: total", b.Bill.Total, 0.21024},
		{"metric of group a", testutil.ToFloat64(c.metrics.groupAWSCost.WithLabelValues("a")), 19.4472},
		{"metric of group b", testutil.ToFloat64(c.metrics.groupAWSCost.WithLabelValues("b")), 0.21024},
	} {
		if !closeTo(x.got, x.want) {
			t.Errorf("%s: $%v a month, want $%v", x.what, x.got, x.want)
		}
	}

	own := c.Views().AWSCost()
	if own.LeaseTable == nil {
		t.Fatal("no lease table part with a gate that reports its units")
	}
	for _, x := range []struct {
		what      string
		got, want float64
	}{
		{"groups", own.Groups.Bill.Total, 19.4472 + 0.21024},
		{"lease table", own.LeaseTable.Bill.Total, 1.0512},
		{"total", own.Bill.Total, 20.70864},
		{"total SQS", own.Bill.SQS, 1.26144},
		{"metric sqs", testutil.ToFloat64(c.metrics.awsCost.WithLabelValues("sqs")), 1.26144},
		{"metric cloudwatch", testutil.ToFloat64(c.metrics.awsCost.WithLabelValues("cloudwatch")), 18.396},
		{"metric dynamodb", testutil.ToFloat64(c.metrics.awsCost.WithLabelValues("dynamodb")), 1.0512},
	} {
		if !closeTo(x.got, x.want) {
			t.Errorf("%s: $%v a month, want $%v", x.what, x.got, x.want)
		}
	}

	// New prices apply to the next view: free SQS leaves the rest.
	p := listPrices
	p.SQSPerMillionRequests = 0
	c.Views().SetPrices(p)
	if got := c.Views().AWSCost().Bill.Total; !closeTo(got, 20.70864-1.26144) {
		t.Errorf("with free SQS: $%v, want $%v", got, 20.70864-1.26144)
	}
}

// Without a gate there is no lease table, and without an actuator
// nothing is published: only the observer's calls are billed.
func TestOwnAWSBillAlone(t *testing.T) {
	t.Parallel()
	c, err := New(Options{
		Groups:   []policy.Settings{billSettings("a"), billSettings("b")},
		Observer: callsObserver{polling: map[string]model.Polling{"a": {RequestsPerMinute: 60}}},
		Prices:   listPrices,
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := c.RunOnce(context.Background(), start.Add(time.Duration(i)*5*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	own := c.Views().AWSCost()
	if own.LeaseTable != nil || !closeTo(own.Bill.Total, 1.0512) || own.Bill.MetricsPublished != 0 {
		t.Fatalf("alone: %+v (lease table %v), want $1.0512 of SQS only", own.Bill, own.LeaseTable)
	}
}

func billSettings(name string) policy.Settings {
	return policy.Settings{
		Group: name, ServiceTime: 200 * time.Millisecond, Concurrency: 1, Latency: 10 * time.Second,
		Min: 0, Max: 10, StaleAfter: time.Minute,
	}.WithDefaults()
}
