package poller

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// taskRewriter forwards to moto, counts the ECS calls and the tasks each
// DescribeTasks names, and, in DescribeTasks answers, sets the last status
// (and a start time) of the chosen tasks. moto's StopTask moves a task to
// STOPPED at once and moto reports no start time, so it never shows a
// task the way ECS does while it finishes its messages: desiredStatus
// STOPPED, lastStatus RUNNING, DEACTIVATING or STOPPING. The rewrite gives
// the poller that answer.
//
// Every DescribeTasks answer passes through modify, which also writes
// containers' cpu and memory as strings, as ECS does.
type taskRewriter struct {
	mu        sync.Mutex
	states    map[string]string // task ARN -> last status; a "!" prefix: no start time
	calls     map[string]int    // by ECS operation
	described [][]string        // the tasks of each DescribeTasks
}

func (w *taskRewriter) operation(r *http.Request) string {
	target := r.Header.Get("X-Amz-Target")
	if !strings.HasPrefix(target, "AmazonEC2ContainerService") {
		return ""
	}
	return target[strings.LastIndex(target, ".")+1:]
}

func (w *taskRewriter) request(r *http.Request) error {
	op := w.operation(r)
	if op == "" {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[op]++
	if op == "DescribeTasks" {
		var in struct {
			Tasks []string `json:"tasks"`
		}
		if err := json.Unmarshal(body, &in); err != nil {
			return err
		}
		w.described = append(w.described, in.Tasks)
	}
	return nil
}

func (w *taskRewriter) modify(r *http.Response) error {
	if w.operation(r.Request) != "DescribeTasks" || r.StatusCode != http.StatusOK {
		return nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	_ = r.Body.Close()
	var answer map[string]any
	if err := json.Unmarshal(b, &answer); err != nil {
		return err
	}
	tasks, _ := answer["tasks"].([]any)
	w.mu.Lock()
	for _, t := range tasks {
		task, _ := t.(map[string]any)
		// moto writes a container's cpu and memory as numbers, ECS (and
		// so the SDK) as strings.
		containers, _ := task["containers"].([]any)
		for _, c := range containers {
			if c, ok := c.(map[string]any); ok {
				for _, k := range []string{"cpu", "memory", "memoryReservation"} {
					if n, ok := c[k].(float64); ok {
						c[k] = strconv.FormatFloat(n, 'f', -1, 64)
					}
				}
			}
		}
		arn, _ := task["taskArn"].(string)
		state, ok := w.states[arn]
		if !ok {
			continue
		}
		if s, noStart := strings.CutPrefix(state, "!"); noStart {
			task["lastStatus"] = s
		} else {
			task["lastStatus"] = state
			task["startedAt"] = float64(time.Now().Add(-time.Hour).Unix())
		}
	}
	w.mu.Unlock()
	if b, err = json.Marshal(answer); err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return nil
}

func (w *taskRewriter) take() (calls map[string]int, described [][]string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	calls, described = w.calls, w.described
	w.calls, w.described = map[string]int{}, nil
	return calls, described
}

// TestObserveCountsStoppingECSTasks reads two services of one cluster in
// moto, with tasks run in each service's group and some of them stopped.
// The tasks being stopped that still run (RUNNING, DEACTIVATING,
// STOPPING, once started) are draining and leave the in-service count;
// a task stopping before it started, a STOPPED one and one of no service
// are not counted. ListTasks is asked once per service, DescribeTasks
// once per cluster for the tasks not yet seen STOPPED, and not at all
// once every listed task is STOPPED.
func TestObserveCountsStoppingECSTasks(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	ctx := context.Background()
	e := d.ECS(west)
	cluster := awstest.UniqueName(t, "cluster")
	a, b := awstest.UniqueName(t, "svc-a"), awstest.UniqueName(t, "svc-b")
	awstest.CreateECSService(t, e, cluster, a, 3)
	if _, err := e.CreateService(ctx, &ecs.CreateServiceInput{Cluster: aws.String(cluster), ServiceName: aws.String(b),
		TaskDefinition: aws.String(a), DesiredCount: aws.Int32(1)}); err != nil {
		t.Fatalf("create service %s: %v", b, err)
	}
	// moto counts a service's tasks as running once its desired count is
	// updated.
	for svc, n := range map[string]int32{a: 3, b: 1} {
		if _, err := e.UpdateService(ctx, &ecs.UpdateServiceInput{Cluster: aws.String(cluster), Service: aws.String(svc),
			DesiredCount: aws.Int32(n)}); err != nil {
			t.Fatalf("update service %s: %v", svc, err)
		}
	}
	// RunTask and StopTask are sent by hand: the SDK refuses moto's
	// answers to them (a container's cpu as a number, not a string).
	run := func(group string, n int) []string {
		t.Helper()
		var out struct {
			Tasks []struct {
				TaskArn string `json:"taskArn"`
			} `json:"tasks"`
		}
		ecsCall(t, moto.URL, west, "RunTask", map[string]any{"cluster": cluster, "taskDefinition": a,
			"count": n, "launchType": "FARGATE", "group": group}, &out)
		if len(out.Tasks) != n {
			t.Fatalf("run %d tasks in %s: %d run", n, group, len(out.Tasks))
		}
		var arns []string
		for _, task := range out.Tasks {
			arns = append(arns, task.TaskArn)
		}
		return arns
	}
	ta, tb, other := run("service:"+a, 5), run("service:"+b, 2), run("family:batch", 1)
	stopped := append(append(append([]string{}, ta[:3]...), tb...), other...)
	for _, arn := range stopped {
		ecsCall(t, moto.URL, west, "StopTask", map[string]any{"cluster": cluster, "task": arn}, nil)
	}
	rw := &taskRewriter{calls: map[string]int{}, states: map[string]string{
		ta[0]: "STOPPING", ta[1]: "RUNNING", // ta[2] stays STOPPED
		tb[0]: "DEACTIVATING", tb[1]: "!STOPPING", // tb[1] never started
		other[0]: "STOPPING", // of no service
	}}
	target, err := url.Parse(moto.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		if err := rw.request(pr.Out); err != nil {
			t.Errorf("read the request: %v", err)
		}
		pr.SetURL(target)
		pr.Out.Host = pr.In.Host
	}}
	proxy.ModifyResponse = rw.modify
	srv := httptest.NewServer(proxy)
	defer srv.Close()

	q := config.Queue{URL: queueURL(west, "absent"), Region: west}
	groups := []config.Group{
		{Name: "a", Queues: []config.Queue{q}, Fleet: config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: a, Region: west}}},
		{Name: "b", Queues: []config.Queue{q}, Fleet: config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: b, Region: west}}},
	}
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(groups...), factory(t, srv.URL, reg), reg)
	unstopped := []string{ta[0], ta[1], tb[0], tb[1], other[0]}
	rounds := []struct {
		name                 string
		rewrite              bool
		aIn, aOut, bIn, bOut int
		described            []string // nil: no DescribeTasks
	}{
		{"first read: every listed task described", true, 2, 2, 1, 1, stopped},
		{"second read: the STOPPED ones are not described again", true, 2, 2, 1, 1, unstopped},
		{"all stopped now", false, 3, 0, 1, 0, unstopped},
		{"nothing left to describe", false, 3, 0, 1, 0, nil},
	}
	now := time.Now()
	for i, round := range rounds {
		if !round.rewrite {
			rw.mu.Lock()
			rw.states = nil
			rw.mu.Unlock()
		}
		obs, err := p.Observe(ctx, now.Add(time.Duration(i)*5*time.Second))
		if err != nil {
			t.Fatalf("%s: Observe: %v", round.name, err)
		}
		fa, fb := obs[0].Fleet, obs[1].Fleet
		if !fa.Known || !fb.Known {
			t.Fatalf("%s: fleets not known: %v / %v", round.name, fa.Err, fb.Err)
		}
		if fa.Desired != 3 || fa.InService != round.aIn || fa.Draining != round.aOut {
			t.Errorf("%s: service a desired %d, in service %d, draining %d; want 3, %d, %d",
				round.name, fa.Desired, fa.InService, fa.Draining, round.aIn, round.aOut)
		}
		if fb.Desired != 1 || fb.InService != round.bIn || fb.Draining != round.bOut {
			t.Errorf("%s: service b desired %d, in service %d, draining %d; want 1, %d, %d",
				round.name, fb.Desired, fb.InService, fb.Draining, round.bIn, round.bOut)
		}
		calls, described := rw.take()
		if calls["DescribeServices"] != 1 || calls["ListTasks"] != 2 {
			t.Errorf("%s: %d DescribeServices and %d ListTasks, want 1 and 2 (one per service)",
				round.name, calls["DescribeServices"], calls["ListTasks"])
		}
		switch {
		case round.described == nil && len(described) != 0:
			t.Errorf("%s: DescribeTasks of %v, want none", round.name, described)
		case round.described != nil && (len(described) != 1 || !sameSet(described[0], round.described)):
			t.Errorf("%s: DescribeTasks of %v, want one call for %v", round.name, described, round.described)
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]int, len(a))
	for _, s := range a {
		in[s]++
	}
	for _, s := range b {
		in[s]--
	}
	for _, n := range in {
		if n != 0 {
			return false
		}
	}
	return true
}

// ecsCall sends one ECS request (AWS JSON 1.1) to moto and decodes its
// answer into out, unless out is nil. It fails the test unless moto
// answers 200.
func ecsCall(t *testing.T, endpoint, region, op string, in, out any) {
	t.Helper()
	body, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, endpoint+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("X-Amz-Target", "AmazonEC2ContainerServiceV20141113."+op)
	// moto routes a request by the service its credential scope names; the
	// shared server checks no signature.
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20300101/"+region+"/ecs/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ECS %s: HTTP %d: %s", op, resp.StatusCode, answer)
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			t.Fatalf("ECS %s: %v in %s", op, err, answer)
		}
	}
}
