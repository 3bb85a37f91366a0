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

// TestIdleQueuesAgainstMoto runs 20 queues in moto, 18 of them (90 %)
// empty, at a 5 s interval with idle_sample_interval 30 s, through ten
// simulated minutes, counting the GetQueueAttributes calls that reach
// the endpoint. Then it puts a message on an idle queue just after the
// queue was asked, the worst moment, and checks it is seen within
// idle_sample_interval + one interval; and that a group expecting load
// has every queue asked at once.
func TestIdleQueuesAgainstMoto(t *testing.T) {
	t.Parallel()
	const (
		interval = 5 * time.Second
		idleMax  = 30 * time.Second
		rounds   = 120 // ten minutes
	)
	moto := awstest.Shared(t)
	d := direct(t)
	var mixed, quiet []config.Queue
	for i := range 10 {
		region := []string{east, west}[i%2]
		if i < 2 {
			mixed = append(mixed, makeQueue(t, d, queueSpec{region: region, visible: 3}))
		} else {
			mixed = append(mixed, makeQueue(t, d, queueSpec{region: region}))
		}
		quiet = append(quiet, makeQueue(t, d, queueSpec{region: region}))
	}
	proxy := awstest.NewProxy(t, moto.URL)
	count := countQueueCalls(t, proxy, mixed, quiet)

	cfg := baseConfig(
		config.Group{Name: "mixed", Queues: mixed, IdleSampleInterval: idleMax},
		config.Group{Name: "quiet", Queues: quiet, IdleSampleInterval: idleMax},
	)
	cfg.Interval = interval
	cfg.AWS.CallTimeout = 4 * time.Second
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, cfg, factory(t, proxy.URL, reg), reg)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * interval) }
	ctx := context.Background()
	for i := range rounds {
		obs, err := p.Observe(ctx, at(i))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range obs {
			s := o.Sample
			if s.Answered != s.Queues || len(s.Failures) != 0 {
				t.Fatalf("round %d, %s: answered %d of %d, failures %+v", i, s.Group, s.Answered, s.Queues, s.Failures)
			}
		}
		if obs[0].Sample.Visible != 6 || obs[1].Sample.Visible != 0 {
			t.Fatalf("round %d: visible %d and %d, want 6 and 0", i, obs[0].Sample.Visible, obs[1].Sample.Visible)
		}
	}
	// At full rate: 20 queues × 120 rounds. Busy queues: every round. An
	// idle queue (idle since 0 s): at 0, 5, 10, 20 and 40 s, then every 30
	// s up to 580 s (19 calls): 23 calls.
	full := 20 * rounds
	want := 2*rounds + 18*(4+19)
	got := count(mixed) + count(quiet)
	if got != want {
		t.Errorf("%d GetQueueAttributes calls in ten minutes, want %d", got, want)
	}
	fall := 1 - float64(got)/float64(full)
	t.Logf("requests: %d of %d at full rate, %.1f %% fewer", got, full, 100*fall)
	if fall < 0.70 {
		t.Errorf("requests fell by %.1f %%, want at least 70 %%", 100*fall)
	}

	// The worst case: a message lands just after its idle queue was asked.
	target := quiet[3]
	i := rounds
	for before := count(quiet[3:4]); ; i++ {
		if _, err := p.Observe(ctx, at(i)); err != nil {
			t.Fatal(err)
		}
		if count(quiet[3:4]) > before {
			break
		}
		if i > rounds+int(idleMax/interval)+1 {
			t.Fatal("the idle queue was not asked within idle_sample_interval + one interval")
		}
	}
	askedAt := at(i)
	if _, err := d.SQS(target.Region).SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(target.URL), MessageBody: aws.String("wake up"),
	}); err != nil {
		t.Fatal(err)
	}
	var seenAt time.Time
	for i++; seenAt.IsZero(); i++ {
		obs, err := p.Observe(ctx, at(i))
		if err != nil {
			t.Fatal(err)
		}
		if obs[1].Sample.Visible == 1 {
			seenAt = at(i)
		}
		if at(i).Sub(askedAt) > idleMax+interval {
			t.Fatalf("the message was not seen within %s of its arrival", idleMax+interval)
		}
	}
	t.Logf("a message on an idle queue was seen %s after it arrived", seenAt.Sub(askedAt))
	if seenAt.Sub(askedAt) <= interval {
		t.Errorf("seen after %s: the queue was not being sampled less often", seenAt.Sub(askedAt))
	}

	// Expecting load: every queue of the group is asked in the next round.
	p.SetExpectingLoad("quiet", at(i+2))
	before := count(quiet)
	if _, err := p.Observe(ctx, at(i)); err != nil {
		t.Fatal(err)
	}
	if got := count(quiet) - before; got != len(quiet) {
		t.Errorf("expecting load: %d of the group's %d queues asked", got, len(quiet))
	}
}
