package poller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/queuechecker/queue-checker/internal/model"
)

// CloudWatch's limits on one GetMetricData call (GetMetricData, Amazon
// CloudWatch API Reference): at most 500 queries, and at most 100,800
// datapoints returned before the answer is paged (MaxDatapoints' default).
const (
	histMaxQueries    = 500
	histMaxDatapoints = 100_800
	// histCallTimeout bounds one GetMetricData call of the history read,
	// pages included.
	histCallTimeout = 30 * time.Second
	// histConcurrency bounds the history calls in flight to one region.
	histConcurrency = 4
)

// HistoryMaxSpan is the longest span ArrivalHistory reads: CloudWatch keeps
// 1-minute datapoints for 15 days.
const HistoryMaxSpan = 15 * 24 * time.Hour

// ArrivalHistory reads per-minute NumberOfMessagesSent (Sum, period 60) for every queue of every
// configured group over [from, to), summed per group over its queues and regions.
//
// from and to are truncated to the minute (the minute holding to is not
// read: it is still being filled). Each queue is asked for once per region,
// even when several groups share it; a group that lists a queue twice counts
// it once. One GetMetricData query per queue, as many queues per call as
// keep the answer within one page (8 days of minutes: 8 queues a call),
// NextToken followed. CloudWatch's SUM() metric math would return one series
// per group, but the emulator the tests run against does not evaluate it, so
// the sum is taken here.
//
// SQS publishes a queue's metrics every minute while the queue is active,
// zeros included; a queue that has been inactive for six hours publishes
// nothing, and the newest minutes reach CloudWatch a few minutes late. A
// minute for which no queue of a group has a datapoint is NaN (unknown:
// idle or not yet published); otherwise it is the sum of the datapoints
// there are.
//
// A region whose read fails adds its error (wrapped, naming the region) to
// the returned error; groups with a queue whose read failed are left out of
// the map, since a partial sum would understate their traffic, and every
// other group gets its history.
func (p *Poller) ArrivalHistory(ctx context.Context, from, to time.Time) (map[string]model.MinuteHistory, error) {
	from = from.UTC().Truncate(time.Minute)
	to = to.UTC().Truncate(time.Minute)
	if !to.After(from) {
		return nil, fmt.Errorf("arrival history: the span [%s, %s) holds no whole minute", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	if to.Sub(from) > HistoryMaxSpan {
		return nil, fmt.Errorf("arrival history: span %s is longer than CloudWatch keeps 1-minute data (%s)", to.Sub(from), HistoryMaxSpan)
	}
	minutes := int(to.Sub(from) / time.Minute)

	plan := planHistory(p.groups, minutes)
	out := make(map[string]model.MinuteHistory, len(p.groups))
	for _, g := range p.groups {
		counts := make([]float64, minutes)
		for i := range counts {
			counts[i] = math.NaN()
		}
		out[g.name] = model.MinuteHistory{Start: from, Counts: counts}
	}

	errs := make([]error, len(plan))
	var wg sync.WaitGroup
	var mu sync.Mutex // guards out's counts and failed
	failed := map[string]bool{}
	for ri, rp := range plan {
		wg.Go(func() {
			api := p.clients.cloudWatch(rp.region)
			var rmu sync.Mutex
			var rerr error
			var inner sync.WaitGroup
			runPool(&inner, histConcurrency, len(rp.batches), func(b int) {
				vals, err := fetchHistoryBatch(ctx, api, rp.batches[b], from, to, minutes)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					for _, q := range rp.batches[b] {
						for _, g := range q.groups {
							failed[g] = true
						}
					}
					rmu.Lock()
					if rerr == nil {
						rerr = err
					}
					rmu.Unlock()
					return
				}
				for qi, q := range rp.batches[b] {
					for _, g := range q.groups {
						addCounts(out[g].Counts, vals[qi])
					}
				}
			})
			inner.Wait()
			if rerr != nil {
				errs[ri] = fmt.Errorf("arrival history in %s: %w", rp.region, rerr)
			}
		})
	}
	wg.Wait()
	for g := range failed {
		delete(out, g)
	}
	return out, errors.Join(errs...)
}

// histQueue is one queue of a region, with the groups that list it.
type histQueue struct {
	name   string
	groups []string
}

type histRegion struct {
	region  string
	batches [][]histQueue
}

// planHistory groups the distinct queues of every region into calls.
func planHistory(groups []*group, minutes int) []histRegion {
	perCall := min(histMaxQueries, max(1, histMaxDatapoints/minutes))
	byRegion := map[string][]histQueue{}
	index := map[[2]string]int{} // region, queue name -> index in byRegion[region]
	for _, g := range groups {
		for _, q := range g.queues {
			k := [2]string{q.region, q.name}
			i, ok := index[k]
			if !ok {
				i = len(byRegion[q.region])
				index[k] = i
				byRegion[q.region] = append(byRegion[q.region], histQueue{name: q.name})
			}
			hq := &byRegion[q.region][i]
			if n := len(hq.groups); n == 0 || hq.groups[n-1] != g.name {
				hq.groups = append(hq.groups, g.name)
			}
		}
	}
	var plan []histRegion
	for _, rn := range sortedKeys(byRegion) {
		qs := byRegion[rn]
		rp := histRegion{region: rn}
		for first := 0; first < len(qs); first += perCall {
			rp.batches = append(rp.batches, qs[first:min(first+perCall, len(qs))])
		}
		plan = append(plan, rp)
	}
	return plan
}

// fetchHistoryBatch reads one call's queues: per queue, its per-minute sums
// over [from, to), NaN where CloudWatch has no datapoint.
func fetchHistoryBatch(ctx context.Context, api cloudWatchAPI, batch []histQueue, from, to time.Time, minutes int) ([][]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, histCallTimeout)
	defer cancel()
	queries := make([]cwtypes.MetricDataQuery, len(batch))
	vals := make([][]float64, len(batch))
	ids := make(map[string]int, len(batch))
	for i, q := range batch {
		id := fmt.Sprintf("q%d", i)
		ids[id] = i
		queries[i] = cwtypes.MetricDataQuery{
			Id: aws.String(id),
			MetricStat: &cwtypes.MetricStat{
				Metric: &cwtypes.Metric{
					Namespace:  aws.String("AWS/SQS"),
					MetricName: aws.String(cwMetrics[metricSent].name),
					Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(q.name)}},
				},
				Period: aws.Int32(cwPeriod),
				Stat:   aws.String(cwMetrics[metricSent].stat),
			},
			ReturnData: aws.Bool(true),
		}
		v := make([]float64, minutes)
		for j := range v {
			v[j] = math.NaN()
		}
		vals[i] = v
	}
	in := &cloudwatch.GetMetricDataInput{
		MetricDataQueries: queries,
		StartTime:         aws.Time(from),
		EndTime:           aws.Time(to),
		ScanBy:            cwtypes.ScanByTimestampAscending,
	}
	for {
		out, err := api.GetMetricData(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("get NumberOfMessagesSent of %s and %d more: %w", batch[0].name, len(batch)-1, err)
		}
		for _, r := range out.MetricDataResults {
			i, ok := ids[aws.ToString(r.Id)]
			if !ok || len(r.Values) != len(r.Timestamps) {
				continue
			}
			for k, ts := range r.Timestamps {
				v := r.Values[k]
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					continue
				}
				m := ts.Sub(from)
				if m < 0 {
					continue
				}
				if j := int(m / time.Minute); j < minutes {
					vals[i][j] = v
				}
			}
		}
		if out.NextToken == nil || aws.ToString(out.NextToken) == "" {
			return vals, nil
		}
		in.NextToken = out.NextToken
	}
}

// addCounts adds src into dst minute by minute; NaN plus a value is the
// value, NaN plus NaN stays NaN.
func addCounts(dst, src []float64) {
	for i, v := range src {
		if math.IsNaN(v) {
			continue
		}
		if math.IsNaN(dst[i]) {
			dst[i] = v
		} else {
			dst[i] += v
		}
	}
}
