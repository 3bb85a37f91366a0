package poller

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/model"
)

const (
	// cwRefresh is how often one region's SQS metrics are read: they are
	// 1-minute data.
	cwRefresh = time.Minute
	// cwPeriod is the period asked for, in seconds.
	cwPeriod = 60
	// cwWindow is how far back datapoints are looked for: SQS metrics reach
	// CloudWatch a few minutes late, and the newest one found is kept.
	cwWindow = 10 * time.Minute
	// cwMaxQueries is GetMetricData's limit of queries per call.
	cwMaxQueries = 500
	// cwQueuesPerCall is how many queues' metrics one call asks for.
	cwQueuesPerCall = cwMaxQueries / metricCount
)

// The three SQS metrics read per queue.
const (
	metricAge = iota
	metricSent
	metricDeleted
	metricCount
)

var cwMetrics = [metricCount]struct {
	name, stat, id string
}{
	metricAge:     {"ApproximateAgeOfOldestMessage", "Maximum", "age"},
	metricSent:    {"NumberOfMessagesSent", "Sum", "sent"},
	metricDeleted: {"NumberOfMessagesDeleted", "Sum", "deleted"},
}

// cwReadings are one queue's newest CloudWatch values; nil where CloudWatch
// holds no datapoint in the window.
type cwReadings [metricCount]*model.Reading

type cwQueryRef struct {
	queue  int // index into cwRegion.names
	metric int
}

// cwRegion reads the SQS metrics of one region's queues, at most once a
// minute, and keeps the newest datapoints between rounds.
type cwRegion struct {
	region string
	api    cloudWatchAPI
	log    *zap.Logger

	names   []string // distinct queue names with CloudWatch turned on
	batches [][]cwtypes.MetricDataQuery
	refs    map[string]cwQueryRef // query ID -> queue and metric

	attempted   bool
	lastAttempt time.Time
	fetching    bool // a round runs in this interval

	// known[name] is true once a round has answered for the queue.
	known    map[string]bool
	readings map[string]cwReadings

	// This round's answers, one slot per batch.
	results []cwBatchResult

	failing   bool
	failSince time.Time
}

type cwBatchResult struct {
	readings []cwReadings // by queue, from the batch's first queue on
	err      error
}

func newCWRegion(region string, api cloudWatchAPI, names []string, log *zap.Logger) *cwRegion {
	c := &cwRegion{
		region:   region,
		api:      api,
		log:      log.With(zap.String("region", region)),
		names:    names,
		refs:     make(map[string]cwQueryRef, len(names)*metricCount),
		known:    make(map[string]bool, len(names)),
		readings: make(map[string]cwReadings, len(names)),
	}
	for first := 0; first < len(names); first += cwQueuesPerCall {
		last := min(first+cwQueuesPerCall, len(names))
		batch := make([]cwtypes.MetricDataQuery, 0, (last-first)*metricCount)
		for i := first; i < last; i++ {
			for m, spec := range cwMetrics {
				id := fmt.Sprintf("q%d_%s", i, spec.id)
				c.refs[id] = cwQueryRef{queue: i, metric: m}
				batch = append(batch, cwtypes.MetricDataQuery{
					Id: aws.String(id),
					MetricStat: &cwtypes.MetricStat{
						Metric: &cwtypes.Metric{
							Namespace:  aws.String("AWS/SQS"),
							MetricName: aws.String(spec.name),
							Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(names[i])}},
						},
						Period: aws.Int32(cwPeriod),
						Stat:   aws.String(spec.stat),
					},
					ReturnData: aws.Bool(true),
				})
			}
		}
		c.batches = append(c.batches, batch)
	}
	c.results = make([]cwBatchResult, len(c.batches))
	return c
}

// start reports whether a round is due at now, and marks it started.
func (c *cwRegion) start(now time.Time) bool {
	c.fetching = !c.attempted || now.Sub(c.lastAttempt) >= cwRefresh
	if c.fetching {
		c.attempted, c.lastAttempt = true, now
		clear(c.results)
	}
	return c.fetching
}

// fetch runs one batch of the round: one GetMetricData call, or a few when
// CloudWatch pages its answer.
func (c *cwRegion) fetch(ctx context.Context, now time.Time, batch int) {
	end := now.Truncate(time.Minute) // the current minute is still being filled
	in := &cloudwatch.GetMetricDataInput{
		MetricDataQueries: c.batches[batch],
		StartTime:         aws.Time(end.Add(-cwWindow)),
		EndTime:           aws.Time(end),
		ScanBy:            cwtypes.ScanByTimestampDescending,
	}
	first := batch * cwQueuesPerCall
	readings := make([]cwReadings, len(c.batches[batch])/metricCount)
	for {
		out, err := c.api.GetMetricData(ctx, in)
		if err != nil {
			c.results[batch] = cwBatchResult{err: fmt.Errorf("get SQS metrics in %s: %w", c.region, err)}
			return
		}
		for _, r := range out.MetricDataResults {
			ref, ok := c.refs[aws.ToString(r.Id)]
			if !ok || ref.queue < first || ref.queue-first >= len(readings) ||
				len(r.Values) == 0 || len(r.Values) != len(r.Timestamps) {
				continue
			}
			newest := 0
			for i, ts := range r.Timestamps {
				if ts.After(r.Timestamps[newest]) {
					newest = i
				}
			}
			v := r.Values[newest]
			if ref.metric != metricAge {
				v /= cwPeriod // a per-minute sum, as msg/s
			}
			slot := &readings[ref.queue-first][ref.metric]
			if *slot == nil || r.Timestamps[newest].After((*slot).At) {
				*slot = &model.Reading{Value: v, At: r.Timestamps[newest]}
			}
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	c.results[batch] = cwBatchResult{readings: readings}
}

// settle folds the round's answers into the kept readings. A batch that
// failed leaves its queues' previous readings, with their old timestamps.
func (c *cwRegion) settle(now time.Time) {
	if !c.fetching {
		return
	}
	c.fetching = false
	var firstErr error
	for b, res := range c.results {
		if res.err != nil {
			if firstErr == nil {
				firstErr = res.err
			}
			continue
		}
		for i, rs := range res.readings {
			name := c.names[b*cwQueuesPerCall+i]
			c.readings[name] = rs
			c.known[name] = true
		}
	}
	switch {
	case firstErr != nil && !c.failing:
		c.failing, c.failSince = true, now
		c.log.Warn("CloudWatch SQS metrics failed; the last datapoints are kept and age",
			zap.String("class", awsclient.Classify(firstErr)), zap.Error(firstErr))
	case firstErr == nil && c.failing:
		c.failing = false
		c.log.Info("CloudWatch SQS metrics answer again", zap.Duration("failed_for", now.Sub(c.failSince)))
	}
}
