package main

import (
	"context"
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/kubetest"
)

// hpaPolicy is one of an HPA behaviour's scaling policies.
type hpaPolicy struct {
	pods   bool // Pods, else Percent
	value  int
	period time.Duration
}

// hpaRules are the rules of an HPA scaling on one AverageValue external
// metric with a target of 1, as the Kubernetes documentation and the
// horizontal-pod-autoscaler controller state them: tolerance, the
// stabilisation windows, the rate policies (selectPolicy Max) and the
// bounds.
type hpaRules struct {
	tolUp, tolDown       float64
	upWindow, downWindow time.Duration
	up, down             []hpaPolicy
	min, max             int
}

// defaultHPARules are an HPA's rules without a behaviour: 10 % tolerance,
// 300 s scale-down window, +100 % or +4 pods per 15 s up, -100 % per 15 s
// down.
func defaultHPARules(lo, hi int) hpaRules {
	return hpaRules{tolUp: 0.1, tolDown: 0.1, downWindow: 300 * time.Second,
		up:   []hpaPolicy{{pods: false, value: 100, period: 15 * time.Second}, {pods: true, value: 4, period: 15 * time.Second}},
		down: []hpaPolicy{{pods: false, value: 100, period: 15 * time.Second}},
		min:  lo, max: hi}
}

// shippedHPARules are the default rules with the behaviour of
// deploy/kubernetes/keda/scaledobject.yaml laid over them.
func shippedHPARules(t *testing.T, lo, hi int) hpaRules {
	t.Helper()
	so := kubetest.ReadObject(t, filepath.Join(kubeManifests, "keda", "scaledobject.yaml"))
	r := defaultHPARules(lo, hi)
	behavior, found, _ := unstructured.NestedMap(so.Object, "spec", "advanced", "horizontalPodAutoscalerConfig", "behavior")
	if !found {
		return r
	}
	for dir, into := range map[string]struct {
		tol      *float64
		window   *time.Duration
		policies *[]hpaPolicy
	}{"scaleUp": {&r.tolUp, &r.upWindow, &r.up}, "scaleDown": {&r.tolDown, &r.downWindow, &r.down}} {
		m, ok := behavior[dir].(map[string]any)
		if !ok {
			continue
		}
		if v, ok := m["tolerance"]; ok {
			f, err := strconv.ParseFloat(v.(string), 64)
			if err != nil {
				t.Fatalf("%s.tolerance %v: %v", dir, v, err)
			}
			*into.tol = f
		}
		if v, ok := m["stabilizationWindowSeconds"].(int64); ok {
			*into.window = time.Duration(v) * time.Second
		}
		if ps, ok := m["policies"].([]any); ok {
			*into.policies = nil
			for _, p := range ps {
				pm := p.(map[string]any)
				*into.policies = append(*into.policies, hpaPolicy{pods: pm["type"] == "Pods", value: int(pm["value"].(int64)),
					period: time.Duration(pm["periodSeconds"].(int64)) * time.Second})
			}
		}
	}
	return r
}

type hpaEvent struct {
	at     time.Time
	change int // > 0 up, < 0 down
}

type hpaRec struct {
	at       time.Time
	replicas int
}

// hpa follows the rules from replicas.
type hpa struct {
	rules    hpaRules
	replicas int
	recs     []hpaRec
	events   []hpaEvent
}

// sync is one of the controller's syncs at now, with the metric's value:
// the replica calculator with its tolerance, the stabilisation of the
// recommendation, then the rate policies and the bounds.
func (h *hpa) sync(now time.Time, metric float64) int {
	r, cur := h.rules, h.replicas
	desired := cur
	ratio := metric / float64(cur)
	if (ratio > 1 && ratio-1 > r.tolUp) || (ratio < 1 && 1-ratio > r.tolDown) {
		desired = int(math.Ceil(metric))
	}
	desired = min(max(desired, r.min), r.max)

	h.recs = append(h.recs, hpaRec{now, desired})
	up, down := desired, desired
	keep := h.recs[:0]
	for _, rec := range h.recs {
		if rec.at.After(now.Add(-r.upWindow)) {
			up = min(up, rec.replicas)
		}
		if rec.at.After(now.Add(-r.downWindow)) {
			down = max(down, rec.replicas)
		}
		if rec.at.After(now.Add(-max(r.upWindow, r.downWindow))) || rec.at.Equal(now) {
			keep = append(keep, rec)
		}
	}
	h.recs = keep
	rec := cur
	if rec < up {
		rec = up
	}
	if rec > down {
		rec = down
	}

	// inPeriod sums the replicas added and deleted within a period.
	inPeriod := func(p time.Duration) (int, int) {
		a, d := 0, 0
		for _, e := range h.events {
			if e.at.After(now.Add(-p)) {
				if e.change > 0 {
					a += e.change
				} else {
					d -= e.change
				}
			}
		}
		return a, d
	}
	switch {
	case rec > cur:
		limit := math.MinInt
		for _, p := range r.up {
			a, d := inPeriod(p.period)
			start := cur - a + d
			proposed := start + p.value
			if !p.pods {
				proposed = int(math.Ceil(float64(start) * (1 + float64(p.value)/100)))
			}
			limit = max(limit, proposed)
		}
		rec = min(rec, limit, r.max)
	case rec < cur:
		limit := math.MaxInt
		for _, p := range r.down {
			a, d := inPeriod(p.period)
			start := cur + d - a
			proposed := start - p.value
			if !p.pods {
				proposed = int(float64(start) * (1 - float64(p.value)/100))
			}
			limit = min(limit, proposed)
		}
		rec = max(rec, limit, r.min)
	}
	if rec != cur {
		h.events = append(h.events, hpaEvent{now, rec - cur})
	}
	h.replicas = rec
	return rec
}

func repeat[T any](v T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestHPARules checks the replay's HPA against the documented examples.
func TestHPARules(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name    string
		from    int
		metrics []float64 // one per 15 s sync
		want    []int
	}{
		{"within the 10 % tolerance, kept", 20, []float64{21, 21.9, 18.1}, []int{20, 20, 20}},
		{"beyond it, applied", 20, []float64{23}, []int{23}},
		{"up by +100 % or +4 per 15 s, whichever is more", 1, []float64{50, 50, 50, 50}, []int{5, 10, 20, 40}},
		{"down held by the 300 s window", 15, append([]float64{15}, repeat(3.0, 20)...), append(repeat(15, 20), 3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &hpa{rules: defaultHPARules(1, 100), replicas: tt.from}
			for i, m := range tt.metrics {
				if got := h.sync(at(15*i), m); got != tt.want[i] {
					t.Fatalf("sync %d on %v: %d replicas, want %d", i, m, got, tt.want[i])
				}
			}
		})
	}
}

// TestHPAReplayFollowsTheChecker replays an hour of the demo's decisions
// through the HPA's rules, syncing every 15 s on the checker's answer
// (GetMetrics is the decided count): with the shipped ScaledObject's
// behaviour the HPA's replicas equal the checker's count at every sync;
// with an HPA's defaults they do not (which shows the replay can tell).
func TestHPAReplayFollowsTheChecker(t *testing.T) {
	t.Parallel()
	const interval = 5 * time.Second
	start := time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)
	worlds, settings, err := newDemoWorlds(start, interval, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctrl, err := controller.New(controller.Options{Groups: settings, Observer: worlds, Actuator: worlds})
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ shipped, defaults *hpa }
	hpas := map[string]pair{}
	for _, s := range settings {
		hpas[s.Group] = pair{&hpa{rules: shippedHPARules(t, max(s.Min, 1), s.Max)}, &hpa{rules: defaultHPARules(max(s.Min, 1), s.Max)}}
	}
	syncs := map[string]int{}
	equal := map[string][2]int{}
	for now := start; now.Before(start.Add(time.Hour)); now = now.Add(interval) {
		if _, err := ctrl.RunOnce(context.Background(), now); err != nil {
			t.Fatal(err)
		}
		if now.Sub(start)%(15*time.Second) != 0 {
			continue
		}
		for g, h := range hpas {
			l, ok := ctrl.Views().Latest(g)
			if !ok || l.Decision == nil || l.Decision.DesiredWorkers < 1 {
				continue // KEDA's activation, not the HPA, rules 0 <-> 1
			}
			want := l.Decision.DesiredWorkers
			if h.shipped.replicas == 0 {
				h.shipped.replicas, h.defaults.replicas = want, want
			}
			syncs[g]++
			e := equal[g]
			if got := h.shipped.sync(now, float64(want)); got == want {
				e[0]++
			} else {
				t.Errorf("%s at %s: the checker says %d, the HPA with the shipped behaviour %d", g, now.Sub(start), want, got)
			}
			if h.defaults.sync(now, float64(want)) == want {
				e[1]++
			}
			equal[g] = e
		}
	}
	for g, n := range syncs {
		e := equal[g]
		t.Logf("%s: %d syncs; the HPA equals the checker in %d (%.0f %%) with the shipped behaviour, %d (%.0f %%) with the defaults",
			g, n, e[0], 100*float64(e[0])/float64(n), e[1], 100*float64(e[1])/float64(n))
		if n < 200 {
			t.Errorf("%s: only %d syncs compared", g, n)
		}
		if e[1] == n {
			t.Errorf("%s: the default rules also follow the checker at every sync: the replay shows nothing", g)
		}
	}
}
