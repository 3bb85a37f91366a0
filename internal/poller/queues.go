package poller

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/model"
)

// The queue attributes read every interval, and those read once.
const (
	attrVisible  = string(types.QueueAttributeNameApproximateNumberOfMessages)
	attrInFlight = string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
	attrDelayed  = string(types.QueueAttributeNameApproximateNumberOfMessagesDelayed)
	attrArn      = string(types.QueueAttributeNameQueueArn)
	attrFifo     = string(types.QueueAttributeNameFifoQueue)
)

var (
	countAttributes = []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages,
		types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	}
	firstAttributes = append(append([]types.QueueAttributeName{}, countAttributes...),
		types.QueueAttributeNameQueueArn, types.QueueAttributeNameFifoQueue)
)

// counts are one queue's message counts.
type counts struct {
	Visible  int64 // ApproximateNumberOfMessages
	InFlight int64 // ApproximateNumberOfMessagesNotVisible
	Delayed  int64 // ApproximateNumberOfMessagesDelayed
}

// parseAttributes reads the three counts out of a GetQueueAttributes
// answer. A missing, non-numeric or negative count is an error, never 0:
// a silent 0 would scale a fleet in.
func parseAttributes(attrs map[string]string) (counts, error) {
	var c counts
	var errs []error
	for _, f := range []struct {
		name string
		dst  *int64
	}{{attrVisible, &c.Visible}, {attrInFlight, &c.InFlight}, {attrDelayed, &c.Delayed}} {
		raw, ok := attrs[f.name]
		if !ok {
			errs = append(errs, fmt.Errorf("attribute %s missing", f.name))
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("attribute %s = %q is not a whole number", f.name, raw))
			continue
		}
		if n < 0 {
			errs = append(errs, fmt.Errorf("attribute %s = %d is negative", f.name, n))
			continue
		}
		*f.dst = n
	}
	if len(errs) > 0 {
		return counts{}, errors.Join(errs...)
	}
	return c, nil
}

// queue is one configured queue of one group, with what the poller
// remembers about it between intervals.
type queue struct {
	group  string
	grp    *group
	reg    *region
	name   string // the last element of the URL
	url    string
	region string
	log    *zap.Logger // the poller's; the queue's fields are added when it logs

	// input is the queue's GetQueueAttributes request, made once and
	// reused: one worker at a time polls a queue.
	input sqs.GetQueueAttributesInput

	// Learned from the first answer and kept.
	metaKnown bool
	arn       string
	fifo      bool

	// res is this interval's answer, written by the one worker that polls
	// the queue and read after every worker has finished.
	res queueResult

	// Between intervals.
	everGood   bool
	lastGood   time.Time
	last       counts // the last good counts
	failing    bool
	failLogged bool // the failure was logged (a queue not reached is not: its region's notice is)
	failSince  time.Time
	// idleSince is when the queue's answers turned all zero; zero while
	// they are not. nextDue is when an idle queue is asked again.
	idleSince time.Time
	nextDue   time.Time

	gauges queueGauges
}

func newQueue(g *group, name, url, region string, log *zap.Logger) *queue {
	q := &queue{group: g.name, grp: g, name: name, url: url, region: region, log: log}
	q.input = sqs.GetQueueAttributesInput{QueueUrl: &q.url, AttributeNames: firstAttributes}
	return q
}

// due reports whether the queue is asked in the interval at now. Only a
// queue whose last answer was good and all zero is ever left out, and then
// only until its next due time, while its group expects no load and has
// workers: a group at zero workers asks every queue every interval, since
// nothing else would wake it.
func (q *queue) due(now time.Time) bool {
	g := q.grp
	switch {
	case g.idleMax <= g.interval, q.idleSince.IsZero(), q.failing, !q.everGood, !q.metaKnown,
		now.Before(g.expectUntil), g.fleet != nil && g.fleet.atZero:
		return true
	}
	// Half an interval early rather than a whole interval late.
	return !now.Add(g.interval / 2).Before(q.nextDue)
}

type queueResult struct {
	ok     bool
	counts counts
	err    error
	class  string
	// skipped: not asked this interval (idle); notStarted: due but not
	// asked before the deadline; latency: the call's duration when it
	// answered.
	skipped    bool
	notStarted bool
	latency    time.Duration

	meta bool // the answer carried the identity attributes
	arn  string
	fifo bool
}

// poll asks for the queue's counts once, under ctx's deadline, and keeps
// the answer in q.res.
func (q *queue) poll(ctx context.Context, api sqsAPI) {
	if err := ctx.Err(); err != nil {
		q.res = queueResult{err: fmt.Errorf("get attributes of %s: no call started before the deadline "+
			"(the region's round of calls did not fit): %w", q.url, err),
			class: model.ErrClassTimeout, notStarted: true}
		return
	}
	if q.metaKnown {
		q.input.AttributeNames = countAttributes
	}
	start := time.Now()
	out, err := api.GetQueueAttributes(ctx, &q.input)
	latency := time.Since(start)
	if err != nil {
		q.res = queueResult{err: fmt.Errorf("get attributes of %s: %w", q.url, err), class: awsclient.Classify(err)}
		return
	}
	c, err := parseAttributes(out.Attributes)
	if err != nil {
		q.res = queueResult{err: fmt.Errorf("attributes of %s: %w", q.url, err), class: model.ErrClassMalformed}
		return
	}
	q.res = queueResult{ok: true, counts: c, latency: max(latency, 1)}
	if !q.metaKnown {
		q.res.meta = true
		q.res.arn = out.Attributes[attrArn]
		q.res.fifo = out.Attributes[attrFifo] == "true"
	}
}

// settle folds this interval's answer into what the queue remembers:
// gauges, sample age, and a log line when the queue starts or stops
// failing. It runs after every worker has finished.
func (q *queue) settle(now time.Time, m *metrics) {
	r := &q.res
	if r.skipped {
		q.gauges.update(m, q, now)
		return
	}
	if r.ok {
		if r.meta {
			q.metaKnown, q.arn, q.fifo = true, r.arn, r.fifo
		}
		if q.failing && q.failLogged {
			q.logger().Info("queue answers again", zap.Duration("failed_for", now.Sub(q.failSince)))
		}
		q.failing, q.failLogged = false, false
		q.everGood, q.lastGood, q.last = true, now, r.counts
		q.schedule(now)
	} else {
		q.idleSince = time.Time{}
		if !q.failing {
			q.failing, q.failSince = true, now
			// A queue the round did not reach, or whose call the deadline
			// cut off while its region's round did not fit, is in the
			// region's notice, logged once for all of them.
			inNotice := r.notStarted || (r.class == model.ErrClassTimeout && q.reg.notice != "")
			if q.failLogged = !inNotice; q.failLogged {
				q.logger().Warn("queue sample failed; its last good counts are kept and age",
					zap.String("class", r.class), zap.Error(r.err))
			}
		}
	}
	q.gauges.update(m, q, now)
}

// schedule sets when a queue that answered at now is next due: an idle
// queue after as long as it has been idle, within one interval and its
// group's idle_sample_interval.
func (q *queue) schedule(now time.Time) {
	if q.last != (counts{}) {
		q.idleSince = time.Time{}
		return
	}
	if q.idleSince.IsZero() {
		q.idleSince = now
	}
	gap := min(max(now.Sub(q.idleSince), q.grp.interval), q.grp.idleMax)
	q.nextDue = now.Add(gap)
}

// logger is the poller's logger with the queue's fields. It is made when
// needed, not kept: a logger with fields holds its own encoder, about a
// kilobyte each for thousands of queues that rarely log.
func (q *queue) logger() *zap.Logger {
	fields := []zap.Field{zap.String("group", q.group), zap.String("queue", q.name), zap.String("region", q.region)}
	if q.metaKnown {
		fields = append(fields, zap.String("queue_arn", q.arn), zap.Bool("fifo", q.fifo))
	}
	return q.log.With(fields...)
}

// queueGauges are one queue's series, made on first use and kept as
// metrics.per_queue says: always (true), never (false), or while the
// queue's samples fail (failed_only). The message gauges appear with the
// first good answer, so a queue that never answered exports no counts at
// all rather than zeros.
type queueGauges struct {
	visible, inFlight, delayed prometheus.Gauge
	sampleAge                  prometheus.Gauge
	oldest                     prometheus.Gauge
}

// update sets the queue's series after an interval.
func (g *queueGauges) update(m *metrics, q *queue, now time.Time) {
	switch m.perQueue {
	case perQueueOff:
		return
	case perQueueFailedOnly:
		if !q.failing {
			g.drop(m, q)
			return
		}
	}
	if g.sampleAge == nil {
		g.sampleAge = m.sampleAge.WithLabelValues(q.group, q.name, q.region)
	}
	if q.everGood {
		if g.visible == nil {
			g.visible = m.messages.WithLabelValues(q.group, q.name, q.region, "visible")
			g.inFlight = m.messages.WithLabelValues(q.group, q.name, q.region, "in_flight")
			g.delayed = m.messages.WithLabelValues(q.group, q.name, q.region, "delayed")
		}
		g.visible.Set(float64(q.last.Visible))
		g.inFlight.Set(float64(q.last.InFlight))
		g.delayed.Set(float64(q.last.Delayed))
		g.sampleAge.Set(now.Sub(q.lastGood).Seconds())
	} else {
		g.sampleAge.Set(inf)
	}
}

// drop deletes the queue's series, if it has any.
func (g *queueGauges) drop(m *metrics, q *queue) {
	if g.sampleAge != nil {
		m.sampleAge.DeleteLabelValues(q.group, q.name, q.region)
		g.sampleAge = nil
	}
	if g.visible != nil {
		for _, state := range []string{"visible", "in_flight", "delayed"} {
			m.messages.DeleteLabelValues(q.group, q.name, q.region, state)
		}
		g.visible, g.inFlight, g.delayed = nil, nil, nil
	}
}

// oldestAge sets the queue's CloudWatch age of its oldest message; a
// per-queue series kept only when metrics.per_queue is true.
func (g *queueGauges) oldestAge(m *metrics, q *queue, r *model.Reading) {
	if r == nil || m.perQueue != perQueueAll {
		// CloudWatch holds no recent datapoint: drop the series rather than
		// show an old age as current.
		if g.oldest != nil {
			m.oldest.DeleteLabelValues(q.group, q.name, q.region)
			g.oldest = nil
		}
		return
	}
	if g.oldest == nil {
		g.oldest = m.oldest.WithLabelValues(q.group, q.name, q.region)
	}
	g.oldest.Set(r.Value)
}
