package kube

import (
	"path/filepath"
	"reflect"
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

// TestManifestConfig: the checker's configuration in the base's
// configmap.yaml is valid and scales every group's workload itself, with
// no KEDA; the keda component's is the base's with the scaler on and its
// KEDA group only reading its workload, which the component's ScaledObject
// scales; the worker Deployments are the groups' workloads.
func TestManifestConfig(t *testing.T) {
	t.Parallel()
	cfg := manifestConfig(t, "configmap.yaml")
	if cfg.KEDA.Listen != "" {
		t.Errorf("the base serves KEDA's scaler (keda.listen %s): the base is for clusters without KEDA", cfg.KEDA.Listen)
	}
	for _, g := range cfg.Groups {
		k := g.Fleet.Kubernetes
		if k == nil {
			t.Errorf("group %s has no Kubernetes fleet", g.Name)
			continue
		}
		if !g.Actions.SetDesiredCapacity {
			t.Errorf("group %s: the base has no KEDA, so the checker must scale it (set_desired_capacity: true)", g.Name)
		}
		w := readManifest(t, "worker-"+k.Deployment+".yaml")
		if w.GetNamespace() != k.Namespace || w.GetKind() != "Deployment" {
			t.Errorf("group %s's workload %s/%s: worker file has %s %s/%s", g.Name, k.Namespace, k.Deployment, w.GetKind(), w.GetNamespace(), w.GetName())
		}
		grace, _, _ := unstructured.NestedInt64(w.Object, "spec", "template", "spec", "terminationGracePeriodSeconds")
		if st := g.Workers.ServiceTime.Seconds(); float64(grace) <= st+20 {
			t.Errorf("%s: terminationGracePeriodSeconds %d, want above the service time (%vs) plus a 20 s long poll", w.GetName(), grace, st)
		}
	}
	replicas, _, _ := unstructured.NestedInt64(readManifest(t, "deployment.yaml").Object, "spec", "replicas")
	if replicas != 1 && cfg.Coordination == nil {
		t.Errorf("the checker's Deployment has %d replicas without a coordination block", replicas)
	}

	keda := manifestConfig(t, "keda/configmap.yaml")
	if keda.KEDA.Listen == "" {
		t.Error("the keda component's keda.listen is empty: the ScaledObject would find no scaler")
	}
	so := readManifest(t, "keda/scaledobject.yaml")
	triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
	if len(triggers) != 1 {
		t.Fatalf("ScaledObject triggers: %v", triggers)
	}
	md, _, _ := unstructured.NestedStringMap(triggers[0].(map[string]any), "metadata")
	target, _, _ := unstructured.NestedString(so.Object, "spec", "scaleTargetRef", "name")
	direct := 0
	for i, g := range keda.Groups {
		if g.Actions.SetDesiredCapacity {
			direct++
		}
		if g.Name != md["group"] {
			continue
		}
		switch k := g.Fleet.Kubernetes; {
		case g.Actions.SetDesiredCapacity:
			t.Errorf("group %s is scaled by KEDA and by the checker: set_desired_capacity must be false", g.Name)
		case k == nil || k.Deployment != target || k.Namespace != so.GetNamespace():
			t.Errorf("group %s reads %+v; the ScaledObject scales %s/%s", g.Name, k, so.GetNamespace(), target)
		}
		// Otherwise the base's group, with KEDA in place of the checker.
		keda.Groups[i].Actions.SetDesiredCapacity = true
	}
	if direct == 0 {
		t.Error("no group of the keda component scales its workload directly: the example shows both ways")
	}
	keda.KEDA = cfg.KEDA
	if !reflect.DeepEqual(keda, cfg) {
		t.Error("keda/configmap.yaml differs from the base's configmap.yaml by more than keda.listen and its KEDA group's set_desired_capacity")
	}
}
