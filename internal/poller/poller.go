// Package poller samples every configured SQS queue in every region and
// reads every group's fleet, through the AWS APIs, once per interval.
//
// Each Observe makes one GetQueueAttributes call per queue, concurrently
// with a bound per region, all under one deadline shorter than the
// interval; reads each region's Auto Scaling groups 50 to a call and each
// cluster's ECS services 10 to a call; and, for the groups that ask for
// it, reads ApproximateAgeOfOldestMessage, NumberOfMessagesSent and
// NumberOfMessagesDeleted from CloudWatch at most once a minute per region.
// What failed is recorded as failed, with its error class: a count that was
// not read is never reported as zero.
//
// Pending workers and when they started: ECS gives each deployment's
// creation time, used for its pending tasks. Auto Scaling gives no launch
// time for a group's instances, so for each instance in a pending state
// (Pending, Pending:Wait, Pending:Proceed, Warmed:*) the poller uses the
// time it first saw it pending; the real launch is at or before that time.
package poller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

const (
	// defaultConcurrency bounds the calls in flight to one region's SQS
	// endpoint when the configuration leaves it at 0.
	defaultConcurrency = 16
	// callTimeoutShare is the part of the interval one round of calls may
	// take when the configuration sets no call timeout.
	callTimeoutShare = 0.8
)

// Poller observes every group's queues and fleet. It satisfies
// controller.Observer. Observe calls do not overlap: a second one waits
// for the first.
type Poller struct {
	callTimeout time.Duration
	limit       int
	metrics     *metrics
	clients     clientSource

	groups  []*group
	regions []*region
	asg     []*asgBatch
	ecs     []*ecsBatch
	fleets  []*fleetReader

	mu sync.Mutex
}

type group struct {
	name       string
	count      config.Count
	cloudWatch bool
	queues     []*queue
	fleet      *fleetReader // nil when the group names no fleet
	fixed      int          // fleet.fixed_workers, for a group without a fleet
	cwByRegion map[string]*cwRegion
}

// region holds one region's queues and the clients that read them.
type region struct {
	name   string
	sqs    sqsAPI
	queues []*queue
	cw     *cwRegion // nil when no queue of the region reads CloudWatch
}

// New builds a poller for a validated and defaulted configuration. It
// makes no AWS call; it fails when a queue's region can be learned neither
// from its region field nor from its URL, or a fleet's region is unknown.
func New(cfg config.Config, clients *awsclient.Factory, reg prometheus.Registerer, log *zap.Logger) (*Poller, error) {
	if clients == nil {
		return nil, errors.New("no AWS client factory")
	}
	return newPoller(cfg, factoryClients{clients}, reg, log)
}

func newPoller(cfg config.Config, clients clientSource, reg prometheus.Registerer, log *zap.Logger) (*Poller, error) {
	m, err := newMetrics(reg)
	if err != nil {
		return nil, err
	}
	p := &Poller{
		callTimeout: cfg.AWS.CallTimeout,
		limit:       cfg.AWS.ConcurrencyPerRegion,
		metrics:     m,
		clients:     clients,
	}
	if p.callTimeout <= 0 {
		p.callTimeout = time.Duration(callTimeoutShare * float64(cfg.Interval))
	}
	if p.callTimeout <= 0 {
		return nil, fmt.Errorf("interval %s and call timeout %s leave no time for a call", cfg.Interval, cfg.AWS.CallTimeout)
	}
	if p.limit <= 0 {
		p.limit = defaultConcurrency
	}
	defaultRegion := cfg.AWS.Region
	if defaultRegion == "" {
		defaultRegion = clients.defaultRegion()
	}

	regions := map[string]*region{}
	cwNames := map[string][]string{} // region -> distinct queue names reading CloudWatch
	cwSeen := map[string]bool{}
	asgReaders := map[string]map[string][]*fleetReader{}    // region -> name -> readers
	ecsReaders := map[[2]string]map[string][]*fleetReader{} // region, cluster -> service -> readers
	fleetByKey := map[string]*fleetReader{}

	for gi, gc := range cfg.Groups {
		g := &group{name: gc.Name, count: gc.Count, cloudWatch: gc.OldestAge.CloudWatch, fixed: gc.Fleet.FixedWorkers}
		for qi, qc := range gc.Queues {
			name, urlRegion, err := sqsurl.Parse(qc.URL)
			if err != nil {
				return nil, fmt.Errorf("groups[%d].queues[%d]: %w", gi, qi, err)
			}
			rn := qc.Region
			if rn == "" {
				rn = urlRegion
			}
			if rn == "" {
				return nil, fmt.Errorf("groups[%d].queues[%d]: the URL %q names no region and no region is set", gi, qi, qc.URL)
			}
			q := &queue{
				group: gc.Name, name: name, url: qc.URL, region: rn, log: log,
			}
			g.queues = append(g.queues, q)
			r := regions[rn]
			if r == nil {
				r = &region{name: rn, sqs: clients.sqs(rn)}
				regions[rn] = r
			}
			r.queues = append(r.queues, q)
			if g.cloudWatch && !cwSeen[rn+"\x00"+name] {
				cwSeen[rn+"\x00"+name] = true
				cwNames[rn] = append(cwNames[rn], name)
			}
		}

		switch f := gc.Fleet; {
		case f.AutoScalingGroup != nil:
			rn := firstNonEmpty(f.AutoScalingGroup.Region, defaultRegion)
			if rn == "" {
				return nil, fmt.Errorf("groups[%d].fleet.autoscaling_group: no region set and no default region", gi)
			}
			key := KindAutoScaling + "\x00" + rn + "\x00" + f.AutoScalingGroup.Name
			fr := fleetByKey[key]
			if fr == nil {
				fr = &fleetReader{kind: KindAutoScaling, name: f.AutoScalingGroup.Name, region: rn}
				fleetByKey[key] = fr
				if asgReaders[rn] == nil {
					asgReaders[rn] = map[string][]*fleetReader{}
				}
				asgReaders[rn][fr.name] = append(asgReaders[rn][fr.name], fr)
			}
			g.fleet = fr
		case f.ECSService != nil:
			rn := firstNonEmpty(f.ECSService.Region, defaultRegion)
			if rn == "" {
				return nil, fmt.Errorf("groups[%d].fleet.ecs_service: no region set and no default region", gi)
			}
			key := KindECS + "\x00" + rn + "\x00" + f.ECSService.Cluster + "\x00" + f.ECSService.Service
			fr := fleetByKey[key]
			if fr == nil {
				fr = &fleetReader{kind: KindECS, name: f.ECSService.Service, cluster: f.ECSService.Cluster, region: rn}
				fleetByKey[key] = fr
				ck := [2]string{rn, f.ECSService.Cluster}
				if ecsReaders[ck] == nil {
					ecsReaders[ck] = map[string][]*fleetReader{}
				}
				ecsReaders[ck][fr.name] = append(ecsReaders[ck][fr.name], fr)
			}
			g.fleet = fr
		}
		if g.fleet != nil {
			g.fleet.log = log.With(zap.String("fleet", g.fleet.display()), zap.String("kind", g.fleet.kind),
				zap.String("region", g.fleet.region))
		}
		p.groups = append(p.groups, g)
	}

	for _, rn := range sortedKeys(regions) {
		r := regions[rn]
		if names := cwNames[rn]; len(names) > 0 {
			r.cw = newCWRegion(rn, clients.cloudWatch(rn), names, log)
		}
		p.regions = append(p.regions, r)
	}
	for _, g := range p.groups {
		if !g.cloudWatch {
			continue
		}
		g.cwByRegion = map[string]*cwRegion{}
		for _, q := range g.queues {
			g.cwByRegion[q.region] = regions[q.region].cw
		}
	}
	for _, rn := range sortedKeys(asgReaders) {
		byName := asgReaders[rn]
		names := sortedKeys(byName)
		for first := 0; first < len(names); first += asgNamesPerCall {
			chunk := names[first:min(first+asgNamesPerCall, len(names))]
			b := &asgBatch{api: clients.autoScaling(rn), region: rn, names: chunk, readers: map[string][]*fleetReader{}}
			for _, n := range chunk {
				b.readers[n] = byName[n]
				p.fleets = append(p.fleets, byName[n]...)
			}
			p.asg = append(p.asg, b)
		}
	}
	ecsKeys := make([][2]string, 0, len(ecsReaders))
	for k := range ecsReaders {
		ecsKeys = append(ecsKeys, k)
	}
	slices.SortFunc(ecsKeys, func(a, b [2]string) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	for _, k := range ecsKeys {
		bySvc := ecsReaders[k]
		svcs := sortedKeys(bySvc)
		for first := 0; first < len(svcs); first += ecsServicesPerCall {
			chunk := svcs[first:min(first+ecsServicesPerCall, len(svcs))]
			b := &ecsBatch{api: clients.ecs(k[0]), region: k[0], cluster: k[1], services: chunk, readers: map[string][]*fleetReader{}}
			for _, s := range chunk {
				b.readers[s] = bySvc[s]
				p.fleets = append(p.fleets, bySvc[s]...)
			}
			p.ecs = append(p.ecs, b)
		}
	}
	return p, nil
}

// Observe samples every queue and reads every fleet once, and returns one
// observation per group in configuration order. Failures of single
// queues, fleets or CloudWatch reads are recorded inside the observations;
// the error is returned only when ctx is canceled, and then nothing is
// recorded.
func (p *Poller) Observe(ctx context.Context, now time.Time) ([]model.Observation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("observe: %w", err)
	}
	callCtx, cancel := context.WithTimeout(ctx, p.callTimeout)
	defer cancel()

	var wg sync.WaitGroup
	for _, r := range p.regions {
		runPool(&wg, p.limit, len(r.queues), func(i int) { r.queues[i].poll(callCtx, r.sqs) })
		if r.cw != nil && r.cw.start(now) {
			runPool(&wg, p.limit, len(r.cw.batches), func(b int) { r.cw.fetch(callCtx, now, b) })
		}
	}
	for _, f := range p.fleets {
		f.reset()
	}
	runPool(&wg, p.limit, len(p.asg), func(i int) { p.asg[i].fetch(callCtx) })
	runPool(&wg, p.limit, len(p.ecs), func(i int) { p.ecs[i].fetch(callCtx) })
	wg.Wait()

	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, fmt.Errorf("observe: %w", ctx.Err())
	}

	// Everything below runs on this goroutine alone.
	for _, r := range p.regions {
		if r.cw != nil {
			r.cw.settle(now)
		}
	}
	fleets := make(map[*fleetReader]model.Fleet, len(p.fleets))
	for _, f := range p.fleets {
		if _, done := fleets[f]; !done {
			fleets[f] = f.settle(now)
		}
	}
	out := make([]model.Observation, len(p.groups))
	for i, g := range p.groups {
		out[i].Sample = g.sample(now, p.metrics)
		if g.fleet != nil {
			out[i].Fleet = fleets[g.fleet]
		} else {
			out[i].Fleet = fixedFleet(g.fixed, now)
		}
	}
	return out, nil
}

// sample folds the group's queue answers into its GroupSample.
func (g *group) sample(now time.Time, m *metrics) model.GroupSample {
	s := model.GroupSample{Group: g.name, At: now, Queues: len(g.queues)}
	for _, q := range g.queues {
		q.settle(now, m)
		if !q.res.ok {
			s.Failures = append(s.Failures, model.QueueFailure{
				Queue: q.name, Region: q.region, Class: q.res.class, Message: q.res.err.Error(),
			})
			continue
		}
		s.Answered++
		s.Visible += q.res.counts.Visible
		s.InFlight += q.res.counts.InFlight
		s.Delayed += q.res.counts.Delayed
	}
	s.Backlog = s.Visible
	if g.count.InFlight {
		s.Backlog += s.InFlight
	}
	if g.count.Delayed {
		s.Backlog += s.Delayed
	}
	if g.cloudWatch {
		g.cloudWatchReadings(&s)
	}
	return s
}

// cloudWatchReadings sets the group's CloudWatch readings: the oldest
// message age is the maximum over its queues, sent and deleted the sums.
// Each reading's time is the oldest datapoint time that went into it, so
// staleness shows. The readings stay nil until every queue of the group has
// been answered for once; a queue for which CloudWatch holds no recent
// datapoint (an idle queue) adds nothing.
func (g *group) cloudWatchReadings(s *model.GroupSample) {
	allKnown := true
	for _, q := range g.queues {
		cw := g.cwByRegion[q.region]
		q.gauges.oldestAge(cw.readings[q.name][metricAge])
		allKnown = allKnown && cw.known[q.name]
	}
	if !allKnown {
		return
	}
	var agg cwReadings
	for _, q := range g.queues {
		for m, r := range g.cwByRegion[q.region].readings[q.name] {
			if r == nil {
				continue
			}
			a := agg[m]
			if a == nil {
				agg[m] = &model.Reading{Value: r.Value, At: r.At}
				continue
			}
			if m == metricAge {
				a.Value = max(a.Value, r.Value)
			} else {
				a.Value += r.Value
			}
			if r.At.Before(a.At) {
				a.At = r.At
			}
		}
	}
	s.OldestAge, s.Sent, s.Deleted = agg[metricAge], agg[metricSent], agg[metricDeleted]
}

// runPool runs fn(0) … fn(n-1) on at most limit goroutines added to wg.
func runPool(wg *sync.WaitGroup, limit, n int, fn func(i int)) {
	var next atomic.Int64
	for range min(limit, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
