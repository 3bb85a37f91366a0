package kube

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/queuechecker/queue-checker/internal/model"
)

// TestParseWorkload reads counts and switch annotations from a scale and
// its workload, and refuses a count that is not one: a silent 0 would
// scale a fleet in.
func TestParseWorkload(t *testing.T) {
	t.Parallel()
	scale := func(spec, status any, selector string) map[string]any {
		s := map[string]any{"spec": map[string]any{}, "status": map[string]any{"selector": selector}}
		if spec != nil {
			s["spec"].(map[string]any)["replicas"] = spec
		}
		if status != nil {
			s["status"].(map[string]any)["replicas"] = status
		}
		return s
	}
	deploy := func(ready any, annotations map[string]any) map[string]any {
		o := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"annotations": annotations}, "status": map[string]any{}}
		if ready != nil {
			o["status"].(map[string]any)["readyReplicas"] = ready
		}
		return o
	}
	rollout := map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "status": map[string]any{}}
	for _, tc := range []struct {
		name         string
		scale, obj   map[string]any
		want         Workload
		wantSelector string
		wantErr      bool
	}{
		{name: "deployment", scale: scale(int64(5), int64(4), "app=a"), obj: deploy(int64(3), map[string]any{"queue-checker/paused": "true", "other/x": "y"}),
			want: Workload{Desired: 5, Replicas: 4, Ready: 3, Annotations: map[string]string{"queue-checker/paused": "true"}}, wantSelector: "app=a"},
		{name: "no pod ready: field omitted", scale: scale(int64(2), int64(2), "app=a"), obj: deploy(nil, nil),
			want: Workload{Desired: 2, Replicas: 2, Ready: 0}, wantSelector: "app=a"},
		{name: "at zero: replicas omitted", scale: scale(nil, nil, ""), obj: deploy(nil, nil), want: Workload{}},
		{name: "a kind without readyReplicas", scale: scale(int64(3), int64(3), "app=r"), obj: rollout,
			want: Workload{Desired: 3, Replicas: 3, Ready: 3}, wantSelector: "app=r"},
		{name: "negative spec", scale: scale(int64(-1), int64(0), ""), obj: deploy(nil, nil), wantErr: true},
		{name: "not a number", scale: scale("five", int64(0), ""), obj: deploy(nil, nil), wantErr: true},
		{name: "ready not a number", scale: scale(int64(1), int64(1), ""), obj: deploy("1", nil), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, sel, err := parseWorkload(tc.scale, tc.obj)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Desired != tc.want.Desired || got.Replicas != tc.want.Replicas || got.Ready != tc.want.Ready ||
				len(got.Annotations) != len(tc.want.Annotations) || sel != tc.wantSelector {
				t.Errorf("got %+v selector %q, want %+v selector %q", got, sel, tc.want, tc.wantSelector)
			}
			for k, v := range tc.want.Annotations {
				if got.Annotations[k] != v {
					t.Errorf("annotation %s = %q, want %q", k, got.Annotations[k], v)
				}
			}
		})
	}
}

// TestClass: the API server's errors get the classes of AWS's.
func TestClass(t *testing.T) {
	t.Parallel()
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{apierrors.NewForbidden(gr, "w", errors.New("no")), model.ErrClassClient},
		{fmt.Errorf("get: %w", apierrors.NewNotFound(gr, "w")), model.ErrClassClient},
		{apierrors.NewTooManyRequests("slow down", 1), model.ErrClassThrottled},
		{apierrors.NewServerTimeout(gr, "get", 1), model.ErrClassTimeout},
		{apierrors.NewInternalError(errors.New("etcd")), model.ErrClassServer},
		{errors.New("dial tcp: refused"), ""},
	} {
		if got := Class(tc.err); got != tc.want {
			t.Errorf("Class(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
