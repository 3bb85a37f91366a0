package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/queuechecker/queue-checker/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// manifests is deploy/kubernetes, seen from this package.
const manifests = "../../deploy/kubernetes"

// workers is the workers' namespace of deploy/kubernetes, where its Role
// grants the checker's service account what the checker calls.
const workers = "workers"

var rbacOnce sync.Once

// cluster returns the shared API server and an admin client, with
// deploy/kubernetes's namespaces, service account, Role and RoleBinding
// applied for real, so that the checker's token has exactly the Role.
func cluster(t *testing.T) (*kubetest.Server, *kubetest.Client) {
	t.Helper()
	s := kubetest.Shared(t)
	admin := kubetest.NewClient(t, s.Config(kubetest.AdminUser))
	rbacOnce.Do(func() {
		for _, f := range []string{"namespace-checker.yaml", "namespace-workers.yaml", "serviceaccount.yaml", "role.yaml", "rolebinding.yaml"} {
			b, err := os.ReadFile(filepath.Join(manifests, f))
			if err != nil {
				t.Fatal(err)
			}
			admin.MustApply(t, string(b))
		}
	})
	return s, admin
}

// recorder notes the requests a client makes as RBAC sees them: API
// group, resource (with subresource) and verb.
type recorder struct {
	mu    sync.Mutex
	calls map[Call]int
}

func (r *recorder) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			if c, ok := callOf(req); ok {
				r.mu.Lock()
				if r.calls == nil {
					r.calls = map[Call]int{}
				}
				r.calls[c]++
				r.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	}
	return cfg
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// callOf parses a resource request's path (/api/v1/namespaces/NS/pods,
// /apis/apps/v1/namespaces/NS/deployments/NAME/scale); discovery and other
// non-resource requests are not calls.
func callOf(req *http.Request) (Call, bool) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	var group string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, parts = parts[1], parts[3:]
	default:
		return Call{}, false
	}
	if len(parts) >= 2 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	if len(parts) == 0 {
		return Call{}, false
	}
	resource, named := parts[0], len(parts) > 1
	if len(parts) > 2 {
		resource += "/" + parts[2]
	}
	verb := map[string]string{http.MethodGet: "get", http.MethodPut: "update", http.MethodPost: "create",
		http.MethodPatch: "patch", http.MethodDelete: "delete"}[req.Method]
	if req.Method == http.MethodGet && !named {
		verb = "list"
	}
	return Call{Group: group, Resource: resource, Verb: verb}, true
}

var statefulsetsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}

// statefulSet creates a StatefulSet and writes its status.
func statefulSet(t *testing.T, admin *kubetest.Client, name string, replicas, ready int) {
	t.Helper()
	admin.MustApply(t, `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: `+name+`, namespace: `+workers+`, annotations: {queue-checker/scale-in: "no"}}
spec:
  replicas: 3
  serviceName: `+name+`
  selector: {matchLabels: {app: `+name+`}}
  template:
    metadata: {labels: {app: `+name+`}}
    spec: {containers: [{name: worker, image: example.com/worker:1}]}
`)
	ctx := context.Background()
	r := admin.Dynamic.Resource(statefulsetsGVR).Namespace(workers)
	s, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedMap(s.Object, map[string]any{"replicas": int64(replicas), "readyReplicas": int64(ready),
		"availableReplicas": int64(ready), "observedGeneration": s.GetGeneration()}, "status")
	if _, err := r.UpdateStatus(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestReadAndScaleWithTheRole reads and scales a Deployment and a
// StatefulSet on a real API server as the checker's service account,
// holding deploy/kubernetes's Role and nothing else: a verb the Role
// lacks fails the test. The requests made are exactly Calls, and Calls
// exactly what the Role grants.
func TestReadAndScaleWithTheRole(t *testing.T) {
	s, admin := cluster(t)
	rec := &recorder{}
	c, err := New(rec.wrap(s.Config(kubetest.CheckerUser)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	admin.Deployment(t, workers, "rw-deploy", 3, map[string]string{"queue-checker/pin": "4", "unrelated": "x"})
	admin.SetDeploymentStatus(t, workers, "rw-deploy", 3, 2)
	admin.TerminatingPods(t, workers, "rw-deploy", 2)
	dep := Ref{Namespace: workers, APIVersion: "apps/v1", Kind: "Deployment", Name: "rw-deploy"}
	w, err := c.Read(ctx, dep)
	if err != nil {
		t.Fatal(err)
	}
	if w.Desired != 3 || w.Replicas != 3 || w.Ready != 2 || w.Terminating != 2 || w.Annotations["queue-checker/pin"] != "4" || len(w.Annotations) != 1 {
		t.Errorf("read %+v, want desired 3, replicas 3, ready 2, 2 terminating, the pin annotation alone", w)
	}
	if err := c.Scale(ctx, dep, 7); err != nil {
		t.Fatal(err)
	}
	if got := admin.DeploymentReplicas(t, workers, "rw-deploy"); got != 7 {
		t.Errorf("after Scale(7): spec.replicas %d", got)
	}

	statefulSet(t, admin, "rw-sts", 3, 3)
	sts := Ref{Namespace: workers, APIVersion: "apps/v1", Kind: "StatefulSet", Name: "rw-sts"}
	w, err = c.Read(ctx, sts)
	if err != nil {
		t.Fatal(err)
	}
	if w.Desired != 3 || w.Ready != 3 || w.Terminating != 0 || w.Annotations["queue-checker/scale-in"] != "no" {
		t.Errorf("statefulset read %+v, want desired 3, ready 3, the scale-in annotation", w)
	}
	if err := c.Scale(ctx, sts, 0); err != nil {
		t.Fatal(err)
	}
	if w, err = c.Read(ctx, sts); err != nil || w.Desired != 0 {
		t.Errorf("after Scale(0): %+v, %v", w, err)
	}

	// Outside the Role's namespace the same calls are refused.
	admin.Namespace(t, "elsewhere")
	admin.Deployment(t, "elsewhere", "other", 1, nil)
	if _, err := c.Read(ctx, Ref{Namespace: "elsewhere", APIVersion: "apps/v1", Kind: "Deployment", Name: "other"}); err == nil || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("read in a namespace the Role does not cover: %v, want forbidden", err)
	}

	var made []Call
	rec.mu.Lock()
	for call := range rec.calls {
		made = append(made, call)
	}
	rec.mu.Unlock()
	sortCalls(made)
	want := slices.Clone(Calls)
	sortCalls(want)
	if !slices.Equal(made, want) {
		t.Errorf("calls made:\n %v\nCalls lists:\n %v", made, want)
	}
	if granted := roleGrants(t); !slices.Equal(granted, want) {
		t.Errorf("role.yaml grants:\n %v\nthe code calls:\n %v", granted, want)
	}
}

func sortCalls(cs []Call) {
	slices.SortFunc(cs, func(a, b Call) int {
		return strings.Compare(a.Group+" "+a.Resource+" "+a.Verb, b.Group+" "+b.Resource+" "+b.Verb)
	})
}

// roleGrants expands role.yaml's rules into calls.
func roleGrants(t *testing.T) []Call {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(manifests, "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.Decode(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("role.yaml: %v", err)
	}
	rules, _, _ := unstructured.NestedSlice(objs[0].Object, "rules")
	var out []Call
	for _, r := range rules {
		m := r.(map[string]any)
		strs := func(k string) []string {
			v, _, _ := unstructured.NestedStringSlice(m, k)
			return v
		}
		if len(strs("resourceNames")) > 0 || len(strs("nonResourceURLs")) > 0 {
			t.Errorf("rule %v: resourceNames or nonResourceURLs, not handled", m)
		}
		for _, g := range strs("apiGroups") {
			for _, res := range strs("resources") {
				for _, v := range strs("verbs") {
					out = append(out, Call{Group: g, Resource: res, Verb: v})
				}
			}
		}
	}
	sortCalls(out)
	return out
}

// TestHPARefusesDirectScaling: a Deployment an HPA targets is not scaled
// directly: Scale fails with ErrConflict, naming the HPA, and the replicas
// stay; without the HPA it scales.
func TestHPARefusesDirectScaling(t *testing.T) {
	s, admin := cluster(t)
	c, err := New(s.Config(kubetest.CheckerUser))
	if err != nil {
		t.Fatal(err)
	}
	admin.Deployment(t, workers, "hpa-target", 2, nil)
	admin.MustApply(t, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: keda-hpa-hpa-target, namespace: `+workers+`}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: hpa-target}
  minReplicas: 1
  maxReplicas: 10
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
`)
	ref := Ref{Namespace: workers, APIVersion: "apps/v1", Kind: "Deployment", Name: "hpa-target"}
	err = c.Scale(context.Background(), ref, 6)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "keda-hpa-hpa-target") || !strings.Contains(err.Error(), "set_desired_capacity: false") {
		t.Errorf("Scale with an HPA on the target: %v; want ErrConflict naming the HPA and the way out", err)
	}
	if got := admin.DeploymentReplicas(t, workers, "hpa-target"); got != 2 {
		t.Errorf("replicas %d after a refused scale, want 2", got)
	}
	// An HPA on another workload is no conflict.
	admin.Deployment(t, workers, "hpa-free", 1, nil)
	if err := c.Scale(context.Background(), Ref{Namespace: workers, APIVersion: "apps/v1", Kind: "Deployment", Name: "hpa-free"}, 3); err != nil {
		t.Errorf("Scale of a workload no HPA targets: %v", err)
	}
}

// TestManifestsDryRun: every manifest of the base in deploy/kubernetes is
// accepted by the API server's server-side dry run, and kustomization.yaml
// lists every one of them; on a cluster with KEDA's CRDs (from its
// module), so are the base as kustomize builds it, with the keda
// component, with keda and keda-tls, and the example overlay.
func TestManifestsDryRun(t *testing.T) {
	_, admin := cluster(t)
	for _, crd := range kubetest.KEDACRDs(t) {
		admin.MustApply(t, crd)
	}
	admin.WaitForResource(t, "keda.sh/v1alpha1", "ScaledObject")
	admin.WaitForResource(t, "keda.sh/v1alpha1", "TriggerAuthentication")

	files, err := filepath.Glob(filepath.Join(manifests, "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("manifests: %v, %d files", err, len(files))
	}
	var listed []string
	for _, f := range files {
		base := filepath.Base(f)
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := kubetest.Decode(b)
		if err != nil || len(objs) == 0 {
			t.Fatalf("%s: %v (%d objects)", base, err, len(objs))
		}
		if base == "kustomization.yaml" {
			listed, _, _ = unstructured.NestedStringSlice(objs[0].Object, "resources")
			continue
		}
		if o := objs[0]; o.GetAPIVersion() == "keda.sh/v1alpha1" {
			t.Errorf("%s: a %s in the base: a cluster without KEDA refuses it; it belongs in the keda component", base, o.GetKind())
		}
		for _, o := range objs {
			if err := admin.Create(context.Background(), o, true); err != nil {
				t.Errorf("%s: dry run: %v", base, err)
			}
		}
	}
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" && !slices.Contains(listed, base) {
			t.Errorf("kustomization.yaml does not list %s", base)
		}
	}

	for _, v := range kustomizations {
		t.Run(v.name, func(t *testing.T) {
			built := kustomize(t, v.dir, v.components...)
			kinds := map[string]int{}
			for _, o := range built {
				kinds[o.GetKind()]++
				if err := admin.Create(context.Background(), o, true); err != nil {
					t.Errorf("%s %s/%s: dry run: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
				if o.GetKind() == "ScaledObject" {
					triggers, _, _ := unstructured.NestedSlice(o.Object, "spec", "triggers")
					_, tls, _ := unstructured.NestedString(triggers[0].(map[string]any), "authenticationRef", "name")
					if len(triggers) != 1 || tls != slices.Contains(v.components, "keda-tls") {
						t.Errorf("the ScaledObject's triggers %v: want one, with an authenticationRef only with keda-tls", triggers)
					}
				}
			}
			if kinds["ScaledObject"] != v.scaledObjects || kinds["Deployment"] != 3 || kinds["Service"] != 1 {
				t.Errorf("built %v: want %d ScaledObject, 3 Deployments and a Service", kinds, v.scaledObjects)
			}
		})
	}

	// The dry run is a real check: a ScaledObject with a number in its
	// trigger metadata (KEDA wants strings) is refused.
	bad := `apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: bad, namespace: workers}
spec:
  scaleTargetRef: {name: thumbnails}
  triggers: [{type: external, metadata: {scalerAddress: "x:9103", group: 5}}]
`
	objs, _ := kubetest.Decode([]byte(bad))
	if err := admin.Create(context.Background(), objs[0], true); err == nil {
		t.Error("a ScaledObject with a number in trigger metadata passed the dry run")
	}
}

// kustomizations are the ways deploy/kubernetes is meant to be applied:
// the base, with the keda component, with keda and keda-tls, and the
// example overlay (its own directory), with the ScaledObjects each has.
var kustomizations = []struct {
	name          string
	dir           string
	components    []string
	scaledObjects int
	needsKEDA     bool
}{
	{name: "base", dir: manifests},
	{name: "keda", dir: manifests, components: []string{"keda"}, scaledObjects: 1, needsKEDA: true},
	{name: "keda-tls", dir: manifests, components: []string{"keda", "keda-tls"}, scaledObjects: 1, needsKEDA: true},
	{name: "example overlay", dir: "../../examples/kubernetes-overlay"},
}

// TestManifestsWithoutKEDA: on a cluster without KEDA's CRDs (an API
// server of its own) the base and the example overlay apply for real,
// every object; with the keda component only its ScaledObject is
// refused, as kubectl apply -k would be.
func TestManifestsWithoutKEDA(t *testing.T) {
	s := kubetest.StartT(t)
	admin := kubetest.NewClient(t, s.Config(kubetest.AdminUser))
	ctx := context.Background()
	for _, v := range kustomizations {
		t.Run(v.name, func(t *testing.T) {
			built := kustomize(t, v.dir, v.components...)
			kedas, refused := 0, 0
			for _, o := range built {
				// For real where the cluster takes everything: the
				// namespaces first (kustomize orders them so), then what
				// lives in them; a dry run where it cannot.
				err := admin.Create(ctx, o, v.needsKEDA)
				keda := strings.HasPrefix(o.GetAPIVersion(), "keda.sh/")
				if keda {
					kedas++
				}
				switch {
				case keda && err != nil && strings.Contains(err.Error(), "no matches for kind"):
					refused++
				case err != nil:
					t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				case keda:
					t.Errorf("a %s was accepted by a cluster without KEDA's CRDs", o.GetKind())
				}
			}
			if refused != kedas || (kedas > 0) != v.needsKEDA {
				t.Errorf("%d of %d KEDA objects refused; want them all, and some only where KEDA is needed (%v)", refused, kedas, v.needsKEDA)
			}
		})
	}
	if got := admin.DeploymentReplicas(t, workers, "thumbnails"); got != 1 {
		t.Errorf("the base's thumbnails workers: %d replicas, want the 1 applied", got)
	}
}

// kustomize builds dir with components (directories under dir) through
// kubectl's kustomize, as kubectl apply -k would. Without kubectl the
// test is skipped, or fails when CI is set.
func kustomize(t *testing.T, dir string, components ...string) []*unstructured.Unstructured {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is not installed: the kustomizations cannot be built")
		}
		t.Skip("kubectl is not installed: the kustomizations are not built")
	}
	build := dir
	if len(components) > 0 {
		build = t.TempDir()
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := filepath.Rel(build, abs)
		if err != nil {
			t.Fatal(err)
		}
		var cs []string
		for _, c := range components {
			cs = append(cs, filepath.Join(rel, c))
		}
		k := "resources: [" + rel + "]\ncomponents: [" + strings.Join(cs, ", ") + "]\n"
		if err := os.WriteFile(filepath.Join(build, "kustomization.yaml"), []byte(k), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(kubectl, "kustomize", "--load-restrictor", "LoadRestrictionsNone", build).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("kubectl kustomize %s with %v: %v\n%s", dir, components, err, stderr)
	}
	objs, err := kubetest.Decode(out)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// TestHPATolerance: the API server keeps an HPA's per-direction tolerance
// (HPAConfigurableTolerance: beta and on by default from Kubernetes 1.35,
// GA in 1.37), which the shipped ScaledObject sets to 0; a server with the
// gate off drops the field and the HPA keeps the 10 % default.
func TestHPATolerance(t *testing.T) {
	_, admin := cluster(t)
	admin.MustApply(t, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: tolerance-zero, namespace: `+workers+`}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: nothing}
  minReplicas: 1
  maxReplicas: 5
  metrics: [{type: External, external: {metric: {name: s0-queue-checker-x}, target: {type: AverageValue, averageValue: "1"}}}]
  behavior:
    scaleUp: {tolerance: "0"}
    scaleDown: {tolerance: "0"}
`)
	hpa, err := admin.Dynamic.Resource(schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}).
		Namespace(workers).Get(context.Background(), "tolerance-zero", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"scaleUp", "scaleDown"} {
		v, found, _ := unstructured.NestedFieldNoCopy(hpa.Object, "spec", "behavior", dir, "tolerance")
		if !found || fmt.Sprint(v) != "0" {
			t.Errorf("behavior.%s.tolerance read back as %v (found %v), want 0 kept", dir, v, found)
		}
	}
}

// TestScaleTargetOfAnyKind reads and scales a custom resource through the
// scale subresource its CRD declares, found by discovery; a kind without
// one is refused by name.
func TestScaleTargetOfAnyKind(t *testing.T) {
	s, admin := cluster(t)
	admin.MustApply(t, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: pools.workers.example.com}
spec:
  group: workers.example.com
  scope: Namespaced
  names: {kind: Pool, plural: pools, singular: pool, listKind: PoolList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
      subresources:
        status: {}
        scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas, labelSelectorPath: .status.selector}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: jars.workers.example.com}
spec:
  group: workers.example.com
  scope: Namespaced
  names: {kind: Jar, plural: jars, singular: jar, listKind: JarList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`)
	admin.WaitForResource(t, "workers.example.com/v1", "Pool")
	admin.WaitForResource(t, "workers.example.com/v1", "Jar")
	admin.MustApply(t, `apiVersion: workers.example.com/v1
kind: Pool
metadata: {name: video, namespace: workers}
spec: {replicas: 4}
`)
	ctx := context.Background()
	pools := admin.Dynamic.Resource(schema.GroupVersionResource{Group: "workers.example.com", Version: "v1", Resource: "pools"}).Namespace(workers)
	p, err := pools.Get(ctx, "video", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedMap(p.Object, map[string]any{"replicas": int64(4), "readyReplicas": int64(3), "selector": "app=video"}, "status")
	if _, err := pools.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	admin.TerminatingPods(t, workers, "video", 1)

	c, err := New(s.Config(kubetest.AdminUser)) // the Role covers Deployments and StatefulSets only
	if err != nil {
		t.Fatal(err)
	}
	ref := Ref{Namespace: workers, APIVersion: "workers.example.com/v1", Kind: "Pool", Name: "video"}
	w, err := c.Read(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if w.Desired != 4 || w.Replicas != 4 || w.Ready != 3 || w.Terminating != 1 {
		t.Errorf("read %+v, want desired 4, replicas 4, ready 3, 1 terminating", w)
	}
	if err := c.Scale(ctx, ref, 9); err != nil {
		t.Fatal(err)
	}
	p, err = pools.Get(ctx, "video", metav1.GetOptions{})
	if n, _, _ := unstructured.NestedInt64(p.Object, "spec", "replicas"); err != nil || n != 9 {
		t.Errorf("after Scale(9): spec.replicas %d (%v)", n, err)
	}
	_, err = c.Read(ctx, Ref{Namespace: workers, APIVersion: "workers.example.com/v1", Kind: "Jar", Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "Jar in workers.example.com/v1 has no scale subresource") {
		t.Errorf("a kind without scale: %v", err)
	}
	_, err = c.Read(ctx, Ref{Namespace: workers, APIVersion: "workers.example.com/v1", Kind: "Vat", Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "no kind Vat") {
		t.Errorf("an unknown kind: %v", err)
	}
	_, err = c.Read(ctx, Ref{Namespace: workers, APIVersion: "nothing.example.com/v1", Kind: "Pool", Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "the API server serves no nothing.example.com/v1") {
		t.Errorf("an unknown group version: %v", err)
	}
}

// TestPrometheusOperatorDryRun: the prometheus-operator component's
// ServiceMonitor and PrometheusRule pass the server-side dry run against
// the Operator's own CRDs (from its module), and the dry run is a real
// check: a rule whose for is not a duration is refused.
func TestPrometheusOperatorDryRun(t *testing.T) {
	_, admin := cluster(t)
	for _, crd := range kubetest.PrometheusOperatorCRDs(t) {
		admin.MustApply(t, crd)
	}
	admin.WaitForResource(t, "monitoring.coreos.com/v1", "ServiceMonitor")
	admin.WaitForResource(t, "monitoring.coreos.com/v1", "PrometheusRule")
	kinds := map[string]bool{}
	for _, f := range []string{"servicemonitor.yaml", "prometheusrule.yaml"} {
		b, err := os.ReadFile(filepath.Join(manifests, "prometheus-operator", f))
		if err != nil {
			t.Fatal(err)
		}
		objs, err := kubetest.Decode(b)
		if err != nil || len(objs) != 1 {
			t.Fatalf("%s: %v (%d objects)", f, err, len(objs))
		}
		kinds[objs[0].GetKind()] = true
		if err := admin.Create(context.Background(), objs[0], true); err != nil {
			t.Errorf("%s: dry run: %v", f, err)
		}
	}
	if !kinds["ServiceMonitor"] || !kinds["PrometheusRule"] {
		t.Errorf("kinds %v, want a ServiceMonitor and a PrometheusRule", kinds)
	}
	{
		built := kustomize(t, manifests, "prometheus-operator")
		n := 0
		for _, o := range built {
			if o.GetAPIVersion() != "monitoring.coreos.com/v1" {
				continue
			}
			n++
			if err := admin.Create(context.Background(), o, true); err != nil {
				t.Errorf("the base with prometheus-operator: %s: dry run: %v", o.GetKind(), err)
			}
		}
		if n != 2 {
			t.Errorf("the base with prometheus-operator has %d monitoring.coreos.com objects, want 2", n)
		}
	}
	bad := `apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: bad, namespace: queue-checker}
spec:
  groups: [{name: g, rules: [{alert: A, expr: up == 0, for: five minutes}]}]
`
	objs, _ := kubetest.Decode([]byte(bad))
	if err := admin.Create(context.Background(), objs[0], true); err == nil {
		t.Error("a PrometheusRule with for: five minutes passed the dry run")
	}
}
