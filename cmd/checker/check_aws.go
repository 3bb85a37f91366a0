package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/lease"
	"github.com/queuechecker/queue-checker/internal/poller"
)

// checkAWS reads, once and without changing anything, what a valid
// configuration names in AWS: the lease table, and every queue and fleet
// through one sampling round as `checker run` makes it. It returns one
// problem per thing that does not answer, each naming its YAML path.
func checkAWS(ctx context.Context, cfg config.Config) ([]*config.FieldError, error) {
	var problems []*config.FieldError
	add := func(path, format string, args ...any) {
		problems = append(problems, &config.FieldError{Path: path, Msg: fmt.Sprintf(format, args...)})
	}
	ctx, cancel := context.WithTimeout(ctx, 3*cfg.CallTimeout()+10*time.Second)
	defer cancel()
	if co := cfg.Coordination; co != nil && co.Kubernetes == nil {
		clients, region, err := leaseClients(ctx, cfg, nil)
		if err != nil {
			return nil, err
		}
		cctx, ccancel := context.WithTimeout(ctx, cfg.CallTimeout())
		if err := lease.CheckTable(cctx, clients.DynamoDB(region), co.DynamoDB.Table); err != nil {
			add("coordination.dynamodb.table", "%v", err)
		}
		ccancel()
	}
	clients, err := awsclient.New(ctx, awsOptions(cfg, nil))
	if err != nil {
		return nil, err
	}
	p, err := poller.New(cfg, clients, prometheus.NewRegistry(), zap.NewNop())
	if err != nil {
		return nil, fmt.Errorf("set up the poller: %w", err)
	}
	obs, err := p.Observe(ctx, time.Now())
	if err != nil && len(obs) == 0 {
		return nil, fmt.Errorf("sample the queues: %w", err)
	}
	index := map[string]int{}
	for i, g := range cfg.Groups {
		index[g.Name] = i
	}
	for _, o := range obs {
		i, ok := index[o.Sample.Group]
		if !ok {
			continue
		}
		g := cfg.Groups[i]
		for _, f := range o.Sample.Failures {
			path := fmt.Sprintf("groups[%d].queues", i)
			for j, q := range g.Queues {
				if q.URL == f.Queue || strings.HasSuffix(strings.TrimSuffix(q.URL, "/"), "/"+f.Queue) {
					path = fmt.Sprintf("groups[%d].queues[%d].url", i, j)
				}
			}
			add(path, "%s (%s): %s", f.Queue, f.Class, f.Message)
		}
		if o.Fleet.Err != nil {
			add(fmt.Sprintf("groups[%d].fleet", i), "%v", o.Fleet.Err)
		}
	}
	return problems, nil
}
