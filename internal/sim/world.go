// Package sim is a discrete-event simulation of one SQS queue and the worker
// fleet that drains it. Messages arrive as a Poisson process whose rate
// follows a Scenario; each takes a service time drawn from a Service
// distribution, changed by the world's service changes and slowed by a
// shared downstream pool; workers take messages first in, first out, a fixed
// number at once, start taking them a start delay after launch, and on
// scale-in finish the messages in hand before they leave. The world need not
// be what the group's settings say it is: the settings assume a service time
// of their own (Config.AssumedServiceTime), and the sample's CloudWatch
// metrics arrive as late and as coarse as CloudWatch's (metrics.go).
//
// A World is both the controller's Observer and its Actuator, so the real
// controller and policy drive it exactly as they drive AWS. Time is only ever
// the `now` passed in: a run can replay hours in seconds, or the demo can
// drive it with the wall clock.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// The second seeds of the arrival and service-time streams: every world of
// a seed draws the same messages (the oracle's plan draws them ahead).
const (
	arrivalStream = 0x61727269 // "arri"
	serviceStream = 0x73657276 // "serv"
)

// FleetKind is the Fleet.Kind of a simulated fleet.
const FleetKind = "simulated"

// DefaultGroup names the simulated group when Config.Group is empty.
const DefaultGroup = "simulated"

// deletedWindow is the window of the exact Deleted reading (MetricsExact):
// completions per second over the last minute.
const deletedWindow = 60.0

// Config describes a simulated queue and fleet.
type Config struct {
	Group    string    // the group name on samples and fleets; DefaultGroup when empty
	Start    time.Time // the simulation's time zero
	Scenario Scenario
	Service  Service
	// AssumedServiceTime is the mean service time the group's settings
	// give, which the world need not have (0: Service.Mean). Settings and
	// the peers' targets are derived from it; the oracles know the world.
	AssumedServiceTime time.Duration
	// DownstreamPool is the connections of a downstream the workers share
	// (0: none). A message dispatched while more messages than the pool are
	// in service, itself included, takes its service time × in service ÷
	// pool, so completions level off near pool ÷ service time however many
	// workers run. The slowdown is fixed at dispatch: a message keeps it
	// when others finish before it.
	DownstreamPool int
	// PoolChanges change the pool's connections from a time on (a pool
	// that grows or shrinks); see PoolChange.
	PoolChanges []PoolChange
	// ServiceChanges change the service time of the messages dispatched
	// from a time on (a deploy, a slower dependency); see ServiceChange.
	ServiceChanges []ServiceChange
	// Concurrency is how many messages one worker handles at once (1 when 0).
	Concurrency int
	StartDelay  time.Duration // launch until a new worker takes its first message
	// StartDelayCV spreads the start delays: each launched worker's is
	// lognormal with mean StartDelay and this coefficient of variation (0:
	// every worker's is StartDelay). They are drawn in launch order from a
	// stream of their own, so every run with the same seed meets the same
	// sequence of delays.
	StartDelayCV float64
	Min, Max     int // fleet bounds; every desired count is clamped to them
	// Workers is the fleet at time zero, all in service.
	Workers int
	// LatencyTarget is the promise the scores measure: a message is within
	// it when its queue wait (arrival to pick-up) is at most this long.
	LatencyTarget time.Duration
	Seed          uint64

	// A sample's CloudWatch metrics are NumberOfMessagesDeleted (Deleted)
	// and, with ReportOldestAge, ApproximateAgeOfOldestMessage (OldestAge).
	// They are what the poller reads from CloudWatch (metrics.go): 1-minute
	// datapoints, the deletions' Sum ÷ 60 and the oldest age's Maximum,
	// stamped with their minute's start, readable MetricDelay after the
	// minute ends and read at most once a minute; none until the first
	// minute can be read. MetricsExact gives instead the completions per
	// second over the last 60 seconds and the oldest age at the sample,
	// both stamped with the sample's time, from the first sample on: a
	// kinder world than CloudWatch's, for tests and comparisons that need
	// one.
	ReportOldestAge bool
	MetricDelay     time.Duration
	MetricsExact    bool
	// NoDeleted leaves the deleted count out of every sample: a group that
	// reads no CloudWatch, whose fleet cannot be measured.
	NoDeleted bool

	// ScaleIn is what happens to a busy worker removed on scale-in:
	// ScaleInGraceful ("" too) or ScaleInKill (scalein.go). VisibilityTimeout
	// is the queue's (DefaultVisibilityTimeout when 0).
	ScaleIn           string
	VisibilityTimeout time.Duration

	// WarmUp is left out of the scores: messages that arrive before it,
	// the cost and the scaling before it do not count.
	WarmUp time.Duration
}

// worker states
const (
	workerPending = iota
	workerActive
	workerRetiring
	workerGone
)

type worker struct {
	state    int
	launched float64
	busy     int
}

// event kinds
const (
	evCompletion = iota
	evStart
)

type event struct {
	at     float64
	kind   int
	worker int
	seq    uint64
}

// eventHeap is a binary min-heap of events by time, then by scheduling
// order, so that ties resolve the same way on every run. It is typed rather
// than container/heap's interface, which would allocate on every push.
type eventHeap []event

func (h eventHeap) less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		parent := (i - 1) / 2
		if !q.less(i, parent) {
			break
		}
		q[i], q[parent] = q[parent], q[i]
		i = parent
	}
}

func (h *eventHeap) pop() event {
	q := *h
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(q) && q.less(l, m) {
			m = l
		}
		if r < len(q) && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
	return top
}

// message is a waiting message: when it arrived and how long it will take.
type message struct {
	arrived float64
	service float64
}

// fifo is a ring buffer of waiting messages.
type fifo struct {
	buf  []message
	head int
	n    int
}

func (q *fifo) push(m message) {
	if q.n == len(q.buf) {
		nb := make([]message, max(16, 2*len(q.buf)))
		for i := 0; i < q.n; i++ {
			nb[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = nb, 0
	}
	q.buf[(q.head+q.n)%len(q.buf)] = m
	q.n++
}

func (q *fifo) pop() message {
	m := q.buf[q.head]
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return m
}

func (q *fifo) front() message { return q.buf[q.head] }

func (q *fifo) at(i int) message { return q.buf[(q.head+i)%len(q.buf)] }

// World is one simulated queue and its fleet. It is safe for concurrent use;
// time only moves forward: a `now` earlier than the world's time changes
// nothing and describes the world as it is.
type World struct {
	mu sync.Mutex

	cfg         Config
	group       string
	concurrency int
	svc         sampler
	changes     []timed[float64] // the service changes' factors, in time order
	pools       []timed[int]     // the pool changes' connections, in time order
	delays      startDelays
	arrRand     *rand.Rand
	svcRand     *rand.Rand

	t           float64 // seconds since cfg.Start
	cursor      arrivalCursor
	nextArrival float64

	queue     fifo
	events    eventHeap
	seq       uint64
	workers   []worker
	freeSlots []int // worker ids, one entry per free slot; stale entries are skipped
	free      int   // valid free slots
	pending   int
	active    int
	retiring  int
	desired   int

	inFlight int     // received, not deleted: in service, or held by a killed worker
	serving  int     // in service with a live worker
	factor   float64 // the service change in force
	changed  int     // how many of the service changes have come into force
	pool     int     // the downstream pool's connections in force (0: none)
	pooled   int     // how many of the pool changes have come into force
	arrivals int64
	waits    waitStats
	work     float64 // service seconds of every message dispatched

	completions fifo // MetricsExact: completions (as arrived times) within the last deletedWindow seconds
	minutes     minuteMetrics
	log         minuteLog // every minute's sent, deleted and in flight, for History

	scoreFrom      float64 // seconds: WarmUp
	workerSeconds  float64
	scalingActions int
	launches       int
	maxOldestAge   float64

	kill *killState // nil unless cfg.ScaleIn is ScaleInKill

	// startedHours counts the messages started each hour from the start
	// within the promise and late: the truth the estimate of the promise
	// (slo.go) is measured against.
	startedHours []hourTruth

	// bounds are the fleet's own, Min and Max, which every desired count
	// is clamped to.
	bounds model.Bounds
}

// NewWorld checks cfg and makes a world at cfg.Start, with cfg.Workers in
// service and an empty queue.
func NewWorld(cfg Config) (*World, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	w := &World{
		cfg:         cfg,
		group:       cfg.Group,
		concurrency: max(cfg.Concurrency, 1),
		svc:         newSampler(cfg.Service),
		changes:     newServiceChanges(cfg.ServiceChanges),
		pools:       newPoolChanges(cfg.PoolChanges),
		pool:        cfg.DownstreamPool,
		delays:      newStartDelays(cfg),
		factor:      1,
		minutes:     newMinuteMetrics(cfg.Start, cfg.MetricDelay),
		// Arrivals and service times come from separate streams, and each
		// message draws its service time on arrival, so every policy run
		// with the same seed sees the same messages with the same work.
		arrRand: rand.New(rand.NewPCG(cfg.Seed, arrivalStream)),
		svcRand: rand.New(rand.NewPCG(cfg.Seed, serviceStream)),
	}
	w.log = newMinuteLog(&w.minutes)
	if cfg.MetricsExact {
		w.minutes.end = math.Inf(1) // exact metrics close no minutes
	}
	if w.group == "" {
		w.group = DefaultGroup
	}
	w.waits.target = cfg.LatencyTarget.Seconds()
	w.kill = newKillState(cfg)
	w.scoreFrom = cfg.WarmUp.Seconds()
	w.bounds = model.Limits{}.For(model.Fleet{Kind: FleetKind, Known: true, Min: cfg.Min, Max: cfg.Max})
	w.cursor.init(cfg.Scenario)
	w.nextArrival = w.drawArrival(0)
	w.desired = cfg.Workers
	for range cfg.Workers {
		w.workers = append(w.workers, worker{state: workerActive})
		w.active++
		id := len(w.workers) - 1
		for range w.concurrency {
			w.freeSlots = append(w.freeSlots, id)
		}
		w.free += w.concurrency
	}
	return w, nil
}

func (c Config) validate() error {
	var errs []error
	if err := c.Scenario.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Service.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Concurrency < 0 {
		errs = append(errs, fmt.Errorf("concurrency %d: must be >= 1", c.Concurrency))
	}
	if c.StartDelay < 0 {
		errs = append(errs, fmt.Errorf("start delay %v: must be >= 0", c.StartDelay))
	}
	if c.Min < 0 || c.Max < c.Min {
		errs = append(errs, fmt.Errorf("fleet bounds min %d, max %d: want 0 <= min <= max", c.Min, c.Max))
	}
	if c.Max > MaxWorkers {
		errs = append(errs, fmt.Errorf("fleet max %d: at most %d workers", c.Max, MaxWorkers))
	}
	if c.Workers < c.Min || c.Workers > c.Max {
		errs = append(errs, fmt.Errorf("starting workers %d: must be within min %d and max %d", c.Workers, c.Min, c.Max))
	}
	if c.LatencyTarget < 0 {
		errs = append(errs, fmt.Errorf("latency target %v: must be >= 0", c.LatencyTarget))
	}
	if c.WarmUp < 0 {
		errs = append(errs, fmt.Errorf("warm-up %v: must be >= 0", c.WarmUp))
	}
	if c.AssumedServiceTime < 0 {
		errs = append(errs, fmt.Errorf("assumed service time %v: must be >= 0", c.AssumedServiceTime))
	}
	if c.DownstreamPool < 0 {
		errs = append(errs, fmt.Errorf("downstream pool %d: must be >= 0", c.DownstreamPool))
	}
	errs = append(errs, serviceChangeErrors(c.ServiceChanges)...)
	errs = append(errs, poolChangeErrors(c.PoolChanges)...)
	if !(c.StartDelayCV >= 0) || math.IsInf(c.StartDelayCV, 0) {
		errs = append(errs, fmt.Errorf("start delay coefficient of variation %v: must be a finite number >= 0", c.StartDelayCV))
	}
	if c.MetricDelay < 0 {
		errs = append(errs, fmt.Errorf("metric delay %v: must be >= 0", c.MetricDelay))
	}
	errs = append(errs, c.scaleInErrors()...)
	return errors.Join(errs...)
}

// Config returns the world's configuration.
func (w *World) Config() Config { return w.cfg }

// SettingsServiceTime is the mean service time the group's settings give:
// AssumedServiceTime, or Service.Mean when that is 0.
func (c Config) SettingsServiceTime() time.Duration {
	if c.AssumedServiceTime > 0 {
		return c.AssumedServiceTime
	}
	return c.Service.Mean
}

// drawArrival returns the first arrival after t: exponential gaps at the rate
// of the segment in force, restarted at each segment's end (the exponential
// is memoryless, so this is exactly a Poisson process with a piecewise
// constant rate).
func (w *World) drawArrival(t float64) float64 {
	for {
		rate, until := w.cursor.at(t)
		if math.IsInf(until, 1) && rate == 0 {
			return math.Inf(1)
		}
		if rate > 0 {
			next := t + w.arrRand.ExpFloat64()/rate
			if next < until {
				return next
			}
		}
		t = until
	}
}

func (w *World) seconds(now time.Time) float64 {
	return now.Sub(w.cfg.Start).Seconds()
}

// advance runs the simulation to time `to` (seconds), processing every
// arrival, completion and worker start on the way.
func (w *World) advance(to float64) {
	for {
		next := w.nextArrival
		isArrival := true
		if len(w.events) > 0 && w.events[0].at < next {
			next = w.events[0].at
			isArrival = false
		}
		if next > to {
			break
		}
		w.accrue(next)
		if next >= w.minutes.end {
			w.closeMinutes(next)
		}
		if next >= w.log.end {
			w.log.close(next, w.inFlight)
		}
		if isArrival {
			w.arrive()
		} else {
			e := w.events.pop()
			switch e.kind {
			case evCompletion:
				w.complete(e.worker)
			case evStart:
				w.start(e.worker)
			case evRedeliver:
				w.redeliver(e.worker)
			}
		}
	}
	w.accrue(to)
	if to >= w.minutes.end {
		w.closeMinutes(to)
	}
	if to >= w.log.end {
		w.log.close(to, w.inFlight)
	}
}

// closeMinutes ends the CloudWatch minutes that end by t, the queue being as
// it has been since the last event.
func (w *World) closeMinutes(t float64) {
	oldest := math.NaN()
	if w.queue.n > 0 {
		oldest = w.queue.front().arrived
	}
	w.minutes.close(t, oldest)
}

// accrue moves the clock to t, paying for every worker running or starting.
func (w *World) accrue(t float64) {
	if t <= w.t {
		return
	}
	if t > w.scoreFrom {
		w.workerSeconds += float64(w.pending+w.active+w.retiring) * (t - max(w.t, w.scoreFrom))
	}
	w.t = t
}

func (w *World) schedule(at float64, kind, id int) {
	w.seq++
	w.events.push(event{at: at, kind: kind, worker: id, seq: w.seq})
}

func (w *World) arrive() {
	if w.t >= w.scoreFrom {
		w.arrivals++
	}
	w.log.cur.sent++
	w.queue.push(message{arrived: w.t, service: w.svc.draw(w.svcRand)})
	w.nextArrival = w.drawArrival(w.t)
	w.dispatch()
}

// dispatch hands waiting messages to free slots, oldest message first. A
// message's service time is its drawn time × the service change in force ×
// the downstream pool's slowdown (Config.DownstreamPool).
func (w *World) dispatch() {
	for w.queue.n > 0 && w.free > 0 {
		id := w.freeSlots[len(w.freeSlots)-1]
		w.freeSlots = w.freeSlots[:len(w.freeSlots)-1]
		if w.workers[id].state != workerActive {
			continue // a slot of a worker that has left or is leaving
		}
		w.free--
		m := w.queue.pop()
		wait := w.t - m.arrived
		if m.arrived >= w.scoreFrom {
			w.waits.add(wait)
		}
		w.noteStart(wait)
		w.minutes.noteAge(wait) // it was the oldest until now
		w.workers[id].busy++
		w.inFlight++
		w.log.received(w.t)
		w.serving++
		d := m.service * w.serviceFactor()
		if pool := w.poolNow(); pool > 0 && w.serving > pool {
			d *= float64(w.serving) / float64(pool)
		}
		w.work += d
		w.schedule(w.t+d, evCompletion, id)
		if w.kill != nil {
			w.kill.hold(id, m, w.t, d)
		}
	}
}

// poolNow is the downstream pool's connections in force now.
func (w *World) poolNow() int {
	for w.pooled < len(w.pools) && w.pools[w.pooled].at <= w.t {
		w.pool = w.pools[w.pooled].v
		w.pooled++
	}
	return w.pool
}

// serviceFactor is the service change in force now.
func (w *World) serviceFactor() float64 {
	for w.changed < len(w.changes) && w.changes[w.changed].at <= w.t {
		w.factor = w.changes[w.changed].v
		w.changed++
	}
	return w.factor
}

func (w *World) complete(id int) {
	wk := &w.workers[id]
	if wk.state == workerGone {
		return // killed: its messages come back after their visibility timeout
	}
	if w.kill != nil {
		w.kill.release(id)
	}
	wk.busy--
	w.inFlight--
	w.log.deleted(w.t)
	w.serving--
	if w.cfg.MetricsExact {
		w.completions.push(message{arrived: w.t})
		for w.completions.n > 0 && w.completions.front().arrived < w.t-deletedWindow {
			w.completions.pop()
		}
	} else {
		w.minutes.deleted++
	}
	switch wk.state {
	case workerRetiring:
		if wk.busy == 0 {
			wk.state = workerGone
			w.retiring--
		}
	case workerActive:
		w.freeSlots = append(w.freeSlots, id)
		w.free++
		w.dispatch()
	}
}

func (w *World) start(id int) {
	wk := &w.workers[id]
	if wk.state != workerPending {
		return // cancelled before it started
	}
	wk.state = workerActive
	w.pending--
	w.active++
	for range w.concurrency {
		w.freeSlots = append(w.freeSlots, id)
	}
	w.free += w.concurrency
	w.dispatch()
}

// setDesired clamps n to the bounds, as the group's own MinSize and
// MaxSize bound it (model.Limits.For), and, when it differs from the
// desired count, launches or retires workers. It reports whether the count
// changed.
func (w *World) setDesired(n int) bool {
	n = w.bounds.Clamp(n)
	if n == w.desired {
		return false
	}
	w.desired = n
	if w.t >= w.scoreFrom {
		w.scalingActions++
	}
	w.reconcile()
	return true
}

func (w *World) reconcile() {
	current := w.pending + w.active
	for ; current < w.desired; current++ {
		w.workers = append(w.workers, worker{state: workerPending, launched: w.t})
		id := len(w.workers) - 1
		w.pending++
		if w.t >= w.scoreFrom {
			w.launches++
		}
		if d := w.delays.next(); d <= 0 {
			w.start(id)
		} else {
			w.schedule(w.t+d, evStart, id)
		}
	}
	if current <= w.desired {
		return
	}
	excess := current - w.desired
	// Workers still starting are cancelled first, newest first.
	for id := len(w.workers) - 1; id >= 0 && excess > 0 && w.pending > 0; id-- {
		if w.workers[id].state == workerPending {
			w.workers[id].state = workerGone
			w.pending--
			excess--
		}
	}
	// Then running workers leave, least busy first (idle ones at once), each
	// finishing the messages in hand (killed with them in kill mode).
	for busy := 0; busy <= w.concurrency && excess > 0; busy++ {
		for id := len(w.workers) - 1; id >= 0 && excess > 0; id-- {
			wk := &w.workers[id]
			if wk.state != workerActive || wk.busy != busy {
				continue
			}
			w.active--
			w.free -= w.concurrency - wk.busy
			excess--
			switch {
			case wk.busy == 0:
				wk.state = workerGone
			case w.kill != nil:
				w.killWorker(id)
			default:
				wk.state = workerRetiring
				w.retiring++
			}
		}
	}
	w.compact()
}

// compact drops stale free-slot entries once they outnumber the valid ones,
// so a long run with many scale-ins keeps bounded memory.
func (w *World) compact() {
	if len(w.freeSlots) <= 2*w.free+64 {
		return
	}
	kept := w.freeSlots[:0]
	for _, id := range w.freeSlots {
		if w.workers[id].state == workerActive {
			kept = append(kept, id)
		}
	}
	w.freeSlots = kept
}

// oldestAge is the age of the oldest waiting message, 0 when none waits.
func (w *World) oldestAge() float64 {
	if w.queue.n == 0 {
		return 0
	}
	return w.t - w.queue.front().arrived
}

// observe advances to now and notes the oldest age, as a sampler would see it.
func (w *World) observe(now time.Time) {
	w.advance(w.seconds(now))
	if w.t >= w.scoreFrom {
		w.maxOldestAge = math.Max(w.maxOldestAge, w.oldestAge())
	}
}

// Observe advances the world to now and returns the queue and fleet as the
// checker's poller would see them: one observation of one group.
func (w *World) Observe(ctx context.Context, now time.Time) ([]model.Observation, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observe(now)
	return []model.Observation{{Sample: w.sample(), Fleet: w.fleet()}}, nil
}

func (w *World) at() time.Time {
	return w.cfg.Start.Add(time.Duration(math.Round(w.t * float64(time.Second))))
}

func (w *World) sample() model.GroupSample {
	at := w.at()
	s := model.GroupSample{
		Group:    w.group,
		At:       at,
		Visible:  int64(w.queue.n),
		InFlight: int64(w.inFlight),
		Backlog:  int64(w.queue.n + w.inFlight),
		Queues:   1,
		Answered: 1,
	}
	if !w.cfg.MetricsExact {
		s.Deleted, s.OldestAge = w.minutes.readings(w.t, w.cfg.ReportOldestAge)
		if w.cfg.NoDeleted {
			s.Deleted = nil
		}
		return s
	}
	if w.t > 0 && !w.cfg.NoDeleted {
		// Completions older than the window leave it even when no new one
		// comes: a queue gone quiet reads 0.
		for w.completions.n > 0 && w.completions.front().arrived < w.t-deletedWindow {
			w.completions.pop()
		}
		span := math.Min(w.t, deletedWindow)
		s.Deleted = &model.Reading{Value: float64(w.completions.n) / span, At: at}
	}
	if w.cfg.ReportOldestAge {
		s.OldestAge = &model.Reading{Value: w.oldestAge(), At: at}
	}
	return s
}

func (w *World) fleet() model.Fleet {
	f := model.Fleet{
		Kind:      FleetKind,
		Name:      w.group,
		At:        w.at(),
		Known:     true,
		Desired:   w.desired,
		Min:       w.cfg.Min,
		Max:       w.cfg.Max,
		InService: w.active,
		Pending:   w.pending,
		Draining:  w.retiring,
	}
	if w.pending > 0 {
		f.PendingSince = make([]time.Time, 0, w.pending)
		for _, wk := range w.workers {
			if wk.state == workerPending {
				f.PendingSince = append(f.PendingSince, w.cfg.Start.Add(time.Duration(wk.launched*float64(time.Second))))
			}
		}
	}
	return f
}

// Apply carries out a decision: it advances the world to the decision's time
// and sets the fleet's desired count to the decision's, clamped to the
// fleet's bounds. A held decision changes nothing, as the daemon's
// publisher holds the fleet when the policy holds.
func (w *World) Apply(ctx context.Context, d model.Decision, _ model.Fleet) (model.Action, error) {
	if err := ctx.Err(); err != nil {
		return model.Action{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !d.At.IsZero() {
		w.advance(w.seconds(d.At))
	}
	a := model.Action{Group: w.group, From: w.desired, To: w.desired}
	if d.Held {
		return a, nil
	}
	a.Scaled = w.setDesired(d.DesiredWorkers)
	a.To = w.desired
	return a, nil
}

// SetDesired advances the world to now and sets the desired count, clamped
// to the bounds; it reports whether the count changed. The peers scale
// through it.
func (w *World) SetDesired(now time.Time, n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.advance(w.seconds(now))
	return w.setDesired(n)
}

// Point is the world at one time, for charts.
type Point struct {
	T         float64 `json:"t_seconds"` // since the start
	Backlog   int64   `json:"backlog"`   // waiting plus in flight
	OldestAge float64 `json:"oldest_age_seconds"`
	Workers   int     `json:"workers"` // running or starting (what is paid for)
}

// Snapshot advances the world to now and returns its state.
func (w *World) Snapshot(now time.Time) Point {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observe(now)
	return Point{
		T:         w.t,
		Backlog:   int64(w.queue.n + w.inFlight),
		OldestAge: w.oldestAge(),
		Workers:   w.pending + w.active + w.retiring,
	}
}

// Scores are how well a fleet held the latency promise, and at what cost.
type Scores struct {
	// SLOAttainment is the share of messages whose queue wait was within
	// the latency target (1 when there were none).
	SLOAttainment float64 `json:"slo_attainment"`
	MeanWait      float64 `json:"mean_wait_seconds"`
	P50Wait       float64 `json:"p50_wait_seconds"`
	P99Wait       float64 `json:"p99_wait_seconds"`
	MaxWait       float64 `json:"max_wait_seconds"`
	// MaxOldestAge is the highest age of the oldest waiting message seen by
	// the sampler (at each Observe or Snapshot).
	MaxOldestAge float64 `json:"max_oldest_age_seconds"`
	// WorkerSeconds is the cost: the time integral of workers running,
	// starting, or finishing their last messages.
	WorkerSeconds  float64 `json:"worker_seconds"`
	ScalingActions int     `json:"scaling_actions"` // changes of the desired count
	// Launches counts the workers started (each one pays its start delay);
	// a fleet that drops to zero and back launches again.
	Launches int   `json:"launches"`
	Messages int64 `json:"messages"` // arrivals
	// Duplicates counts deliveries after the first: messages of killed
	// workers delivered again (scale-in mode kill).
	Duplicates int64 `json:"duplicates"`
	// missed is how many scored messages waited past the promise, those
	// still waiting at the end included: the count SLOAttainment leaves
	// out, exact, for comparing fleets over the same messages.
	missed int64
}

// Scores returns the scores so far. Messages still waiting count with the
// time they have waited so far, so a backlog left at the end counts against
// the fleet that left it.
func (w *World) Scores() Scores {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws := w.waits.clone()
	for i := 0; i < w.queue.n; i++ {
		if m := w.queue.at(i); m.arrived >= w.scoreFrom {
			ws.add(w.t - m.arrived)
		}
	}
	s := Scores{
		SLOAttainment:  1,
		P50Wait:        ws.quantile(0.5),
		P99Wait:        ws.quantile(0.99),
		MaxWait:        ws.max,
		MaxOldestAge:   w.maxOldestAge,
		WorkerSeconds:  w.workerSeconds,
		ScalingActions: w.scalingActions,
		Launches:       w.launches,
		Messages:       w.arrivals,
		Duplicates:     w.duplicates(),
	}
	s.missed = ws.n - ws.within
	if ws.n > 0 {
		s.SLOAttainment = float64(ws.within) / float64(ws.n)
		s.MeanWait = ws.sum / float64(ws.n)
	}
	return s
}

// busySeconds is the service time of every message dispatched so far.
func (w *World) busySeconds() float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.work
}

// missed is how many scored messages have been taken after waiting longer
// than the promise so far: a floor on the run's final count.
func (w *World) missed() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.waits.n - w.waits.within
}

// fixedStartDelay is the start delay of every launch, in seconds, when all
// take the same; false when they are drawn.
func (w *World) fixedStartDelay() (float64, bool) {
	return w.delays.mean, w.delays.fixed
}

// startDelaysAhead appends to dst the start delays, in seconds, of the
// next n launches, in launch order, for the oracle.
func (w *World) startDelaysAhead(dst []float64, n int) []float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range n {
		dst = append(dst, w.delays.peek(i))
	}
	return dst
}
