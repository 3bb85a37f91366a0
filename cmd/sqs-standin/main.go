// Command sqs-standin is a stand-in for Amazon SQS for load benchmarks of
// the checker: a separate process that answers GetQueueAttributes (AWS JSON
// 1.0, as the Go SDK speaks it) over TLS, after an added latency that can
// differ by region. It checks no signature and keeps no messages: a queue
// answers all zeros when idle, else fixed counts. Which queues are idle is
// chosen by a hash of the queue URL, so a share of them (-idle) is.
//
//	sqs-standin -listen 127.0.0.1:8443 -cert-out /tmp/standin.pem -latency 60ms -region-latency eu-west-1=150ms -idle 0.9
//
// Point the checker at it with aws.endpoint_url: https://127.0.0.1:8443 and
// AWS_CA_BUNDLE=/tmp/standin.pem. It serves HTTP/1.1 only. GET /stats answers the requests served,
// in all and by region, as JSON. With -write-config FILE it writes a
// checker configuration of -queues queues in -groups groups spread over
// -regions, and exits.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "sqs-standin:", err)
		if errors.Is(err, flag.ErrHelp) || errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// regionLatency is the -region-latency flag: region=duration pairs.
type regionLatency map[string]time.Duration

func (r regionLatency) String() string {
	var parts []string
	for k, v := range r {
		parts = append(parts, k+"="+v.String())
	}
	return strings.Join(parts, ",")
}

func (r regionLatency) Set(s string) error {
	for _, pair := range strings.Split(s, ",") {
		name, d, ok := strings.Cut(pair, "=")
		if !ok || name == "" {
			return fmt.Errorf("want region=duration, got %q", pair)
		}
		v, err := time.ParseDuration(d)
		if err != nil || v < 0 {
			return fmt.Errorf("want region=duration, got %q", pair)
		}
		r[name] = v
	}
	return nil
}

type options struct {
	listen        string
	certOut       string
	latency       time.Duration
	regionLatency regionLatency
	idle          float64

	writeConfig string
	queues      int
	groups      int
	regions     string
	interval    time.Duration
	idleSample  time.Duration
	perQueue    string
	endpoint    string
	ceiling     int
}

func run(args []string, stdout, stderr io.Writer) error {
	o := options{regionLatency: regionLatency{}}
	fs := flag.NewFlagSet("sqs-standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:0", "address to serve HTTPS on")
	fs.StringVar(&o.certOut, "cert-out", "", "write the server's self-signed certificate (PEM) here, for AWS_CA_BUNDLE")
	fs.DurationVar(&o.latency, "latency", 0, "added to every answer")
	fs.Var(o.regionLatency, "region-latency", "region=duration[,region=duration]: added instead of -latency for a region")
	fs.Float64Var(&o.idle, "idle", 0, "share of queues (0..1) that answer all zeros")
	fs.StringVar(&o.writeConfig, "write-config", "", "write a checker configuration to this file and exit")
	fs.IntVar(&o.queues, "queues", 10000, "with -write-config: queues")
	fs.IntVar(&o.groups, "groups", 100, "with -write-config: groups")
	fs.StringVar(&o.regions, "regions", "us-east-1,eu-west-1,ap-southeast-2,us-west-2", "with -write-config: regions")
	fs.DurationVar(&o.interval, "interval", 10*time.Second, "with -write-config: interval")
	fs.DurationVar(&o.idleSample, "idle-sample-interval", 30*time.Second, "with -write-config: each group's idle_sample_interval")
	fs.StringVar(&o.perQueue, "per-queue", "false", "with -write-config: metrics.per_queue")
	fs.IntVar(&o.ceiling, "concurrency-per-region", 128, "with -write-config: aws.concurrency_per_region")
	fs.StringVar(&o.endpoint, "endpoint", "", "with -write-config: aws.endpoint_url (the stand-in's https://host:port)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 || o.idle < 0 || o.idle > 1 || o.latency < 0 {
		fs.Usage()
		return fmt.Errorf("%w: bad arguments", errUsage)
	}
	if o.writeConfig != "" {
		return writeConfig(o)
	}
	return serve(o, stdout)
}

func serve(o options, stdout io.Writer) error {
	cert, certPEM, err := selfSigned()
	if err != nil {
		return err
	}
	if o.certOut != "" {
		if err := os.WriteFile(o.certOut, certPEM, 0o600); err != nil {
			return fmt.Errorf("write certificate: %w", err)
		}
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	s := &server{o: o, byRegion: map[string]*atomic.Int64{}}
	srv := &http.Server{
		Handler:           s,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		// HTTP/1.1 only, as SQS's endpoints serve it: a client needs a
		// connection per call in flight.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	fmt.Fprintf(stdout, "https://%s\n", ln.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.ServeTLS(ln, "", "") }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	b, _ := json.Marshal(s.stats())
	fmt.Fprintf(stdout, "%s\n", b)
	return nil
}

type server struct {
	o        options
	total    atomic.Int64
	mu       sync.Mutex
	byRegion map[string]*atomic.Int64
}

type stats struct {
	Requests int64            `json:"requests"`
	ByRegion map[string]int64 `json:"by_region"`
}

func (s *server) stats() stats {
	st := stats{Requests: s.total.Load(), ByRegion: map[string]int64{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	for r, n := range s.byRegion {
		st.ByRegion[r] = n.Load()
	}
	return st
}

func (s *server) count(region string) {
	s.total.Add(1)
	s.mu.Lock()
	c := s.byRegion[region]
	if c == nil {
		c = &atomic.Int64{}
		s.byRegion[region] = c
	}
	s.mu.Unlock()
	c.Add(1)
}

// regionOf reads the region from the SigV4 credential scope:
// Credential=AKID/20260101/us-east-1/sqs/aws4_request.
func regionOf(auth string) string {
	_, scope, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	parts := strings.SplitN(scope, "/", 5)
	if len(parts) < 4 {
		return ""
	}
	return parts[2]
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == "/stats" {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.stats())
		return
	}
	var in struct {
		QueueURL string `json:"QueueUrl"`
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || json.Unmarshal(body, &in) != nil {
		writeError(w, http.StatusBadRequest, "InvalidParameterValue", "body is not JSON")
		return
	}
	if op := r.Header.Get("X-Amz-Target"); op != "AmazonSQS.GetQueueAttributes" {
		writeError(w, http.StatusBadRequest, "UnsupportedOperation", "only GetQueueAttributes is served, not "+op)
		return
	}
	region := regionOf(r.Header.Get("Authorization"))
	s.count(region)
	d, ok := s.o.regionLatency[region]
	if !ok {
		d = s.o.latency
	}
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	if s.isIdle(in.QueueURL) {
		_, _ = io.WriteString(w, `{"Attributes":{"ApproximateNumberOfMessages":"0",`+
			`"ApproximateNumberOfMessagesNotVisible":"0","ApproximateNumberOfMessagesDelayed":"0",`+
			`"QueueArn":"arn:aws:sqs:`+region+`:123456789012:q","FifoQueue":"false"}}`)
		return
	}
	_, _ = io.WriteString(w, `{"Attributes":{"ApproximateNumberOfMessages":"5",`+
		`"ApproximateNumberOfMessagesNotVisible":"2","ApproximateNumberOfMessagesDelayed":"1",`+
		`"QueueArn":"arn:aws:sqs:`+region+`:123456789012:q","FifoQueue":"false"}}`)
}

// isIdle picks the idle share of queues by a hash of the URL.
func (s *server) isIdle(url string) bool {
	if s.o.idle <= 0 {
		return false
	}
	h := fnv.New32a()
	_, _ = io.WriteString(h, url)
	return float64(h.Sum32()%10000) < s.o.idle*10000
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"__type": code, "message": msg})
	_, _ = w.Write(b)
}

// selfSigned makes a certificate for 127.0.0.1, ::1 and localhost that is
// its own CA, valid for a day.
func selfSigned() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "sqs-standin"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("create certificate: %w", err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("marshal key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("key pair: %w", err)
	}
	return cert, certPEM, nil
}

// writeConfig writes a dry-run checker configuration of o.queues queues in
// o.groups groups, spread round-robin over the regions.
func writeConfig(o options) error {
	regions := strings.Split(o.regions, ",")
	if o.queues < 1 || o.groups < 1 || o.groups > o.queues || o.endpoint == "" {
		return fmt.Errorf("%w: -write-config needs -endpoint, -queues >= -groups >= 1", errUsage)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "interval: %s\nlisten: 127.0.0.1:0\ndry_run: true\nlog: {level: warn, format: json}\n", o.interval)
	fmt.Fprintf(&b, "metrics: {per_queue: %s}\n", o.perQueue)
	fmt.Fprintf(&b, "aws: {region: %s, endpoint_url: %q, max_attempts: 1, concurrency_per_region: %d}\ngroups:\n",
		regions[0], o.endpoint, o.ceiling)
	perGroup := (o.queues + o.groups - 1) / o.groups
	for first, gi := 0, 0; first < o.queues; first, gi = first+perGroup, gi+1 {
		fmt.Fprintf(&b, "  - name: g%04d\n    idle_sample_interval: %s\n    workers: {service_time: 200ms}\n"+
			"    target: {latency: 30s}\n    fleet: {max: 1000}\n    queues:\n", gi, o.idleSample)
		for i := first; i < min(first+perGroup, o.queues); i++ {
			r := regions[i%len(regions)]
			fmt.Fprintf(&b, "      - {url: \"https://sqs.%s.amazonaws.com/123456789012/q%05d\"}\n", r, i)
		}
	}
	if err := os.WriteFile(o.writeConfig, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}
