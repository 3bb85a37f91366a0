// Package kube reads and scales Kubernetes workloads through their scale
// subresource, for groups whose fleet is fleet.kubernetes: a Deployment, a
// StatefulSet, or any kind with a scale subresource. It turns what the API
// server answers into plain values (Workload), so no Kubernetes type
// crosses into the poller or the policy.
//
// The calls it makes, and nothing else (the RBAC Role in
// deploy/kubernetes grants exactly these; Calls lists them):
//
//   - get the workload (its annotations and status.readyReplicas);
//   - get and update its scale subresource;
//   - list the pods of the scale's selector, metadata only (the pods
//     being deleted are draining);
//   - list the HorizontalPodAutoscalers of the namespace, before scaling
//     (an HPA on the workload refuses direct scaling: two controllers
//     would fight).
//
// Discovery (for a scale_target's resource name) needs no Role: every
// authenticated client may read it.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/switchkey"
)

// AnnotationPrefix starts the switch annotations on a workload: the same
// switches as the queue-checker: tags of an Auto Scaling group.
const AnnotationPrefix = "queue-checker/"

// Ref names one workload.
type Ref struct {
	Namespace  string
	APIVersion string // group/version, such as apps/v1
	Kind       string
	Name       string
}

// RefOf is the workload a fleet.kubernetes block names.
func RefOf(k config.Kubernetes) Ref {
	apiVersion, kind, name := k.Workload()
	return Ref{Namespace: k.Namespace, APIVersion: apiVersion, Kind: kind, Name: name}
}

// String is namespace/kind/name, as logs and the status page show it.
func (r Ref) String() string { return r.Namespace + "/" + strings.ToLower(r.Kind) + "/" + r.Name }

// Workload is what one read of a workload found.
type Workload struct {
	Desired  int // the scale's spec.replicas
	Replicas int // the scale's status.replicas: pods not being deleted
	// Ready is the workload's status.readyReplicas; for a kind without
	// that field, the scale's status.replicas.
	Ready int
	// Terminating counts the pods of the selector being deleted: finishing
	// their messages after SIGTERM, not capacity.
	Terminating int
	// Annotations are the workload's annotations in the checker's
	// namespace (queue-checker/..., in any spelling switchkey counts as
	// the checker's, known or not).
	Annotations map[string]string
}

// Client reads and scales workloads. It is safe for concurrent use.
type Client struct {
	dyn  dynamic.Interface
	meta metadata.Interface
	// http and base reach the API server for discovery: one GET of a
	// group version's resource list. (client-go's discovery client would
	// link, and initialise at start, every built-in API group's types.)
	http *http.Client
	base *url.URL

	mu        sync.Mutex
	resources map[schema.GroupVersionKind]string // kind -> plural resource, from discovery
}

// QPS and Burst bound the client's calls to the API server: each workload
// costs three calls a read, so client-go's defaults (5 and 10) would pace
// a few dozen workloads.
const (
	QPS   = 100
	Burst = 200
)

// RESTConfig is the API server to talk to: the in-cluster service account
// when running in a pod, else the kubeconfig (KUBECONFIG, else
// ~/.kube/config, and its current context).
func RESTConfig() (*rest.Config, error) {
	cfg, err := rest.InClusterConfig()
	if errors.Is(err, rest.ErrNotInCluster) {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		cfg, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes: not in a cluster, and no usable kubeconfig (KUBECONFIG or ~/.kube/config): %w", err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes: in-cluster config: %w", err)
	}
	return cfg, nil
}

// New returns a client of the API server cfg names; cfg's QPS and Burst
// are raised to QPS and Burst when lower.
func New(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = max(cfg.QPS, QPS), max(cfg.Burst, Burst)
	if cfg.UserAgent == "" {
		cfg.UserAgent = "queue-checker"
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &Client{dyn: dyn, meta: meta, http: hc, base: base, resources: map[schema.GroupVersionKind]string{}}, nil
}

// FromEnvironment is New(RESTConfig()).
func FromEnvironment() (*Client, error) {
	cfg, err := RESTConfig()
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

var (
	podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	hpaGVR  = schema.GroupVersionResource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"}
	// wellKnown are the kinds a fleet.kubernetes block names without
	// scale_target: no discovery needed.
	wellKnown = map[schema.GroupVersionKind]string{
		{Group: "apps", Version: "v1", Kind: "Deployment"}:  "deployments",
		{Group: "apps", Version: "v1", Kind: "StatefulSet"}: "statefulsets",
	}
)

// resource is the GroupVersionResource of ref's kind: well-known, else
// from discovery (cached), which must list a scale subresource for it.
func (c *Client) resource(ctx context.Context, ref Ref) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("api version %q: %w", ref.APIVersion, err)
	}
	gvk := gv.WithKind(ref.Kind)
	if r, ok := wellKnown[gvk]; ok {
		return gv.WithResource(r), nil
	}
	c.mu.Lock()
	r, ok := c.resources[gvk]
	c.mu.Unlock()
	if ok {
		return gv.WithResource(r), nil
	}
	list, err := c.serverResources(ctx, ref.APIVersion, gv)
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("discover the resources of %s: %w", ref.APIVersion, err)
	}
	plural, scalable := "", map[string]bool{}
	for _, res := range list.APIResources {
		name, sub, isSub := strings.Cut(res.Name, "/")
		switch {
		case isSub && sub == "scale":
			scalable[name] = true
		case !isSub && res.Kind == ref.Kind:
			plural = name
		}
	}
	switch {
	case plural == "":
		return schema.GroupVersionResource{}, fmt.Errorf("the API server serves no kind %s in %s", ref.Kind, ref.APIVersion)
	case !scalable[plural]:
		return schema.GroupVersionResource{}, fmt.Errorf("%s in %s has no scale subresource: it cannot be scaled by replicas", ref.Kind, ref.APIVersion)
	}
	c.mu.Lock()
	c.resources[gvk] = plural
	c.mu.Unlock()
	return gv.WithResource(plural), nil
}

// maxDiscoveryBody bounds the resource list read; a group version's is a
// few kilobytes.
const maxDiscoveryBody = 8 << 20

// serverResources is the API server's resource list of one group version:
// GET /api/v1 for the core group, /apis/GROUP/VERSION for the others,
// bounded by the caller's context like the read or scale it serves.
func (c *Client) serverResources(ctx context.Context, apiVersion string, gv schema.GroupVersion) (*metav1.APIResourceList, error) {
	u := *c.base
	if gv.Group == "" {
		u.Path = path.Join(u.Path, "/api", gv.Version)
	} else {
		u.Path = path.Join(u.Path, "/apis", gv.Group, gv.Version)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscoveryBody))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("the API server serves no %s", apiVersion)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s: %s", u.Path, resp.Status, strings.TrimSpace(string(body[:min(len(body), 300)])))
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Path, err)
	}
	return &list, nil
}

// Read reads ref: its scale, its annotations and ready count, and its
// pods being deleted. Any failed call fails the read: a count that was
// not read is never reported as 0.
func (c *Client) Read(ctx context.Context, ref Ref) (Workload, error) {
	gvr, err := c.resource(ctx, ref)
	if err != nil {
		return Workload{}, fmt.Errorf("%s: %w", ref, err)
	}
	res := c.dyn.Resource(gvr).Namespace(ref.Namespace)
	scale, err := res.Get(ctx, ref.Name, metav1.GetOptions{}, "scale")
	if err != nil {
		return Workload{}, fmt.Errorf("get the scale of %s: %w", ref, err)
	}
	obj, err := res.Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return Workload{}, fmt.Errorf("get %s: %w", ref, err)
	}
	w, selector, err := parseWorkload(scale.Object, obj.Object)
	if err != nil {
		return Workload{}, fmt.Errorf("%s: %w", ref, err)
	}
	if selector != "" {
		pods, err := c.meta.Resource(podsGVR).Namespace(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return Workload{}, fmt.Errorf("list the pods of %s: %w", ref, err)
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil {
				w.Terminating++
			}
		}
	}
	return w, nil
}

// parseWorkload reads the counts and switch annotations from a scale
// (autoscaling/v1 Scale) and its workload, and returns the scale's pod
// selector. A missing or negative count is an error, never 0; a workload
// without status.readyReplicas counts the scale's status.replicas as
// ready, except a Deployment or StatefulSet, whose controller omits the
// field while no pod is ready.
func parseWorkload(scale, obj map[string]any) (Workload, string, error) {
	var w Workload
	desired, ok, err := unstructured.NestedInt64(scale, "spec", "replicas")
	if err := countErr("scale spec.replicas", desired, err); err != nil {
		return w, "", err
	}
	if !ok {
		desired = 0 // omitted when zero
	}
	replicas, _, err := unstructured.NestedInt64(scale, "status", "replicas")
	if err := countErr("scale status.replicas", replicas, err); err != nil {
		return w, "", err
	}
	selector, _, err := unstructured.NestedString(scale, "status", "selector")
	if err != nil {
		return w, "", fmt.Errorf("scale status.selector: %w", err)
	}
	ready, found, err := unstructured.NestedInt64(obj, "status", "readyReplicas")
	if err := countErr("status.readyReplicas", ready, err); err != nil {
		return w, "", err
	}
	if !found && !knownReadyField(obj) {
		ready = replicas
	}
	w.Desired, w.Replicas, w.Ready = clampInt(desired), clampInt(replicas), clampInt(ready)
	annotations, _, _ := unstructured.NestedStringMap(obj, "metadata", "annotations")
	for k, v := range annotations {
		if switchkey.Candidate(k) {
			if w.Annotations == nil {
				w.Annotations = map[string]string{}
			}
			w.Annotations[k] = v
		}
	}
	return w, selector, nil
}

// countErr says why field is not a count: not a whole number (err), or
// below zero.
func countErr(field string, n int64, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("%s is not a count: %w", field, err)
	case n < 0:
		return fmt.Errorf("%s is not a count: %d", field, n)
	}
	return nil
}

// knownReadyField reports whether obj's kind is one whose controller
// writes status.readyReplicas (omitted when 0).
func knownReadyField(obj map[string]any) bool {
	kind, _, _ := unstructured.NestedString(obj, "kind")
	apiVersion, _, _ := unstructured.NestedString(obj, "apiVersion")
	_, ok := wellKnown[schema.FromAPIVersionAndKind(apiVersion, kind)]
	return ok
}

func clampInt(n int64) int { return int(min(max(n, 0), math.MaxInt32)) }

// ErrConflict marks a workload that another autoscaler (an HPA, or KEDA's
// ScaledObject through its HPA) already scales.
var ErrConflict = errors.New("another autoscaler scales the workload")

// Autoscalers names the HorizontalPodAutoscalers of ref's namespace whose
// scaleTargetRef is ref (same API group, kind and name).
func (c *Client) Autoscalers(ctx context.Context, ref Ref) ([]string, error) {
	list, err := c.dyn.Resource(hpaGVR).Namespace(ref.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the HorizontalPodAutoscalers of namespace %s: %w", ref.Namespace, err)
	}
	group := apiGroup(ref.APIVersion)
	var out []string
	for _, h := range list.Items {
		t, _, _ := unstructured.NestedStringMap(h.Object, "spec", "scaleTargetRef")
		if t["kind"] == ref.Kind && t["name"] == ref.Name && apiGroup(t["apiVersion"]) == group {
			out = append(out, h.GetName())
		}
	}
	return out, nil
}

func apiGroup(apiVersion string) string {
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

// Scale sets ref's replicas through its scale subresource, after checking
// that no HPA targets it (ErrConflict). A write that races another one
// (409 Conflict) is read and written again.
func (c *Client) Scale(ctx context.Context, ref Ref, replicas int) error {
	gvr, err := c.resource(ctx, ref)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	hpas, err := c.Autoscalers(ctx, ref)
	if err != nil {
		return err
	}
	if len(hpas) > 0 {
		return fmt.Errorf("refusing to scale %s: HorizontalPodAutoscaler %s/%s targets it and the two would fight over its replicas; "+
			"delete the HPA (or the KEDA ScaledObject that made it), or set actions.set_desired_capacity: false and let KEDA scale it from this checker's metrics: %w",
			ref, ref.Namespace, strings.Join(hpas, ", "), ErrConflict)
	}
	res := c.dyn.Resource(gvr).Namespace(ref.Namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		scale, err := res.Get(ctx, ref.Name, metav1.GetOptions{}, "scale")
		if err != nil {
			return err
		}
		if err := unstructured.SetNestedField(scale.Object, int64(replicas), "spec", "replicas"); err != nil {
			return err
		}
		_, err = res.Update(ctx, scale, metav1.UpdateOptions{FieldManager: "queue-checker"}, "scale")
		return err
	})
	if err != nil {
		return fmt.Errorf("scale %s to %d: %w", ref, replicas, err)
	}
	return nil
}

// Call is one kind of request the client makes: what an RBAC rule must
// grant.
type Call struct {
	Group, Resource, Verb string // Resource with its subresource: deployments/scale
}

// Calls are the requests the client makes for Deployments and
// StatefulSets; a scale_target of another kind needs the same for its
// resource.
var Calls = []Call{
	{"apps", "deployments", "get"},
	{"apps", "deployments/scale", "get"},
	{"apps", "deployments/scale", "update"},
	{"apps", "statefulsets", "get"},
	{"apps", "statefulsets/scale", "get"},
	{"apps", "statefulsets/scale", "update"},
	{"", "pods", "list"},
	{"autoscaling", "horizontalpodautoscalers", "list"},
}

// Class is the error class (model.ErrClass*) of an error from the API
// server, for the fleet's metrics and logs; "" for an error that did not
// come from it.
func Class(err error) string {
	var status apierrors.APIStatus
	switch {
	case err == nil || !errors.As(err, &status):
		return ""
	case apierrors.IsTooManyRequests(err):
		return model.ErrClassThrottled
	case apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err):
		return model.ErrClassTimeout
	case status.Status().Code >= 500:
		return model.ErrClassServer
	}
	return model.ErrClassClient
}
