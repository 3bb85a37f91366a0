package poller

import (
	"context"
	"fmt"
	"time"

	"github.com/queuechecker/queue-checker/internal/kube"
	"github.com/queuechecker/queue-checker/internal/model"
)

// KindKubernetes is the Kind of a Kubernetes workload (fleet.kubernetes).
const KindKubernetes = "kubernetes"

// kubeAPI is the part of internal/kube the poller calls.
type kubeAPI interface {
	Read(ctx context.Context, ref kube.Ref) (kube.Workload, error)
}

var _ kubeAPI = (*kube.Client)(nil)

// newKubeClient makes the client of the cluster's API server, once per
// poller and only for a configuration with a Kubernetes fleet: in a pod,
// its service account; elsewhere the kubeconfig.
var newKubeClient = func() (kubeAPI, error) { return kube.FromEnvironment() }

// fetchKube reads the workload; the answer is settled with the others.
func (f *fleetReader) fetchKube(ctx context.Context, api kubeAPI) {
	w, err := api.Read(ctx, f.kubeRef)
	if err != nil {
		f.err = fmt.Errorf("kubernetes %w", err)
		return
	}
	f.workload = &w
}

// fromKube fills fl from a workload: ready pods are in service, the rest
// of the desired count pending, pods being deleted draining (not
// capacity, as instances held by a termination lifecycle hook). A
// workload has no bounds of its own. PendingSince holds, per pending pod,
// when the poller first saw the pending count include it, oldest leaving
// first (the scale subresource names no pod).
func (f *fleetReader) fromKube(fl *model.Fleet, now time.Time) {
	w := f.workload
	fl.Known = true
	fl.Desired = w.Desired
	fl.InService = w.Ready
	fl.Pending = max(w.Desired-w.Ready, 0)
	fl.Draining = w.Terminating
	switch n := fl.Pending; {
	case n > len(f.kubePending):
		for range n - len(f.kubePending) {
			f.kubePending = append(f.kubePending, now)
		}
	case n < len(f.kubePending):
		f.kubePending = f.kubePending[len(f.kubePending)-n:]
	}
	fl.PendingSince = append([]time.Time(nil), f.kubePending...)
	f.applyParsedSwitches(fl, parseSwitchKeys(w.Annotations, kube.AnnotationPrefix, "annotation"), now)
}
