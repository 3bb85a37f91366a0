package publisher

import (
	"context"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/kube"
)

// kubeAPI is the part of internal/kube the publisher calls: Scale checks
// that no HorizontalPodAutoscaler targets the workload, then sets its
// replicas through the scale subresource.
type kubeAPI interface {
	Scale(ctx context.Context, ref kube.Ref, replicas int) error
}

var _ kubeAPI = (*kube.Client)(nil)

// newKubeClient makes the client of the cluster's API server (in a pod its
// service account, elsewhere the kubeconfig).
var newKubeClient = func() (kubeAPI, error) { return kube.FromEnvironment() }

// kubeClient returns a client when some group of cfg scales a Kubernetes
// workload, and nil when none does or under dry run (no call is made).
func kubeClient(cfg config.Config) (kubeAPI, error) {
	if cfg.DryRun {
		return nil, nil
	}
	for _, g := range cfg.Groups {
		if g.Fleet.Kubernetes != nil && g.Actions.SetDesiredCapacity {
			return newKubeClient()
		}
	}
	return nil, nil
}

// scaleKube sets the replicas of the group's workload.
func (p *Publisher) scaleKube(ctx context.Context, k *config.Kubernetes, to int) error {
	return p.clients.kube.Scale(ctx, kube.RefOf(*k), to)
}
