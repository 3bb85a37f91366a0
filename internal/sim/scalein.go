package sim

import (
	"fmt"
	"slices"
	"time"
)

// Scale-in modes: what happens to a busy worker the fleet removes.
const (
	// ScaleInGraceful: it finishes the messages in hand, then leaves (a
	// fleet with a termination lifecycle hook, or ECS workers that drain on
	// SIGTERM within stopTimeout). It counts as draining meanwhile.
	ScaleInGraceful = "graceful"
	// ScaleInKill: it is gone at once. The messages it held were never
	// deleted: each stays invisible until its visibility timeout, counted
	// from when it was received, runs out, then is delivered again (a fleet
	// without the hook).
	ScaleInKill = "kill"
)

// ScaleInModes lists the scale-in modes.
var ScaleInModes = []string{ScaleInGraceful, ScaleInKill}

// DefaultVisibilityTimeout is SQS's default visibility timeout, used when
// Config.VisibilityTimeout is 0.
const DefaultVisibilityTimeout = 30 * time.Second

// evRedeliver is a killed worker's message becoming visible again; its
// event's worker field indexes killState.returns.
const evRedeliver = evStart + 1

// heldMessage is a message a worker holds, in kill mode.
type heldMessage struct {
	message
	pickedUp, done float64
}

// killState is what kill mode keeps beside the world.
type killState struct {
	visibility float64
	held       [][]heldMessage // by worker id; emptied slices keep their capacity
	returns    []heldMessage   // messages of killed workers, by evRedeliver index
	duplicates int64           // deliveries after the first
}

func (c Config) scaleInErrors() []error {
	var errs []error
	if c.ScaleIn != "" && !slices.Contains(ScaleInModes, c.ScaleIn) {
		errs = append(errs, fmt.Errorf("scale-in mode %q: want graceful or kill", c.ScaleIn))
	}
	if c.VisibilityTimeout < 0 {
		errs = append(errs, fmt.Errorf("visibility timeout %v: must be >= 0", c.VisibilityTimeout))
	}
	return errs
}

func newKillState(c Config) *killState {
	if c.ScaleIn != ScaleInKill {
		return nil
	}
	vt := c.VisibilityTimeout
	if vt == 0 {
		vt = DefaultVisibilityTimeout
	}
	return &killState{visibility: vt.Seconds()}
}

// hold remembers that worker id took m at t, to be done d later.
func (k *killState) hold(id int, m message, t, d float64) {
	if id >= len(k.held) {
		k.held = append(k.held, make([][]heldMessage, id+1-len(k.held))...)
	}
	k.held[id] = append(k.held[id], heldMessage{message: m, pickedUp: t, done: t + d})
}

// release forgets the message worker id completes at t: of those it holds,
// the one due first.
func (k *killState) release(id int) {
	if id >= len(k.held) || len(k.held[id]) == 0 {
		return
	}
	h := k.held[id]
	first := 0
	for i := range h {
		if h[i].done < h[first].done {
			first = i
		}
	}
	h[first] = h[len(h)-1]
	k.held[id] = h[:len(h)-1]
}

// killWorker removes worker id at once. Each message it held becomes
// visible again when its visibility timeout ends (at once if that has
// passed); its completion events are ignored, as a gone worker's.
func (w *World) killWorker(id int) {
	k := w.kill
	w.workers[id].state = workerGone
	w.serving -= w.workers[id].busy
	if id >= len(k.held) {
		return
	}
	for _, m := range k.held[id] {
		k.returns = append(k.returns, m)
		w.schedule(max(w.t, m.pickedUp+k.visibility), evRedeliver, len(k.returns)-1)
	}
	k.held[id] = nil
}

// redeliver puts a killed worker's message back in the queue, in order of
// arrival. Its wait is then arrival to its last pick-up: the wait recorded
// at the first pick-up is taken back.
func (w *World) redeliver(i int) {
	k := w.kill
	m := k.returns[i]
	k.returns[i] = heldMessage{}
	w.inFlight--
	w.log.returned(w.t)
	k.duplicates++
	if m.arrived >= w.scoreFrom {
		// Only the scored messages' waits were recorded (see dispatch).
		w.waits.remove(m.pickedUp - m.arrived)
	}
	w.queue.insertByArrival(m.message)
	w.dispatch()
}

// duplicates is the number of deliveries after the first.
func (w *World) duplicates() int64 {
	if w.kill == nil {
		return 0
	}
	return w.kill.duplicates
}

// remove takes back one wait added before. The maximum stays: the message
// waits longer in the end.
func (s *waitStats) remove(wait float64) {
	wait = max(wait, 0)
	s.n--
	s.sum -= wait
	if wait <= s.target {
		s.within--
	}
	s.counts[histIndex(wait)]--
}

// insertByArrival puts m where its arrival time belongs: the queue stays in
// order of arrival, so its front is still the oldest message.
func (q *fifo) insertByArrival(m message) {
	q.push(m)
	for i := q.n - 1; i > 0; i-- {
		a, b := (q.head+i-1)%len(q.buf), (q.head+i)%len(q.buf)
		if q.buf[a].arrived <= q.buf[b].arrived {
			break
		}
		q.buf[a], q.buf[b] = q.buf[b], q.buf[a]
	}
}
