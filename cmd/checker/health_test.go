package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/web"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/stale", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "unhealthy: last good cycle 40s ago (limit 15s)", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/stale", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// A port that was listening a moment ago and no longer is.
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr []string // substrings
	}{
		{name: "200 is healthy", args: []string{"--url", srv.URL + "/ok"}, wantCode: 0, wantStdout: "ok\n"},
		{name: "503 is unhealthy, body on stderr", args: []string{"--url", srv.URL + "/stale"}, wantCode: 1,
			wantStderr: []string{"503 Service Unavailable", "last good cycle 40s ago"}},
		{name: "500 without a body", args: []string{"--url", srv.URL + "/empty"}, wantCode: 1,
			wantStderr: []string{"500 Internal Server Error"}},
		{name: "404 is unhealthy", args: []string{"--url", srv.URL + "/nowhere"}, wantCode: 1,
			wantStderr: []string{"404 Not Found"}},
		{name: "a redirect is followed to its answer", args: []string{"--url", srv.URL + "/moved"}, wantCode: 1,
			wantStderr: []string{"503", "last good cycle"}},
		{name: "no answer within the timeout", args: []string{"--url", srv.URL + "/slow", "--timeout", "100ms"}, wantCode: 1,
			wantStderr: []string{"deadline exceeded"}},
		{name: "nothing listening", args: []string{"--url", goneURL + "/healthz"}, wantCode: 1,
			wantStderr: []string{"connection refused"}},
		{name: "unknown flag", args: []string{"--nope"}, wantCode: 2, wantStderr: []string{"not defined: -nope"}},
		{name: "stray argument", args: []string{"--url", srv.URL + "/ok", "extra"}, wantCode: 2,
			wantStderr: []string{`unexpected argument "extra"`}},
		{name: "zero timeout", args: []string{"--url", srv.URL + "/ok", "--timeout", "0s"}, wantCode: 2,
			wantStderr: []string{"--timeout must be positive"}},
		{name: "not a duration", args: []string{"--timeout", "soon"}, wantCode: 2, wantStderr: []string{"soon"}},
		{name: "not an http URL", args: []string{"--url", "ftp://127.0.0.1/healthz"}, wantCode: 2,
			wantStderr: []string{"--url must be an http or https URL"}},
		{name: "no host", args: []string{"--url", "http:///healthz"}, wantCode: 2,
			wantStderr: []string{"--url must be an http or https URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"health"}, tt.args...), &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", code, tt.wantCode, stderr.String())
			}
			if stdout.String() != tt.wantStdout {
				t.Errorf("stdout %q, want %q", stdout.String(), tt.wantStdout)
			}
			for _, want := range tt.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %q does not contain %q", stderr.String(), want)
				}
			}
			if tt.wantCode == 0 && stderr.Len() > 0 {
				t.Errorf("stderr not empty on success: %q", stderr.String())
			}
		})
	}
}

// staticObserver answers every cycle with one group whose only queue answered.
type staticObserver struct{ group string }

func (o staticObserver) Observe(_ context.Context, now time.Time) ([]model.Observation, error) {
	return []model.Observation{{
		Sample: model.GroupSample{Group: o.group, At: now, Visible: 10, Backlog: 10, Queues: 1, Answered: 1},
		Fleet:  model.Fleet{Kind: "autoscaling", Name: o.group, Known: true, Desired: 1, Max: 10, InService: 1},
	}}, nil
}

// TestHealthAgainstTheDaemonsHandler probes the real /healthz as the daemon
// serves it: unhealthy before the first cycle, healthy after a good one,
// unhealthy again once that cycle is older than three intervals.
func TestHealthAgainstTheDaemonsHandler(t *testing.T) {
	t.Parallel()
	ctrl, err := controller.New(controller.Options{
		Groups:   []policy.Settings{{Group: "thumbnails", ServiceTime: 200 * time.Millisecond, Latency: 30 * time.Second, Min: 1, Max: 10}},
		Observer: staticObserver{group: "thumbnails"},
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var clock atomic.Int64 // the handler's clock, in Unix nanoseconds
	clock.Store(start.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	setClock := func(t time.Time) { clock.Store(t.UnixNano()) }

	srv := httptest.NewServer(web.Handler(web.Options{Controller: ctrl, Interval: 5 * time.Second, Now: now}))
	t.Cleanup(srv.Close)
	probe := func() (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"health", "--url", srv.URL + "/healthz"}, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	steps := []struct {
		name       string
		before     func()
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "before the first cycle", wantCode: 1, wantStderr: "503 Service Unavailable: starting: the first cycle is still running"},
		{name: "after a good cycle", before: func() {
			if _, err := ctrl.RunOnce(context.Background(), start); err != nil {
				t.Fatalf("RunOnce: %v", err)
			}
		}, wantCode: 0, wantStdout: "ok\n"},
		{name: "three intervals later, still within the limit", before: func() { setClock(start.Add(15 * time.Second)) },
			wantCode: 0, wantStdout: "ok\n"},
		{name: "past three intervals without a good cycle", before: func() { setClock(start.Add(16 * time.Second)) },
			wantCode: 1, wantStderr: "unhealthy: last good cycle 16s ago"},
	}
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		code, stdout, stderr := probe()
		if code != s.wantCode || stdout != s.wantStdout || !strings.Contains(stderr, s.wantStderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr containing %q",
				s.name, code, stdout, stderr, s.wantCode, s.wantStdout, s.wantStderr)
		}
	}
}

// failingObserver answers its first cycle and fails every one after, as
// during an AWS outage.
type failingObserver struct {
	group string
	calls *atomic.Int64
}

func (o failingObserver) Observe(ctx context.Context, now time.Time) ([]model.Observation, error) {
	if o.calls.Add(1) > 1 {
		return nil, errors.New("sqs: dial tcp: connection refused")
	}
	return staticObserver{group: o.group}.Observe(ctx, now)
}

// TestHealthDefaultsToLiveness: with no --url, checker health probes
// /livez, so that a container health check (the Dockerfile's, ECS's) keeps
// a checker through an AWS outage that /healthz and /readyz report.
func TestHealthDefaultsToLiveness(t *testing.T) {
	t.Parallel()
	if u, err := url.Parse(defaultHealthURL); err != nil || u.Path != "/livez" || u.Host != "127.0.0.1:9102" {
		t.Errorf("default --url %s, want http://127.0.0.1:9102/livez", defaultHealthURL)
	}
	ctrl, err := controller.New(controller.Options{
		Groups:   []policy.Settings{{Group: "thumbnails", ServiceTime: 200 * time.Millisecond, Latency: 30 * time.Second, Min: 1, Max: 10}},
		Observer: failingObserver{group: "thumbnails", calls: new(atomic.Int64)},
	})
	if err != nil {
		t.Fatal(err)
	}
	const interval = 5 * time.Second
	start := time.Now()
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	srv := httptest.NewServer(web.Handler(web.Options{Controller: ctrl, Interval: interval,
		Now: func() time.Time { return time.Unix(0, clock.Load()) }}))
	t.Cleanup(srv.Close)
	// One good cycle, then ten intervals of failing ones.
	for i := range 11 {
		now := start.Add(time.Duration(i) * interval)
		clock.Store(now.UnixNano())
		_, _ = ctrl.RunOnce(context.Background(), now)
	}
	for _, tc := range []struct {
		path     string
		wantCode int
		want     string
	}{
		{"/livez", 0, "ok"},
		{"/readyz", 1, "not ready: unhealthy: last good cycle 50s ago"},
		{"/healthz", 1, "unhealthy: last good cycle 50s ago"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"health", "--url", srv.URL + tc.path}, &stdout, &stderr)
		if code != tc.wantCode || !strings.Contains(stdout.String()+stderr.String(), tc.want) {
			t.Errorf("health --url %s during the outage: exit %d, %q %q; want exit %d with %q",
				tc.path, code, stdout.String(), stderr.String(), tc.wantCode, tc.want)
		}
	}
}
