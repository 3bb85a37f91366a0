package poller

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
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

// HistoryMaxSpan is the longest span History (and ArrivalHistory) reads: CloudWatch keeps
// 1-minute datapoints for 15 days.
const HistoryMaxSpan = 15 * 24 * time.Hour

// WeeklyMaxSpan is the longest span History reads the weekly arrival
// history over: CloudWatch keeps 5-minute datapoints for 63 days.
const WeeklyMaxSpan = 63 * 24 * time.Hour

// weeklyPeriod is the period of the weekly arrival history, seconds.
const weeklyPeriod = 300

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
//
// It is History without the fleet's minutes.
func (p *Poller) ArrivalHistory(ctx context.Context, from, to time.Time) (map[string]model.MinuteHistory, error) {
	from = from.UTC().Truncate(time.Minute)
	to = to.UTC().Truncate(time.Minute)
	if !to.After(from) {
		return nil, fmt.Errorf("arrival history: the span [%s, %s) holds no whole minute", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	h, err := p.History(ctx, HistoryRequest{From: from, To: to})
	return h.Arrivals, err
}

// GroupArrivals is ArrivalHistory for one group of cfg, read by a poller of
// its own over clients: the group's per-minute NumberOfMessagesSent over
// [from, to), summed over its queues and regions.
func GroupArrivals(ctx context.Context, cfg config.Config, clients *awsclient.Factory, g config.Group, from, to time.Time) (model.MinuteHistory, error) {
	one := cfg
	one.Groups = []config.Group{g}
	p, err := New(one, clients, prometheus.NewRegistry(), zap.NewNop())
	if err != nil {
		return model.MinuteHistory{}, err
	}
	hist, err := p.ArrivalHistory(ctx, from, to)
	if err != nil {
		return model.MinuteHistory{}, err
	}
	h, ok := hist[g.Name]
	if !ok {
		return model.MinuteHistory{}, fmt.Errorf("no history for group %s", g.Name)
	}
	return h, nil
}

// HistoryRequest is what one warm start reads: the groups' arrivals over
// [From, To), and the recent minutes of their fleets over [FleetFrom, To).
// Times are truncated to the minute.
type HistoryRequest struct {
	// From and To bound the arrival history (NumberOfMessagesSent) of every
	// group. From zero, or at or after To, reads no arrivals.
	From, To time.Time
	// FleetFrom starts the fleet history, read for the groups named in
	// Fleet that read CloudWatch (oldest_age.cloudwatch: true); the others
	// are not asked for and have no entry. FleetFrom zero or at or after
	// To, or no group named, reads none. A few minutes more than the
	// measurement's window is all it needs (measure.PreloadSpan, 30 minutes).
	FleetFrom time.Time
	Fleet     []string
	// WeeklyFrom starts the weekly arrival history: NumberOfMessagesSent
	// per five minutes (Sum, period 300) of every group over [WeeklyFrom,
	// From), or [WeeklyFrom, To) when no arrivals are read, times truncated
	// to five minutes, in each group's MinuteHistory.Weekly. Zero reads
	// none. A week of it costs a twelfth of the datapoints of a week of
	// minutes: 35 days of it and 8 of minutes, 1,000 queues, are 209 calls.
	WeeklyFrom time.Time
}

// History is what a warm start read, by group. A group whose read failed
// has no entry in the series that failed.
type History struct {
	Arrivals map[string]model.MinuteHistory
	Fleet    map[string]model.FleetHistory
}

// History reads, in one pass over the groups' queues (each distinct queue
// of a region asked for once per series, the calls of a region run
// together), the arrival history of every group (see ArrivalHistory) and
// the fleet history of the groups asked for: per queue and minute
// NumberOfMessagesDeleted (Sum, as msg/s) and
// ApproximateNumberOfMessagesNotVisible (Average: the mean of the in-flight
// counts reported in the minute, the mean in flight Little's law needs; the
// Sum would add up however many datapoints the minute holds, and the
// Maximum overstates it), summed per group over its queues and regions.
// SQS reports its approximate counts about once a minute, so a minute's
// average may rest on one reading: noisier than the checker's own samples,
// which the measurement's window over many minutes evens out.
//
// The fleet's minutes are read apart from the arrivals, for their own short
// span: one GetMetricData call carries one time span, and the arrivals'
// days would make these two series cost pages of datapoints for nothing.
// Two queries per queue, 250 queues a call (GetMetricData's 500 queries;
// 30 minutes are 60 datapoints a queue, one page).
//
// The weekly arrivals (HistoryRequest.WeeklyFrom) are read apart too, at
// five minutes over the weeks before the minutes, summed like them, into
// each group's MinuteHistory.Weekly: a queue's 27 days are 7,776
// datapoints, 12 queues a call. A group whose minutes failed is left out
// whatever its weeks gave.
//
// What it costs: GetMetricData is billed per metric requested, $0.01 per
// 1,000 (us-east-1 list price, read 2026-12). The weekly arrivals add one
// metric per queue; the fleet's minutes add two
// metrics per queue of a measuring group with CloudWatch on, once per start
// or reload: $0.00002 a queue, $0.20 for 10,000 queues (the live
// measurement reads three metrics a queue every minute, $1.31 a month per
// queue).
//
// A queue's fleet series sums like this: a queue with no datapoint in the
// span adds 0 (SQS publishes nothing for an inactive queue), as do the
// minutes before its first datapoint; from its first datapoint on, a minute
// it has no datapoint for (a late or missing publication) makes the group's
// minute NaN rather than undercounted. A minute no queue of the group has
// a datapoint for is NaN, as in the arrival history.
//
// A region whose read fails adds its error (wrapped, naming the series and
// the region) to the returned error; a group with a queue whose read failed
// is left out of that series' map, and keeps the other.
func (p *Poller) History(ctx context.Context, req HistoryRequest) (History, error) {
	to := req.To.UTC().Truncate(time.Minute)
	kinds, minutesRead, err := p.historyKinds(req, to)
	if err != nil {
		return History{}, err
	}
	acc, failed, err := p.fetchHistory(ctx, kinds, to)
	return historyOf(kinds, acc, failed, minutesRead), err
}

// historyKinds are the histories req asks for up to to, each with its
// span, metrics and groups: the minutes of the arrivals, the weekly
// 5-minute arrivals before them, and the fleet's minutes. minutesRead
// says whether the minutes of the arrivals are among them.
func (p *Poller) historyKinds(req HistoryRequest, to time.Time) (kinds []histKind, minutesRead bool, err error) {
	weeklyTo := to
	if from := req.From.UTC().Truncate(time.Minute); !req.From.IsZero() && to.After(from) {
		if to.Sub(from) > HistoryMaxSpan {
			return nil, false, fmt.Errorf("arrival history: span %s is longer than CloudWatch keeps 1-minute data (%s)", to.Sub(from), HistoryMaxSpan)
		}
		kinds = append(kinds, histKind{what: "arrival history", metrics: sentMetrics, from: from,
			minutes: int(to.Sub(from) / time.Minute), groups: p.groups, period: cwPeriod})
		weeklyTo, minutesRead = from, true
	}
	weeklyTo = weeklyTo.Truncate(weeklyPeriod * time.Second)
	if from := req.WeeklyFrom.UTC().Truncate(weeklyPeriod * time.Second); !req.WeeklyFrom.IsZero() && weeklyTo.After(from) {
		if to.Sub(from) > WeeklyMaxSpan {
			return nil, false, fmt.Errorf("weekly arrival history: span %s is longer than CloudWatch keeps 5-minute data (%s)", to.Sub(from), WeeklyMaxSpan)
		}
		kinds = append(kinds, histKind{weekly: true, what: "weekly arrival history", metrics: sentMetrics, from: from,
			minutes: int(weeklyTo.Sub(from) / (weeklyPeriod * time.Second)), groups: p.groups, period: weeklyPeriod})
	}
	if from := req.FleetFrom.UTC().Truncate(time.Minute); !req.FleetFrom.IsZero() && to.After(from) && len(req.Fleet) > 0 {
		if to.Sub(from) > HistoryMaxSpan {
			return nil, false, fmt.Errorf("fleet history: span %s is longer than CloudWatch keeps 1-minute data (%s)", to.Sub(from), HistoryMaxSpan)
		}
		var groups []*group
		for _, g := range p.groups {
			if g.cloudWatch && slices.Contains(req.Fleet, g.name) {
				groups = append(groups, g)
			}
		}
		kinds = append(kinds, histKind{fleet: true, what: "fleet history", metrics: fleetMetrics, from: from,
			minutes: int(to.Sub(from) / time.Minute), groups: groups, period: cwPeriod})
	}
	if len(kinds) == 0 {
		return nil, false, fmt.Errorf("history: neither span [%s, %s) nor [%s, %s) holds a whole minute",
			req.From.UTC().Format(time.RFC3339), to.Format(time.RFC3339), req.FleetFrom.UTC().Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return kinds, minutesRead, nil
}

// fetchHistory reads the kinds' metrics, every region at once and within a
// region histConcurrency calls at once: acc holds each kind's series by
// group, failed the groups of each kind a call failed for, and the error
// each region's first failure of each kind.
func (p *Poller) fetchHistory(ctx context.Context, kinds []histKind, to time.Time) (acc []map[string]*histSeries, failed []map[string]bool, err error) {
	acc = make([]map[string]*histSeries, len(kinds))
	failed = make([]map[string]bool, len(kinds))
	for k, kind := range kinds {
		acc[k] = make(map[string]*histSeries, len(kind.groups))
		for _, g := range kind.groups {
			acc[k][g.name] = newHistSeries(len(kind.metrics), kind.minutes)
		}
		failed[k] = map[string]bool{}
	}
	plan := planHistory(kinds)
	errs := make([]error, len(plan))
	var wg sync.WaitGroup
	var mu sync.Mutex // guards acc, failed and each region's first errors
	for ri, rp := range plan {
		wg.Go(func() {
			api := p.clients.cloudWatch(rp.region)
			rerr := make([]error, len(kinds)) // the region's first error of each kind; guarded by mu
			var inner sync.WaitGroup
			runPool(&inner, histConcurrency, len(rp.jobs), func(j int) {
				job := rp.jobs[j]
				kind := &kinds[job.kind]
				end := to
				if kind.weekly {
					end = kind.from.Add(time.Duration(kind.minutes*kind.period) * time.Second)
				}
				vals, err := fetchHistoryBatch(ctx, api, job.queues, kind.metrics, kind.from, end, kind.minutes, kind.period)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					for _, q := range job.queues {
						for _, g := range q.groups {
							failed[job.kind][g] = true
						}
					}
					if rerr[job.kind] == nil {
						rerr[job.kind] = err
					}
					return
				}
				for qi, q := range job.queues {
					for _, g := range q.groups {
						acc[job.kind][g].add(vals[qi], kind.fleet)
					}
				}
			})
			inner.Wait()
			var es []error
			for k, err := range rerr {
				if err != nil {
					es = append(es, fmt.Errorf("%s in %s: %w", kinds[k].what, rp.region, err))
				}
			}
			errs[ri] = errors.Join(es...)
		})
	}
	wg.Wait()
	return acc, failed, errors.Join(errs...)
}

// historyOf assembles the history from the kinds' series, leaving out the
// groups a call failed for (and, when the minutes of the arrivals were
// read, the weekly arrivals of a group whose minutes failed).
func historyOf(kinds []histKind, acc []map[string]*histSeries, failed []map[string]bool, minutesRead bool) History {
	var out History
	for k, kind := range kinds {
		switch {
		case kind.fleet:
			out.Fleet = make(map[string]model.FleetHistory, len(acc[k]))
		case out.Arrivals == nil:
			out.Arrivals = make(map[string]model.MinuteHistory, len(acc[k]))
		}
		for g, s := range acc[k] {
			if failed[k][g] {
				continue
			}
			s.settle()
			switch {
			case kind.weekly:
				h, ok := out.Arrivals[g]
				if !ok && minutesRead {
					continue // its minutes failed: left out, as they are
				}
				h.WeeklyStart, h.Weekly = kind.from, s.vals[0]
				out.Arrivals[g] = h
			case kind.fleet:
				for i := range s.vals[0] {
					s.vals[0][i] /= cwPeriod // a per-minute sum, as msg/s
				}
				out.Fleet[g] = model.FleetHistory{Start: kind.from, Deleted: s.vals[0], InFlight: s.vals[1]}
			default:
				h := out.Arrivals[g]
				h.Start, h.Counts = kind.from, s.vals[0]
				out.Arrivals[g] = h
			}
		}
	}
	return out
}

// histMetric is one SQS metric a history reads, with its statistic.
type histMetric struct{ name, stat string }

var (
	sentMetrics  = []histMetric{{cwMetrics[metricSent].name, cwMetrics[metricSent].stat}}
	fleetMetrics = []histMetric{
		{cwMetrics[metricDeleted].name, cwMetrics[metricDeleted].stat},
		{"ApproximateNumberOfMessagesNotVisible", "Average"},
	}
)

// histKind is one series a history read asks for: its metrics over its
// span, for its groups. fleet: the fleet's minutes (see History), weekly:
// the weekly arrivals, else the arrivals. minutes counts its periods of
// period seconds.
type histKind struct {
	fleet, weekly bool
	what          string
	metrics       []histMetric
	from          time.Time
	minutes       int
	period        int
	groups        []*group
}

// histSeries sums one group's series, one per metric of its kind, over its
// queues.
type histSeries struct {
	vals [][]float64 // NaN: no queue had a datapoint
	bad  [][]bool    // a queue that had published before had no datapoint (fleet only)
}

func newHistSeries(metrics, minutes int) *histSeries {
	s := &histSeries{vals: make([][]float64, metrics), bad: make([][]bool, metrics)}
	for m := range s.vals {
		v := make([]float64, minutes)
		for i := range v {
			v[i] = math.NaN()
		}
		s.vals[m] = v
	}
	return s
}

// add adds one queue's series. For the arrivals a NaN adds nothing
// (addCounts); for the fleet, from the queue's first datapoint on, a NaN
// marks the group's minute unknown (see History).
func (s *histSeries) add(src [][]float64, fleet bool) {
	for m, v := range src {
		if !fleet {
			addCounts(s.vals[m], v)
			continue
		}
		first := slices.IndexFunc(v, func(x float64) bool { return !math.IsNaN(x) })
		if first < 0 {
			continue // no datapoint in the span: an idle queue adds 0
		}
		if s.bad[m] == nil {
			s.bad[m] = make([]bool, len(v))
		}
		for i := first; i < len(v); i++ {
			if math.IsNaN(v[i]) {
				s.bad[m][i] = true
			}
		}
		addCounts(s.vals[m][first:], v[first:])
	}
}

// settle makes the minutes marked unknown NaN.
func (s *histSeries) settle() {
	for m, bad := range s.bad {
		for i, b := range bad {
			if b {
				s.vals[m][i] = math.NaN()
			}
		}
	}
}

// histQueue is one queue of a region, with the groups that list it.
type histQueue struct {
	name   string
	groups []string
}

// histJob is one GetMetricData call's queues, for one kind.
type histJob struct {
	kind   int
	queues []histQueue
}

type histRegion struct {
	region string
	jobs   []histJob
}

// planHistory groups, for each kind, the distinct queues of every region
// of its groups into calls: as many queues a call as keep the call within
// GetMetricData's queries and one page of datapoints.
func planHistory(kinds []histKind) []histRegion {
	jobs := map[string][]histJob{}
	for k, kind := range kinds {
		nm := len(kind.metrics)
		perCall := min(histMaxQueries/nm, max(1, histMaxDatapoints/(nm*kind.minutes)))
		byRegion := map[string][]histQueue{}
		index := map[[2]string]int{} // region, queue name -> index in byRegion[region]
		for _, g := range kind.groups {
			for _, q := range g.queues {
				key := [2]string{q.region, q.name}
				i, ok := index[key]
				if !ok {
					i = len(byRegion[q.region])
					index[key] = i
					byRegion[q.region] = append(byRegion[q.region], histQueue{name: q.name})
				}
				hq := &byRegion[q.region][i]
				if n := len(hq.groups); n == 0 || hq.groups[n-1] != g.name {
					hq.groups = append(hq.groups, g.name)
				}
			}
		}
		for rn, qs := range byRegion {
			for first := 0; first < len(qs); first += perCall {
				jobs[rn] = append(jobs[rn], histJob{kind: k, queues: qs[first:min(first+perCall, len(qs))]})
			}
		}
	}
	var plan []histRegion
	for _, rn := range sortedKeys(jobs) {
		plan = append(plan, histRegion{region: rn, jobs: jobs[rn]})
	}
	return plan
}

// fetchHistoryBatch reads one call's queues: per queue and metric, its
// values per period seconds over [from, to), NaN where CloudWatch has no
// datapoint; nil where it has none in the span.
func fetchHistoryBatch(ctx context.Context, api cloudWatchAPI, batch []histQueue, metrics []histMetric, from, to time.Time, minutes, period int) ([][][]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, histCallTimeout)
	defer cancel()
	queries, ids := historyQueries(batch, metrics, period)
	vals := make([][][]float64, len(batch))
	for i := range vals {
		vals[i] = make([][]float64, len(metrics))
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
			return nil, fmt.Errorf("get %s of %s and %d more: %w", metricNames(metrics), batch[0].name, len(batch)-1, err)
		}
		for _, r := range out.MetricDataResults {
			if ref, ok := ids[aws.ToString(r.Id)]; ok && len(r.Values) == len(r.Timestamps) {
				storeHistory(&vals[ref[0]][ref[1]], r, from, minutes, period)
			}
		}
		if out.NextToken == nil || aws.ToString(out.NextToken) == "" {
			return vals, nil
		}
		in.NextToken = out.NextToken
	}
}

// historyQueries is one GetMetricData query for each queue of the batch and
// each metric, with the ids that point back to them: queue index, metric
// index.
func historyQueries(batch []histQueue, metrics []histMetric, period int) ([]cwtypes.MetricDataQuery, map[string][2]int) {
	queries := make([]cwtypes.MetricDataQuery, 0, len(batch)*len(metrics))
	ids := make(map[string][2]int, len(batch)*len(metrics))
	for i, q := range batch {
		for m, spec := range metrics {
			id := fmt.Sprintf("q%d", i)
			if m > 0 {
				id = fmt.Sprintf("q%d_%d", i, m)
			}
			ids[id] = [2]int{i, m}
			queries = append(queries, cwtypes.MetricDataQuery{
				Id: aws.String(id),
				MetricStat: &cwtypes.MetricStat{
					Metric: &cwtypes.Metric{
						Namespace:  aws.String("AWS/SQS"),
						MetricName: aws.String(spec.name),
						Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(q.name)}},
					},
					Period: aws.Int32(int32(period)),
					Stat:   aws.String(spec.stat),
				},
				ReturnData: aws.Bool(true),
			})
		}
	}
	return queries, ids
}

// storeHistory puts the usable datapoints of r (finite, not negative, at or
// after from) into *dst by their period since from, up to minutes of them.
// *dst is made, all NaN, on the first datapoint: most of a warm start's
// queues and minutes may have none, and a failed call has none at all.
func storeHistory(dst *[]float64, r cwtypes.MetricDataResult, from time.Time, minutes, period int) {
	for k, ts := range r.Timestamps {
		v := r.Values[k]
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			continue
		}
		m := ts.Sub(from)
		if m < 0 {
			continue
		}
		j := int(m / (time.Duration(period) * time.Second))
		if j >= minutes {
			continue
		}
		if *dst == nil {
			*dst = make([]float64, minutes)
			for x := range *dst {
				(*dst)[x] = math.NaN()
			}
		}
		(*dst)[j] = v
	}
}

// metricNames names metrics for an error: "A", "A and B".
func metricNames(metrics []histMetric) string {
	names := make([]string, len(metrics))
	for i, m := range metrics {
		names[i] = m.name
	}
	return strings.Join(names, " and ")
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
