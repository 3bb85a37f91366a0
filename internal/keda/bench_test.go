package keda

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// BenchmarkGetMetrics is one KEDA GetMetrics call over a loopback gRPC
// connection, client and server in this process, against 1,000 groups;
// with -cpu 1 it is the one-core figure. It reports the calls' p99 in
// milliseconds besides ns/op (a call's mean).
func BenchmarkGetMetrics(b *testing.B) {
	src := &fakeDecisions{groups: map[string]readmodel.Latest{}}
	for i := range 1000 {
		src.groups[fmt.Sprintf("group-%d", i)] = decided(i%50, false)
	}
	c := serve(b, src, 0)
	reqs := make([]*pb.GetMetricsRequest, 1000)
	for i := range reqs {
		reqs[i] = &pb.GetMetricsRequest{ScaledObjectRef: ref(fmt.Sprintf("group-%d", i)), MetricName: "s0-queue-checker"}
	}
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		if _, err := c.GetMetrics(ctx, reqs[i%len(reqs)]); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, "p99-ms")
	}
}
