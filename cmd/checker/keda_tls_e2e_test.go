package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
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
	"github.com/queuechecker/queue-checker/internal/testca"
)

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

	serverCA, clientCA := testca.New(t, "checker CA"), testca.New(t, "keda CA")
	serverCert, serverKey := serverCA.Server(t, 2, "localhost")
	clientCert, clientKey := clientCA.Client(t, 3, "keda-operator")
	// The two Secrets of the component, by key.
	serverSecret := map[string]string{"tls.crt": string(serverCert), "tls.key": string(serverKey), "ca.crt": string(clientCA.PEM)}
	clientSecret := map[string]string{"tls.crt": string(clientCert), "tls.key": string(clientKey), "ca.crt": string(serverCA.PEM)}

	// The component's configuration names the files in /tls: write them
	// here instead.
	cm := kubetest.ReadObject(t, filepath.Join(kubeManifests, "keda-tls", "configmap.yaml"))
	shipped, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
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
	ta := kubetest.ReadObject(t, filepath.Join(kubeManifests, "keda-tls", "triggerauthentication.yaml"))
	refs, _, _ := unstructured.NestedSlice(ta.Object, "spec", "secretTargetRef")
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
	otherCert, otherKey := testca.New(t, "other CA").Client(t, 4, "keda-operator")
	refused("a client certificate of another CA", map[string]string{"caCert": authParams["caCert"], "tlsClientCert": string(otherCert), "tlsClientKey": string(otherKey)})
	if code := d.stop(t); code != 0 {
		t.Errorf("run exited %d, want 0", code)
	}
}
