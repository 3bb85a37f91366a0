package poller

import (
	"bytes"
	"context"
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
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// stateRewriter forwards to moto and, in DescribeAutoScalingGroups
// answers, sets the lifecycle state of the chosen instances. moto keeps
// lifecycle hooks but never holds an instance in Terminating:Wait: a
// scale-in removes instances at once. The rewrite gives the poller the
// answer Auto Scaling gives while a termination hook holds instances.
type stateRewriter struct {
	mu       sync.Mutex
	states   map[string]string // instance ID -> lifecycle state
	rewrites int
}

func (s *stateRewriter) modify(r *http.Response) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	_ = r.Body.Close()
	if bytes.Contains(b, []byte("<DescribeAutoScalingGroupsResponse")) {
		s.mu.Lock()
		for id, state := range s.states {
			text := string(b)
			i := strings.Index(text, "<InstanceId>"+id+"</InstanceId>")
			if i < 0 {
				continue
			}
			start := strings.LastIndex(text[:i], "<member>")
			end := i + strings.Index(text[i:], "</member>")
			if start < 0 || end < i {
				continue
			}
			member := strings.Replace(text[start:end], "<LifecycleState>InService</LifecycleState>", "<LifecycleState>"+state+"</LifecycleState>", 1)
			if member != text[start:end] {
				s.rewrites++
			}
			b = []byte(text[:start] + member + text[end:])
		}
		s.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
	return nil
}

// TestObserveCountsDrainingInstances reads a group in moto with a
// termination hook, one instance in Standby and three on their way out:
// those are draining, once each, and neither in service nor pending; the
// messages they hold still count in the backlog.
func TestObserveCountsDrainingInstances(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	ctx := context.Background()
	q := makeQueue(t, d, queueSpec{region: east, visible: 4, inFlight: 7})
	name := awstest.UniqueName(t, "asg")
	as := d.AutoScaling(east)
	awstest.CreateAutoScalingGroup(t, as, east, name, 1, 10, 6)
	if _, err := as.PutLifecycleHook(ctx, &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String(name), LifecycleHookName: aws.String("drain-before-terminate"),
		LifecycleTransition: aws.String("autoscaling:EC2_INSTANCE_TERMINATING"),
		HeartbeatTimeout:    aws.Int32(120), DefaultResult: aws.String("CONTINUE"),
	}); err != nil {
		t.Fatalf("PutLifecycleHook: %v", err)
	}
	out, err := as.DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{name}})
	if err != nil || len(out.AutoScalingGroups) != 1 || len(out.AutoScalingGroups[0].Instances) != 6 {
		t.Fatalf("describe %s: %v %+v", name, err, out)
	}
	var ids []string
	for _, in := range out.AutoScalingGroups[0].Instances {
		ids = append(ids, aws.ToString(in.InstanceId))
	}
	// Standby (moto serves it): out of service, not leaving.
	if _, err := as.EnterStandby(ctx, &autoscaling.EnterStandbyInput{AutoScalingGroupName: aws.String(name),
		InstanceIds: ids[:1], ShouldDecrementDesiredCapacity: aws.Bool(true)}); err != nil {
		t.Fatalf("EnterStandby: %v", err)
	}

	rw := &stateRewriter{states: map[string]string{
		ids[1]: "Terminating:Wait", ids[2]: "Terminating:Proceed", ids[3]: "Terminating",
	}}
	target, err := url.Parse(moto.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = rw.modify
	srv := httptest.NewServer(proxy)
	defer srv.Close()

	group := config.Group{Name: "draining", Queues: []config.Queue{q}, Count: config.Count{InFlight: true},
		Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: name}}}
	reg := prometheus.NewRegistry()
	p := newTestPoller(t, baseConfig(group), factory(t, srv.URL, reg), reg)
	now := time.Now()
	for round := range 2 {
		obs, err := p.Observe(ctx, now.Add(time.Duration(round)*5*time.Second))
		if err != nil {
			t.Fatalf("Observe: %v", err)
		}
		f, s := obs[0].Fleet, obs[0].Sample
		if !f.Known || f.Desired != 5 || f.InService != 2 || f.Draining != 3 || f.Pending != 0 {
			t.Errorf("round %d: fleet desired %d, in service %d, draining %d, pending %d; want 5, 2, 3, 0 (known %v, %v)",
				round, f.Desired, f.InService, f.Draining, f.Pending, f.Known, f.Err)
		}
		if s.InFlight != 7 || s.Backlog != 11 {
			t.Errorf("round %d: in flight %d, backlog %d; want 7 and 11", round, s.InFlight, s.Backlog)
		}
	}
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if rw.rewrites != 6 {
		t.Errorf("%d states rewritten, want 3 per round: the answer's shape changed", rw.rewrites)
	}
}
