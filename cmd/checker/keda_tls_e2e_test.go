package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/kubetest"
)

// pemCA issues the certificates of the TLS test, PEM encoded as a Secret
// holds them.
type pemCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newPEMCA(t *testing.T, name string) *pemCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &pemCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// issue signs a server certificate for dnsName, or a client certificate
// when dnsName is empty.
func (ca *pemCA) issue(t *testing.T, serial int64, dnsName string) (certPEM, keyPEM string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "keda-operator"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if dnsName != "" {
		tmpl.Subject.CommonName = dnsName
		tmpl.DNSNames = []string{dnsName}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}))
}

// kedaDial connects as KEDA v2.21's external scaler client does with a
// TriggerAuthentication: the authParams caCert, tlsClientCert and
// tlsClientKey are PEM text; the client presents the pair, trusts the
// system's roots plus caCert, TLS 1.2 at least, and dials the trigger's
// scalerAddress with a round-robin service config.
func kedaDial(t *testing.T, scalerAddress string, authParams map[string]string) pb.ExternalScalerClient {
	t.Helper()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if authParams["tlsClientCert"] != "" {
		pair, err := tls.X509KeyPair([]byte(authParams["tlsClientCert"]), []byte(authParams["tlsClientKey"]))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM([]byte(authParams["caCert"])) {
		t.Fatal("caCert holds no certificate")
	}
	cfg.RootCAs = roots
	conn, err := grpc.NewClient(scalerAddress,
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"round_robin":{}}]}`),
		grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewExternalScalerClient(conn)
}

// TestE2EKEDAMutualTLS runs `checker run` with deploy/kubernetes/keda-tls's
// keda.tls (its files written from the Secrets' PEM) and talks to it as
// KEDA does with the component's TriggerAuthentication: its
// secretTargetRef maps the client Secret's keys to the authParams. The
// calls KEDA makes are answered, with the metric KEDA names
// s0-queue-checker-<group> asked for without its s0- prefix; a client
// without a certificate, or with one of another CA, is refused.
func TestE2EKEDAMutualTLS(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	q := makeQueue(t, f, queueSpec{region: east, visible: 30})
	asg := makeASG(t, f, 0, 10, 2)

	serverCA, clientCA := newPEMCA(t, "checker CA"), newPEMCA(t, "keda CA")
	serverCert, serverKey := serverCA.issue(t, 2, "localhost")
	clientCert, clientKey := clientCA.issue(t, 3, "")
	// The two Secrets of the component, by key.
	serverSecret := map[string]string{"tls.crt": serverCert, "tls.key": serverKey, "ca.crt": clientCA.pem}
	clientSecret := map[string]string{"tls.crt": clientCert, "tls.key": clientKey, "ca.crt": serverCA.pem}

	// The component's configuration names the files in /tls: write them
	// here instead.
	b, err := os.ReadFile(filepath.Join(kubeManifests, "keda-tls", "configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := kubetest.Decode(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("keda-tls/configmap.yaml: %v", err)
	}
	shipped, _, _ := unstructured.NestedString(objs[0].Object, "data", "config.yaml")
	var tlsLine string
	for _, l := range strings.Split(shipped, "\n") {
		if strings.Contains(l, "tls:") {
			tlsLine = strings.TrimSpace(l)
		}
	}
	dir := t.TempDir()
	for key, v := range serverSecret {
		writeFile(t, filepath.Join(dir, key), v)
	}
	tlsLine = strings.ReplaceAll(tlsLine, "/tls/", dir+"/")
	if !strings.Contains(tlsLine, dir+"/tls.crt") || !strings.Contains(tlsLine, dir+"/ca.crt") {
		t.Fatalf("keda-tls's keda.tls line %q does not name /tls/tls.crt and /tls/ca.crt", tlsLine)
	}
	doc := fmt.Sprintf(`interval: 1s
listen: 127.0.0.1:0
keda:
  listen: 127.0.0.1:0
  %s
aws: {region: %s, endpoint_url: %s, cloudwatch_protocol: json}
groups:
  - name: thumbnails
    queues: [{url: %q}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    forecast: {enabled: false}
    fleet: {autoscaling_group: {name: %s}, min: 1, max: 10}
    actions: {set_desired_capacity: false}
`, tlsLine, east, moto.URL, q.url, asg)
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, doc)
	d := startDaemon(t, path)
	addr := logAddr(t, d.logs, "serving KEDA's external scaler", 10*time.Second)
	_, port, _ := net.SplitHostPort(addr)
	scalerAddress := "localhost:" + port // the name in the server's certificate

	// authParams from the TriggerAuthentication's secretTargetRef.
	b, err = os.ReadFile(filepath.Join(kubeManifests, "keda-tls", "triggerauthentication.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs, err = kubetest.Decode(b)
	if err != nil || len(objs) != 1 {
		t.Fatalf("keda-tls/triggerauthentication.yaml: %v", err)
	}
	refs, _, _ := unstructured.NestedSlice(objs[0].Object, "spec", "secretTargetRef")
	authParams := map[string]string{}
	for _, r := range refs {
		m := r.(map[string]any)
		authParams[m["parameter"].(string)] = clientSecret[m["key"].(string)]
	}
	ref := &pb.ScaledObjectRef{Name: "thumbnails", Namespace: "workers",
		ScalerMetadata: map[string]string{"scalerAddress": "queue-checker.queue-checker.svc.cluster.local:9103", "group": "thumbnails"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	keda := kedaDial(t, scalerAddress, authParams)
	spec, err := keda.GetMetricSpec(ctx, ref)
	if err != nil {
		t.Fatalf("GetMetricSpec over mutual TLS: %v", err)
	}
	// KEDA names the HPA's metric s<trigger index>-<the scaler's name>
	// and strips the prefix again when it asks GetMetrics.
	hpaMetric := "s0-" + spec.MetricSpecs[0].MetricName
	if hpaMetric != "s0-queue-checker-thumbnails" {
		t.Errorf("the HPA's metric would be %q, want s0-queue-checker-thumbnails (docs/kubernetes.md)", hpaMetric)
	}
	stream, err := keda.StreamMetricSpec(ctx, ref)
	if err != nil {
		t.Fatalf("StreamMetricSpec: %v", err)
	}
	if s, err := stream.Recv(); err != nil || s.MetricSpecs[0].MetricName != spec.MetricSpecs[0].MetricName {
		t.Errorf("StreamMetricSpec sent %v, %v; want GetMetricSpec's %v", s, err, spec)
	}
	var value float64
	eventually(t, 15*time.Second, "GetMetrics answers", func() bool {
		m, err := keda.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref, MetricName: strings.TrimPrefix(hpaMetric, "s0-")})
		if err != nil {
			return false
		}
		value = m.MetricValues[0].MetricValueFloat
		return m.MetricValues[0].MetricName == "queue-checker-thumbnails"
	})
	if active, err := keda.IsActive(ctx, ref); err != nil || !active.Result || value < 1 {
		t.Errorf("IsActive %v (%v) with GetMetrics %v, want active with 1 or more", active, err, value)
	}
	t.Logf("over mutual TLS: GetMetricSpec %s, GetMetrics %v, StreamMetricSpec and IsActive answered", hpaMetric, value)

	refused := func(what string, params map[string]string) {
		t.Helper()
		c := kedaDial(t, scalerAddress, params)
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		if _, err := c.GetMetricSpec(cctx, ref); err == nil {
			t.Errorf("%s: answered, want refused", what)
		}
	}
	refused("no client certificate", map[string]string{"caCert": authParams["caCert"]})
	otherCert, otherKey := newPEMCA(t, "other CA").issue(t, 4, "")
	refused("a client certificate of another CA", map[string]string{"caCert": authParams["caCert"], "tlsClientCert": otherCert, "tlsClientKey": otherKey})
	if code := d.stop(t); code != 0 {
		t.Errorf("run exited %d, want 0", code)
	}
}
