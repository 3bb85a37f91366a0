// Package awstest runs a real AWS emulator (moto's server) for integration
// tests: started on a free loopback port, reached over HTTP by the real SDK
// clients, stopped when the tests end.
package awstest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// SkipEnv names the environment variable that skips the integration tests
// when moto is not installed. CI never sets it.
const SkipEnv = "CHECKER_SKIP_INTEGRATION"

// InstallHint says how to get the emulator.
const InstallHint = "moto's server is needed for the integration tests: " +
	"python3 -m pip install 'moto[server]>=5.1.12' (or set " + SkipEnv + "=1 to skip them)"

// Moto is one running moto server.
type Moto struct {
	URL   string // http://127.0.0.1:PORT, the front that serialises DynamoDB's requests
	cmd   *exec.Cmd
	front *serialFront
}

// Start launches moto_server on a free loopback port and waits until it
// answers. env are extra NAME=value settings of the server, such as
// INITIAL_NO_AUTH_ACTION_COUNT, after which moto checks every request's
// signature and IAM permissions. The caller must Close it.
func Start(ctx context.Context, env ...string) (*Moto, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, fmt.Errorf("moto_server not found: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = nil, nil
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	m := &Moto{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	if err := m.waitReady(ctx, 60*time.Second); err != nil {
		m.Close()
		return nil, err
	}
	front, url, err := startSerialFront(m.URL)
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("start the front of moto_server: %w", err)
	}
	m.front, m.URL = front, url
	return m, nil
}

func (m *Moto) waitReady(ctx context.Context, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/moto-api/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode < 500 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("moto_server on %s did not answer within %s", m.URL, limit)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the server.
func (m *Moto) Close() {
	if m.front != nil {
		m.front.close()
	}
	if m.cmd.Process != nil {
		_ = m.cmd.Process.Kill()
		_ = m.cmd.Wait()
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Env is the environment the SDK needs to talk to the emulator: dummy
// credentials and a default region. The endpoint is passed per client.
var Env = map[string]string{
	"AWS_ACCESS_KEY_ID":         "testing",
	"AWS_SECRET_ACCESS_KEY":     "testing",
	"AWS_SESSION_TOKEN":         "testing",
	"AWS_REGION":                "us-east-1",
	"AWS_EC2_METADATA_DISABLED": "true",
}

var (
	shared     *Moto
	sharedErr  error
	sharedOnce sync.Once
)

// Shared returns one moto server for the whole test binary, started on first
// use; Main stops it. Tests that need the emulator call it first: when moto
// is missing the test fails saying how to install it, or is skipped when
// SkipEnv is set.
func Shared(t testing.TB) *Moto {
	t.Helper()
	sharedOnce.Do(func() {
		for k, v := range Env {
			if os.Getenv(k) == "" {
				_ = os.Setenv(k, v)
			}
		}
		shared, sharedErr = Start(context.Background())
	})
	if sharedErr != nil {
		if os.Getenv(SkipEnv) != "" {
			t.Skipf("skipping integration test (%s set): %v", SkipEnv, sharedErr)
		}
		if errors.Is(sharedErr, exec.ErrNotFound) {
			t.Fatalf("%v\n%s", sharedErr, InstallHint)
		}
		t.Fatalf("start moto: %v\n%s", sharedErr, InstallHint)
	}
	return shared
}

// Main runs a package's tests and stops the shared server afterwards. Use it
// from TestMain: func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	return code
}

// M wraps m so that its Run is Main's: the tests, then the shared server
// stopped. It is for goleak, which looks for goroutines left behind once
// Run returns: func TestMain(m *testing.M) { goleak.VerifyTestMain(awstest.M(m)) }.
func M(m *testing.M) interface{ Run() int } { return mainRun{m} }

type mainRun struct{ m *testing.M }

func (r mainRun) Run() int { return Main(r.m) }

// TransportGoroutines are the goroutines the AWS clients' HTTP transports
// keep for idle connections: net/http's connection loops, and the fasthttp
// host client's cleaner, which closes idle connections and ends on its
// own once none are left (within the idle timeout). They are the
// transports', not leaks of the code under test:
// goleak.VerifyTestMain(awstest.M(m), awstest.TransportGoroutines...).
var TransportGoroutines = []goleak.Option{
	goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
	goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
}
