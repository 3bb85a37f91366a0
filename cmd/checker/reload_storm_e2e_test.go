package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// TestE2EReloadStormKeepsActing runs the built binary against moto with two
// groups held below their min from outside (their Auto Scaling groups set
// back to 1 of min 3, again and again) while 28 SIGHUPs arrive 0.3 to 1.4
// intervals apart (1.5 to 7 s at a 5 s interval), reloading documents that
// change the groups' settings but not their fleets, or nothing at all.
// Each time, the checker raises the group back to its min within four of
// its fleet reads of it being set below it: the one running when it was
// set, the one that reads the new count, and at most two more during which a
// reload may keep that cycle from acting. The lag is counted in the fleet
// reads the proxy answered before the checker gave up on them, up to the
// checker's raise as the proxy sees it: not in wall time, which a loaded
// machine stretches, nor in cycles, of which a loaded machine fails some
// (a fleet read past the cycle's deadline holds the count, rightly).
func TestE2EReloadStormKeepsActing(t *testing.T) {
	t.Parallel()
	f := direct(t)
	// Every fleet read answers 1.2 s late: a cycle takes most of its
	// interval, as one of many queues and groups does, so that most
	// reloads land while a cycle runs.
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	const fleetRead = "DescribeAutoScalingGroups" // as watchScaling counts them
	stop := proxy.Inject(awstest.MatchOperation(fleetRead), awstest.Fault{Kind: awstest.FaultSlow, Delay: 1200 * time.Millisecond})
	defer stop()
	bin := buildChecker(t)
	const interval = 2 * time.Second
	q := makeQueue(t, f, queueSpec{region: east})
	low := []string{makeASG(t, f, 0, 10, 1), makeASG(t, f, 0, 10, 1)}
	scalings := watchScaling(proxy)
	other := makeASG(t, f, 0, 10, 2)
	doc := func(latency time.Duration, max int) e2eConfig {
		g := func(name, asg string, max int) e2eGroup {
			return e2eGroup{name: name, queues: []testQueue{q}, serviceTime: time.Second, latency: latency, drainTime: time.Minute,
				asg: asg, min: 3, max: max, scaleInStabilization: time.Hour}
		}
		return e2eConfig{endpoint: proxy.URL, interval: interval, groups: []e2eGroup{
			g("low-a", low[0], 10), g("low-b", low[1], 10), g("other", other, max)}}
	}
	docs := []e2eConfig{doc(10*time.Second, 10), doc(12*time.Second, 9), doc(10*time.Second, 8)}
	path := writeConfig(t, docs[0])
	p := startProcess(t, bin, path)
	for _, asg := range low {
		eventually(t, 10*interval, "raised to the min", func() bool { return asgDesired(t, f, asg) >= 3 })
	}

	// One generator each for the storm and the checks, which run side by side.
	rng, stormRng := rand.New(rand.NewPCG(53, 7)), rand.New(rand.NewPCG(53, 8))
	ctx, cancel := context.WithCancel(context.Background())
	// A check that fails ends the storm, and the test waits for it: the
	// storm's own checks must not fail a test that has ended.
	stormCtx, stopStorm := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { stopStorm(); wg.Wait() })
	wg.Go(func() { // the storm
		defer cancel()
		for i := range 28 {
			select {
			case <-stormCtx.Done():
				return
			case <-time.After(time.Duration((0.3 + 1.1*stormRng.Float64()) * float64(interval))):
			}
			if i%4 != 3 { // every fourth SIGHUP reloads the document unchanged
				writeFile(t, path, docs[(i+1)%len(docs)].yaml())
			}
			p.signal(t, syscall.SIGHUP)
		}
	})
	var lags []time.Duration
	var lagReads []int
	for ctx.Err() == nil {
		// Reads answered before the first group is set below its min may
		// still be counted: they only lengthen the lag measured.
		before := proxy.Answered(fleetRead)
		// A raise is the checker's answer to the set below the min once
		// the set has begun: before it, the group was at its min and
		// nothing was to be raised.
		setAt := map[string]time.Time{}
		for _, asg := range low {
			setAt[asg] = time.Now()
			if _, err := f.AutoScaling(east).SetDesiredCapacity(context.Background(), &autoscaling.SetDesiredCapacityInput{
				AutoScalingGroupName: aws.String(asg), DesiredCapacity: aws.Int32(1)}); err != nil {
				t.Fatal(err)
			}
		}
		set := time.Now()
		for _, asg := range low {
			eventually(t, 20*interval, "back at the min during the storm", func() bool { return asgDesired(t, f, asg) >= 3 })
		}
		reads := 0
		for _, asg := range low {
			calls := scalings.since(setAt[asg])
			i := slices.IndexFunc(calls, func(c scaling) bool { return c.group == asg && c.desired >= 3 })
			if i < 0 {
				t.Fatalf("%s is back at its min, but the checker was not seen raising it", asg)
			}
			reads = max(reads, calls[i].fleetReads-before)
		}
		lags, lagReads = append(lags, time.Since(set)), append(lagReads, reads)
		time.Sleep(time.Duration(rng.Float64() * float64(interval)))
	}
	wg.Wait()
	if p.exited() {
		t.Fatalf("exited during the storm\n%s", p.logs.String())
	}
	n := 0
	for _, m := range logMessages(p.logs.String()) {
		if m == "configuration reloaded" || m == "configuration unchanged; nothing reloaded" {
			n++
		}
	}
	if n < 20 {
		t.Errorf("%d reloads logged of 28 SIGHUPs, want most of them", n)
	}
	slices.Sort(lags)
	slices.Sort(lagReads)
	t.Logf("%d times set below the min during %d reloads: back at the min after median %s, max %s (interval %s); raised after at most %d fleet reads (%d of %d fleet reads answered)",
		len(lags), n, lags[len(lags)/2].Round(time.Millisecond), lags[len(lags)-1].Round(time.Millisecond), interval,
		lagReads[len(lagReads)-1], proxy.Answered(fleetRead), proxy.Calls(fleetRead))
	if m := lagReads[len(lagReads)-1]; m > 4 {
		t.Errorf("a group below its min waited %d fleet reads to be raised during the reload storm, want at most 4", m)
	}
	p.terminate(t)
}
