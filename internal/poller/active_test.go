package poller

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// TestInactiveGroupAgainstMoto switches one of two groups off and on and
// counts, through a proxy in front of moto, the GetQueueAttributes calls
// made for each group's queues: none for the inactive group, no
// observation for it, and every queue asked again at once when it is
// active again, with its counts read afresh.
func TestInactiveGroupAgainstMoto(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	var held, other []config.Queue
	for i := range 4 {
		region := []string{east, west}[i%2]
		held = append(held, makeQueue(t, d, queueSpec{region: region, visible: 1}))
		other = append(other, makeQueue(t, d, queueSpec{region: region, visible: 2}))
	}
	proxy := awstest.NewProxy(t, moto.URL)
	count := countQueueCalls(t, proxy, held, other)

	cfg := baseConfig(
		config.Group{Name: "held", Queues: held},
		config.Group{Name: "other", Queues: other},
	)
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, cfg, factory(t, proxy.URL, reg), reg)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()
	groups := func(i int) map[string]int64 {
		t.Helper()
		obs, err := p.Observe(ctx, t0.Add(time.Duration(i)*cfg.Interval))
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, o := range obs {
			out[o.Sample.Group] = o.Sample.Visible
		}
		return out
	}

	if got := groups(0); len(got) != 2 || got["held"] != 4 || got["other"] != 8 {
		t.Fatalf("both active: observations %v, want held 4 and other 8", got)
	}
	p.SetGroupActive("other", false)
	p.SetGroupActive("no such group", false) // ignored
	heldBefore, otherBefore := count(held), count(other)
	for i := 1; i <= 3; i++ {
		got := groups(i)
		if _, ok := got["other"]; ok || len(got) != 1 || got["held"] != 4 {
			t.Fatalf("round %d, other inactive: observations %v, want only held with 4", i, got)
		}
	}
	if n := count(other) - otherBefore; n != 0 {
		t.Errorf("inactive group: %d GetQueueAttributes calls in 3 rounds, want 0", n)
	}
	if n := count(held) - heldBefore; n != 3*len(held) {
		t.Errorf("active group: %d GetQueueAttributes calls in 3 rounds, want %d", n, 3*len(held))
	}

	// Back on: its queues are asked at the next round and the counts are
	// the queues' own, changed while the group was off.
	for _, q := range other {
		if _, err := d.SQS(q.Region).SendMessage(ctx, &sqs.SendMessageInput{
			QueueUrl: aws.String(q.URL), MessageBody: aws.String("while off"),
		}); err != nil {
			t.Fatal(err)
		}
	}
	p.SetGroupActive("other", true)
	otherBefore = count(other)
	if got := groups(4); len(got) != 2 || got["other"] != 12 {
		t.Fatalf("other active again: observations %v, want other 12", got)
	}
	if n := count(other) - otherBefore; n != len(other) {
		t.Errorf("active again: %d of the group's %d queues asked", n, len(other))
	}
}
