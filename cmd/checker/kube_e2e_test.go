package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/queuechecker/queue-checker/api/externalscaler"
	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/keda"
	"github.com/queuechecker/queue-checker/internal/kubetest"
	"github.com/queuechecker/queue-checker/internal/switchkey"
)

// kubeManifests is deploy/kubernetes, seen from this package.
const kubeManifests = "../../deploy/kubernetes"

// kubeAsChecker starts a Kubernetes API server, applies the named files of
// deploy/kubernetes to it as the administrator, and points KUBECONFIG at
// it as deploy/kubernetes's service account; it returns the server and the
// administrator's client.
func kubeAsChecker(t *testing.T, manifests ...string) (*kubetest.Server, *kubetest.Client) {
	t.Helper()
	s := kubetest.StartT(t)
	admin := kubetest.NewClient(t, s.Config(kubetest.AdminUser))
	for _, m := range manifests {
		b, err := os.ReadFile(filepath.Join(kubeManifests, m))
		if err != nil {
			t.Fatal(err)
		}
		admin.MustApply(t, string(b))
	}
	t.Setenv("KUBECONFIG", s.Kubeconfig(t, kubetest.CheckerUser))
	return s, admin
}

// startKubeChecker starts `checker run` with kubeConfig against a
// Kubernetes API server (kubeAsChecker, with the Role of
// deploy/kubernetes) that holds the Deployments ns/direct and ns/viakeda of
// one ready replica each, waits until its probe (/livez or /readyz) is 200,
// and returns the administrator's client, the daemon and the address of
// its external scaler.
func startKubeChecker(t *testing.T, interval time.Duration, endpoint, ns string, qd, qk testQueue, probe string) (*kubetest.Client, *daemon, string) {
	t.Helper()
	_, admin := kubeAsChecker(t, "namespace-checker.yaml", "namespace-workers.yaml", "serviceaccount.yaml", "role.yaml", "rolebinding.yaml")
	for _, name := range []string{"direct", "viakeda"} {
		admin.Deployment(t, ns, name, 1, nil)
		admin.SetDeploymentStatus(t, ns, name, 1, 1)
	}
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, kubeConfig(interval, endpoint, ns, qd, qk))
	d := startDaemon(t, path)
	eventually(t, 30*time.Second, probe+" 200", func() bool {
		code, _ := d.get(t, probe)
		return code == http.StatusOK
	})
	return admin, d, logAddr(t, d.logs, "serving KEDA's external scaler", 5*time.Second)
}

// kubeConfig is the configuration of the Kubernetes tests, on moto at
// endpoint: the group direct scales the Deployment ns/direct from the
// queue qd itself, the group viakeda reads the queue qk and ns/viakeda and
// answers KEDA. The queues are asked every interval (idle_sample_interval:
// 0): an idle queue's backoff would add up to its bound to the first
// message's wait, whatever the fleet.
func kubeConfig(interval time.Duration, endpoint, ns string, qd, qk testQueue) string {
	group := func(name string, q testQueue, act bool) string {
		return fmt.Sprintf(`  - name: %s
    queues: [{url: %q}]
    workers: {service_time: 1s}
    target: {latency: 5s, drain_time: 1m, arrival_smoothing: 1s}
    forecast: {enabled: false}
    idle_sample_interval: 0s
    fleet:
      kubernetes: {namespace: %s, deployment: %s}
      min: 1
      max: 20
      scale_in_stabilization: 2s
    actions: {set_desired_capacity: %t}
`, name, q.url, ns, name, act)
	}
	return fmt.Sprintf("interval: %s\nlisten: 127.0.0.1:0\nkeda: {listen: 127.0.0.1:0}\naws: {region: %s, endpoint_url: %s, cloudwatch_protocol: json}\ngroups:\n",
		interval, east, endpoint) + group("direct", qd, true) + group("viakeda", qk, false)
}

// dialScaler connects to the checker's external scaler at addr without
// TLS, as KEDA does with no TriggerAuthentication.
func dialScaler(t *testing.T, addr string) pb.ExternalScalerClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pb.NewExternalScalerClient(conn)
}

// TestE2EKubernetes runs `checker run` against moto's SQS and a real
// Kubernetes API server, as deploy/kubernetes's service account (its Role
// and nothing more), with two groups: one scaling its Deployment directly
// through the scale subresource, one read only and answered to KEDA over
// gRPC. A backlog jump must reach the GetMetrics answer by the first read
// of its queue after it, and the Deployment's spec.replicas by the second
// (jumpLatencies; the times are logged); the annotations steer the direct group as the tags steer an
// Auto Scaling group. The queues are asked every interval
// (idle_sample_interval: 0): an idle queue's backoff would add up to its
// bound to the first message's wait, whatever the fleet.
func TestE2EKubernetes(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t).URL
	const ns, interval = "workers", time.Second
	qd := makeQueue(t, f, queueSpec{region: east})
	qk := makeQueue(t, f, queueSpec{region: east})
	// The checker's AWS calls pass a proxy that sees each read of the
	// queues and whether it was answered within its deadline.
	proxy := awstest.NewProxy(t, moto)
	admin, d, addr := startKubeChecker(t, interval, proxy.URL, ns, qd, qk, "/livez")
	scaler := dialScaler(t, addr)
	ref := &pb.ScaledObjectRef{Name: "viakeda", Namespace: ns, ScalerMetadata: map[string]string{"scalerAddress": addr, "group": "viakeda"}}
	metric := func() float64 {
		m, err := scaler.GetMetrics(context.Background(), &pb.GetMetricsRequest{ScaledObjectRef: ref})
		if err != nil {
			t.Fatalf("GetMetrics: %v", err)
		}
		return m.MetricValues[0].MetricValueFloat
	}
	replicas := func() int { return admin.DeploymentReplicas(t, ns, "direct") }
	// decision reads a group's decision: its count, whether paused, and
	// its notes (warnings, then the switches not understood).
	decision := func(group string) (desired int, paused bool, notes []string) {
		_, body := d.get(t, "/api/v1/groups?group="+group)
		var doc struct {
			Groups []struct {
				Decision struct {
					Desired        int      `json:"desired_workers"`
					Paused         bool     `json:"paused"`
					Warnings       []string `json:"warnings"`
					SwitchProblems []string `json:"switch_problems"`
				} `json:"decision"`
			} `json:"groups"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil || len(doc.Groups) != 1 {
			t.Fatalf("decode %s: %v", body, err)
		}
		g := doc.Groups[0].Decision
		return g.Desired, g.Paused, append(g.Warnings, g.SwitchProblems...)
	}
	time.Sleep(3 * interval)

	t.Run("direct: backlog to spec.replicas", func(t *testing.T) {
		lat := jumpLatencies(t, proxy, f, qd, func() bool { return replicas() == 1 }, func() bool { return replicas() >= 2 }, interval, 2, nil)
		t.Logf("backlog jump to spec.replicas at a %s interval: median %s, max %s over %d jumps",
			interval, median(lat).Round(time.Millisecond), slices.Max(lat).Round(time.Millisecond), len(lat))
	})

	t.Run("keda: backlog to GetMetrics", func(t *testing.T) {
		lat := jumpLatencies(t, proxy, f, qk, func() bool { return metric() == 1 }, func() bool { return metric() >= 2 }, interval, 1, func() {
			// The HPA's rule on the answer is the decided count.
			v := metric()
			want, _, _ := decision("viakeda")
			if got := keda.ReplicasFor([]float64{v}, 1, 0); got != want && metric() == v {
				t.Errorf("HPA ceil(%v / 1) = %d, decided %d", v, got, want)
			}
		})
		t.Logf("backlog jump to the GetMetrics answer at a %s interval: median %s, max %s over %d jumps",
			interval, median(lat).Round(time.Millisecond), slices.Max(lat).Round(time.Millisecond), len(lat))
		if got := admin.DeploymentReplicas(t, ns, "viakeda"); got != 1 {
			t.Errorf("the KEDA group's Deployment was scaled to %d: the checker only reads it", got)
		}
	})

	// Steered by a pin rather than by messages: with no worker consuming
	// them, a backlog that stays would be diagnosed "not consuming" and
	// held, whatever the switches.
	t.Run("annotations as switches", func(t *testing.T) {
		const key = "queue-checker/"
		held := func(what string, want int) {
			t.Helper()
			time.Sleep(3 * interval)
			if got := replicas(); got != want {
				t.Errorf("%s: spec.replicas %d after 3 intervals, want %d held", what, got, want)
			}
		}
		eventually(t, 30*time.Second, "back at 1 replica", func() bool { return replicas() == 1 })
		admin.Annotate(t, ns, "direct", key+"pin", "3")
		eventually(t, 5*time.Second, "pin=3 applied", func() bool { return replicas() == 3 })

		admin.Annotate(t, ns, "direct", key+"scale-in", "no") // not true or false: held
		admin.Annotate(t, ns, "direct", key+"pin", "")
		held("scale-in=no, pin removed", 3)
		if _, _, w := decision("direct"); !strings.Contains(strings.Join(w, " "), "annotation queue-checker/scale-in") {
			t.Errorf("scale-in=no: warnings %q, want one naming the annotation", w)
		}
		admin.Annotate(t, ns, "direct", key+"scale-in", "")
		eventually(t, 10*time.Second, "scale-in released", func() bool { return replicas() == 1 })

		for _, v := range []string{"true", "maybe"} { // maybe is not understood: held
			admin.Annotate(t, ns, "direct", key+"paused", v)
			eventually(t, 5*time.Second, "paused="+v+" seen", func() bool {
				_, p, notes := decision("direct")
				return p || len(notes) > 0
			})
			admin.Annotate(t, ns, "direct", key+"pin", "4") // a pause wins over a pin
			held("paused="+v+" with pin=4", 1)
			admin.Annotate(t, ns, "direct", key+"pin", "")
		}
		if _, _, w := decision("direct"); !strings.Contains(strings.Join(w, " "), "annotation queue-checker/paused") {
			t.Errorf("paused=maybe: warnings %q, want one naming the annotation", w)
		}
		admin.Annotate(t, ns, "direct", key+"pin", "2")
		admin.Annotate(t, ns, "direct", key+"paused", "false")
		eventually(t, 5*time.Second, "unpaused: pin=2 applied", func() bool { return replicas() == 2 })
		admin.Annotate(t, ns, "direct", key+"pin", "")
		admin.Annotate(t, ns, "direct", key+"paused", "")
		eventually(t, 15*time.Second, "back at 1 replica", func() bool { return replicas() == 1 })
	})

	// Annotations the checker cannot read or follow hold the Deployment:
	// with each one on, a pin asking for more (scale out) and then no pin
	// on an empty queue (scale in) leave spec.replicas where it was, and
	// the decision names the annotation.
	t.Run("annotations not understood hold", func(t *testing.T) {
		const key = "queue-checker/"
		near := switchkey.NearMisses()
		cases := [][2]string{
			{key + "paws", "true"}, {key + "pausing", "true"}, {key + "hold", "true"},
			{key + "scale-in-enabled", "false"}, {key + "scale-out-only", "true"}, {key + "pinned", "5"},
			{key + "no-scale-in", "true"}, {key + "unpaused", "true"}, {"queue-cheker/paused", "true"},
			{key + "pin", "3.0"}, {key + "pin", "99999"},
			{strings.Replace(near[len(near)/3], "queue-checker:", key, 1), "true"},
			{strings.Replace(near[2*len(near)/3], "queue-checker:", key, 1), "true"},
		}
		for _, c := range cases {
			admin.Annotate(t, ns, "direct", key+"pin", "2")
			eventually(t, 10*time.Second, "pin=2 applied", func() bool { return replicas() == 2 })
			// The count may have been 2 already, held by the last case's
			// annotation: a cycle that read the annotations after that one
			// went and before the pin came scales in. Two intervals on, every
			// cycle has read the pin.
			time.Sleep(2 * interval)
			eventually(t, 10*time.Second, "pin=2 applied after a cycle", func() bool { return replicas() == 2 })
			name := c[0] + "=" + c[1]
			admin.Annotate(t, ns, "direct", c[0], c[1])
			if c[0] != key+"pin" {
				admin.Annotate(t, ns, "direct", key+"pin", "5") // would scale out
			}
			time.Sleep(3 * interval)
			if got := replicas(); got != 2 {
				t.Errorf("%s, pin=5: spec.replicas %d after 3 intervals, want 2 held", name, got)
			}
			if _, _, notes := decision("direct"); !strings.Contains(strings.Join(notes, " "), strings.SplitN(c[0], "/", 2)[1]) {
				t.Errorf("%s: the decision's notes %q do not name it", name, notes)
			}
			if c[0] != key+"pin" {
				admin.Annotate(t, ns, "direct", key+"pin", "") // would scale in
				time.Sleep(2 * interval)
				if got := replicas(); got != 2 {
					t.Errorf("%s, no pin, empty queue: spec.replicas %d after 2 intervals, want 2 held", name, got)
				}
			}
			admin.Annotate(t, ns, "direct", c[0], "")
		}
		admin.Annotate(t, ns, "direct", key+"pin", "")
		eventually(t, 15*time.Second, "back at 1 replica", func() bool { return replicas() == 1 })
	})

	t.Run("an HPA refuses direct scaling", func(t *testing.T) {
		admin.MustApply(t, `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: keda-hpa-direct, namespace: `+ns+`}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: direct}
  minReplicas: 1
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}}]
`)
		admin.Annotate(t, ns, "direct", "queue-checker/pin", "3")
		var actionErr string
		eventually(t, 5*time.Second, "the action fails naming the HPA", func() bool {
			_, body := d.get(t, "/api/v1/groups?group=direct")
			var doc struct {
				Groups []struct {
					ActionError string `json:"action_error"`
				} `json:"groups"`
			}
			if json.Unmarshal([]byte(body), &doc) != nil || len(doc.Groups) != 1 {
				return false
			}
			actionErr = doc.Groups[0].ActionError
			return strings.Contains(actionErr, "keda-hpa-direct")
		})
		t.Logf("action error: %s", actionErr)
		if got := replicas(); got != 1 {
			t.Errorf("spec.replicas %d with an HPA on the Deployment, want 1 untouched", got)
		}
	})

	if code := d.stop(t); code != 0 {
		t.Errorf("run exited %d, want 0", code)
	}
}

// jumpLatencies sends a backlog of 10 messages to q four times, each from
// the fleet at rest (rest) at a different phase of the interval, waits for
// the checker to show it (up), and returns the time each took. The
// checker must show each jump by the cycle that first reads q after it:
// at most reads reads of q that began once the messages were in it are
// answered before the change is seen (1: that read's decision; 2 where
// acting on it is a call to the API server, which may outlast the next
// read), those answered past their deadline not counted (a loaded
// emulator's: the checker rightly holds the group on them). seen, when
// set, is called once the change is seen.
func jumpLatencies(t *testing.T, proxy *awstest.Proxy, f *awsclient.Factory, q testQueue, rest, up func() bool, interval time.Duration, reads int, seen func()) []time.Duration {
	t.Helper()
	ofQueue := awstest.MatchQueue(q.url)
	var mu sync.Mutex
	var since time.Time
	began := map[*awstest.Request]bool{}
	answered := 0
	stopBegun := proxy.Observe(func(r *awstest.Request, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if !since.IsZero() && !at.Before(since) && r.Operation() == "GetQueueAttributes" && ofQueue(r) {
			began[r] = true
		}
	})
	defer stopBegun()
	stopAnswered := proxy.ObserveAnswers(func(r *awstest.Request, _ time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if began[r] {
			answered++
		}
	})
	defer stopAnswered()
	var lat []time.Duration
	for i := range 4 {
		eventually(t, 30*time.Second, "back at rest", rest)
		time.Sleep(interval/5 + time.Duration(i)*interval/4)
		jumped := time.Now()
		sendMessages(t, f, q, 10, 0)
		// The reads counted begin once the messages are in the queue: one
		// begun while they were being sent may or may not see them.
		mu.Lock()
		since, answered = time.Now(), 0
		clear(began)
		mu.Unlock()
		// Polled every 10 ms, so that the change is seen before the next
		// cycle's read is answered.
		if !pollUntil(10*time.Second, 10*time.Millisecond, up) {
			t.Fatalf("jump %d: not shown within 10 s", i+1)
		}
		mu.Lock()
		took, n, begun := time.Since(jumped), answered, len(began)
		since = time.Time{}
		mu.Unlock()
		lat = append(lat, took)
		if n > reads {
			t.Errorf("jump %d: shown after %s and %d answered reads of the queue (of %d begun after it), want at most %d",
				i+1, took.Round(time.Millisecond), n, begun, reads)
		}
		if seen != nil {
			seen()
		}
		purge(t, f, q)
	}
	return lat
}
