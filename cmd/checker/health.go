package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// defaultHealthURL is /livez of a checker listening on the default address:
// the probe for a container health check that replaces the checker, which
// must not fail when AWS does (a new checker would only lose the windows).
const defaultHealthURL = "http://127.0.0.1:9102/livez"

// maxHealthBody bounds how much of the probe's answer is read and shown.
const maxHealthBody = 64 << 10

// cmdHealth probes a running checker's liveness (/livez, or the endpoint
// --url names: /readyz or /healthz to ask whether it is ready): exit 0 on
// 200 OK, 1 on any other answer or no answer (the body goes to stderr), 2
// on bad flags. It lets a container image without curl or a shell run its
// own health check.
func cmdHealth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("health", stderr)
	target := fs.String("url", defaultHealthURL, "the endpoint to probe: /livez (alive, whatever AWS answers) for a health check that replaces the checker; /readyz or /healthz (a recent good cycle) to ask whether it is ready")
	timeout := fs.Duration("timeout", 3*time.Second, "give up after this long")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *timeout <= 0 {
		return usageErr("--timeout must be positive, not %s", *timeout)
	}
	u, err := url.Parse(*target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErr("--url must be an http or https URL with a host, not %q", *target)
	}

	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fmt.Errorf("probe %s: %w", u.Redacted(), err)
	}
	// A probe of a local port goes direct: no proxy from the environment,
	// no connection kept for a process about to exit.
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", u.Redacted(), err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxHealthBody))
	if err != nil {
		return fmt.Errorf("probe %s: read the answer: %w", u.Redacted(), err)
	}
	text := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		if text == "" {
			return fmt.Errorf("probe %s: %s", u.Redacted(), resp.Status)
		}
		return fmt.Errorf("probe %s: %s: %s", u.Redacted(), resp.Status, text)
	}
	if text != "" {
		_, err = fmt.Fprintln(stdout, text)
	}
	return err
}
