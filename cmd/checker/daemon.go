package main

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/poller"
	"github.com/queuechecker/queue-checker/internal/publisher"
)

// assembly is one configuration's AWS-facing parts. A reload builds a new
// one; its metrics live in their own registry so that the old poller's series
// go with it.
type assembly struct {
	groups   []policy.Settings
	observer controller.Observer
	actuator controller.Actuator
	registry *prometheus.Registry
	// history reads the groups' arrival history for the warm start; nil
	// when there is none to read.
	history arrivalHistory
}

// awsOptions are the AWS client settings a configuration gives; every
// factory the checker makes starts from them.
func awsOptions(cfg config.Config, reg prometheus.Registerer) awsclient.Options {
	return awsclient.Options{
		Region:             cfg.AWS.Region,
		EndpointURL:        cfg.AWS.EndpointURL,
		CloudWatchProtocol: cfg.AWS.CloudWatchProtocol,
		SQSClient:          cfg.AWS.SQSClient,
		Version:            version,
		MaxAttempts:        cfg.AWS.MaxAttempts,
		MaxConnsPerHost:    cfg.AWS.ConcurrencyPerRegion,
		Registerer:         reg,
	}
}

func assemble(ctx context.Context, cfg config.Config, log *zap.Logger) (*assembly, error) {
	reg := prometheus.NewRegistry()
	clients, err := awsclient.New(ctx, awsOptions(cfg, reg))
	if err != nil {
		return nil, err
	}
	p, err := poller.New(cfg, clients, reg, log.Named("poller"))
	if err != nil {
		return nil, fmt.Errorf("set up the poller: %w", err)
	}
	pub, err := publisher.New(cfg, clients, log.Named("publisher"))
	if err != nil {
		return nil, fmt.Errorf("set up the publisher: %w", err)
	}
	groups := make([]policy.Settings, 0, len(cfg.Groups))
	for _, g := range cfg.Groups {
		s := policySettings(g, cfg.Interval)
		s.WorkerCostPerHour = cfg.WorkerCostPerHour(g)
		groups = append(groups, s)
	}
	return &assembly{groups: groups, observer: p, actuator: pub, registry: reg, history: p}, nil
}
