package awscost

import (
	"math"
	"testing"

	"github.com/queuechecker/queue-checker/internal/config"
)

// near reports whether got is want to within a relative 1e-12 (the
// products below are not exact in binary).
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want))
}

// The defaults are the list prices docs/cost.md states.
func defaults() Prices { return FromConfig(config.Default().AWS) }

func TestDefaultsAreTheDocumentedPrices(t *testing.T) {
	t.Parallel()
	want := Prices{SQSPerMillionRequests: 0.40, CloudWatchPerThousandMetrics: 0.01,
		PutMetricDataPerThousandRequests: 0.01, DynamoDBPerMillionWrites: 0.625, DynamoDBPerMillionReads: 0.125}
	if got := defaults(); got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
}

// Each figure against a computation by hand, at the default prices.
func TestMonthByHand(t *testing.T) {
	t.Parallel()
	p := defaults()
	for _, c := range []struct {
		name  string
		rates Rates
		want  Bill
	}{
		{
			// 10 queues asked every 10 s: 60 requests a minute × 43,800
			// minutes = 2,628,000 requests; × $0.40 / 1,000,000 = $1.0512.
			name:  "sqs: 10 queues every 10 s",
			rates: Rates{SQSRequests: 60},
			want:  Bill{SQS: 1.0512, Total: 1.0512},
		},
		{
			// One PutMetricData request every 5 s: 12 a minute × 43,800 =
			// 525,600 requests; × $0.01 / 1,000 = $5.256.
			name:  "put metric data every 5 s",
			rates: Rates{PutMetricDataRequests: 12},
			want:  Bill{MetricsPublished: 5.256, Total: 5.256},
		},
		{
			// 10 queues read for 3 metrics each minute: 30 × 43,800 =
			// 1,314,000 metrics; × $0.01 / 1,000 = $13.14.
			name:  "get metric data: 10 queues, 3 metrics",
			rates: Rates{MetricsRequested: 30},
			want:  Bill{CloudWatchReads: 13.14, Total: 13.14},
		},
		{
			// A lease table synced every 5 s: one scan of 1 read unit and
			// 3 writes (heartbeat, two leases) a sync = 12 reads and 36
			// writes a minute. Reads: 12 × 43,800 = 525,600 × $0.125 / 1e6
			// = $0.0657; writes: 36 × 43,800 = 1,576,800 × $0.625 / 1e6 =
			// $0.9855; together $1.0512.
			name:  "lease table",
			rates: Rates{ReadUnits: 12, WriteUnits: 36},
			want:  Bill{DynamoDB: 1.0512, Total: 1.0512},
		},
		{
			name:  "nothing called",
			rates: Rates{},
			want:  Bill{},
		},
		{
			// All of it: 1.0512 + 13.14 + 5.256 + 1.0512 = 20.4984.
			name:  "everything",
			rates: Rates{SQSRequests: 60, MetricsRequested: 30, PutMetricDataRequests: 12, ReadUnits: 12, WriteUnits: 36},
			want:  Bill{SQS: 1.0512, CloudWatchReads: 13.14, MetricsPublished: 5.256, DynamoDB: 1.0512, Total: 20.4984},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := p.Month(c.rates)
			if !near(got.SQS, c.want.SQS) || !near(got.CloudWatchReads, c.want.CloudWatchReads) ||
				!near(got.MetricsPublished, c.want.MetricsPublished) || !near(got.DynamoDB, c.want.DynamoDB) ||
				!near(got.Total, c.want.Total) {
				t.Fatalf("Month(%+v) = %+v, want %+v", c.rates, got, c.want)
			}
		})
	}
}

func TestByService(t *testing.T) {
	t.Parallel()
	b := Bill{SQS: 1, CloudWatchReads: 2, MetricsPublished: 4, DynamoDB: 8, Total: 15}
	for service, want := range map[string]float64{ServiceSQS: 1, ServiceCloudWatch: 6, ServiceDynamoDB: 8, "ecs": 0} {
		if got := b.ByService(service); got != want {
			t.Errorf("ByService(%s) = %v, want %v", service, got, want)
		}
	}
}

// Prices of 0 (a free tier, an emulator) make every figure 0.
func TestFreeCalls(t *testing.T) {
	t.Parallel()
	if b := (Prices{}).Month(Rates{SQSRequests: 1e6, MetricsRequested: 1e6, PutMetricDataRequests: 1e6, ReadUnits: 1e6, WriteUnits: 1e6}); b != (Bill{}) {
		t.Fatalf("free prices billed %+v", b)
	}
}
