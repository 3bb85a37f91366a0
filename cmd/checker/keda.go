package main

import (
	"context"
	"net"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/keda"
)

// kedaServer returns the function that serves KEDA's external scaler from
// the controller's decisions until ctx ends, or nil when k.Listen is
// empty. The listener is set up at start: a reload does not move it.
func kedaServer(k config.KEDA, ctrl *controller.Controller, reg prometheus.Registerer, log *zap.Logger) (func(ctx context.Context) error, error) {
	if k.Listen == "" {
		return nil, nil
	}
	srv, err := keda.NewServer(keda.New(ctrl.Views(), 0, k.MaxStreams), keda.ServerOptions{TLS: k.TLS, Registerer: reg})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		return keda.Serve(ctx, k.Listen, srv, func(a net.Addr) {
			log.Info("serving KEDA's external scaler", zap.String("addr", a.String()), zap.Bool("tls", k.TLS != nil))
		})
	}, nil
}
