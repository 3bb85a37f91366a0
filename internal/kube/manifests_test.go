package kube

import (
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/kubetest"
)

// readManifest is the one object of the manifest file name under
// deploy/kubernetes.
func readManifest(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	return kubetest.ReadObject(t, filepath.Join(manifests, name))
}

// manifestConfig is the checker's configuration in the ConfigMap of the
// manifest file name (its config.yaml), parsed and validated.
func manifestConfig(t *testing.T, name string) config.Config {
	t.Helper()
	doc, _, _ := unstructured.NestedString(readManifest(t, name).Object, "data", "config.yaml")
	cfg, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("%s's config.yaml: %v", name, err)
	}
	return cfg
}

// TestManifestConfig: the checker's configuration in configmap.yaml is
// valid, its KEDA group only reads its workload and its direct group
// scales its own, and the ScaledObject and the worker Deployments name
// the same groups and workloads.
func TestManifestConfig(t *testing.T) {
	t.Parallel()
	cfg := manifestConfig(t, "configmap.yaml")
	if cfg.KEDA.Listen == "" {
		t.Error("keda.listen is empty: the ScaledObject would find no scaler")
	}
	so := readManifest(t, "scaledobject.yaml")
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if len(triggers) != 1 {
		t.Fatalf("ScaledObject triggers: %v", triggers)
	}
	md, _, _ := unstructured.NestedStringMap(triggers[0].(map[string]any), "metadata")
	target, _, _ := unstructured.NestedString(so.Object, "spec", "scaleTargetRef", "name")
	byName := map[string]config.Group{}
	for _, g := range cfg.Groups {
		byName[g.Name] = g
	}
	kg, ok := byName[md["group"]]
	switch {
	case !ok:
		t.Errorf("ScaledObject asks for group %q; the config has none", md["group"])
	case kg.Actions.SetDesiredCapacity:
		t.Errorf("group %s is scaled by KEDA and by the checker: set_desired_capacity must be false", kg.Name)
	case kg.Fleet.Kubernetes == nil || kg.Fleet.Kubernetes.Deployment != target || kg.Fleet.Kubernetes.Namespace != so.GetNamespace():
		t.Errorf("group %s reads %+v; the ScaledObject scales %s/%s", kg.Name, kg.Fleet.Kubernetes, so.GetNamespace(), target)
	}
	direct := 0
	for _, g := range cfg.Groups {
		k := g.Fleet.Kubernetes
		if k == nil {
			t.Errorf("group %s has no Kubernetes fleet", g.Name)
			continue
		}
		w := readManifest(t, "worker-"+k.Deployment+".yaml")
		if w.GetNamespace() != k.Namespace || w.GetKind() != "Deployment" {
			t.Errorf("group %s's workload %s/%s: worker file has %s %s/%s", g.Name, k.Namespace, k.Deployment, w.GetKind(), w.GetNamespace(), w.GetName())
		}
		grace, _, _ := unstructured.NestedInt64(w.Object, "spec", "template", "spec", "terminationGracePeriodSeconds")
		if st := g.Workers.ServiceTime.Seconds(); float64(grace) <= st+20 {
			t.Errorf("%s: terminationGracePeriodSeconds %d, want above the service time (%vs) plus a 20 s long poll", w.GetName(), grace, st)
		}
		if g.Actions.SetDesiredCapacity {
			direct++
		}
	}
	if direct == 0 {
		t.Error("no group scales its workload directly: the example shows both ways")
	}
	replicas, _, _ := unstructured.NestedInt64(readManifest(t, "deployment.yaml").Object, "spec", "replicas")
	if replicas != 1 && cfg.Coordination == nil {
		t.Errorf("the checker's Deployment has %d replicas without a coordination block", replicas)
	}
}
