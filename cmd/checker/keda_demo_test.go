package main

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/keda"
)

// logAddr waits for the log line msg with an addr field and returns it.
func logAddr(t *testing.T, logs *syncBuffer, msg string, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		sc := bufio.NewScanner(strings.NewReader(logs.String()))
		for sc.Scan() {
			var line struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg && line.Addr != "" {
				return line.Addr
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %q line within %s; logs:\n%s", msg, within, logs.String())
	return ""
}

// TestDemoServesKEDAScaler: `checker demo --keda-listen` serves the
// external scaler for the demo's groups, with server reflection (what
// grpcurl lists), and its GetMetrics answer is the status API's decided
// count, on which the HPA's rule lands.
func TestDemoServesKEDAScaler(t *testing.T) {
	logs := &syncBuffer{}
	var stdout strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"demo", "--listen", "127.0.0.1:0", "--keda-listen", "127.0.0.1:0",
			"--interval", "5s", "--for", "8s"}, &stdout, logs)
	}()
	web := listenAddr(t, logs, 10*time.Second)
	addr := logAddr(t, logs, "serving KEDA's external scaler", 10*time.Second)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()

	rs, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rs.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var services []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		services = append(services, s.Name)
	}
	if !strings.Contains(strings.Join(services, " "), "externalscaler.ExternalScaler") {
		t.Errorf("reflection lists %v, want externalscaler.ExternalScaler", services)
	}
	_ = rs.CloseSend()

	c := pb.NewExternalScalerClient(conn)
	ref := &pb.ScaledObjectRef{Name: "thumbnails", Namespace: "demo", ScalerMetadata: map[string]string{"group": "thumbnails"}}
	var value float64
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := c.GetMetrics(ctx, &pb.GetMetricsRequest{ScaledObjectRef: ref})
		if err == nil {
			value = m.MetricValues[0].MetricValueFloat
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GetMetrics: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, body := get(t, "http://"+web+"/api/v1/groups?group=thumbnails")
	var doc struct {
		Groups []struct {
			Decision struct {
				Desired int `json:"desired_workers"`
			} `json:"decision"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil || len(doc.Groups) != 1 {
		t.Fatalf("decode %s: %v", body, err)
	}
	want := doc.Groups[0].Decision.Desired
	if got := keda.ReplicasFor([]float64{value}, 1, 0); got != want || got < 2 {
		t.Errorf("HPA ceil(%v / 1) = %d replicas; the status API's decided count is %d (thumbnails has min 2)", value, got, want)
	}
	if code := <-done; code != 0 {
		t.Errorf("demo exit %d; logs:\n%s", code, logs.String())
	}
}
