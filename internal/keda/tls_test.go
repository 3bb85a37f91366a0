package keda

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
)

// testCA issues certificates for the TLS test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate and key, PEM encoded, for a server
// (127.0.0.1) or a client.
func (ca *testCA) issue(t *testing.T, serial int64, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "keda"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})
}

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
	ca := newCA(t)
	sc, sk := ca.issue(t, 2, true)
	cc, ck := ca.issue(t, 3, false)
	tlsCfg := &config.KEDATLS{CertFile: write("tls.crt", sc), KeyFile: write("tls.key", sk), ClientCAFile: write("ca.crt", ca.pem)}

	src := &fakeDecisions{groups: map[string]controller.Latest{"jobs": decided(5, false)}}
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
	roots.AppendCertsFromPEM(ca.pem)
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
