package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/queuechecker/queue-checker/internal/kubetest"
	"github.com/queuechecker/queue-checker/internal/lease"
)

// checkerNamespace is the checker's namespace in deploy/kubernetes, where
// role-leases.yaml lets it keep its Leases.
const checkerNamespace = "queue-checker"

var leaseRBACOnce sync.Once

// leaseClients returns a client of the Leases as the checker's service
// account, holding role-leases.yaml, and one as the administrator.
func leaseClients(t *testing.T) (checker, admin *coordclient.CoordinationV1Client) {
	t.Helper()
	s, a := cluster(t)
	leaseRBACOnce.Do(func() {
		for _, f := range []string{"role-leases.yaml", "rolebinding-leases.yaml"} {
			b, err := os.ReadFile(filepath.Join(manifests, f))
			if err != nil {
				t.Fatal(err)
			}
			a.MustApply(t, string(b))
		}
	})
	var err error
	if checker, err = coordclient.NewForConfig(s.Config(kubetest.CheckerUser)); err != nil {
		t.Fatal(err)
	}
	if admin, err = coordclient.NewForConfig(s.Config(kubetest.AdminUser)); err != nil {
		t.Fatal(err)
	}
	return checker, admin
}

// simClock is the checkers' wall clock, moved by the test.
type simClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *simClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *simClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// TestKubernetesLeases runs three checkers sharing six groups through
// Leases on a real API server, as the checker's service account, over
// simulated intervals: twenty freezes of one checker for 1.5 to 3 lease
// durations, Leases deleted and written over by hand, and a checker that
// dies. At every interval, every checker that may act on a group must
// hold it in the API server's Lease (holder and expiry covering the
// action), and no two may act on one group; after the death, every group
// is acted on again within a lease and two intervals; at the end the
// groups are spread evenly.
func TestKubernetesLeases(t *testing.T) {
	checkerClient, admin := leaseClients(t)
	ns := checkerNamespace
	const (
		interval = time.Second
		duration = 3 * time.Second
		deadline = 800 * time.Millisecond
	)
	// Groups of this test only: the namespace is shared with other tests.
	prefix := fmt.Sprintf("t%d", time.Now().UnixNano()%1e6)
	var groups []string
	for i := range 6 {
		groups = append(groups, fmt.Sprintf("%s-G_%d", prefix, i))
	}
	clk := &simClock{now: time.Now().Round(0)}
	ids := []string{"checker-a", "checker-b", "Checker:C/1"}
	ms := make([]*lease.Manager, len(ids))
	for i, id := range ids {
		m, err := lease.NewKubernetes(checkerClient, ns, lease.Options{
			Identity: prefix + "-" + id, Duration: duration, Interval: interval, ActionDeadline: deadline,
			Groups: groups, Logger: zaptest.NewLogger(t).Named(id), Now: clk.Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = m
	}
	ctx := context.Background()
	leases := admin.Leases(ns)
	// byGroup reads the groups' Leases as the administrator.
	byGroup := func() map[string]coordinationv1.Lease {
		list, err := leases.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]coordinationv1.Lease{}
		for _, l := range list.Items {
			k := l.Annotations["queue-checker.io/key"]
			if g, ok := cutGroup(k); ok && slices.Contains(groups, g) {
				out[g] = l
			}
		}
		return out
	}

	frozen := make([]int, len(ms)) // intervals left frozen
	dead := make([]bool, len(ms))
	violations, actions, overtaken := 0, 0, 0
	// check counts, at the current time, the actions the checkers may take,
	// and the ones outside a lease they hold in the API server.
	check := func(step int) (permitted map[string]int) {
		permitted = map[string]int{}
		now := clk.Now()
		ls := byGroup()
		for i, m := range ms {
			if dead[i] || frozen[i] > 0 {
				continue
			}
			for _, g := range groups {
				until, ok := m.Permit(g)
				if !ok {
					continue
				}
				actions++
				permitted[g]++
				l, found := ls[g]
				holder := ""
				if found && l.Spec.HolderIdentity != nil {
					holder = *l.Spec.HolderIdentity
				}
				expMS, _ := strconv.ParseInt(l.Annotations["queue-checker.io/expires"], 10, 64)
				switch {
				case holder == m.Identity() && !time.UnixMilli(expMS).Before(until) && !until.Before(now.Add(deadline)):
				case holder != m.Identity() && until.After(now):
					// Taken (stolen, or deleted or written over by hand)
					// since this checker's last renewal: it acts to the end
					// of the term it wrote, which the new owner waits out
					// (checked below: no two checkers act at once).
					overtaken++
				default:
					violations++
					t.Errorf("step %d: %s may act on %s until %s; the Lease: holder %q, expires %s", step, m.Identity(), g,
						until.Format(time.StampMilli), holder, time.UnixMilli(expMS).Format(time.StampMilli))
				}
			}
		}
		for g, n := range permitted {
			if n > 1 {
				violations++
				t.Errorf("step %d: %d checkers may act on %s at once", step, n, g)
			}
		}
		return permitted
	}
	syncAll := func(step int) {
		thawed := false
		for i := range ms {
			if frozen[i] > 0 {
				frozen[i]--
				thawed = thawed || frozen[i] == 0
			}
		}
		if thawed {
			// Before its first Sync a thawed checker may still believe in
			// its leases: check what it would do now.
			_ = check(step)
		}
		var wg sync.WaitGroup
		for i, m := range ms {
			if !dead[i] && frozen[i] == 0 {
				wg.Go(func() { _ = m.Sync(ctx, clk.Now()) })
			}
		}
		wg.Wait()
	}

	step := 0
	run := func(n int) {
		for range n {
			syncAll(step)
			check(step)
			clk.Add(interval)
			step++
		}
	}
	run(5)
	if p := check(step); len(p) != len(groups) {
		t.Fatalf("after 5 intervals %d of %d groups are acted on", len(p), len(groups))
	}

	// Twenty freezes of 1.5 to 3 lease durations, of each checker in turn,
	// with a Lease deleted or written over by hand now and then.
	for f := range 20 {
		i := f % len(ms)
		frozen[i] = int((1.5 + 1.5*float64(f%4)/3) * float64(duration/interval))
		switch f % 5 {
		case 1:
			if err := leases.Delete(ctx, leaseName(t, byGroup(), groups[f%len(groups)]), metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		case 3:
			ls := byGroup()
			l := ls[groups[(f+1)%len(groups)]]
			intruder := "someone-by-hand"
			l.Spec.HolderIdentity = &intruder
			l.Annotations["queue-checker.io/counter"] = "by hand"
			if _, err := leases.Update(ctx, &l, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		run(frozen[i] + 3)
	}
	// Every group is acted on again within a lease and two intervals of the
	// last thaw (a group handed over to spread the groups waits out the
	// term its last owner wrote); a few intervals more of slack for the
	// API server's own pace on a loaded machine.
	run(3)
	back := false
	for range int(duration/interval) + 2 + 3 {
		run(1)
		if p := check(step); len(p) == len(groups) {
			back = true
			break
		}
	}
	if !back {
		t.Errorf("after the freezes %d of %d groups are acted on", len(check(step)), len(groups))
	}

	// Checker a dies without releasing its leases: every group is acted on
	// again within a lease duration and two intervals.
	dead[0] = true
	died := clk.Now()
	for {
		syncAll(step)
		p := check(step)
		clk.Add(interval)
		step++
		if len(p) == len(groups) {
			t.Logf("every group acted on again %s after a checker died (limit %s)", clk.Now().Sub(died)-interval, duration+2*interval)
			break
		}
		if clk.Now().Sub(died) > duration+2*interval {
			t.Errorf("%d of %d groups acted on %s after a checker died", len(p), len(groups), clk.Now().Sub(died))
			break
		}
	}
	run(4)
	held := map[string]int{}
	for _, m := range ms[1:] {
		for _, g := range groups {
			if m.Status(g).Held {
				held[m.Identity()]++
			}
		}
	}
	for id, n := range held {
		if n != len(groups)/2 {
			t.Errorf("%s holds %d groups, want %d of %d between two checkers: %v", id, n, len(groups)/2, len(groups), held)
		}
	}
	t.Logf("%d intervals, %d action permits checked, %d outside a held lease or doubled, %d within the term of a lease taken since", step, actions, violations, overtaken)
	if violations > 0 {
		t.Errorf("%d actions outside a held lease, want 0", violations)
	}
	for _, m := range ms[1:] {
		if err := m.Release(ctx); err != nil {
			t.Error(err)
		}
	}
}

func cutGroup(key string) (string, bool) {
	const p = "group/"
	if len(key) > len(p) && key[:len(p)] == p {
		return key[len(p):], true
	}
	return "", false
}

// leaseName is the name of group g's Lease as the API server has it.
func leaseName(t *testing.T, ls map[string]coordinationv1.Lease, g string) string {
	t.Helper()
	l, ok := ls[g]
	if !ok {
		t.Fatalf("no Lease for %s", g)
	}
	return l.Name
}
