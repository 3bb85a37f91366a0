// Package awscost prices the checker's own AWS calls (docs/cost.md): SQS
// requests, CloudWatch GetMetricData metrics and PutMetricData requests,
// and the lease table's DynamoDB request units. Auto Scaling and ECS calls
// are free and are not priced. Every monthly figure is a rate per minute
// over a month of capacity.HoursPerMonth hours.
package awscost

import (
	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/config"
)

// MinutesPerMonth is the month of every monthly figure, in minutes: 730
// hours, 43,800 minutes.
const MinutesPerMonth = capacity.HoursPerMonth * 60

// Prices are what each kind of call costs, in dollars, in the units AWS's
// price pages use.
type Prices struct {
	SQSPerMillionRequests            float64
	CloudWatchPerThousandMetrics     float64 // GetMetricData, per metric requested
	PutMetricDataPerThousandRequests float64
	DynamoDBPerMillionWrites         float64 // on-demand write request units
	DynamoDBPerMillionReads          float64 // on-demand read request units
}

// FromConfig is the prices of the aws.*_price_* keys.
func FromConfig(a config.AWS) Prices {
	return Prices{
		SQSPerMillionRequests:            a.SQSPricePerMillionRequests,
		CloudWatchPerThousandMetrics:     a.CloudWatchPricePerThousandMetrics,
		PutMetricDataPerThousandRequests: a.PutMetricDataPricePerThousandRequests,
		DynamoDBPerMillionWrites:         a.DynamoDBPricePerMillionWrites,
		DynamoDBPerMillionReads:          a.DynamoDBPricePerMillionReads,
	}
}

// SQSRequests is what n SQS requests cost.
func (p Prices) SQSRequests(n float64) float64 { return n * p.SQSPerMillionRequests / 1e6 }

// MetricsRequested is what n metrics requested of GetMetricData cost.
func (p Prices) MetricsRequested(n float64) float64 { return n * p.CloudWatchPerThousandMetrics / 1e3 }

// PutMetricDataRequests is what n PutMetricData requests cost, whatever
// the datums each carries.
func (p Prices) PutMetricDataRequests(n float64) float64 {
	return n * p.PutMetricDataPerThousandRequests / 1e3
}

// WriteUnits is what n DynamoDB write request units cost.
func (p Prices) WriteUnits(n float64) float64 { return n * p.DynamoDBPerMillionWrites / 1e6 }

// ReadUnits is what n DynamoDB read request units cost.
func (p Prices) ReadUnits(n float64) float64 { return n * p.DynamoDBPerMillionReads / 1e6 }

// Monthly is a rate per minute over a month: perMinute × 43,800.
func Monthly(perMinute float64) float64 { return perMinute * MinutesPerMonth }

// Rates are the calls of each kind per minute.
type Rates struct {
	SQSRequests           float64 `json:"sqs_requests_per_minute"`
	MetricsRequested      float64 `json:"cloudwatch_metrics_per_minute"`
	PutMetricDataRequests float64 `json:"put_metric_data_requests_per_minute"`
	ReadUnits             float64 `json:"dynamodb_read_units_per_minute"`
	WriteUnits            float64 `json:"dynamodb_write_units_per_minute"`
}

// Add is the rates of both.
func (r Rates) Add(o Rates) Rates {
	return Rates{
		SQSRequests:           r.SQSRequests + o.SQSRequests,
		MetricsRequested:      r.MetricsRequested + o.MetricsRequested,
		PutMetricDataRequests: r.PutMetricDataRequests + o.PutMetricDataRequests,
		ReadUnits:             r.ReadUnits + o.ReadUnits,
		WriteUnits:            r.WriteUnits + o.WriteUnits,
	}
}

// Bill is a month of calls at some rates, in dollars, by what they are
// for. The figures are not rounded.
type Bill struct {
	SQS              float64 `json:"sqs_dollars_per_month"`               // GetQueueAttributes
	CloudWatchReads  float64 `json:"cloudwatch_reads_dollars_per_month"`  // GetMetricData
	MetricsPublished float64 `json:"metrics_published_dollars_per_month"` // PutMetricData
	DynamoDB         float64 `json:"dynamodb_dollars_per_month"`          // reads and writes
	Total            float64 `json:"dollars_per_month"`
}

// Month prices a month of calls at the rates r.
func (p Prices) Month(r Rates) Bill {
	b := Bill{
		SQS:              p.SQSRequests(Monthly(r.SQSRequests)),
		CloudWatchReads:  p.MetricsRequested(Monthly(r.MetricsRequested)),
		MetricsPublished: p.PutMetricDataRequests(Monthly(r.PutMetricDataRequests)),
		DynamoDB:         p.ReadUnits(Monthly(r.ReadUnits)) + p.WriteUnits(Monthly(r.WriteUnits)),
	}
	b.Total = b.SQS + b.CloudWatchReads + b.MetricsPublished + b.DynamoDB
	return b
}

// CloudWatch is the CloudWatch part: reads and metrics published.
func (b Bill) CloudWatch() float64 { return b.CloudWatchReads + b.MetricsPublished }

// Services of checker_aws_cost_dollars_per_month.
const (
	ServiceSQS        = "sqs"
	ServiceCloudWatch = "cloudwatch"
	ServiceDynamoDB   = "dynamodb"
)

// Services lists the services billed, in a fixed order.
var Services = []string{ServiceSQS, ServiceCloudWatch, ServiceDynamoDB}

// ByService is the dollars a month of one service of Services.
func (b Bill) ByService(service string) float64 {
	switch service {
	case ServiceSQS:
		return b.SQS
	case ServiceCloudWatch:
		return b.CloudWatch()
	case ServiceDynamoDB:
		return b.DynamoDB
	}
	return 0
}
