package publisher

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Metric names and the dimension every datum carries.
const (
	MetricBacklog                = "Backlog"
	MetricBacklogPerWorker       = "BacklogPerWorker"
	MetricTargetBacklogPerWorker = "TargetBacklogPerWorker"
	MetricBacklogPerWorkerRatio  = "BacklogPerWorkerRatio"
	MetricDesiredWorkers         = "DesiredWorkers"
	MetricArrivalRate            = "ArrivalRate"
	MetricOldestMessageAge       = "OldestMessageAge"

	DimensionGroup = "Group"
)

// maxDatumsPerCall is PutMetricData's limit of datums in one request.
const maxDatumsPerCall = 1000

// CloudWatch refuses values of magnitude above 2^360 and rounds nothing
// below 8.515920e-109 except 0; one such value fails the whole request.
var (
	cwMaxMagnitude = math.Pow(2, 360)
	cwMinMagnitude = 8.515920e-109
)

// publishable returns the value as CloudWatch accepts it, and false for a
// value it must not receive (NaN, ±Inf, too large). Values too small to
// represent are sent as 0.
func publishable(v float64) (float64, bool) {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > cwMaxMagnitude:
		return 0, false
	case v != 0 && math.Abs(v) < cwMinMagnitude:
		return 0, true
	}
	return v, true
}

// datums returns the group's metrics for one decision, skipping every value
// that is unknown or not publishable. See the package documentation for
// what is published on a held decision.
func datums(d model.Decision, f model.Fleet, highResolution bool) []types.MetricDatum {
	resolution := int32(60)
	if highResolution {
		resolution = 1
	}
	var at *time.Time
	if !d.At.IsZero() {
		at = aws.Time(d.At)
	}
	dims := []types.Dimension{{Name: aws.String(DimensionGroup), Value: aws.String(d.Group)}}

	var out []types.MetricDatum
	add := func(name string, v float64, unit types.StandardUnit) {
		v, ok := publishable(v)
		if !ok {
			return
		}
		out = append(out, types.MetricDatum{
			MetricName:        aws.String(name),
			Dimensions:        dims,
			Value:             aws.Float64(v),
			Unit:              unit,
			Timestamp:         at,
			StorageResolution: aws.Int32(resolution),
		})
	}

	// The queue-derived values describe the queue only when every queue of
	// the group answered.
	whole := !d.Partial && d.Diagnosis != model.DiagUnknown
	if whole {
		add(MetricBacklog, float64(d.Backlog), types.StandardUnitCount)
	}
	// The per-worker values are the decision's backlog per worker in
	// service, of a fleet read this cycle; without one they are not
	// published at all.
	if f.Known {
		perWorker := d.BacklogPerInServiceWorker
		if whole && perWorker != nil {
			add(MetricBacklogPerWorker, *perWorker, types.StandardUnitCount)
		}
		add(MetricTargetBacklogPerWorker, d.TargetBacklogPerWorker, types.StandardUnitCount)
		if whole && perWorker != nil && d.TargetBacklogPerWorker > 0 {
			add(MetricBacklogPerWorkerRatio, *perWorker/d.TargetBacklogPerWorker, types.StandardUnitNone)
		}
		add(MetricDesiredWorkers, float64(d.DesiredWorkers), types.StandardUnitCount)
	}
	if whole && f.Known && d.ArrivalRate != nil {
		add(MetricArrivalRate, *d.ArrivalRate, types.StandardUnitCountSecond)
	}
	if whole && d.OldestAgeSeconds != nil {
		add(MetricOldestMessageAge, *d.OldestAgeSeconds, types.StandardUnitSeconds)
	}
	return out
}

// putMetrics sends the datums in as few calls as the API allows and returns
// how many were accepted and how many calls were made (each is billed). It
// stops at the first failed call.
func putMetrics(ctx context.Context, cw cloudWatchAPI, namespace string, ds []types.MetricDatum) (sent, calls int, err error) {
	for len(ds) > 0 {
		n := min(len(ds), maxDatumsPerCall)
		calls++
		_, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{
			Namespace:  aws.String(namespace),
			MetricData: ds[:n],
		})
		if err != nil {
			return sent, calls, fmt.Errorf("PutMetricData (%d datums): %w", n, err)
		}
		sent += n
		ds = ds[n:]
	}
	return sent, calls, nil
}
