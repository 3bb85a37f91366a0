package policy

import (
	"fmt"
	"math"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Messages held and not deleted. A message a worker receives and never
// deletes (a poison message with no dead-letter queue, every message during
// an outage of what the workers call, the share a downstream refuses) stays
// in flight until its visibility timeout returns it, and is received again:
// it keeps the in-flight count up without being work that more workers could
// finish. Little's law over the in-flight count then counts completions that
// never happen, and an arrival estimate built on it grows with the fleet.
//
// The watch recognises it from whole minutes: the mean in-flight count over
// a minute (the checker's own samples, each held until the next) against
// that minute's NumberOfMessagesDeleted D. Workers that delete what they
// receive hold D × S in flight (Little's law, S the time a message holds a
// slot: the larger of the configured and the sizing's), and no more than
// their slots. A minute is held when its in-flight count is above the slots
// in service (messages no worker's slot holds) and at least heldShare of it
// — and heldMinMessages or more — is not explained by the deletions:
//
//	held = in flight − D × S ≥ max(heldMinMessages, heldShare × in flight)
//
// Workers that hang on the messages they hold keep the in-flight count at
// the slots instead: that is the stuck diagnosis, which needs the in-flight
// count at capacity. Batch consumers hold more than their slots too, but
// they delete what they hold: D × S explains it.
//
// While the last judged minute is held, the fleet is held at its count when
// the first held minute began: more workers only receive the held messages
// again, fewer would serve the good ones late. The first minute with in
// flight explained by the deletions ends it.
const (
	heldShare       = 0.5
	heldMinMessages = 5
	// heldMinutes is how many minutes of in-flight sums and fleet counts
	// are kept: CloudWatch delivers a minute's deleted count a minute or
	// more after it ends.
	heldMinutes = 8
	// heldMaxHold is the longest a sample's in-flight count is held until
	// the next; a longer span is a gap, and a minute covered less than
	// heldMinCovered is not judged.
	heldMaxHold    = 30 * time.Second
	heldMinCovered = 48 * time.Second
	// heldOutageShare: deletions below this share of the messages sent (or,
	// unknown, none at all) make an outage rather than poison.
	heldOutageShare = 0.05
)

// heldWatch keeps what recognising held messages needs (see above). The
// zero value is ready.
type heldWatch struct {
	mins   [heldMinutes]heldMinute
	counts [heldMinutes]fleetAtMinute // the fleet's count at each minute's first decision

	prevOK      bool
	prevAt      time.Time
	prevIn      float64
	prevSlots   float64 // negative: unknown
	prevCounted bool    // the previous sample was complete

	judged time.Time // the start of the last minute judged
	active bool      // the last judged minute was held
	since  time.Time // the start of the first minute of the held run
	last   model.HeldMessages
}

// heldMinute accumulates one minute's samples.
type heldMinute struct {
	minute   int64 // minutes since the Unix epoch
	used     bool
	covered  float64 // seconds
	inFlight float64 // ∫ in flight dt
	slots    float64 // ∫ slots dt
	noSlots  bool    // some span had no known slot count
	tainted  bool    // an incomplete sample fell in it
}

// fleetAtMinute is the fleet's count at a minute's first decision.
type fleetAtMinute struct {
	minute int64
	count  int
	used   bool
}

func heldSlot(m int64) int {
	i := int(m % heldMinutes)
	if i < 0 {
		i += heldMinutes
	}
	return i
}

func minuteIndex(t time.Time) int64 { return t.Unix() / 60 }

// bucket returns minute m's accumulator, recycling an older one.
func (h *heldWatch) bucket(m int64) *heldMinute {
	b := &h.mins[heldSlot(m)]
	if !b.used || b.minute < m {
		*b = heldMinute{minute: m, used: true}
	}
	if b.minute != m {
		return nil
	}
	return b
}

// sample folds one sample in: at, the in-flight count, the slots in service
// (negative when unknown), and whether the sample is complete.
func (h *heldWatch) sample(at time.Time, inFlight, slots float64, complete bool) {
	if h.prevOK && at.After(h.prevAt) && at.Sub(h.prevAt) <= heldMaxHold && h.prevCounted {
		from := h.prevAt
		for from.Before(at) {
			end := from.Truncate(time.Minute).Add(time.Minute)
			if end.After(at) {
				end = at
			}
			if b := h.bucket(minuteIndex(from)); b != nil {
				d := end.Sub(from).Seconds()
				b.covered += d
				b.inFlight += h.prevIn * d
				if h.prevSlots >= 0 {
					b.slots += h.prevSlots * d
				} else {
					b.noSlots = true
				}
			}
			from = end
		}
	}
	if !complete {
		if b := h.bucket(minuteIndex(at)); b != nil {
			b.tainted = true
		}
	}
	if h.prevOK && !at.After(h.prevAt) {
		return
	}
	h.prevOK, h.prevAt, h.prevIn, h.prevSlots, h.prevCounted = true, at, inFlight, slots, complete
}

// noteCount records the fleet's count at the first decision of now's minute.
func (h *heldWatch) noteCount(now time.Time, count int) {
	m := minuteIndex(now)
	c := &h.counts[heldSlot(m)]
	if c.used && c.minute >= m {
		return
	}
	*c = fleetAtMinute{minute: m, count: count, used: true}
}

// countBefore is the fleet's count at the first decision of the minute
// starting at t, or of the latest minute before it that has one.
func (h *heldWatch) countBefore(t time.Time) (int, bool) {
	m := minuteIndex(t)
	best, found := int64(math.MinInt64), 0
	for _, c := range h.counts {
		if c.used && c.minute <= m && c.minute > best {
			best, found = c.minute, c.count
		}
	}
	return found, best != math.MinInt64
}

// judge judges the minute the deleted count covers, once, when its samples
// are in: at is the sample's time, sRef the time a message holds a slot.
// sent is the minute's NumberOfMessagesSent when known.
func (h *heldWatch) judge(at time.Time, deleted *model.Reading, sent *model.Reading, sRef float64) {
	if deleted == nil || deleted.At.IsZero() || !finiteOK(deleted.Value) || deleted.Value < 0 {
		return
	}
	start := deleted.At
	if !start.Equal(start.Truncate(time.Minute)) || start.Add(time.Minute).After(at) || !start.After(h.judged) {
		return
	}
	b := &h.mins[heldSlot(minuteIndex(start))]
	if !b.used || b.minute != minuteIndex(start) || b.tainted || b.covered < heldMinCovered.Seconds() {
		return
	}
	h.judged = start
	l := b.inFlight / b.covered
	d := deleted.Value
	held := l - d*math.Max(sRef, 0)
	beyondSlots := b.noSlots || l > b.slots/b.covered
	if !(held >= math.Max(heldMinMessages, heldShare*l)) || !beyondSlots || !finiteOK(held) {
		h.active = false
		return
	}
	if !h.active {
		h.active, h.since = true, start
	}
	h.last = model.HeldMessages{Kind: model.HeldPoison, Since: h.since, Minute: start, InFlight: l, Held: held, Deleted: d}
	s := math.NaN()
	if sent != nil && sent.At.Equal(start) && finiteOK(sent.Value) && sent.Value >= 0 {
		s = sent.Value
		h.last.Sent = &s
	}
	if d <= 0 || finiteOK(s) && d < heldOutageShare*s {
		h.last.Kind = model.HeldOutage
	}
}

func finiteOK(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// watchHeld feeds the sample to the held watch and judges the minute the
// deleted count covers; it reports whether messages are held now. servers
// is the slots in service, negative when unknown.
func (c *call) watchHeld(servers float64) bool {
	st, s := c.st, c.s
	slots := servers
	if slots >= 0 {
		// Draining workers still hold the messages they finish.
		slots += float64(max(c.fleet.Draining, 0) * s.Concurrency)
	}
	st.held.sample(c.at, float64(c.sample.InFlight), slots, !c.partial && !c.fleetFailed)
	st.held.judge(c.at, c.sample.Deleted, c.sample.Sent, math.Max(c.learn.configured, s.ServiceSeconds()))
	// A judgement older than the readings may be is forgotten: no deleted
	// count, no verdict.
	if st.held.active && c.now.Sub(st.held.judged) > s.MetricStaleAfter+2*time.Minute {
		st.held.active = false
	}
	c.held = st.held.active
	return c.held
}

// holdHeld holds the fleet at its count from before the messages began to
// be held, and says why (see heldWatch).
func (c *call) holdHeld() {
	h := c.st.held.last
	h.HoldAt = c.current
	if n, ok := c.st.held.countBefore(h.Since); ok {
		h.HoldAt = n
	}
	var sent string
	if h.Sent != nil {
		sent = fmt.Sprintf(", %v msg/s sent", number(*h.Sent))
	}
	switch h.Kind {
	case model.HeldOutage:
		h.Advice = "Nothing is deleted while messages are received: check what the workers call (a database, an API) and their logs. More workers will not help."
		c.reason("messages are received and not deleted (an outage?): in the minute from %s, %s in flight and %s msg/s deleted%s",
			h.Minute.UTC().Format("15:04"), number(math.Round(h.InFlight)), number(h.Deleted), sent)
	default:
		h.Advice = "Some messages are received again and again and never deleted: poison messages, or work a downstream refuses. Give the queue a dead-letter queue (a redrive policy with maxReceiveCount, such as 5) so that poison messages leave it, and check the workers' errors."
		c.reason("messages are received and not deleted (poison messages?): in the minute from %s, %s in flight, %s more than its %s msg/s deleted explain%s; add a dead-letter queue (redrive policy, maxReceiveCount 5)",
			h.Minute.UTC().Format("15:04"), number(math.Round(h.InFlight)), number(math.Round(h.Held)), number(h.Deleted), sent)
	}
	c.reason("holding at %d, the count before they began (%s): more workers would only receive them again", h.HoldAt, h.Since.UTC().Format("15:04"))
	c.d.HeldMessages = &h
	c.target = h.HoldAt
}
