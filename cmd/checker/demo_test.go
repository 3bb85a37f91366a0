package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// listenAddr waits for the "listening" log line and returns its address.
func listenAddr(t *testing.T, logs *syncBuffer, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" && line.Addr != "" {
				return line.Addr
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no listening line within %s; logs:\n%s", within, logs.String())
	return ""
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func TestDemoServesTheCheckerWithoutAWS(t *testing.T) {
	logs := &syncBuffer{}
	var stdout strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"demo", "--listen", "127.0.0.1:0", "--speed", "60", "--for", "4s"}, &stdout, logs)
	}()
	addr := listenAddr(t, logs, 10*time.Second)

	// Wait for a decision, then read the probes and the metrics.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := get(t, "http://"+addr+"/livez"); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/livez never turned 200")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, body := get(t, "http://"+addr+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q, want 200", code, body)
	}
	code, metrics := get(t, "http://"+addr+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, want := range []string{
		`checker_group_workers{group="thumbnails",kind="desired"}`,
		`checker_group_workers{group="emails",kind="recommended"}`,
		`checker_group_diagnosis{group="emails",state="capped"}`,
		`checker_build_info{`,
		`checker_last_success_timestamp_seconds `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("demo exited %d, want 0 after --for; logs:\n%s", code, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("demo did not stop after --for 4s")
	}
	if !strings.Contains(logs.String(), `"msg":"decision changed"`) {
		t.Errorf("no decision was logged:\n%s", logs.String())
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"demo", "--speed", "0"},
		{"demo", "--interval", "100ms"},
		{"demo", "--log-format", "xml"},
		{"demo", "--nope"},
	} {
		var stdout, stderr strings.Builder
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2; stderr %q", args, code, stderr.String())
		}
	}
}
