// Package kubetest runs a real Kubernetes API server (kube-apiserver over
// etcd) for tests: started on free loopback ports with a token file and
// RBAC, reached by the real client-go clients, stopped when the tests end.
// There is no controller-manager, scheduler or kubelet: tests write what
// those would (a Deployment's status, pods) themselves.
//
// The binaries are built once by scripts/kube/build-apiserver (make test
// runs it through scripts/test-deps) into BinDir. Without them a test is
// skipped, saying how to build them, unless CI is set: then it fails.
package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// Version is the kube-apiserver the tests run; scripts/kube/build-apiserver
// builds the same by default.
const Version = "v1.37.2"

// BinDirEnv overrides where the binaries are looked for.
const BinDirEnv = "QC_KUBE_BIN"

// BuildHint says how to get the binaries.
const BuildHint = "kube-apiserver and etcd are needed for the Kubernetes tests: run scripts/kube/build-apiserver " +
	"(about 7 minutes the first time, cached in ~/.cache/queue-checker/kube/" + Version + "), or make test-deps"

// BinDir is where kube-apiserver and etcd are looked for.
func BinDir() string {
	if d := os.Getenv(BinDirEnv); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".cache", "queue-checker", "kube", Version)
}

// The users of the token file. Admin is in system:masters; Checker is the
// checker's service account as deploy/kubernetes names it, with only what
// RBAC grants it.
const (
	AdminUser        = "admin"
	CheckerNamespace = "queue-checker"
	CheckerAccount   = "queue-checker"
	CheckerUser      = "system:serviceaccount:" + CheckerNamespace + ":" + CheckerAccount
)

// Server is one running API server and its etcd.
type Server struct {
	URL    string // https://127.0.0.1:PORT
	tokens map[string]string
	dir    string
	procs  []proc
	// keepLogs leaves the logs in dir on Close (a failed start).
	keepLogs bool
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once the process has been reaped
}

// Config is a client config that authenticates as user (AdminUser or
// CheckerUser); the server's self-signed certificate is not verified.
func (s *Server) Config(user string) *rest.Config {
	return &rest.Config{
		Host:            s.URL,
		BearerToken:     s.tokens[user],
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             200, Burst: 400,
	}
}

// Kubeconfig writes a kubeconfig file for user and returns its path, for
// code that finds its cluster the way the checker does (KUBECONFIG).
func (s *Server) Kubeconfig(t testing.TB, user string) string {
	t.Helper()
	doc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: %q, user: {token: %q}}]
contexts: [{name: test, context: {cluster: test, user: %q}}]
current-context: test
`, s.URL, user, s.tokens[user], user)
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Start starts etcd and kube-apiserver from dir's binaries and waits until
// the API server is ready (RBAC's bootstrap roles included). The caller
// must Close it.
func Start(ctx context.Context, binDir string) (_ *Server, err error) {
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			return nil, fmt.Errorf("%s: %w", b, exec.ErrNotFound)
		}
	}
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, tokens: map[string]string{}}
	defer func() {
		if err != nil {
			s.keepLogs = true // for the error's message
			s.Close()
		}
	}()
	var lines []string
	for _, u := range []struct{ name, groups string }{{AdminUser, "system:masters"}, {CheckerUser, "system:serviceaccounts,system:serviceaccounts:" + CheckerNamespace}} {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		tok := hex.EncodeToString(b)
		s.tokens[u.name] = tok
		lines = append(lines, fmt.Sprintf("%s,%s,%s,%q", tok, u.name, u.name, u.groups))
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := writeKey(filepath.Join(dir, "sa.key")); err != nil {
		return nil, err
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if err := s.run(filepath.Join(binDir, "etcd"), "etcd.log",
		"--name=test", "--data-dir="+filepath.Join(dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=test="+peerURL, "--unsafe-no-fsync", "--log-level=warn",
	); err != nil {
		return nil, err
	}
	if err := waitHTTP(ctx, http.DefaultClient, etcdURL+"/health", "", 30*time.Second); err != nil {
		return nil, fmt.Errorf("etcd: %w (log in %s)", err, dir)
	}
	s.URL = fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	if err := s.run(filepath.Join(binDir, "kube-apiserver"), "apiserver.log",
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[2]),
		// A loopback address cannot be the kubernetes Service's endpoint.
		"--endpoint-reconciler-type=none",
		"--cert-dir="+filepath.Join(dir, "certs"),
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(dir, "sa.key"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16",
		// No controller-manager makes the namespaces' default service
		// accounts, which this plugin would require of every pod.
		"--disable-admission-plugins=ServiceAccount",
		"--profiling=false", "--v=1",
	); err != nil {
		return nil, err
	}
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test server's self-signed certificate
	if err := waitHTTP(ctx, insecure, s.URL+"/readyz", s.tokens[AdminUser], 90*time.Second); err != nil {
		return nil, fmt.Errorf("kube-apiserver: %w (log in %s)", err, filepath.Join(dir, "apiserver.log"))
	}
	return s, nil
}

func (s *Server) run(bin, logName string, args ...string) error {
	logf, err := os.Create(filepath.Join(s.dir, logName))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start %s: %w", filepath.Base(bin), err)
	}
	p := proc{cmd: cmd, done: make(chan struct{})}
	s.procs = append(s.procs, p)
	go func() { _ = cmd.Wait(); logf.Close(); close(p.done) }()
	return nil
}

// Close stops the API server, then etcd, and removes their files.
func (s *Server) Close() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		_ = p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	}
	if s.dir != "" && !s.keepLogs {
		_ = os.RemoveAll(s.dir)
	}
}

func waitHTTP(ctx context.Context, c *http.Client, url, token string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	last := ""
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s (last: %s)", url, limit, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func writeKey(path string) error {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	return os.WriteFile(path, b, 0o600)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

var (
	shared     *Server
	sharedErr  error
	sharedOnce sync.Once
)

// Shared returns one API server for the whole test binary, started on
// first use; Main stops it. Without the binaries the test is skipped with
// BuildHint, or fails when CI is set.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() {
		start := time.Now()
		shared, sharedErr = Start(context.Background(), BinDir())
		if sharedErr == nil {
			fmt.Fprintf(os.Stderr, "kubetest: kube-apiserver %s ready on %s in %s\n", Version, shared.URL, time.Since(start).Round(time.Millisecond))
		}
	})
	if sharedErr != nil {
		if errors.Is(sharedErr, exec.ErrNotFound) && os.Getenv("CI") == "" {
			t.Skipf("skipping Kubernetes test: %v in %s; %s", sharedErr, BinDir(), BuildHint)
		}
		t.Fatalf("start the API server: %v\n%s", sharedErr, BuildHint)
	}
	return shared
}

// Main runs a package's tests and stops the shared server afterwards:
// func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	return code
}

// StartT starts a server of the test's own, closed when the test ends:
// for packages whose TestMain does not call Main. Without the binaries
// the test is skipped with BuildHint, or fails when CI is set.
func StartT(t testing.TB) *Server {
	t.Helper()
	start := time.Now()
	s, err := Start(context.Background(), BinDir())
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) && os.Getenv("CI") == "" {
			t.Skipf("skipping Kubernetes test: %v in %s; %s", err, BinDir(), BuildHint)
		}
		t.Fatalf("start the API server: %v\n%s", err, BuildHint)
	}
	t.Logf("kube-apiserver %s ready on %s in %s", Version, s.URL, time.Since(start).Round(time.Millisecond))
	t.Cleanup(s.Close)
	return s
}
