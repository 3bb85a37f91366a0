package web

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// pollingObserver answers for one group "a" with fixed polling figures:
// 60 SQS requests and 30 CloudWatch metrics a minute.
type pollingObserver struct{}

func (pollingObserver) Observe(_ context.Context, now time.Time) ([]model.Observation, error) {
	return []model.Observation{{
		Sample: model.GroupSample{Group: "a", At: now, Queues: 10, Answered: 10,
			Polling: model.Polling{Asked: 10, RequestsPerMinute: 60, CloudWatchMetricsPerMinute: 30}},
		Fleet: model.Fleet{Known: true, At: now, Desired: 1, InService: 1, Max: 10},
	}}, nil
}

// publishingActuator makes one PutMetricData request a decision.
type publishingActuator struct{}

func (publishingActuator) Apply(_ context.Context, d model.Decision, f model.Fleet) (model.Action, error) {
	return model.Action{Group: d.Group, From: f.Desired, To: f.Desired, MetricsPublished: 5, MetricRequests: 1}, nil
}

// The group of 10 queues asked every 10 s (60 requests a minute), read
// for 3 metrics each a minute (30) and publishing one request every 5 s
// cycle (12 a minute), at the default list prices:
//
//	SQS 60 × 43,800 × $0.40 / 1e6 = $1.0512, "$1.05"
//	CloudWatch reads 30 × 43,800 × $0.01 / 1,000 = $13.14
//	metrics published 12 × 43,800 × $0.01 / 1,000 = $5.256, "$5.26"
//	together $19.4472, "$19.45"
//
// The checker runs alone: the total is the group's, with no lease table.
func TestOwnAWSBillOnThePageAndInTheAPI(t *testing.T) {
	t.Parallel()
	c, err := controller.New(controller.Options{
		Groups: []policy.Settings{policy.Settings{Group: "a", ServiceTime: 200 * time.Millisecond, Concurrency: 1,
			Latency: 10 * time.Second, Max: 10, StaleAfter: time.Minute}.WithDefaults()},
		Observer: pollingObserver{}, Actuator: publishingActuator{},
		Prices: awscost.Prices{SQSPerMillionRequests: 0.40, CloudWatchPerThousandMetrics: 0.01,
			PutMetricDataPerThousandRequests: 0.01, DynamoDBPerMillionWrites: 0.625, DynamoDBPerMillionReads: 0.125},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	for i := range 13 { // the last minute: 12 cycles of 5 s
		now = start.Add(time.Duration(i) * 5 * time.Second)
		if _, err := c.RunOnce(context.Background(), now); err != nil {
			t.Fatal(err)
		}
	}
	h := Handler(Options{Controller: c, Gatherer: prometheus.NewRegistry(), Interval: 5 * time.Second,
		Now: func() time.Time { return now }})

	rec := get(t, h, "/api/v1/groups")
	var doc struct {
		AWSCost struct {
			Total      float64  `json:"dollars_per_month"`
			SQS        float64  `json:"sqs_dollars_per_month"`
			LeaseTable *float64 `json:"lease_table_dollars_per_month"`
			Put        float64  `json:"put_metric_data_requests_per_minute"`
			Summary    string   `json:"summary"`
		} `json:"aws_cost"`
		Groups []struct {
			Cost struct {
				AWS struct {
					SQS       float64 `json:"sqs_dollars_per_month"`
					Reads     float64 `json:"cloudwatch_reads_dollars_per_month"`
					Published float64 `json:"metrics_published_dollars_per_month"`
					DynamoDB  float64 `json:"dynamodb_dollars_per_month"`
					Total     float64 `json:"dollars_per_month"`
					Put       float64 `json:"put_metric_data_requests_per_minute"`
					Summary   string  `json:"summary"`
				} `json:"aws"`
			} `json:"cost"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	g := doc.Groups[0].Cost.AWS
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if !near(g.SQS, 1.0512) || !near(g.Reads, 13.14) || !near(g.Published, 5.256) || g.DynamoDB != 0 ||
		!near(g.Total, 19.4472) || g.Put != 12 {
		t.Errorf("group's cost.aws %+v, want SQS 1.0512, reads 13.14, published 5.256 (12 requests a minute), total 19.4472", g)
	}
	const sentence = "$19.45 a month: SQS $1.05, CloudWatch reads $13.14, metrics published $5.26"
	if g.Summary != sentence {
		t.Errorf("group's summary %q, want %q", g.Summary, sentence)
	}
	if a := doc.AWSCost; !near(a.Total, 19.4472) || !near(a.SQS, 1.0512) || a.LeaseTable != nil || a.Put != 12 || a.Summary != sentence {
		t.Errorf("aws_cost %+v, want the group's figures and no lease table", a)
	}

	page := get(t, h, "/").Body.String()
	for _, want := range []string{
		"The checker's own AWS bill for this group: <span data-field=\"cost.aws.summary\" data-fmt=\"text\">" + sentence + "</span>.",
		"The checker's own AWS bill: <span data-doc-text=\"aws_cost.summary\">" + sentence + "</span>.",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
}

// With a lease table its part joins the sentence: 12 read and 36 write
// units a minute are 12 × 43,800 × $0.125 / 1e6 + 36 × 43,800 × $0.625 /
// 1e6 = $0.0657 + $0.9855 = $1.0512.
func TestOwnAWSBillSentenceWithLeaseTable(t *testing.T) {
	t.Parallel()
	p := awscost.Prices{SQSPerMillionRequests: 0.40, DynamoDBPerMillionWrites: 0.625, DynamoDBPerMillionReads: 0.125}
	table := awscost.Rates{ReadUnits: 12, WriteUnits: 36}
	groups := awscost.Rates{SQSRequests: 60}
	d := awsCostOf(readmodel.CheckerAWSCost{
		AWSCost:    readmodel.AWSCost{Rates: groups.Add(table), Bill: p.Month(groups.Add(table))},
		Groups:     readmodel.AWSCost{Rates: groups, Bill: p.Month(groups)},
		LeaseTable: &readmodel.AWSCost{Rates: table, Bill: p.Month(table)},
	})
	want := "$2.10 a month: SQS $1.05, CloudWatch reads $0.00, metrics published $0.00, lease table (DynamoDB) $1.05"
	if d.Summary != want || d.LeaseTableDollarsPerMonth == nil || math.Abs(*d.LeaseTableDollarsPerMonth-1.0512) > 1e-12 {
		t.Fatalf("summary %q (lease table %v), want %q and 1.0512", d.Summary, d.LeaseTableDollarsPerMonth, want)
	}
}

// The overview of many groups says the total too.
func TestOwnAWSBillOnTheOverview(t *testing.T) {
	t.Parallel()
	var groups []policy.Settings
	for i := range manyGroups + 1 {
		name := "a"
		if i > 0 {
			name = "g" + strconv.Itoa(i)
		}
		groups = append(groups, policy.Settings{Group: name, ServiceTime: 200 * time.Millisecond, Concurrency: 1,
			Latency: 10 * time.Second, Max: 10, StaleAfter: time.Minute}.WithDefaults())
	}
	c, err := controller.New(controller.Options{Groups: groups, Observer: pollingObserver{},
		Prices: awscost.Prices{SQSPerMillionRequests: 0.40}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	_, _ = c.RunOnce(context.Background(), now)
	h := Handler(Options{Controller: c, Gatherer: prometheus.NewRegistry(), Interval: 5 * time.Second,
		Now: func() time.Time { return now }})
	// 60 requests a minute of group a: $1.0512, "$1.05"; CloudWatch is free here.
	want := "The checker's own AWS bill: $1.05 a month: SQS $1.05, CloudWatch reads $0.00, metrics published $0.00."
	if page := get(t, h, "/").Body.String(); !strings.Contains(page, want) {
		t.Errorf("overview lacks %q", want)
	}
}
