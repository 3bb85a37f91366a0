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
// count at capacity. Batch consumers hold more than their slots too, each
// message for its whole batch, but they delete what they hold: a minute
// whose deletions keep up with what was sent is not held, however much it
// holds in flight. So, when the sent count is known, a held minute's
// deletions (after the onset, below) also fall short of it by
// heldOutageShare of it and heldMinMessages or more.
//
// While the last judged minute is held, the fleet is held at its count
// before the onset: the held messages are no work that more workers could
// finish, and fewer would serve the good ones late. The first minute with in
// flight explained by the deletions ends it.
//
// Evidence before action. CloudWatch names held messages two minutes after
// their onset; the samples show them at once, as more in flight than the
// slots in service hold (measure's batching test: 1.2 times the slots and
// two messages more). In a group that reads CloudWatch's counts, such a
// sample that neither the deleted count now (as a minute is judged) nor a
// judged minute of batches (beyond its slots, its deletions keeping up, and
// in flight within twice its most) explains is a suspicion: Little's law
// counts completions for every slot they keep busy, messages their
// visibility timeout returns come back as visible ones, and either would buy
// workers nobody has seen complete anything. So from the first such sample
// the fleet is not scaled out, and its count then is the one a hold keeps
// once they are named; nothing is learned from the intervals' arrivals
// (bursts, the forecast's minutes, a climb) and no surge is measured. It
// ends when in flight stays within the slots for heldSuspectClear, or a
// minute explains it. A group that reads no deleted count has no evidence
// to wait for, and sizes as before. The onset also splits the first held
// minute: its deletions before the onset are the previous minute's rate,
// so an outage that began mid-minute is named an outage.
//
// New work. A hold explains what it holds, and no more: whatever is held,
// the queue's total (visible, in flight and delayed) grows by at most what
// arrives, and what arrived when the suspicion began (the sent count then,
// or, unknown, the arrival estimate) is what the hold explains. Growth over
// the last two samples by more than that, by three standard deviations of
// its Poisson noise and two messages, or a sent count above it by three
// standard deviations of a minute's count, is new work: for heldNewWorkFor
// after it shows, the policy sizes as it would without the hold or the
// suspicion, and no lower than the count they keep.
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
	// heldOverRatio and heldOverMessages: a sample holds more in flight
	// than its slots when above heldOverRatio × slots and slots +
	// heldOverMessages (measure's batching test).
	heldOverRatio    = 1.2
	heldOverMessages = 2
	// heldSuspectClear is how long in flight must stay within the slots
	// before a suspicion ends.
	heldSuspectClear = time.Minute
	// heldNewWorkFor is how long work the hold does not explain lifts it.
	heldNewWorkFor = 2 * time.Minute
	// heldNewWorkSigmas: growth beyond what arrives by this many standard
	// deviations of its Poisson noise is new work.
	heldNewWorkSigmas = 3
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

	// lastDel is the deleted count of the minute starting at lastDelAt,
	// msg/s: the rate before an onset within the next minute.
	lastDel   float64
	lastDelAt time.Time
	// batched: the last judged minute whose samples held more than the
	// slots was explained by its deletions, at batchedAt, with at most
	// batchedPeak in flight.
	batched     bool
	batchedAt   time.Time
	batchedPeak float64

	// The suspicion (see above): since the sample at suspectAt, with the
	// fleet at suspectCount; clearAt is when in flight came back within the
	// slots.
	suspect      bool
	suspectAt    time.Time
	suspectCount int
	clearAt      time.Time

	// reads: the group reads CloudWatch's counts (a deleted count came, or
	// the settings say so): only then is a suspicion waited out.
	reads bool

	// level is the count the hold or the suspicion keeps, and allow the
	// arrivals it explains, msg/s (both set when levelSet).
	level    int
	allow    float64
	levelSet bool

	// totals are the last complete samples' totals, newest last, for new
	// work; newWorkAt is the last sample that showed it.
	totals    [3]heldTotal
	newWorkAt time.Time
}

type heldTotal struct {
	at    time.Time
	total float64
	ok    bool
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
	over     bool    // a sample in it held more than its slots
	peak     float64 // the most in flight of its samples
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
	if b := h.bucket(minuteIndex(at)); b != nil {
		b.tainted = b.tainted || !complete
		b.over = b.over || overSlots(inFlight, slots)
		b.peak = math.Max(b.peak, inFlight)
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
	prevDel, prevOK := h.lastDel, h.lastDelAt.Equal(start.Add(-time.Minute))
	if start.After(h.lastDelAt) {
		h.lastDel, h.lastDelAt = deleted.Value, start
	}
	b := &h.mins[heldSlot(minuteIndex(start))]
	if !b.used || b.minute != minuteIndex(start) || b.tainted || b.covered < heldMinCovered.Seconds() {
		return
	}
	// A run begins only after a judged minute: the first minute of a load
	// starting with the checker falls short by what it took into flight
	// (a batch consumer's first batches), which the next does not repeat.
	chained := h.judged.Equal(start.Add(-time.Minute))
	h.judged = start
	l := b.inFlight / b.covered
	d := deleted.Value
	s := math.NaN()
	if sent != nil && sent.At.Equal(start) && finiteOK(sent.Value) && sent.Value >= 0 {
		s = sent.Value
	}
	// The deletions after an onset within the minute: before it, the
	// previous minute's rate.
	after := d
	if f := h.suspectAt.Sub(start).Seconds() / 60; h.suspect && prevOK && f > 0 && f < 0.9 {
		after = math.Max((d-f*prevDel)/(1-f), 0)
	}
	held := l - d*math.Max(sRef, 0)
	beyondSlots := b.noSlots || l > b.slots/b.covered
	// Deletions that keep up with what was sent hold nothing back.
	short := math.IsNaN(s) || (s-after)*60 >= math.Max(heldMinMessages, heldOutageShare*s*60)
	isHeld := held >= math.Max(heldMinMessages, heldShare*l) && beyondSlots && finiteOK(held) && short
	if isHeld && !h.active && !chained {
		return // no verdict either way
	}
	if !isHeld {
		h.active = false
		if b.over && !b.noSlots {
			h.batched, h.batchedAt, h.batchedPeak = true, start, b.peak
		}
		return
	}
	h.batched = false
	if !h.active {
		h.active, h.since = true, start
	}
	h.last = model.HeldMessages{Kind: model.HeldPoison, Since: h.since, Minute: start, InFlight: l, Held: held, Deleted: d}
	if !math.IsNaN(s) {
		h.last.Sent = &s
	}
	if after <= 0 || !math.IsNaN(s) && after < heldOutageShare*s {
		h.last.Kind = model.HeldOutage
	}
}

// overSlots reports a sample with more in flight than its slots hold
// (slots negative: unknown, never).
func overSlots(inFlight, slots float64) bool {
	return slots > 0 && inFlight > heldOverRatio*slots && inFlight >= slots+heldOverMessages
}

// observeTotal records a complete sample's total and reports whether the
// queue grew over the last two samples by more than allow msg/s arrive, or
// the sent count (msg/s over a minute, when sentOK) is above it (see New
// work); allow infinite: never.
func (h *heldWatch) observeTotal(at time.Time, total, allow, sent float64, sentOK bool) bool {
	if !h.totals[2].ok || at.After(h.totals[2].at) {
		h.totals[0], h.totals[1] = h.totals[1], h.totals[2]
		h.totals[2] = heldTotal{at: at, total: total, ok: true}
	}
	if math.IsInf(allow, 0) || !finiteOK(allow) {
		return false
	}
	allow = math.Max(allow, 0)
	if minute := 60.0; sentOK && sent > allow+heldNewWorkSigmas*math.Sqrt(allow*minute)/minute {
		return true
	}
	from := h.totals[0]
	span := at.Sub(from.at).Seconds()
	if !from.ok || span <= 0 || span > 3*heldMaxHold.Seconds() {
		return false
	}
	expect := allow * span
	return total-from.total > expect+heldNewWorkSigmas*math.Sqrt(expect)+heldOverMessages
}

// watchHeld feeds the sample to the held watch and judges the minute the
// deleted count covers; it reports whether messages are held now. servers
// is the slots in service, negative when unknown. It also keeps the
// suspicion and the new work (see above).
func (c *call) watchHeld(servers float64) bool {
	st, s := c.st, c.s
	h := &st.held
	slots := servers
	if slots >= 0 {
		// Draining workers still hold the messages they finish.
		slots += float64(max(c.fleet.Draining, 0) * s.Concurrency)
	}
	complete := !c.partial && !c.fleetFailed
	inFlight := float64(c.sample.InFlight)
	sRef := math.Max(c.learn.configured, s.ServiceSeconds())
	h.sample(c.at, inFlight, slots, complete)
	h.judge(c.at, c.sample.Deleted, c.sample.Sent, sRef)
	// A judgement older than the readings may be is forgotten: no deleted
	// count, no verdict.
	stale := s.MetricStaleAfter + 2*time.Minute
	if h.active && c.now.Sub(h.judged) > stale {
		h.active = false
	}
	if h.batched && c.now.Sub(h.batchedAt) > stale {
		h.batched = false
	}
	h.reads = h.reads || s.CloudWatchCounts || c.sample.Deleted != nil
	if complete {
		// Explained: by a minute of batches, or by the deletions now, as a
		// minute is judged.
		batches := h.batched && inFlight <= 2*h.batchedPeak
		explained := batches || c.deletedOK && inFlight-c.deleted*sRef < math.Max(heldMinMessages, heldShare*inFlight)
		switch {
		case overSlots(inFlight, slots) && !explained && h.reads:
			if !h.suspect {
				h.suspect, h.suspectAt, h.suspectCount = true, c.at, c.current
			}
			h.clearAt = time.Time{}
		case batches:
			h.suspect = false
		case h.suspect && h.clearAt.IsZero():
			h.clearAt = c.at
		case h.suspect && c.at.Sub(h.clearAt) >= heldSuspectClear:
			h.suspect = false
		}
	}
	c.held = h.active
	c.suspect = h.suspect && !c.held
	sent, sentOK := c.fresh(c.sample.Sent)
	if !h.levelSet && (c.held || c.suspect) {
		h.allow = math.Inf(1)
		if sentOK {
			h.allow = sent
		} else if v, ok := st.est.Rate(); ok {
			h.allow = v
		}
	}
	switch {
	case c.held && !h.levelSet:
		// Named: the count before the onset, which the suspicion saw when
		// it began with the first held minute or before.
		h.level, h.levelSet = c.current, true
		if n, ok := h.countBefore(h.since); ok {
			h.level = n
		}
		if h.suspect && h.suspectAt.Before(h.since.Add(time.Minute)) {
			h.level = h.suspectCount
		}
	case c.suspect && !h.levelSet:
		h.level, h.levelSet = h.suspectCount, true
	case !c.held && !c.suspect:
		h.levelSet = false
	}
	if complete && c.usable {
		total := float64(c.sample.Visible + c.sample.InFlight + c.sample.Delayed)
		if h.observeTotal(c.at, total, h.allow, sent, sentOK) && h.levelSet {
			h.newWorkAt = c.at
		}
	}
	return c.held
}

// newWork reports whether the hold or the suspicion is lifted by work it
// does not explain (see New work).
func (c *call) newWork() bool {
	h := &c.st.held
	return !h.newWorkAt.IsZero() && c.now.Sub(h.newWorkAt) <= heldNewWorkFor
}

// holdHeld holds the fleet at its count from before the messages began to
// be held, and says why (see heldWatch). With new work it only says so: the
// sizing goes on and keepHeld keeps the level under it.
func (c *call) holdHeld(lifted bool) {
	h := c.st.held.last
	h.HoldAt = c.st.held.level
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
	c.d.HeldMessages = &h
	if lifted {
		return
	}
	c.reason("holding at %d, the count before they began (%s): the messages held are not work more workers could finish; arrivals beyond the %s msg/s sent then still add workers",
		h.HoldAt, h.Since.UTC().Format("15:04"), number(c.st.held.allow))
	c.target = h.HoldAt
}

// holdSuspect keeps the fleet from scaling out on a suspicion (see
// heldWatch), and says why.
func (c *call) holdSuspect(target int) int {
	if target <= c.current {
		return target
	}
	c.reason("not scaling out from %d to %d: %d messages in flight, more than the %s slots in service hold, and no deleted count explains them yet (batches, or messages received and not deleted?)",
		c.current, target, c.sample.InFlight, number(c.slotsNow()))
	return c.current
}

// keepHeld keeps a hold or a suspicion lifted by new work at least at its
// level, and says why.
func (c *call) keepHeld(target int) int {
	h := &c.st.held
	c.reason("arrivals beyond the %s msg/s sent when they began, which the held messages do not explain: sizing for the new work, no fewer than %d",
		number(h.allow), h.level)
	return max(target, h.level)
}

// slotsNow is the slots in service, draining ones included.
func (c *call) slotsNow() float64 {
	return float64((c.inService + max(c.fleet.Draining, 0)) * c.s.Concurrency)
}

func finiteOK(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
