package kube

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestManifestProbes: the checker's Deployment restarts it only when its
// loop is wedged (/livez, behind a startup probe), never for an AWS error
// (/readyz says those), and its Service publishes it while not ready, so
// KEDA and Prometheus still read a checker that holds its counts.
func TestManifestProbes(t *testing.T) {
	t.Parallel()
	containers, _, _ := unstructured.NestedSlice(readManifest(t, "deployment.yaml").Object, "spec", "template", "spec", "containers")
	if len(containers) != 1 {
		t.Fatalf("%d containers, want 1", len(containers))
	}
	c := containers[0].(map[string]any)
	for probe, path := range map[string]string{"startupProbe": "/livez", "livenessProbe": "/livez", "readinessProbe": "/readyz"} {
		got, _, _ := unstructured.NestedString(c, probe, "httpGet", "path")
		if got != path {
			t.Errorf("%s probes %q, want %q", probe, got, path)
		}
	}
	period, _, _ := unstructured.NestedInt64(c, "startupProbe", "periodSeconds")
	failures, _, _ := unstructured.NestedInt64(c, "startupProbe", "failureThreshold")
	if period*failures < 30 {
		t.Errorf("the startup probe gives the first cycle %d s, want 30 s or more", period*failures)
	}
	publish, _, _ := unstructured.NestedBool(readManifest(t, "service.yaml").Object, "spec", "publishNotReadyAddresses")
	if !publish {
		t.Error("the Service does not publish a checker that is not ready: KEDA would lose its held answers to its fallback")
	}
}
