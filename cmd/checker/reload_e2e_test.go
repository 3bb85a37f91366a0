package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// TestE2EReloadMidCycle reloads, in the middle of a cycle whose Auto
// Scaling read moto answers 0.45 s late, a document that moves a group to
// another Auto Scaling group and removes a second group. In 20 trials the
// old fleet and the removed one get no SetDesiredCapacity from the moment
// the reload is asked for, though each would be scaled from 0 to its min
// were the old configuration still acting; "configuration reloaded" is
// logged once per reload, after the cycle; and the next cycle scales the
// new fleet.
func TestE2EReloadMidCycle(t *testing.T) {
	t.Parallel()
	f := direct(t)
	ctx := context.Background()
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	calls := watchScaling(proxy)
	q := makeQueue(t, f, queueSpec{region: east, visible: 20})
	asgOld, asgNew, asgGone := makeASG(t, f, 0, 20, 0), makeASG(t, f, 0, 20, 0), makeASG(t, f, 0, 20, 0)
	group := func(name, asg string) e2eGroup {
		return e2eGroup{name: name, queues: []testQueue{q}, serviceTime: time.Second, latency: 10 * time.Second,
			asg: asg, min: 3, max: 10, forecastOff: true}
	}
	before := e2eConfig{endpoint: proxy.URL, interval: time.Second, groups: []e2eGroup{group("moved", asgOld), group("removed", asgGone)}}
	after := e2eConfig{endpoint: proxy.URL, interval: time.Second, groups: []e2eGroup{group("moved", asgNew)}}
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, before.yaml())
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(core)
	wd := wireDaemon(ctx, t, path, log)
	ctrl := wd.ctrl
	r := &reloader{src: wd.src, sum: wd.sum, ctrl: ctrl, gatherer: &metricsGatherer{base: prometheus.NewRegistry(), gen: wd.asm.registry}, log: log}
	setDesired := func(name string, n int32) {
		t.Helper()
		if _, err := f.AutoScaling(east).SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{
			AutoScalingGroupName: aws.String(name), DesiredCapacity: aws.Int32(n)}); err != nil {
			t.Fatal(err)
		}
	}
	stop := proxy.Inject(awstest.MatchOperation("DescribeAutoScalingGroups"), awstest.Fault{Kind: awstest.FaultSlow, Delay: 450 * time.Millisecond})
	defer stop()

	const trials = 20
	for i := range trials {
		if i > 0 { // back to the first document, between cycles
			writeFile(t, path, before.yaml())
			r.reload(ctx, true)
		}
		setDesired(asgOld, 0)
		setDesired(asgGone, 0)
		writeFile(t, path, after.yaml())
		done := make(chan struct{})
		go func() {
			defer close(done)
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			_, _ = ctrl.RunOnce(cctx, time.Now())
		}()
		time.Sleep(150 * time.Millisecond) // within the slowed read
		asked := time.Now()
		r.reload(ctx, true)
		<-done
		for _, c := range calls.since(asked) {
			if c.group == asgOld || c.group == asgGone {
				t.Errorf("trial %d: SetDesiredCapacity(%s, %d) %s after the reload was asked for",
					i, c.group, c.desired, c.at.Sub(asked).Round(time.Millisecond))
			}
		}
	}
	if n := logs.FilterMessage("configuration reloaded").Len(); n != 2*trials-1 {
		t.Errorf("%d reloads logged, want %d", n, 2*trials-1)
	}
	// The new document acts at the next cycle, on its fleet alone.
	if got := asgDesired(t, f, asgNew); got != 0 {
		t.Fatalf("the new fleet is at %d before any cycle of its document, want 0", got)
	}
	// A cycle whose fleet read times out on a loaded machine holds; a
	// later one acts. Under the whole race-enabled suite on two cores three
	// such cycles in a row were seen, so ten are allowed; none may touch
	// the old fleet.
	got := 0
	for range 10 {
		if _, err := ctrl.RunOnce(ctx, time.Now()); err != nil {
			t.Fatal(err)
		}
		if got = asgDesired(t, f, asgNew); got >= 3 {
			break
		}
	}
	if got < 3 {
		t.Errorf("the new fleet is at %d after ten cycles of the new document, want its min 3 or more", got)
	}
	if got := asgDesired(t, f, asgOld); got != 0 {
		t.Errorf("the old fleet is at %d, want 0: nothing acts on it", got)
	}
}
