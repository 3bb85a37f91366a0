package awsclient

import (
	"context"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestWireChoosesTheTransport: the SDK's own HTTP client goes through the
// host client; a proxy for the endpoint, or an HTTP client of another
// kind, through the client's Do.
func TestWireChoosesTheTransport(t *testing.T) {
	const endpoint = "https://sqs.us-east-1.amazonaws.com/"
	if w := newWire(awshttp.NewBuildableClient(), endpoint); w.fast == nil {
		t.Errorf("the SDK's client without a proxy: not the host client")
	}
	proxied := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse("http://proxy.internal:3128") }
	})
	if w := newWire(proxied, endpoint); w.fast != nil {
		t.Errorf("a proxy for the endpoint: the host client would bypass it")
	}
	notForThis := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	})
	if w := newWire(notForThis, endpoint); w.fast == nil {
		t.Errorf("a proxy setting that exempts the endpoint: not the host client")
	}
	if w := newWire(&http.Client{}, endpoint); w.fast != nil {
		t.Errorf("an HTTP client of another kind: the host client would bypass it")
	}
}

// TestDirectCallerOverTLS asks a TLS server whose certificate only the CA
// bundle of AWS_CA_BUNDLE trusts, through the host client, and keeps
// asking after the server has closed the idle connections: no call
// fails.
func TestDirectCallerOverTLS(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("X-Amz-Target") != sqsTarget || r.Header.Get("Authorization") == "" {
			http.Error(w, "not a signed GetQueueAttributes", http.StatusBadRequest)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", sqsContentType)
		_, _ = io.WriteString(w, cannedAttributes)
	}))
	srv.Config.IdleTimeout = 50 * time.Millisecond
	srv.StartTLS()
	t.Cleanup(srv.Close)

	bundle := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(bundle, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	t.Setenv("AWS_ACCESS_KEY_ID", "tls")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "tls")
	f, err := New(context.Background(), Options{Region: "us-east-1", EndpointURL: srv.URL, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := f.SQSAttributes("us-east-1")
	in := &sqs.GetQueueAttributesInput{QueueUrl: aws.String(srv.URL + "/123456789012/tls")}
	for i := range 4 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		out, err := c.GetQueueAttributes(ctx, in)
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if out.Attributes["ApproximateNumberOfMessages"] != "5" {
			t.Fatalf("call %d: %v", i, out.Attributes)
		}
		if c.wire.fast == nil {
			t.Fatalf("not through the host client")
		}
		time.Sleep(150 * time.Millisecond) // the server closes the idle connection
	}
	if n := requests.Load(); n < 4 {
		t.Errorf("%d requests served, want at least 4", n)
	}
}
