package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap/zaptest"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/queuechecker/queue-checker/internal/kubetest"
	"github.com/queuechecker/queue-checker/internal/lease"
)

// TestKubernetesLeaseEdges is the Lease path at the edges, on a real API
// server, in a namespace of its own: a ghost heartbeat Lease (no checker
// behind it, its expiry 4.5 minutes ahead) from the start, and, once two
// checkers hold every group, each group's counter annotation rewritten in
// place under its holder to 9223372036854775807, ...806, -1, the smallest
// int64 and a word. Every group is acted on by exactly one checker within
// a lease and two intervals of the start, keeps its holder through the
// rewrites (no lease lost), and is never without an actor for longer than
// a lease and two intervals. Then a second ghost appears as checker b
// dies: b's groups are acted on again within a lease and two intervals.
func TestKubernetesLeaseEdges(t *testing.T) {
	s, admin := cluster(t)
	ns := fmt.Sprintf("lease-edges-%d", time.Now().UnixNano()%1e6)
	admin.Namespace(t, ns)
	c, err := coordclient.NewForConfig(s.Config(kubetest.AdminUser))
	if err != nil {
		t.Fatal(err)
	}
	const (
		interval = time.Second
		duration = 3 * time.Second
		deadline = 800 * time.Millisecond
		bound    = duration + 2*interval
	)
	groups := []string{"g0", "g1", "g2", "g3", "g4"}
	clk := &simClock{now: time.Now().Round(0)}
	start := clk.Now()
	ctx := context.Background()
	leases := c.Leases(ns)
	ghost := func(id string) {
		t.Helper()
		exp := strconv.FormatInt(clk.Now().Add(270*time.Second).UnixMilli(), 10)
		if _, err := leases.Create(ctx, &coordinationv1.Lease{
			// The name a checker's heartbeat has: the key's hash after it.
			ObjectMeta: metav1.ObjectMeta{Name: "queue-checker-checker-" + id + "-" + keyHash("checker/"+id), Annotations: map[string]string{
				"queue-checker.io/key": "checker/" + id, "queue-checker.io/session": "none",
				"queue-checker.io/counter": "1", "queue-checker.io/expires": exp,
			}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &id},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	ghost("ghost")
	var ms []*lease.Manager
	var regs []*prometheus.Registry
	for _, id := range []string{"a", "b"} {
		reg := prometheus.NewRegistry()
		regs = append(regs, reg)
		m, err := lease.NewKubernetes(c, ns, lease.Options{
			Identity: id, Duration: duration, Interval: interval, ActionDeadline: deadline,
			Groups: groups, Logger: zaptest.NewLogger(t).Named(id), Now: clk.Now, Registerer: reg,
		})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	since := map[string]time.Time{}
	longest := map[string]time.Duration{}
	for _, g := range groups {
		since[g] = start
	}
	step := func() {
		t.Helper()
		clk.Add(interval)
		for _, m := range ms {
			if err := m.Sync(ctx, clk.Now()); err != nil {
				t.Errorf("%s: sync: %v", m.Identity(), err)
			}
		}
		now := clk.Now()
		for _, g := range groups {
			actors := 0
			for _, m := range ms {
				if _, ok := m.Permit(g); ok {
					actors++
				}
			}
			if actors > 1 {
				t.Errorf("%s: %d checkers may act at once", g, actors)
			}
			if actors == 1 {
				since[g] = now
			} else {
				longest[g] = max(longest[g], now.Sub(since[g]))
			}
		}
	}
	for clk.Now().Sub(start) < bound {
		step()
	}
	for _, g := range groups {
		if !since[g].Equal(clk.Now()) {
			t.Fatalf("%s: no checker may act %s after the start, with a ghost heartbeat; want one within %s", g, clk.Now().Sub(start), bound)
		}
	}
	holders := func() map[string]string {
		list, err := leases.List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for i := range list.Items {
			l := &list.Items[i]
			if g, ok := cutGroup(l.Annotations["queue-checker.io/key"]); ok && l.Spec.HolderIdentity != nil {
				out[g] = *l.Spec.HolderIdentity
			}
		}
		return out
	}
	before := holders()
	edges := []string{"9223372036854775807", "9223372036854775806", "-1", "-9223372036854775808", "seven"}
	list, err := leases.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		l := &list.Items[i]
		g, ok := cutGroup(l.Annotations["queue-checker.io/key"])
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(g[1:])
		l.Annotations["queue-checker.io/counter"] = edges[n]
		if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		step()
	}
	if after := holders(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("holders %v after the counters were rewritten in place, were %v: want them kept", after, before)
	}
	lost := 0.0
	for _, reg := range regs {
		lost += counterValue(t, reg, "checker_lease_changes_total", "reason", "lost")
	}
	if lost != 0 {
		t.Errorf("%v leases lost through the counters' edges, want 0", lost)
	}

	// b dies; a ghost appears at once, which the groups would be shared
	// with.
	ms = ms[:1]
	ghost("ghost2")
	died := clk.Now()
	for clk.Now().Sub(died) < bound+3*interval {
		step()
	}
	for _, g := range groups {
		if longest[g] > bound {
			t.Errorf("%s: %s without a checker that may act, want at most %s", g, longest[g], bound)
		}
	}
	t.Logf("holders %v; longest time without an actor, by group: %v", holders(), longest)
	for _, m := range ms {
		if err := m.Release(ctx); err != nil {
			t.Error(err)
		}
	}
}

// keyHash is the first four bytes of the SHA-256 of a lease key, in hex,
// as the Lease names end.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:4])
}

// counterValue is the value of the series of a counter with one label, 0
// when absent.
func counterValue(t *testing.T, reg *prometheus.Registry, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
