// Package sim is a discrete-event simulation of one SQS queue and the worker
// fleet that drains it. Messages arrive as a Poisson process whose rate
// follows a Scenario; each takes a service time drawn from a Service
// distribution; workers take messages first in, first out, a fixed number at
// once, start taking them a start delay after launch, and on scale-in finish
// the messages in hand before they leave.
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

// FleetKind is the Fleet.Kind of a simulated fleet.
const FleetKind = "simulated"

// DefaultGroup names the simulated group when Config.Group is empty.
const DefaultGroup = "simulated"

// deletedWindow is the window of the Deleted reading: completions per second
// over the last minute, as CloudWatch's 1-minute NumberOfMessagesDeleted.
const deletedWindow = 60.0

// Config describes a simulated queue and fleet.
type Config struct {
	Group    string    // the group name on samples and fleets; DefaultGroup when empty
	Start    time.Time // the simulation's time zero
	Scenario Scenario
	Service  Service
	// Concurrency is how many messages one worker handles at once (1 when 0).
	Concurrency int
	StartDelay  time.Duration // launch until a new worker takes its first message
	Min, Max    int           // fleet bounds; every desired count is clamped to them
	// Workers is the fleet at time zero, all in service.
	Workers int
	// LatencyTarget is the promise the scores measure: a message is within
	// it when its queue wait (arrival to pick-up) is at most this long.
	LatencyTarget time.Duration
	Seed          uint64

	// ReportOldestAge adds ApproximateAgeOfOldestMessage to every sample.
	// CloudWatch reports it as a 1-minute metric that arrives late, so the
	// reading is the age as it was OldestAgeLag ago (0: the exact age now),
	// with that time as its At.
	ReportOldestAge bool
	OldestAgeLag    time.Duration

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

// agePoint is the oldest message's age as observed at a time.
type agePoint struct{ at, age float64 }

// World is one simulated queue and its fleet. It is safe for concurrent use;
// time only moves forward: a `now` earlier than the world's time changes
// nothing and describes the world as it is.
type World struct {
	mu sync.Mutex

	cfg         Config
	group       string
	concurrency int
	startDelay  float64
	svc         sampler
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

	inFlight    int
	arrivals    int64
	completions fifo // completions (as arrived times) within the last deletedWindow seconds
	waits       waitStats

	scoreFrom      float64 // seconds: WarmUp
	workerSeconds  float64
	scalingActions int
	launches       int
	maxOldestAge   float64
	ages           []agePoint // observed oldest ages, for a lagged reading

	kill *killState // nil unless cfg.ScaleIn is ScaleInKill
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
		startDelay:  cfg.StartDelay.Seconds(),
		svc:         newSampler(cfg.Service),
		// Arrivals and service times come from separate streams, and each
		// message draws its service time on arrival, so every policy run
		// with the same seed sees the same messages with the same work.
		arrRand: rand.New(rand.NewPCG(cfg.Seed, 0x61727269)),
		svcRand: rand.New(rand.NewPCG(cfg.Seed, 0x73657276)),
	}
	if w.group == "" {
		w.group = DefaultGroup
	}
	w.waits.target = cfg.LatencyTarget.Seconds()
	w.kill = newKillState(cfg)
	w.scoreFrom = cfg.WarmUp.Seconds()
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
	if c.Max > 1_000_000 {
		errs = append(errs, fmt.Errorf("fleet max %d: at most 1000000 workers", c.Max))
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
	if c.OldestAgeLag < 0 {
		errs = append(errs, fmt.Errorf("oldest-age lag %v: must be >= 0", c.OldestAgeLag))
	}
	errs = append(errs, c.scaleInErrors()...)
	return errors.Join(errs...)
}

// Config returns the world's configuration.
func (w *World) Config() Config { return w.cfg }

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
	w.queue.push(message{arrived: w.t, service: w.svc.draw(w.svcRand)})
	w.nextArrival = w.drawArrival(w.t)
	w.dispatch()
}

// dispatch hands waiting messages to free slots, oldest message first.
func (w *World) dispatch() {
	for w.queue.n > 0 && w.free > 0 {
		id := w.freeSlots[len(w.freeSlots)-1]
		w.freeSlots = w.freeSlots[:len(w.freeSlots)-1]
		if w.workers[id].state != workerActive {
			continue // a slot of a worker that has left or is leaving
		}
		w.free--
		m := w.queue.pop()
		if m.arrived >= w.scoreFrom {
			w.waits.add(w.t - m.arrived)
		}
		w.workers[id].busy++
		w.inFlight++
		w.schedule(w.t+m.service, evCompletion, id)
		if w.kill != nil {
			w.kill.hold(id, m, w.t)
		}
	}
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
	w.completions.push(message{arrived: w.t})
	for w.completions.n > 0 && w.completions.front().arrived < w.t-deletedWindow {
		w.completions.pop()
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

// setDesired clamps n to the bounds and, when it differs from the desired
// count, launches or retires workers. It reports whether the count changed.
func (w *World) setDesired(n int) bool {
	n = min(max(n, w.cfg.Min), w.cfg.Max)
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
		if w.startDelay <= 0 {
			w.start(id)
		} else {
			w.schedule(w.t+w.startDelay, evStart, id)
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
	age := w.oldestAge()
	if w.t >= w.scoreFrom {
		w.maxOldestAge = math.Max(w.maxOldestAge, age)
	}
	if w.cfg.ReportOldestAge && w.cfg.OldestAgeLag > 0 {
		w.ages = append(w.ages, agePoint{at: w.t, age: age})
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
	if w.t > 0 {
		// Completions older than the window leave it even when no new one
		// comes: a queue gone quiet reads 0, as CloudWatch's would.
		for w.completions.n > 0 && w.completions.front().arrived < w.t-deletedWindow {
			w.completions.pop()
		}
		span := math.Min(w.t, deletedWindow)
		s.Deleted = &model.Reading{Value: float64(w.completions.n) / span, At: at}
	}
	if w.cfg.ReportOldestAge {
		s.OldestAge = w.oldestAgeReading()
	}
	return s
}

// oldestAgeReading is the oldest age as of OldestAgeLag ago: the latest
// observation at least that old; nil until there is one.
func (w *World) oldestAgeReading() *model.Reading {
	lag := w.cfg.OldestAgeLag.Seconds()
	if lag <= 0 {
		return &model.Reading{Value: w.oldestAge(), At: w.at()}
	}
	cut := w.t - lag
	i := 0
	for i+1 < len(w.ages) && w.ages[i+1].at <= cut {
		i++
	}
	w.ages = w.ages[i:] // older points are no longer needed
	if len(w.ages) == 0 || w.ages[0].at > cut {
		return nil
	}
	p := w.ages[0]
	return &model.Reading{Value: p.age, At: w.cfg.Start.Add(time.Duration(p.at * float64(time.Second)))}
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
	if ws.n > 0 {
		s.SLOAttainment = float64(ws.within) / float64(ws.n)
		s.MeanWait = ws.sum / float64(ws.n)
	}
	return s
}
