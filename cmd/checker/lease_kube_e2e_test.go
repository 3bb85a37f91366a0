package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/kubetest"
)

// kubeLeaseFreezes is how many times TestE2EKubernetesLeases freezes a
// checker.
var kubeLeaseFreezes = flag.Int("lease.kube_freezes", 5, "SIGSTOP freezes of 1.5 to 3 leases in TestE2EKubernetesLeases")

// TestE2EKubernetesLeases runs three `checker run` processes sharing six
// groups (Auto Scaling groups in moto) through Leases on a real API
// server, as deploy/kubernetes's service account with role-leases.yaml,
// at a 1 s interval and a 3 s lease. It freezes a checker with SIGSTOP
// for 1.5 to 3 leases (-lease.kube_freezes times), deletes a Lease and
// writes one over by hand now and then, and kills one with SIGKILL; every
// SetDesiredCapacity call that reaches moto must come from the holder of
// the group's lease at that moment, as the Leases' changes (watched)
// tell, and the killed checker's groups must be acted on by the others
// within a lease and two intervals.
func TestE2EKubernetesLeases(t *testing.T) {
	const (
		interval = time.Second
		duration = 3 * interval
		ns       = "queue-checker"
		nGroups  = 6
	)
	f := direct(t)
	moto := awstest.Shared(t)
	s, _ := kubeAsChecker(t, "namespace-checker.yaml", "serviceaccount.yaml", "role-leases.yaml", "rolebinding-leases.yaml")
	leases, err := coordclient.NewForConfig(s.Config(kubetest.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildChecker(t)

	q := makeQueue(t, f, queueSpec{region: east, visible: 15, inFlight: 3})
	var groups []e2eGroup
	asgGroup := map[string]string{}
	for i := range nGroups {
		asg := makeASG(t, f, 1, 10, 1)
		name := fmt.Sprintf("g%02d", i)
		asgGroup[asg] = name
		groups = append(groups, e2eGroup{name: name, queues: []testQueue{q}, serviceTime: time.Second,
			latency: 10 * time.Second, drainTime: time.Minute, asg: asg, min: 1, max: 10})
	}

	// The Leases' changes, as lease writes: a group's holder from the
	// writer's renewTime (set just before the write) to the expiry it
	// wrote; a Lease deleted ends its holding when the deletion is seen.
	w := &wire{current: map[int]string{}, ops: map[int]map[string]int{}, seq: map[int][]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wt, err := leases.Leases(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var watched sync.WaitGroup
	watched.Go(func() {
		for ev := range wt.ResultChan() {
			l, ok := ev.Object.(*coordinationv1.Lease)
			if !ok {
				continue
			}
			g, ok := strings.CutPrefix(l.Annotations["queue-checker.io/key"], "group/")
			if !ok {
				continue
			}
			lw := leaseWrite{at: time.Now(), group: g}
			if ev.Type != watch.Deleted {
				if l.Spec.HolderIdentity != nil {
					lw.owner = *l.Spec.HolderIdentity
				}
				if l.Spec.RenewTime != nil {
					lw.at = l.Spec.RenewTime.Time
				}
				ms, _ := strconv.ParseInt(l.Annotations["queue-checker.io/expires"], 10, 64)
				lw.expires = time.UnixMilli(ms)
			}
			w.mu.Lock()
			w.writes = append(w.writes, lw)
			w.mu.Unlock()
		}
	})
	defer func() { wt.Stop(); watched.Wait() }()

	checkers, start := leaseFleet(t, w, moto.URL, bin, func(c *checker) string {
		cfg := e2eConfig{endpoint: c.faults.URL, interval: interval, maxAttempts: 1, groups: groups}
		return strings.Replace(cfg.yaml(), "groups:\n", fmt.Sprintf("coordination:\n  kubernetes: {namespace: %s}\n  lease_duration: %s\n  identity: %s\ngroups:\n",
			ns, duration, c.id), 1)
	})
	startAll(checkers, start)

	eventually(t, 3*duration+10*time.Second, "the six leases spread two by two", func() bool {
		writes, _ := w.snapshot()
		counts := map[string]int{}
		for _, o := range ownersAt(writes, time.Now()) {
			counts[o]++
		}
		for _, c := range checkers {
			if counts[c.id] != nGroups/leaseCheckers {
				return false
			}
		}
		return true
	})

	// groupLease reads a group's Lease as the administrator.
	groupLease := func(g string) *coordinationv1.Lease {
		list, err := leases.Leases(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			if list.Items[i].Annotations["queue-checker.io/key"] == "group/"+g {
				return &list.Items[i]
			}
		}
		return nil
	}
	for n := range *kubeLeaseFreezes {
		c := checkers[n%len(checkers)]
		pause := time.Duration(float64(duration) * (1.5 + 1.5*float64(n%4)/3))
		c.proc.signal(t, syscall.SIGSTOP)
		switch g := groups[n%nGroups].name; n % 5 {
		case 1:
			if l := groupLease(g); l != nil {
				if err := leases.Leases(ns).Delete(ctx, l.Name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
		case 3:
			if l := groupLease(g); l != nil {
				by := "someone-by-hand"
				l.Spec.HolderIdentity = &by
				l.Annotations["queue-checker.io/counter"] = "by hand"
				if _, err := leases.Leases(ns).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
					t.Logf("overwrite by hand: %v", err)
				}
			}
		}
		time.Sleep(pause)
		// Every fleet knocked down to one worker just before the thaw: the
		// owners scale them out again, and the thawed checker would too if
		// it still believed in the leases it held before the freeze.
		for asg := range asgGroup {
			_, _ = f.AutoScaling(east).SetDesiredCapacity(ctx, &autoscaling.SetDesiredCapacityInput{
				AutoScalingGroupName: aws.String(asg), DesiredCapacity: aws.Int32(1),
			})
		}
		c.proc.signal(t, syscall.SIGCONT)
		time.Sleep(2 * interval)
	}

	// kill -9: the others act on its groups within a lease and two intervals.
	time.Sleep(2 * duration)
	victim := checkers[0]
	killedAt := time.Now()
	_ = victim.proc.cmd.Process.Kill()
	<-victim.proc.done
	moved := leaseMoves(t, w, victim.id, killedAt, duration+2*interval)
	t.Logf("kill -9 %s: its %d leases taken by others %s .. %s after the kill", victim.id, len(moved), moved[0], moved[len(moved)-1])
	time.Sleep(2 * interval)

	writes, calls := w.snapshot()
	bad := callsWithoutLease(t, holdingsByGroup(writes), calls, asgGroup)
	t.Logf("%d freezes of 1.5 to 3 leases; %d SetDesiredCapacity calls, %d Lease changes; %d calls by a checker not holding the lease",
		*kubeLeaseFreezes, len(calls), len(writes), bad)
	if len(calls) == 0 {
		t.Error("no SetDesiredCapacity call reached moto: nothing was checked")
	}
	for _, c := range checkers[1:] {
		c.proc.terminate(t)
	}
}
