package awsclient

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/prometheus/client_golang/prometheus"
)

const cannedAttributes = `{"Attributes":{"ApproximateNumberOfMessages":"5",` +
	`"ApproximateNumberOfMessagesNotVisible":"2","ApproximateNumberOfMessagesDelayed":"0"}}`

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
		Body:          io.NopCloser(strings.NewReader(cannedAttributes)),
		ContentLength: int64(len(cannedAttributes)),
		Request:       r,
	}, nil
}

// BenchmarkGetQueueAttributesCall measures the client side of the
// poller's call, request metrics included, over a transport that answers
// at once: the SDK's client ("sdk") and the direct caller the poller uses
// ("direct"). Network, TLS and the HTTP transport are not in it.
func BenchmarkGetQueueAttributesCall(b *testing.B) {
	b.Setenv("AWS_ACCESS_KEY_ID", "bench")
	b.Setenv("AWS_SECRET_ACCESS_KEY", "bench")
	f, err := New(context.Background(), Options{Region: "us-east-1", EndpointURL: "https://sqs.example", Registerer: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	opts := f.SQS("us-east-1").Options()
	opts.HTTPClient = &http.Client{Transport: cannedTransport{}}
	in := &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String("https://sqs.us-east-1.amazonaws.com/123456789012/orders-high-priority"),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
		},
	}
	callers := []struct {
		name string
		get  func(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	}{
		{"sdk", sqs.New(opts).GetQueueAttributes},
		{"direct", newQueueAttributes(opts, f.metrics, "bench").GetQueueAttributes},
	}
	ctx := context.Background()
	for _, c := range callers {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				out, err := c.get(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				if out.Attributes["ApproximateNumberOfMessages"] != "5" {
					b.Fatalf("attributes %v", out.Attributes)
				}
			}
		})
	}
}
