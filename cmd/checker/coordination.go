package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	coordclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/kube"
	"github.com/queuechecker/queue-checker/internal/lease"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/poller"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// leaseGate lets the controller act on the groups whose leases this
// checker holds.
type leaseGate struct {
	*lease.Manager
	// taken, when set, is told the groups each Sync took, but for the
	// first Sync's: the warm start at start covers those.
	taken *func([]string)
	syncs *int
}

var (
	_ controller.Gate      = leaseGate{}
	_ readmodel.TableUsage = leaseGate{} // the lease table joins the checker's own AWS bill
	_ controller.Degrader  = leaseGate{} // a group nobody can take: /readyz and the page, not /healthz
)

// Sync syncs the leases as of now and passes on the groups it took.
func (g leaseGate) Sync(ctx context.Context, now time.Time) error {
	err := g.Manager.Sync(ctx, now)
	taken := g.Taken()
	if g.syncs != nil {
		*g.syncs++
		if *g.syncs == 1 {
			return err
		}
	}
	if len(taken) > 0 && g.taken != nil && *g.taken != nil {
		(*g.taken)(taken)
	}
	return err
}

func (g leaseGate) Lease(group string) model.LeaseStatus {
	s := g.Status(group)
	return model.LeaseStatus{Owner: s.Owner, Held: s.Held, Acting: s.Acting, Since: s.Since, Expires: s.Expires}
}

func (g leaseGate) Peers() []model.Peer {
	ps := g.Manager.Peers()
	out := make([]model.Peer, 0, len(ps))
	for _, p := range ps {
		out = append(out, model.Peer{Identity: p.Identity, Leases: p.Leases, Expires: p.Expires})
	}
	return out
}

// newLeases makes the lease manager of a configuration with a coordination
// block; nil without one. Its DynamoDB calls are counted in reg.
func newLeases(ctx context.Context, cfg config.Config, reg prometheus.Registerer, log *zap.Logger) (*lease.Manager, error) {
	co := cfg.Coordination
	if co == nil {
		return nil, nil
	}
	if co.Kubernetes != nil {
		return newKubeLeases(cfg, reg, log)
	}
	clients, region, err := leaseClients(ctx, cfg, reg)
	if err != nil {
		return nil, err
	}
	// A table that does not exist is a mistake of the configuration, found
	// at start rather than by a checker that acts on nothing; other errors
	// may pass, and the manager reports them as it runs.
	cctx, cancel := context.WithTimeout(ctx, cfg.CallTimeout())
	err = lease.Reachable(cctx, clients.DynamoDB(region), co.DynamoDB.Table)
	cancel()
	switch {
	case errors.Is(err, lease.ErrNoTable):
		return nil, fmt.Errorf("coordination.dynamodb.table: %w", err)
	case err != nil:
		log.Warn("lease table not read at start; the checker acts on no group until it answers", zap.Error(err))
	}
	id := co.Identity
	if id == "" {
		id = lease.DefaultIdentity(os.Getenv, os.Hostname, os.Getpid())
	}
	return lease.New(clients.DynamoDB(region), lease.Options{
		Table: co.DynamoDB.Table, Identity: id, Duration: co.LeaseDuration, Interval: cfg.Interval,
		ActionDeadline: cfg.CallTimeout(), Groups: groupNames(cfg), Logger: log.Named("lease"), Registerer: reg,
	})
}

// newKubeLeases makes the lease manager of a coordination.kubernetes
// block: Leases in its namespace, through the API server of the pod's
// service account (else the kubeconfig).
func newKubeLeases(cfg config.Config, reg prometheus.Registerer, log *zap.Logger) (*lease.Manager, error) {
	co := cfg.Coordination
	rc, err := kube.RESTConfig()
	if err != nil {
		return nil, fmt.Errorf("coordination.kubernetes: %w", err)
	}
	rc = rest.CopyConfig(rc)
	// A renewal per group per interval: client-go's default pace (5 a
	// second) would delay the renewals of a few dozen groups past their
	// leases.
	rc.QPS, rc.Burst = max(rc.QPS, kube.QPS), max(rc.Burst, kube.Burst)
	if rc.UserAgent == "" {
		rc.UserAgent = "queue-checker"
	}
	client, err := coordclient.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("coordination.kubernetes: %w", err)
	}
	id := co.Identity
	if id == "" {
		id = lease.DefaultIdentity(os.Getenv, os.Hostname, os.Getpid())
	}
	return lease.NewKubernetes(client, co.Kubernetes.Namespace, lease.Options{
		Identity: id, Duration: co.LeaseDuration, Interval: cfg.Interval,
		ActionDeadline: cfg.CallTimeout(), Groups: groupNames(cfg), Logger: log.Named("lease"), Registerer: reg,
	})
}

// leaseStore names where the leases live, for the start's log line.
func leaseStore(co *config.Coordination) zap.Field {
	if co.Kubernetes != nil {
		return zap.String("leases_namespace", co.Kubernetes.Namespace)
	}
	return zap.String("table", co.DynamoDB.Table)
}

// leaseClients makes the AWS clients of a configuration's lease table, in
// the table's region (coordination.dynamodb.region, else aws.region), and
// returns that region.
func leaseClients(ctx context.Context, cfg config.Config, reg prometheus.Registerer) (*awsclient.Factory, string, error) {
	region := cfg.Coordination.DynamoDB.Region
	if region == "" {
		region = cfg.AWS.Region
	}
	opts := awsOptions(cfg, reg)
	opts.Region = region
	clients, err := awsclient.New(ctx, opts)
	return clients, region, err
}

func groupNames(cfg config.Config) []string {
	names := make([]string, 0, len(cfg.Groups))
	for _, g := range cfg.Groups {
		names = append(names, g.Name)
	}
	return names
}

// releaseLeases gives up the leases after the last cycle, so that the other
// checkers take the groups at their next cycle instead of after a lease
// duration.
func releaseLeases(m *lease.Manager, log *zap.Logger) {
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.Release(ctx); err != nil {
		log.Warn("leases not all released; the others take them when they expire", zap.Error(err))
		return
	}
	log.Info("leases released", zap.String("identity", m.Identity()))
}

// With coordination the controller polls only the groups whose lease this
// checker holds, through the poller's SetGroupActive.
var _ controller.GroupActivator = (*poller.Poller)(nil)
