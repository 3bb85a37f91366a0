package keda

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/readmodel"
	"github.com/queuechecker/queue-checker/internal/testca"
)

// TestMutualTLS: with keda.tls and a client CA, a client presenting a
// certificate of that CA (KEDA's tlsClientCert) is answered, one without
// is refused, and a missing certificate file is an error naming the key.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ca := testca.New(t, "test CA")
	sc, sk := ca.Server(t, 2, "127.0.0.1")
	cc, ck := ca.Client(t, 3, "keda")
	tlsCfg := &config.KEDATLS{CertFile: write("tls.crt", sc), KeyFile: write("tls.key", sk), ClientCAFile: write("ca.crt", ca.PEM)}

	src := &fakeDecisions{groups: map[string]readmodel.Latest{"jobs": decided(5, false)}}
	srv, err := NewServer(New(src, 0, 0), ServerOptions{TLS: tlsCfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, "127.0.0.1:0", srv, func(a net.Addr) { addrs <- a }) }()
	addr := (<-addrs).String()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	call := func(certs []tls.Certificate) error {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12})))
		if err != nil {
			return err
		}
		defer conn.Close()
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		m, err := pb.NewExternalScalerClient(conn).GetMetrics(cctx, &pb.GetMetricsRequest{ScaledObjectRef: ref("jobs")})
		if err == nil && m.MetricValues[0].MetricValueFloat != 5 {
			t.Errorf("GetMetrics over TLS = %v, want 5", m)
		}
		return err
	}
	pair, err := tls.X509KeyPair(cc, ck)
	if err != nil {
		t.Fatal(err)
	}
	if err := call([]tls.Certificate{pair}); err != nil {
		t.Errorf("client with a certificate of the client CA: %v", err)
	}
	if err := call(nil); err == nil {
		t.Error("client without a certificate was answered, want refused")
	}

	if _, err := NewServer(New(src, 0, 0), ServerOptions{TLS: &config.KEDATLS{CertFile: filepath.Join(dir, "none.crt"), KeyFile: tlsCfg.KeyFile}}); err == nil {
		t.Error("a missing certificate file: no error")
	}
}
