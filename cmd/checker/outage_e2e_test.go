package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/kubetest"
)

// TestE2EAWSOutageProbes: AWS goes away (every request to the endpoint
// has its connection closed unanswered) for 60 intervals, 5 minutes of
// the shipped 5 s interval, under a checker that scales one Deployment
// directly and answers KEDA for another. Throughout, /livez (the
// Deployment's liveness and startup probe) stays 200, so Kubernetes
// restarts nothing; /readyz is 503 within a few intervals and says why;
// neither spec.replicas nor the GetMetrics answer drops (the test sets the
// KEDA group's replicas to its answers, as the HPA does), and GetMetrics
// never errs (KEDA's fallback would act). Once AWS is back, /readyz is 200
// again.
func TestE2EAWSOutageProbes(t *testing.T) {
	f := direct(t)
	proxy := awstest.NewProxy(t, awstest.Shared(t).URL)
	const ns, interval = "workers", time.Second
	const outage = 60 * interval
	// Work waiting and work in flight: the fleet is consuming, and the
	// decided count is above min.
	qd := makeQueue(t, f, queueSpec{region: east, visible: 40, inFlight: 4})
	qk := makeQueue(t, f, queueSpec{region: east, visible: 40, inFlight: 4})
	admin, d, addr := startKubeChecker(t, interval, proxy.URL, ns, qd, qk, "/readyz")
	scaler := dialScaler(t, addr)
	ref := &pb.ScaledObjectRef{Name: "viakeda", Namespace: ns, ScalerMetadata: map[string]string{"group": "viakeda"}}
	metric := func() (float64, error) {
		m, err := scaler.GetMetrics(context.Background(), &pb.GetMetricsRequest{ScaledObjectRef: ref})
		if err != nil {
			return 0, err
		}
		return m.MetricValues[0].MetricValueFloat, nil
	}
	replicas := func() int { return admin.DeploymentReplicas(t, ns, "direct") }
	// KEDA's HPA with the shipped behaviour sets the answer as replicas.
	hpa := func(m float64) {
		if int(m) != admin.DeploymentReplicas(t, ns, "viakeda") {
			scaleDeployment(t, admin, ns, "viakeda", int(m))
			admin.SetDeploymentStatus(t, ns, "viakeda", int(m), int(m))
		}
	}

	// Both counts settle above min before AWS goes.
	var r0 int
	var m0 float64
	stableSince := time.Now()
	eventually(t, 30*time.Second, "both counts settled above 1", func() bool {
		r := replicas()
		m, err := metric()
		if err == nil {
			hpa(m)
		}
		if err != nil || r != r0 || m != m0 || r < 2 || m < 2 {
			r0, m0, stableSince = r, m, time.Now()
			return false
		}
		return time.Since(stableSince) >= 3*interval
	})
	t.Logf("before the outage: spec.replicas %d, GetMetrics %v", r0, m0)

	remove := proxy.Inject(awstest.MatchAll(), awstest.Fault{Kind: awstest.FaultReset})
	start := time.Now()
	var notLive, live, notReady, polls, metricErrs int
	var reason string
	minReplicas, minMetric := r0, m0
	for time.Since(start) < outage {
		polls++
		code, body := d.get(t, "/livez")
		if code != http.StatusOK {
			notLive++
			t.Errorf("%s into the outage: /livez %d %q", time.Since(start).Round(time.Millisecond), code, strings.TrimSpace(body))
		} else {
			live++
		}
		if code, body := d.get(t, "/readyz"); code == http.StatusServiceUnavailable {
			notReady++
			reason = strings.TrimSpace(body)
		} else if time.Since(start) > 5*interval {
			t.Errorf("%s into the outage: /readyz %d %q, want 503", time.Since(start).Round(time.Millisecond), code, strings.TrimSpace(body))
		}
		minReplicas = min(minReplicas, replicas())
		if m, err := metric(); err != nil {
			metricErrs++
			t.Errorf("GetMetrics during the outage: %v", err)
		} else {
			minMetric = min(minMetric, m)
			hpa(m)
		}
		time.Sleep(250 * time.Millisecond)
	}
	resets := proxy.Injected(awstest.FaultReset)
	remove()
	t.Logf("%s of outage, %d requests reset: %d polls, /livez 200 in %d, 503 in %d; /readyz 503 in %d (%q); lowest spec.replicas %d (was %d), lowest GetMetrics %v (was %v), %d GetMetrics errors",
		outage, resets, polls, live, notLive, notReady, reason, minReplicas, r0, minMetric, m0, metricErrs)
	if resets == 0 {
		t.Fatal("no request reached the failing endpoint: the outage did not happen")
	}
	if notReady == 0 || !strings.Contains(reason, "last good cycle") || !strings.Contains(reason, "no queue of group") {
		t.Errorf("/readyz during the outage: 503 in %d polls, last body %q; want 503 naming the last good cycle and the queues' error", notReady, reason)
	}
	if minReplicas < r0 {
		t.Errorf("spec.replicas went down to %d from %d while AWS was gone", minReplicas, r0)
	}
	if minMetric < m0 {
		t.Errorf("GetMetrics went down to %v from %v while AWS was gone", minMetric, m0)
	}
	eventually(t, 10*interval, "/readyz 200 after the outage", func() bool {
		code, _ := d.get(t, "/readyz")
		return code == http.StatusOK
	})
	if code := d.stop(t); code != 0 {
		t.Errorf("run exited %d, want 0", code)
	}
}

// scaleDeployment sets a Deployment's spec.replicas, as an HPA does.
func scaleDeployment(t *testing.T, c *kubetest.Client, ns, name string, n int) {
	t.Helper()
	r := c.Dynamic.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace(ns)
	d, err := r.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(d.Object, int64(n), "spec", "replicas"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Update(context.Background(), d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
