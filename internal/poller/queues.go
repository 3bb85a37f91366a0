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
	name   string // the last element of the URL
	url    string
	region string
	log    *zap.Logger // the poller's; the queue's fields are added when it logs

	// Learned from the first answer and kept.
	metaKnown bool
	arn       string
	fifo      bool

	// res is this interval's answer, written by the one worker that polls
	// the queue and read after every worker has finished.
	res queueResult

	// Between intervals.
	everGood  bool
	lastGood  time.Time
	failing   bool
	failSince time.Time

	gauges queueGauges
}

type queueResult struct {
	ok     bool
	counts counts
	err    error
	class  string

	meta bool // the answer carried the identity attributes
	arn  string
	fifo bool
}

// poll asks for the queue's counts once, under ctx's deadline, and keeps
// the answer in q.res.
func (q *queue) poll(ctx context.Context, api sqsAPI) {
	if err := ctx.Err(); err != nil {
		q.res = queueResult{err: fmt.Errorf("get attributes of %s: no call started before the deadline: %w", q.url, err),
			class: model.ErrClassTimeout}
		return
	}
	names := countAttributes
	if !q.metaKnown {
		names = firstAttributes
	}
	out, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.url, AttributeNames: names})
	if err != nil {
		q.res = queueResult{err: fmt.Errorf("get attributes of %s: %w", q.url, err), class: awsclient.Classify(err)}
		return
	}
	c, err := parseAttributes(out.Attributes)
	if err != nil {
		q.res = queueResult{err: fmt.Errorf("attributes of %s: %w", q.url, err), class: model.ErrClassMalformed}
		return
	}
	q.res = queueResult{ok: true, counts: c}
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
	q.gauges.init(m, q)
	r := &q.res
	if r.ok {
		if r.meta {
			q.metaKnown, q.arn, q.fifo = true, r.arn, r.fifo
		}
		if q.failing {
			q.logger().Info("queue answers again", zap.Duration("failed_for", now.Sub(q.failSince)))
			q.failing = false
		}
		q.everGood, q.lastGood = true, now
		q.gauges.set(r.counts)
	} else if !q.failing {
		q.failing, q.failSince = true, now
		q.logger().Warn("queue sample failed; its last good counts are kept and age",
			zap.String("class", r.class), zap.Error(r.err))
	}
	q.gauges.age(now, q.everGood, q.lastGood)
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

// queueGauges are one queue's series, made on first use. The message
// gauges appear with the first good answer, so a queue that never answered
// exports no counts at all rather than zeros.
type queueGauges struct {
	made                       bool
	m                          *metrics
	group, queue, region       string
	visible, inFlight, delayed prometheus.Gauge
	sampleAge                  prometheus.Gauge
	oldest                     prometheus.Gauge
}

func (g *queueGauges) init(m *metrics, q *queue) {
	if g.made {
		return
	}
	g.made, g.m = true, m
	g.group, g.queue, g.region = q.group, q.name, q.region
	g.sampleAge = m.sampleAge.WithLabelValues(g.group, g.queue, g.region)
}

func (g *queueGauges) set(c counts) {
	if g.visible == nil {
		g.visible = g.m.messages.WithLabelValues(g.group, g.queue, g.region, "visible")
		g.inFlight = g.m.messages.WithLabelValues(g.group, g.queue, g.region, "in_flight")
		g.delayed = g.m.messages.WithLabelValues(g.group, g.queue, g.region, "delayed")
	}
	g.visible.Set(float64(c.Visible))
	g.inFlight.Set(float64(c.InFlight))
	g.delayed.Set(float64(c.Delayed))
}

func (g *queueGauges) age(now time.Time, everGood bool, lastGood time.Time) {
	if !everGood {
		g.sampleAge.Set(inf)
		return
	}
	g.sampleAge.Set(now.Sub(lastGood).Seconds())
}

func (g *queueGauges) oldestAge(r *model.Reading) {
	if r == nil {
		// CloudWatch holds no recent datapoint: drop the series rather than
		// show an old age as current.
		if g.oldest != nil {
			g.m.oldest.DeleteLabelValues(g.group, g.queue, g.region)
			g.oldest = nil
		}
		return
	}
	if g.oldest == nil {
		g.oldest = g.m.oldest.WithLabelValues(g.group, g.queue, g.region)
	}
	g.oldest.Set(r.Value)
}
