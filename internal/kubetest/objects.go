package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Client is a dynamic client with a REST mapper, for tests that create
// objects from YAML.
type Client struct {
	Dynamic dynamic.Interface
	cfg     *rest.Config
	mapper  meta.RESTMapper
}

// NewClient makes a client of cfg.
func NewClient(t testing.TB, cfg *rest.Config) *Client {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{Dynamic: dyn, cfg: cfg}
	c.Remap(t)
	return c
}

// Remap reads discovery again: after a CustomResourceDefinition is made.
func (c *Client) Remap(t testing.TB) {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := restmapper.GetAPIGroupResources(disc)
	if err != nil {
		t.Fatal(err)
	}
	c.mapper = restmapper.NewDiscoveryRESTMapper(groups)
}

// ReadObject is the one object of the YAML file at path.
func ReadObject(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Decode(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("%s: %d objects, %v", path, len(objs), err)
	}
	return objs[0]
}

// Decode splits a YAML stream into objects, skipping empty documents.
func Decode(doc []byte) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	d := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(doc), 4096)
	for {
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		// Unstructured's own decoding keeps whole numbers int64, as
		// client-go's objects have them.
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		out = append(out, u)
	}
}

// Resource is the namespaced client of obj's kind.
func (c *Client) Resource(obj *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := obj.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", gvk, obj.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource).Namespace(obj.GetNamespace()), nil
	}
	return c.Dynamic.Resource(m.Resource), nil
}

// Create creates obj, or updates it when it exists already; with dryRun,
// as a server-side dry run that changes nothing.
func (c *Client) Create(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	r, err := c.Resource(obj)
	if err != nil {
		return err
	}
	var opts metav1.CreateOptions
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	_, err = r.Create(ctx, obj, opts)
	if apierrors.IsAlreadyExists(err) {
		// An update then, dry run or not: the server checks the object
		// the same way.
		cur, gerr := r.Get(ctx, obj.GetName(), metav1.GetOptions{})
		if gerr != nil {
			return gerr
		}
		obj = obj.DeepCopy()
		obj.SetResourceVersion(cur.GetResourceVersion())
		_, err = r.Update(ctx, obj, metav1.UpdateOptions{DryRun: opts.DryRun})
	}
	if err != nil {
		return fmt.Errorf("create %s %s/%s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}

// MustApply creates every object of a YAML stream.
func (c *Client) MustApply(t testing.TB, doc string) {
	t.Helper()
	objs, err := Decode([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := c.Create(context.Background(), o, false); err != nil {
			t.Fatal(err)
		}
	}
}

// Namespace creates a namespace.
func (c *Client) Namespace(t testing.TB, name string) {
	t.Helper()
	c.MustApply(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+name+"}\n")
}

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// Deployment creates a Deployment of replicas pods labelled app=name,
// with the annotations given.
func (c *Client) Deployment(t testing.TB, ns, name string, replicas int, annotations map[string]string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"replicas": int64(replicas),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{
					"name": "worker", "image": "example.com/worker:1",
				}}},
			},
		},
	}}
	obj.SetAnnotations(annotations)
	if err := c.Create(context.Background(), obj, false); err != nil {
		t.Fatal(err)
	}
}

// SetDeploymentStatus writes a Deployment's status as its controller and
// the kubelets would: replicas pods, ready of them ready.
func (c *Client) SetDeploymentStatus(t testing.TB, ns, name string, replicas, ready int) {
	t.Helper()
	ctx := context.Background()
	r := c.Dynamic.Resource(deploymentsGVR).Namespace(ns)
	d, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]any{"replicas": int64(replicas), "readyReplicas": int64(ready), "availableReplicas": int64(ready),
		"updatedReplicas": int64(replicas), "observedGeneration": d.GetGeneration()}
	if err := unstructured.SetNestedMap(d.Object, status, "status"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.UpdateStatus(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// DeploymentReplicas is a Deployment's spec.replicas.
func (c *Client) DeploymentReplicas(t testing.TB, ns, name string) int {
	t.Helper()
	d, err := c.Dynamic.Resource(deploymentsGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	return int(n)
}

// Annotate sets (value != "") or removes (value == "") an annotation.
func (c *Client) Annotate(t testing.TB, ns, name, key, value string) {
	t.Helper()
	ctx := context.Background()
	r := c.Dynamic.Resource(deploymentsGVR).Namespace(ns)
	d, err := r.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := d.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if value == "" {
		delete(a, key)
	} else {
		a[key] = value
	}
	d.SetAnnotations(a)
	if _, err := r.Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TerminatingPods makes n pods labelled app=name that are being deleted:
// each holds a finalizer, as a pod still running its SIGTERM drain holds
// its deletion, and is then deleted. Cleanup releases them.
func (c *Client) TerminatingPods(t testing.TB, ns, name string, n int) {
	t.Helper()
	ctx := context.Background()
	pods := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns)
	for i := range n {
		pn := fmt.Sprintf("%s-draining-%d", name, i)
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": pn, "namespace": ns, "labels": map[string]any{"app": name},
				"finalizers": []any{"queue-checker.test/drain"}},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "worker", "image": "example.com/worker:1"}}},
		}}
		if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, pn, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			p, err := pods.Get(ctx, pn, metav1.GetOptions{})
			if err != nil {
				return
			}
			p.SetFinalizers(nil)
			_, _ = pods.Update(ctx, p, metav1.UpdateOptions{})
		})
	}
}

// WaitForResource waits until discovery serves kind in apiVersion (a new
// CustomResourceDefinition takes a moment), then remaps.
func (c *Client) WaitForResource(t testing.TB, apiVersion, kind string) {
	t.Helper()
	disc, err := discovery.NewDiscoveryClientForConfig(c.cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if list, err := disc.ServerResourcesForGroupVersion(apiVersion); err == nil {
			for _, r := range list.APIResources {
				if r.Kind == kind {
					c.Remap(t)
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s %s not served within 10s", apiVersion, kind)
}
