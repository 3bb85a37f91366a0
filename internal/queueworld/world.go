// Package queueworld is a queue and its workers, message by message, for
// tests that drive the checker against what real consumers do: messages
// arrive evenly at a rate that may change; each worker receives up to a
// batch of visible messages (each invisible for the visibility timeout from
// then), handles them one after another, and deletes each one that
// succeeded at once, or all of them at the end of a batch. A message whose
// handling fails is not deleted: it stays in flight until its visibility
// timeout returns it, and is received again. The world counts the messages
// sent and deleted in each minute, as CloudWatch's NumberOfMessagesSent and
// NumberOfMessagesDeleted do, and how many were deleted within a promise of
// their arrival.
//
// Time is in seconds from the world's start, which callers align to a
// minute. The package takes no clock and starts nothing.
package queueworld

import "math"

// Message is one message: its number in the order of arrival and when it
// arrived.
type Message struct {
	ID      int
	Arrived float64
}

// Handling says how long handling m at time at takes, and whether it
// succeeds.
type Handling func(m Message, at float64) (seconds float64, ok bool)

// World is the queue and its workers. Set its fields before the first Run.
type World struct {
	// Rate is the arrivals at t, msg/s.
	Rate func(t float64) float64
	// Handle decides each handling; nil: 1 s, always succeeding.
	Handle Handling
	// Visibility is the visibility timeout, seconds (default 15).
	Visibility float64
	// Batch is the most messages a worker receives at once (default 1);
	// above 1, a batch's messages are deleted together when the last is
	// handled.
	Batch int
	// Fill is how long a worker with a partial batch goes on receiving
	// before it handles it, seconds.
	Fill float64
	// Promise is the time from arrival within which a deletion counts as
	// within the promise, seconds (default 30).
	Promise float64

	now     float64
	steps   int // now = steps × step, exactly
	due     float64
	msgs    []msg
	workers []worker
	minutes map[int]*minute
	within  int
	late    int
	dropped int // messages compacted away (their numbers are below it)
}

type msg struct {
	Message
	invisible float64 // visible again at this time
	gone      bool
}

type worker struct {
	held     []int // indexes into msgs
	ok       []bool
	next     int     // the next of held to handle
	doneAt   float64 // when the one in hand is done
	filling  bool    // receiving a batch since fillFrom
	fillFrom float64
}

type minute struct{ sent, deleted int }

// step is the world's time step, seconds.
const step = 0.05

// Now is the world's time.
func (w *World) Now() float64 { return w.now }

func (w *World) defaults() {
	if w.Visibility <= 0 {
		w.Visibility = 15
	}
	if w.Batch <= 0 {
		w.Batch = 1
	}
	if w.Promise <= 0 {
		w.Promise = 30
	}
	if w.Handle == nil {
		w.Handle = func(Message, float64) (float64, bool) { return 1, true }
	}
	if w.minutes == nil {
		w.minutes = map[int]*minute{}
	}
}

func (w *World) minute(t float64) *minute {
	k := int(math.Floor(t / 60))
	m := w.minutes[k]
	if m == nil {
		m = new(minute)
		w.minutes[k] = m
	}
	return m
}

// Run advances the world to time to with workers workers. A worker that
// goes finishes nothing more: its messages return after their timeout.
func (w *World) Run(to float64, workers int) {
	w.defaults()
	for w.now < to-1e-9 {
		t := float64(w.steps+1) * step
		for len(w.workers) < workers {
			w.workers = append(w.workers, worker{})
		}
		if len(w.workers) > max(workers, 0) {
			w.workers = w.workers[:max(workers, 0)]
		}
		if w.Rate != nil {
			w.due += w.Rate(t) * step
		}
		for ; w.due >= 1-1e-9; w.due-- {
			w.msgs = append(w.msgs, msg{Message: Message{ID: w.count(), Arrived: t}})
			w.minute(t).sent++
		}
		for i := range w.workers {
			w.work(&w.workers[i], t)
		}
		w.now, w.steps = t, w.steps+1
		w.compact()
	}
}

// count is how many messages have arrived.
func (w *World) count() int {
	if n := len(w.msgs); n > 0 {
		return w.msgs[n-1].ID + 1
	}
	return w.dropped
}

func (w *World) work(wk *worker, t float64) {
	for !wk.filling && wk.next < len(wk.held) && wk.doneAt <= t {
		j := wk.held[wk.next]
		wk.next++
		if wk.next < len(wk.held) {
			d, ok := w.Handle(w.msgs[wk.held[wk.next]].Message, wk.doneAt)
			wk.ok = append(wk.ok, ok)
			wk.doneAt += d
		}
		if w.Batch == 1 && wk.ok[wk.next-1] {
			w.remove(j, t)
		}
	}
	if !wk.filling && wk.next >= len(wk.held) {
		if w.Batch > 1 {
			for k, j := range wk.held {
				if wk.ok[k] {
					w.remove(j, t)
				}
			}
		}
		wk.held, wk.ok, wk.next = wk.held[:0], wk.ok[:0], 0
		wk.filling, wk.fillFrom = true, t
	}
	if !wk.filling {
		return
	}
	for j := range w.msgs {
		if len(wk.held) == w.Batch {
			break
		}
		m := &w.msgs[j]
		if m.gone || m.invisible > t {
			continue
		}
		m.invisible = t + w.Visibility
		wk.held = append(wk.held, j)
	}
	switch {
	case len(wk.held) == 0:
		wk.fillFrom = t
	case len(wk.held) == w.Batch || t-wk.fillFrom >= w.Fill:
		wk.filling = false
		d, ok := w.Handle(w.msgs[wk.held[0]].Message, t)
		wk.ok = append(wk.ok, ok)
		wk.doneAt = t + d
	}
}

func (w *World) remove(j int, t float64) {
	m := &w.msgs[j]
	if m.gone {
		return
	}
	m.gone = true
	w.minute(t).deleted++
	if t-m.Arrived <= w.Promise {
		w.within++
	} else {
		w.late++
	}
}

// compact drops deleted messages from the front; the indexes workers hold
// move with them.
func (w *World) compact() {
	n := 0
	for n < len(w.msgs) && w.msgs[n].gone {
		n++
	}
	if n < 1024 {
		return
	}
	w.dropped = w.msgs[n-1].ID + 1
	w.msgs = append(w.msgs[:0], w.msgs[n:]...)
	for i := range w.workers {
		for k := range w.workers[i].held {
			w.workers[i].held[k] -= n
		}
	}
}

// Counts are the messages visible and in flight now.
func (w *World) Counts() (visible, inFlight int) {
	for _, m := range w.msgs {
		switch {
		case m.gone:
		case m.invisible > w.now:
			inFlight++
		default:
			visible++
		}
	}
	return visible, inFlight
}

// Minute is the messages sent and deleted in minute k (from 60k s to
// 60(k+1) s), and whether that minute is over.
func (w *World) Minute(k int) (sent, deleted int, over bool) {
	if m := w.minutes[k]; m != nil {
		sent, deleted = m.sent, m.deleted
	}
	return sent, deleted, float64(k+1)*60 <= w.now
}

// Served is the messages deleted within the promise of their arrival, and
// those deleted later.
func (w *World) Served() (within, late int) { return w.within, w.late }

// Steady handles every message in d seconds, always succeeding.
func Steady(d float64) Handling {
	return func(Message, float64) (float64, bool) { return d, true }
}

// Poison makes the share p of the messages that arrive from onset on
// (spread evenly over their numbers) fail every time; each handling takes d
// seconds.
func Poison(p, onset, d float64) Handling {
	return func(m Message, _ float64) (float64, bool) {
		if m.Arrived < onset {
			return d, true
		}
		return d, !poisoned(m.ID, p)
	}
}

// poisoned reports whether message id is among the share p spread evenly.
func poisoned(id int, p float64) bool {
	return math.Floor(float64(id+1)*p) > math.Floor(float64(id)*p)
}

// Outage fails every handling from onset on; each takes d seconds.
func Outage(onset, d float64) Handling {
	return func(_ Message, at float64) (float64, bool) { return d, at < onset }
}

// Wall is a downstream that serves at most limit msg/s from onset on: a
// handling beyond it fails. Each takes d seconds.
func Wall(limit, onset, d float64) Handling {
	tokens, last := 1.0, onset
	return func(_ Message, at float64) (float64, bool) {
		if at < onset {
			return d, true
		}
		tokens = math.Min(tokens+(at-last)*limit, math.Max(limit, 1))
		last = math.Max(last, at)
		if tokens >= 1 {
			tokens--
			return d, true
		}
		return d, false
	}
}
