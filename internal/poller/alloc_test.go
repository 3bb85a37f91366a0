package poller

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// cannedTransport answers every request with the same GetQueueAttributes
// body without a network or a server, so that a benchmark's allocations
// are the client's alone.
type cannedTransport struct{}

func (cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(strings.NewReader(loadAttributes)),
		ContentLength: int64(len(loadAttributes)),
		Request:       r,
	}, nil
}

// BenchmarkGetQueueAttributesCall measures the client side of one
// GetQueueAttributes call: the SQS client as the factory makes it (its
// request metrics included) over a transport that answers at once.
// "poll" is the poller's call; "fresh-input" makes a new input per call.
func BenchmarkGetQueueAttributesCall(b *testing.B) {
	reg := prometheus.NewRegistry()
	f := scaleFactory(b, "http://127.0.0.1:1", reg)
	client := sqs.New(f.SQS(east).Options(), func(o *sqs.Options) { o.HTTPClient = &http.Client{Transport: cannedTransport{}} })
	cfg := scaleConfig(1, 1, false)
	p, err := New(cfg, f, reg, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	q := p.groups[0].queues[0]
	q.metaKnown = true
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	b.Run("poll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			q.poll(ctx, client)
			if !q.res.ok {
				b.Fatal(q.res.err)
			}
		}
	})
	b.Run("fresh-input", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &q.url, AttributeNames: countAttributes})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := parseAttributes(out.Attributes); err != nil {
				b.Fatal(err)
			}
		}
	})
}
