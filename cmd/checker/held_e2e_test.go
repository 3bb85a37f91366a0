package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/model"
)

// TestE2EHeldMessages runs the daemon's wiring (a configuration file,
// loadConfig, assemble, controller.New, RunOnce) against moto on a simulated
// clock, for three groups whose workers, two minutes in, stop deleting part
// of what they receive: 30 % poison messages at 2 msg/s, an outage (nothing
// deleted at 3 msg/s), and a downstream that serves 2 of 3 msg/s. Each
// group's queue really holds the in-flight messages such workers leave: those
// in service (deleted × 1 s, the configured service time), plus every message
// not deleted since the onset (received again at once whenever its
// visibility timeout returns it), made by receiving real messages with an
// hour's visibility. CloudWatch gets each minute's NumberOfMessagesSent and
// NumberOfMessagesDeleted stamped with its start a minute after it ends, as
// SQS publishes them. The checker scales each Auto Scaling group itself
// (max 12).
//
// Before the fix, every in-flight message up to the slots counted as
// completing at 1 msg/s: the estimate grew with the fleet and the fleet went
// to its max. Now: the arrival rate shown stays within the sent count's noise
// until the held messages are named, and within 20 % of the sent rate after;
// they are named (messages_held, with the redrive policy for poison) within
// two minutes and an interval of the onset; and the fleet never goes above
// 1.5 times its count before the onset, nor, once they are named, below it.
func TestE2EHeldMessages(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	ctx := context.Background()
	const (
		interval = 5 * time.Second
		before   = 2 * time.Minute
		after    = 3 * time.Minute
	)
	type group struct {
		name          string
		sent, deleted float64 // msg/s after the onset; before it every message is deleted
		kind          string
		queue         testQueue
		queueName     string
		asg           string
		held          int // messages in flight now
		pre           int
		named         time.Time
		last          model.Decision
	}
	groups := []*group{
		{name: "poison", sent: 2, deleted: 1.4, kind: model.HeldPoison},
		{name: "outage", sent: 3, deleted: 0, kind: model.HeldOutage},
		{name: "downstream", sent: 3, deleted: 2, kind: model.HeldPoison},
	}
	var doc strings.Builder
	doc.WriteString(motoConfigHead(interval, moto.URL))
	for _, g := range groups {
		g.held = int(g.sent) // in service before the onset: sent × 1 s
		g.queue = makeQueue(t, f, queueSpec{region: east, inFlight: g.held})
		g.queueName = g.queue.name()
		g.asg = makeASG(t, f, 1, 12, 3)
		fmt.Fprintf(&doc, "  - name: %s\n", g.name)
		fmt.Fprintf(&doc, "    queues: [{url: %q, region: %s}]\n", g.queue.url, east)
		fmt.Fprintf(&doc, "    oldest_age: {cloudwatch: true}\n")
		fmt.Fprintf(&doc, "    workers: {service_time: 1s}\n")
		fmt.Fprintf(&doc, "    target: {latency: 30s}\n")
		fmt.Fprintf(&doc, "    fleet: {autoscaling_group: {name: %s, region: %s}, min: 1, max: 12}\n", g.asg, east)
		fmt.Fprintf(&doc, "    actions: {set_desired_capacity: true}\n")
	}
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, doc.String())
	ctrl := wireDaemon(ctx, t, path, zaptest.NewLogger(t)).ctrl

	// Half an hour in the past, so that CloudWatch takes every datapoint,
	// and 2.5 s into a minute; the onset is on a minute's start.
	t0 := pastClock(interval)
	m0 := t0.Truncate(time.Minute)
	onset := m0.Add(before)
	planted := 0
	for now := t0; now.Before(onset.Add(after)); now = now.Add(interval) {
		for ; !m0.Add(time.Duration(planted+2) * time.Minute).After(now); planted++ {
			m := m0.Add(time.Duration(planted) * time.Minute)
			for _, g := range groups {
				d := g.sent
				if !m.Before(onset) {
					d = g.deleted
				}
				putSQSMetric(t, f, g.queueName, "NumberOfMessagesSent", m, g.sent*60)
				putSQSMetric(t, f, g.queueName, "NumberOfMessagesDeleted", m, d*60)
			}
		}
		for _, g := range groups {
			want := int(g.sent)
			if now.After(onset) {
				want = int(math.Round(g.deleted + (g.sent-g.deleted)*now.Sub(onset).Seconds()))
			}
			receiveInto(t, f, g.queue, want-g.held)
			g.held = max(g.held, want)
		}
		ds, err := ctrl.RunOnce(ctx, now)
		if err != nil {
			t.Fatalf("%s: RunOnce: %v", now.Sub(t0), err)
		}
		decided, _ := printedDecisions(t, ds)
		for _, g := range groups {
			d, ok := decided[g.name]
			if !ok {
				t.Fatalf("no decision for %s", g.name)
			}
			g.last = d
			at := fmt.Sprintf("%s: %s (%s after the onset)", now.Format("15:04:05"), g.name, now.Sub(onset))
			if int(d.InFlight) != g.held {
				t.Fatalf("%s: %d in flight read, %d made", at, d.InFlight, g.held)
			}
			if now.Before(onset) {
				g.pre = d.DesiredWorkers
				if d.HeldMessages != nil {
					t.Fatalf("%s: held messages named before the onset: %+v", at, *d.HeldMessages)
				}
				continue
			}
			if d.ArrivalRate == nil {
				t.Fatalf("%s: no arrival rate", at)
			}
			if d.HeldMessages != nil && g.named.IsZero() {
				g.named = now
				t.Logf("%s: named: %q", at, d.Reasons)
			}
			rate := *d.ArrivalRate
			if noise := 2 * math.Sqrt(g.sent/60); g.named.IsZero() && rate > g.sent+noise+1e-9 {
				t.Errorf("%s: arrival rate %v, %v sent: above its noise", at, rate, g.sent)
			} else if !g.named.IsZero() && math.Abs(rate/g.sent-1) > 0.2 {
				t.Errorf("%s: arrival rate %v, %v sent: more than 20 %% off", at, rate, g.sent)
			}
			if 2*d.DesiredWorkers > 3*g.pre {
				t.Errorf("%s: desired %d, above 1.5 × the %d before the onset", at, d.DesiredWorkers, g.pre)
			}
			if !g.named.IsZero() {
				hm := d.HeldMessages
				if hm == nil || d.Diagnosis != model.DiagMessagesHeld {
					t.Fatalf("%s: named at %s, then not: %s %q", at, g.named.Sub(onset), d.Diagnosis, d.Reasons)
				}
				if d.DesiredWorkers != g.pre || hm.HoldAt != g.pre || hm.Kind != g.kind || !hm.Since.Equal(onset) {
					t.Errorf("%s: desired %d, held messages %+v; want held at %d, kind %s, since %s", at, d.DesiredWorkers, *hm, g.pre, g.kind, onset)
				}
			}
		}
	}
	for _, g := range groups {
		if g.named.IsZero() {
			t.Errorf("%s: held messages never named; last %s %q", g.name, g.last.Diagnosis, g.last.Reasons)
			continue
		}
		if late := g.named.Sub(onset); late > 2*time.Minute+interval {
			t.Errorf("%s: named %s after the onset, want within 2 minutes and an interval", g.name, late)
		}
		if g.kind == model.HeldPoison && reasonWith(g.last, "maxReceiveCount") == "" {
			t.Errorf("%s: no redrive policy among %q", g.name, g.last.Reasons)
		}
		if got := asgDesired(t, f, g.asg); got != g.pre {
			t.Errorf("%s: the Auto Scaling group ends at %d, want the %d before the onset", g.name, got, g.pre)
		}
		t.Logf("%s: %d workers before the onset, named %s after it, arrival rate %.2f (sent %v)", g.name, g.pre, g.named.Sub(onset), *g.last.ArrivalRate, g.sent)
	}
}

// receiveInto makes n more messages in flight in q: sent, then received
// with an hour's visibility.
func receiveInto(t testing.TB, f *awsclient.Factory, q testQueue, n int) {
	t.Helper()
	if n <= 0 {
		return
	}
	sendMessages(t, f, q, n, 0)
	for got := 0; got < n; {
		r, err := f.SQS(q.region).ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.url),
			MaxNumberOfMessages: int32(min(10, n-got)), VisibilityTimeout: 3600})
		if err != nil {
			t.Fatalf("receive message: %v", err)
		}
		got += len(r.Messages)
	}
}
