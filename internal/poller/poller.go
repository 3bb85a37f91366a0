// Package poller samples every configured SQS queue in every region and
// reads every group's fleet, through the AWS APIs, once per interval.
//
// Each Observe makes one GetQueueAttributes call per queue that is due,
// concurrently with a bound per region sized from the latency measured
// there, all under one deadline shorter than the interval; reads each region's Auto Scaling groups 50 to a call and each
// cluster's ECS services 10 to a call; and, for the groups that ask for
// it, reads ApproximateAgeOfOldestMessage, NumberOfMessagesSent and
// NumberOfMessagesDeleted from CloudWatch at most once a minute per region.
// What failed is recorded as failed, with its error class: a count that was
// not read is never reported as zero.
//
// Concurrency: for each region the poller keeps an estimate of one call's
// latency and starts a round with as many calls at once as let the queues
// due there be asked within 60 % of the interval (queues × latency ÷
// concurrency), between a floor of 4 and the ceiling
// aws.concurrency_per_region; within the round it adds calls, up to the
// ceiling, as soon as the latency of the round's own calls says the rest
// would not be asked in time. When
// even the ceiling cannot fit, or calls went unanswered by the deadline,
// the region's notice says so on every group sample that has queues there
// (and on the status page), checker_region_cycle_fits drops to 0, and one
// log line is written when it starts and one when it clears.
//
// Idle queues: a queue whose last answer was all zero (visible, in flight
// and delayed) is asked again after as long as it has been idle, at least
// one interval and at most its group's idle_sample_interval, so the gap
// doubles from one interval up to that bound. It is asked every interval
// again as soon as an answer shows anything, a call fails, or the group is
// expecting load (SetExpectingLoad). A queue not asked in an interval
// counts as answered with its last counts, which were all zero. A message
// that lands on an idle queue just after it was asked is seen at the
// latest idle_sample_interval + one interval later.
//
// Pending workers and when they started: ECS gives each deployment's
// creation time, used for its pending tasks. Auto Scaling gives no launch
// time for a group's instances, so for each instance in a pending state
// (Pending, Pending:Wait, Pending:Proceed, Warmed:*) the poller uses the
// time it first saw it pending; the real launch is at or before that time.
package poller

import (
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
	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/callrate"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
)

const (
	// defaultConcurrency is the ceiling of the calls in flight to one
	// region's SQS endpoint when the configuration leaves it at 0.
	defaultConcurrency = config.DefaultConcurrencyPerRegion
	// callTimeoutShare is the part of the interval one round of calls may
	// take when the configuration sets no call timeout.
	callTimeoutShare = 0.8
)

// Poller observes every group's queues and fleet. It satisfies
// controller.Observer. Observe calls do not overlap: a second one waits
// for the first.
type Poller struct {
	callTimeout time.Duration
	interval    time.Duration
	limit       int // the ceiling of calls in flight per region
	metrics     *metrics
	clients     clientSource
	// prices price the group's SQS requests and CloudWatch reads.
	prices awscost.Prices

	groups  []*group
	regions []*region
	asg     []*asgBatch
	ecs     []*ecsBatch
	fleets  []*fleetReader
	kube    []*fleetReader // Kubernetes workloads, read one by one
	kubeAPI kubeAPI        // nil without a Kubernetes fleet

	mu sync.Mutex

	// expecting holds, by group, until when the group expects load; set by
	// SetExpectingLoad from any goroutine, read at the start of Observe.
	expectMu  sync.Mutex
	expecting map[string]time.Time
	// inactive holds the groups set inactive by SetGroupActive; guarded by
	// expectMu, read at the start of Observe.
	inactive map[string]bool
}

type group struct {
	name       string
	count      config.Count
	cloudWatch bool
	queues     []*queue
	fleet      *fleetReader // nil when the group names no fleet
	fixed      int          // fleet.fixed_workers, for a group without a fleet
	cwByRegion map[string]*cwRegion

	regions []*region // the distinct regions of the group's queues
	// interval and idleMax pace the group's idle queues: an idle queue is
	// asked at least every idleMax; idleMax <= interval asks every queue
	// every interval.
	interval, idleMax time.Duration
	expectUntil       time.Time // copied from Poller.expecting at the start of Observe
	inactive          bool      // copied from Poller.inactive at the start of Observe
	requests          callrate.Window
	gauges            groupGauges
}

// region holds one region's queues and the clients that read them.
type region struct {
	name   string
	sqs    sqsAPI
	queues []*queue
	cw     *cwRegion // nil when no queue of the region reads CloudWatch

	pace       pace
	due, later []*queue // this interval's queues to ask, reused
	notice     string   // why the last round did not fit; "" when it did
	gauges     regionGauges
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
	defaultRegion := cfg.AWS.Region
	if defaultRegion == "" {
		defaultRegion = clients.defaultRegion()
	}
	plan, err := planPolling(cfg, defaultRegion)
	if err != nil {
		return nil, err
	}
	queues := 0
	for _, g := range cfg.Groups {
		queues += len(g.Queues)
	}
	m, err := newMetrics(reg, cfg.Metrics.PerQueue.Resolve(queues))
	if err != nil {
		return nil, err
	}
	p := &Poller{
		callTimeout: cfg.AWS.CallTimeout,
		interval:    cfg.Interval,
		limit:       cfg.AWS.ConcurrencyPerRegion,
		metrics:     m,
		clients:     clients,
		prices:      awscost.FromConfig(cfg.AWS),
		expecting:   map[string]time.Time{},
		inactive:    map[string]bool{},
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
	readers, err := p.makeFleets(plan)
	if err != nil {
		return nil, err
	}
	regions := p.makeRegions(plan, m, log)
	for _, gp := range plan.groups {
		p.groups = append(p.groups, makeGroup(gp, cfg.Interval, readers, regions, m, log))
	}
	return p, nil
}

// makeFleets makes the readers of the plan's fleets, in its order, and the
// calls that read them together; the Kubernetes client when a fleet is a
// workload.
func (p *Poller) makeFleets(plan pollPlan) ([]*fleetReader, error) {
	readers := make([]*fleetReader, len(plan.fleets))
	byKey := make(map[string]*fleetReader, len(plan.fleets))
	for i, f := range plan.fleets {
		readers[i] = &fleetReader{kind: f.kind, name: f.name, cluster: f.cluster, region: f.region, kubeRef: f.kubeRef}
		byKey[f.key()] = readers[i]
		if f.kind == KindKubernetes {
			p.kube = append(p.kube, readers[i])
		}
	}
	p.fleets = readers
	if len(p.kube) > 0 {
		c, err := newKubeClient()
		if err != nil {
			gi := slices.IndexFunc(plan.groups, func(g groupPlan) bool { return g.config.Fleet.Kubernetes != nil })
			return nil, fmt.Errorf("groups[%d].fleet.kubernetes: %w", gi, err)
		}
		p.kubeAPI = c
	}
	for _, c := range plan.asgReads {
		b := &asgBatch{api: p.clients.autoScaling(c.region), region: c.region, names: c.names, readers: map[string][]*fleetReader{}}
		for _, n := range c.names {
			b.readers[n] = []*fleetReader{byKey[fleetPlan{kind: KindAutoScaling, name: n, region: c.region}.key()]}
		}
		p.asg = append(p.asg, b)
	}
	for _, c := range plan.ecsReads {
		b := &ecsBatch{api: p.clients.ecs(c.region), region: c.region, cluster: c.cluster, services: c.services, readers: map[string][]*fleetReader{}}
		for _, s := range c.services {
			b.readers[s] = []*fleetReader{byKey[fleetPlan{kind: KindECS, name: s, cluster: c.cluster, region: c.region}.key()]}
		}
		p.ecs = append(p.ecs, b)
	}
	return readers, nil
}

// makeRegions makes the plan's regions, in its order, each with its SQS
// client, pace and series, and its CloudWatch reader when a queue there
// reads CloudWatch.
func (p *Poller) makeRegions(plan pollPlan, m *metrics, log *zap.Logger) map[string]*region {
	regions := make(map[string]*region, len(plan.regions))
	target := min(time.Duration(paceShare*float64(p.interval)), p.callTimeout*3/4)
	for _, rn := range plan.regions {
		r := &region{name: rn, sqs: p.clients.sqs(rn)}
		r.pace = pace{floor: min(paceFloor, p.limit), ceiling: p.limit, target: target}
		r.gauges.init(m, rn)
		if names := plan.cwNames[rn]; len(names) > 0 {
			r.cw = newCWRegion(rn, p.clients.cloudWatch(rn), names, log)
		}
		regions[rn] = r
		p.regions = append(p.regions, r)
	}
	return regions
}

// makeGroup makes one group of the plan: its queues, each in its region,
// and its fleet's reader.
func makeGroup(gp groupPlan, interval time.Duration, readers []*fleetReader, regions map[string]*region, m *metrics, log *zap.Logger) *group {
	gc := gp.config
	g := &group{name: gc.Name, count: gc.Count, cloudWatch: gc.OldestAge.CloudWatch, fixed: gc.Fleet.FixedWorkers,
		interval: interval, idleMax: gc.IdleSampleInterval}
	g.gauges.init(m, g.name)
	for _, qp := range gp.queues {
		q := newQueue(g, qp.name, qp.url, qp.region, log)
		r := regions[qp.region]
		g.queues = append(g.queues, q)
		r.queues = append(r.queues, q)
		q.reg = r
		if !slices.Contains(g.regions, r) {
			g.regions = append(g.regions, r)
		}
	}
	if g.cloudWatch {
		g.cwByRegion = map[string]*cwRegion{}
		for _, q := range g.queues {
			g.cwByRegion[q.region] = regions[q.region].cw
		}
	}
	if gp.fleet >= 0 {
		g.fleet = readers[gp.fleet]
		g.fleet.log = log.With(zap.String("fleet", g.fleet.display()), zap.String("kind", g.fleet.kind),
			zap.String("region", g.fleet.region))
	}
	return g
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

	p.expectMu.Lock()
	for _, g := range p.groups {
		g.expectUntil = p.expecting[g.name]
		g.inactive = p.inactive[g.name]
	}
	p.expectMu.Unlock()

	pools := p.call(callCtx, now)
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil, fmt.Errorf("observe: %w", ctx.Err())
	}
	return p.settle(now, pools), nil
}

// call makes the round's calls, side by side: each region's due queues
// (paced) and CloudWatch batches, and the fleets. It returns when every
// call has answered or given up, with each region's paced pool.
func (p *Poller) call(ctx context.Context, now time.Time) []*pacedPool {
	var wg sync.WaitGroup
	pools := make([]*pacedPool, len(p.regions))
	for ri, r := range p.regions {
		r.plan(now)
		pools[ri] = runPaced(&wg, r.pace.size(len(r.due)), r.pace.ceiling, len(r.due), time.Now().Add(r.pace.target),
			func(i int) time.Duration {
				q := r.due[i]
				q.poll(ctx, r.sqs)
				return q.res.latency
			})
		if r.cw != nil && r.cw.start(now) {
			runPool(&wg, p.limit, len(r.cw.batches), func(b int) { r.cw.fetch(ctx, now, b) })
		}
	}
	for _, f := range p.fleets {
		f.reset()
	}
	runPool(&wg, p.limit, len(p.asg), func(i int) { p.asg[i].fetch(ctx) })
	runPool(&wg, p.limit, len(p.ecs), func(i int) { p.ecs[i].fetch(ctx) })
	runPool(&wg, p.limit, len(p.kube), func(i int) { p.kube[i].fetchKube(ctx, p.kubeAPI) })
	wg.Wait()
	return pools
}

// settle turns the round's answers into the active groups' observations:
// the regions' pacing and CloudWatch readings, each fleet read once, and
// each group's sample. It runs on the caller's goroutine alone, after call.
func (p *Poller) settle(now time.Time, pools []*pacedPool) []model.Observation {
	for ri, r := range p.regions {
		r.pace.limit = int(pools[ri].workers.Load())
		r.settle(p.callTimeout)
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
	out := make([]model.Observation, 0, len(p.groups))
	for _, g := range p.groups {
		if g.inactive {
			continue
		}
		var o model.Observation
		o.Sample = g.sample(now, p.metrics)
		g.polling(&o.Sample.Polling, now, p.prices)
		if g.fleet != nil {
			o.Fleet = fleets[g.fleet]
		} else {
			o.Fleet = fixedFleet(g.fixed, now)
		}
		out = append(out, o)
	}
	return out
}

// SetExpectingLoad tells the poller that a group expects load until the
// given time: until then every queue of the group is asked every interval,
// idle or not. A zero time, or one in the past, ends it. A forecast that
// sees load coming calls it, so that the first messages are not left
// waiting for an idle queue's next sample. Unknown group names are
// ignored. It is safe to call from any goroutine, also during Observe,
// which applies it from its next call on.
func (p *Poller) SetExpectingLoad(group string, until time.Time) {
	p.expectMu.Lock()
	defer p.expectMu.Unlock()
	if until.IsZero() {
		delete(p.expecting, group)
		return
	}
	p.expecting[group] = until
}

// SetGroupActive switches a group's polling on or off. All groups are
// active at first. The queues of an inactive group are not asked and
// Observe returns no observation for it; a group made active again has
// every queue asked at its next Observe. Checkers that share the groups
// (coordination) keep active only the groups whose lease they hold.
// Unknown group names are ignored. It is safe to call from any goroutine,
// also during Observe, which applies it from its next call on.
func (p *Poller) SetGroupActive(group string, active bool) {
	p.expectMu.Lock()
	defer p.expectMu.Unlock()
	if active {
		delete(p.inactive, group)
		return
	}
	for _, g := range p.groups {
		if g.name == group {
			p.inactive[group] = true
			return
		}
	}
}

// sample folds the group's queue answers into its GroupSample.
func (g *group) sample(now time.Time, m *metrics) model.GroupSample {
	s := model.GroupSample{Group: g.name, At: now, Queues: len(g.queues)}
	for _, q := range g.queues {
		q.settle(now, m)
		if q.res.skipped {
			// Not asked: idle, its last answer all zero. Those counts are
			// known and carried forward, not missing.
			s.Answered++
			s.Visible += q.last.Visible
			s.InFlight += q.last.InFlight
			s.Delayed += q.last.Delayed
			continue
		}
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
		g.cloudWatchReadings(&s, m)
	}
	return s
}

// cloudWatchReadings sets the group's CloudWatch readings: the oldest
// message age is the maximum over its queues, sent and deleted the sums.
// Each reading's time is the oldest datapoint time that went into it, so
// staleness shows. The readings stay nil until every queue of the group has
// been answered for once; a queue for which CloudWatch holds no recent
// datapoint (an idle queue) adds nothing.
func (g *group) cloudWatchReadings(s *model.GroupSample, m *metrics) {
	allKnown := true
	for _, q := range g.queues {
		cw := g.cwByRegion[q.region]
		q.gauges.oldestAge(m, q, cw.readings[q.name][metricAge])
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
