package keda

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/config"
)

// shutdownGrace is how long Serve lets calls in flight finish after its
// context ends; open streams are then cut.
const shutdownGrace = 2 * time.Second

// ServerOptions configure NewServer.
type ServerOptions struct {
	// TLS serves TLS (and mutual TLS with a client CA); nil serves plain
	// gRPC, for a listener only the cluster network reaches.
	TLS *config.KEDATLS
	// Registerer receives checker_keda_requests_total; nil exports none.
	Registerer prometheus.Registerer
	// MaxConnStreams bounds the calls one connection has in flight at
	// once; 0 is the scaler's stream bound and connCallRoom more.
	MaxConnStreams int
}

// connCallRoom is how many calls one connection may have in flight
// beyond the scaler's stream bound: room for the unary calls of a client
// that also holds every stream (KEDA shares one connection per scaler
// address among all its ScaledObjects).
const connCallRoom = 100

// NewServer returns a gRPC server serving s, with server reflection (so
// that grpcurl can list and call it) and a count of the requests by
// method and code. Every streaming method is bounded: at most s's
// maxStreams streams are open at once across all connections, more are
// refused with ResourceExhausted; and one connection carries at most
// maxStreams + connCallRoom calls at once (o.MaxConnStreams; HTTP/2's
// SETTINGS_MAX_CONCURRENT_STREAMS: a client's call beyond it waits on its
// side and costs the server nothing).
func NewServer(s *Scaler, o ServerOptions) (*grpc.Server, error) {
	perConn := o.MaxConnStreams
	if perConn <= 0 {
		perConn = cap(s.streams) + connCallRoom
	}
	opts := []grpc.ServerOption{grpc.MaxConcurrentStreams(uint32(min(perConn, math.MaxInt32)))}
	bound := grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		release, err := s.admit(info.FullMethod)
		if err != nil {
			return err
		}
		defer release()
		return h(srv, ss)
	})
	if o.TLS != nil {
		cfg, err := tlsConfig(*o.TLS)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	if o.Registerer != nil {
		requests := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "checker_keda_requests_total",
			Help: "Calls of the KEDA external scaler, by method and gRPC code.",
		}, []string{"method", "code"})
		if err := o.Registerer.Register(requests); err != nil {
			return nil, fmt.Errorf("register KEDA metrics: %w", err)
		}
		opts = append(opts,
			grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				resp, err := h(ctx, req)
				requests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
				return resp, err
			}),
			grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				err := h(srv, ss)
				requests.WithLabelValues(info.FullMethod, status.Code(err).String()).Inc()
				return err
			}))
	}
	// After the count: a refused stream is counted, with its code.
	opts = append(opts, bound)
	srv := grpc.NewServer(opts...)
	pb.RegisterExternalScalerServer(srv, s)
	reflection.Register(srv)
	return srv, nil
}

func tlsConfig(t config.KEDATLS) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("keda.tls: load certificate %s and key %s: %w", t.CertFile, t.KeyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("keda.tls.client_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("keda.tls.client_ca_file: no PEM certificate in %s", t.ClientCAFile)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// Serve listens on addr and serves srv until ctx ends; then it stops
// taking calls, lets those in flight finish for a moment, and returns nil.
// onListen, when set, is told the address bound (addr may ask for port 0).
func Serve(ctx context.Context, addr string, srv *grpc.Server, onListen func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("keda: listen on %s: %w", addr, err)
	}
	if onListen != nil {
		onListen(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("keda: serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(shutdownGrace):
		srv.Stop()
		<-stopped
	}
	if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("keda: serve on %s: %w", addr, err)
	}
	return nil
}
