package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"go.uber.org/goleak"
	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// runMainEnv makes the test binary run the worker's main instead of the
// tests, so a test can start the real program and send it signals.
const runMainEnv = "EXAMPLE_WORKER_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(awstest.M(m))
}

const visibility = 2 * time.Second

// metadataServer stands in for the instance metadata service (IMDSv2): a
// session token from PUT /latest/api/token, required on every read.
type metadataServer struct {
	*httptest.Server
	state atomic.Value // target lifecycle state
	reads atomic.Int32 // reads of the state
}

func newMetadataServer(t *testing.T, instanceID string) *metadataServer {
	t.Helper()
	m := &metadataServer{}
	m.state.Store("InService")
	const token = "test-token"
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
			if r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") == "" {
				http.Error(w, "no TTL", http.StatusBadRequest)
				return
			}
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
			fmt.Fprint(w, token)
			return
		}
		if r.Method != http.MethodGet || r.Header.Get("X-Aws-Ec2-Metadata-Token") != token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/latest/meta-data/instance-id":
			fmt.Fprint(w, instanceID)
		case "/latest/meta-data/" + pathTargetState:
			m.reads.Add(1)
			fmt.Fprint(w, m.state.Load())
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(m.Close)
	return m
}

// completions records CompleteLifecycleAction calls. moto 5.2 does not
// serve CompleteLifecycleAction, so this small fake of the worker's own
// interface takes its place.
type completions struct {
	mu    sync.Mutex
	calls []autoscaling.CompleteLifecycleActionInput
}

func (c *completions) CompleteLifecycleAction(_ context.Context, in *autoscaling.CompleteLifecycleActionInput, _ ...func(*autoscaling.Options)) (*autoscaling.CompleteLifecycleActionOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, *in)
	return &autoscaling.CompleteLifecycleActionOutput{}, nil
}

func sqsClient(t *testing.T) *sqs.Client {
	t.Helper()
	m := awstest.Shared(t)
	return sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(m.URL),
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", ""),
	})
}

// makeQueue creates a queue with a short visibility timeout holding n
// messages and returns its URL and the messages' IDs.
func makeQueue(t *testing.T, c *sqs.Client, n int) (string, []string) {
	t.Helper()
	ctx := context.Background()
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(awstest.UniqueName(t, "q")),
		Attributes: map[string]string{"VisibilityTimeout": fmt.Sprint(int(visibility.Seconds()))},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		s, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String(fmt.Sprint("job ", i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, aws.ToString(s.MessageId))
	}
	return aws.ToString(out.QueueUrl), ids
}

// remaining waits out the visibility timeout of anything received, then
// receives every message left in the queue and returns their IDs.
func remaining(t *testing.T, c *sqs.Client, url string) []string {
	t.Helper()
	time.Sleep(visibility + time.Second)
	var ids []string
	for empty := 0; empty < 2; {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 60,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			empty++
		}
		for _, m := range out.Messages {
			ids = append(ids, aws.ToString(m.MessageId))
		}
	}
	slices.Sort(ids)
	return ids
}

// TestDrainOnTerminationNotice runs the worker against moto's SQS and stops
// it, while it holds messages, by the target lifecycle state (a stand-in
// metadata service) or by SIGTERM (its context). Every message it received
// must be processed once and deleted: after the visibility timeout the
// queue holds exactly the messages it never received. A handler that fails
// some messages shows that the check sees the ones left behind.
func TestDrainOnTerminationNotice(t *testing.T) {
	t.Parallel()
	const total = 20
	tests := []struct {
		name      string
		hook      bool
		failEvery int // fail every n-th message started; 0: none
	}{
		{name: "lifecycle hook", hook: true},
		{name: "SIGTERM"},
		{name: "lifecycle hook, handler failing some messages", hook: true, failEvery: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := sqsClient(t)
			url, sent := makeQueue(t, c, total)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			md := newMetadataServer(t, "i-0123456789abcdef0")
			done := &completions{}
			var mu sync.Mutex
			var started, failed []string
			notice := make(chan struct{})
			sleep := Sleep(400 * time.Millisecond)
			handle := func(ctx context.Context, m sqstypes.Message) error {
				mu.Lock()
				started = append(started, aws.ToString(m.MessageId))
				n := len(started)
				fail := tc.failEvery > 0 && n%tc.failEvery == 0
				if fail {
					failed = append(failed, aws.ToString(m.MessageId))
				}
				mu.Unlock()
				if n == 6 { // holding messages: tell it to stop
					close(notice)
				}
				if err := sleep(ctx, m); err != nil {
					return err
				}
				if fail {
					return errors.New("handler failed")
				}
				return nil
			}
			opts := Options{QueueURL: url, ServiceTime: 400 * time.Millisecond, Concurrency: 4, Wait: time.Second, PollEvery: 50 * time.Millisecond}
			w := &Worker{opts: opts, sqs: c, handle: handle, log: zaptest.NewLogger(t)}
			if tc.hook {
				w.opts.GroupName, w.opts.HookName = "workers", "drain"
				w.asg = done
				w.metadata = imds.New(imds.Options{Endpoint: md.URL, ClientEnableState: imds.ClientEnabled})
			}
			go func() {
				<-notice
				if tc.hook {
					md.state.Store(stateTerminated)
				} else {
					cancel()
				}
			}()
			runDone := make(chan error, 1)
			go func() { runDone <- w.Run(ctx) }()
			var err error
			select {
			case err = <-runDone:
			case <-time.After(30 * time.Second):
				t.Fatal("the worker did not stop within 30s of the notice")
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}

			s := w.Stats()
			mu.Lock()
			defer mu.Unlock()
			if s.Received < 6 || s.Received >= total {
				t.Errorf("received %d, want at least the 6 held at the notice and fewer than all %d", s.Received, total)
			}
			if len(started) != s.Received || s.Deleted+s.Failed != s.Received || s.Failed != len(failed) {
				t.Errorf("received %d, started %d, deleted %d, failed %d (handler failed %d): every message received must be finished once",
					s.Received, len(started), s.Deleted, s.Failed, len(failed))
			}

			// After the visibility timeout: exactly the messages never
			// received, and those the handler failed, are in the queue.
			want := slices.DeleteFunc(slices.Clone(sent), func(id string) bool { return slices.Contains(started, id) })
			want = append(want, failed...)
			slices.Sort(want)
			got := remaining(t, c, url)
			if !slices.Equal(got, want) {
				t.Errorf("queue after the visibility timeout holds %d messages, want %d (%d never received + %d failed)",
					len(got), len(want), total-len(started), len(failed))
			}
			for _, id := range got {
				if slices.Contains(started, id) && !slices.Contains(failed, id) {
					t.Errorf("message %s was processed and came back", id)
				}
			}

			done.mu.Lock()
			defer done.mu.Unlock()
			if !tc.hook {
				if len(done.calls) != 0 {
					t.Errorf("CompleteLifecycleAction called %d times on SIGTERM", len(done.calls))
				}
				return
			}
			if len(done.calls) != 1 {
				t.Fatalf("CompleteLifecycleAction called %d times, want once", len(done.calls))
			}
			in := done.calls[0]
			if aws.ToString(in.AutoScalingGroupName) != "workers" || aws.ToString(in.LifecycleHookName) != "drain" ||
				aws.ToString(in.InstanceId) != "i-0123456789abcdef0" || aws.ToString(in.LifecycleActionResult) != "CONTINUE" {
				t.Errorf("CompleteLifecycleAction(%s, %s, %s, %s), want workers, drain, i-0123456789abcdef0, CONTINUE",
					aws.ToString(in.AutoScalingGroupName), aws.ToString(in.LifecycleHookName), aws.ToString(in.InstanceId),
					aws.ToString(in.LifecycleActionResult))
			}
			if md.reads.Load() < 2 {
				t.Errorf("target lifecycle state read %d times, want it polled", md.reads.Load())
			}
		})
	}
}

// An instance whose metadata cannot be read does not start: it could not
// complete its lifecycle action.
func TestNoInstanceIDNoStart(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	w := &Worker{opts: Options{QueueURL: "http://unused", Concurrency: 1, GroupName: "g", HookName: "h", PollEvery: time.Second},
		metadata: imds.New(imds.Options{Endpoint: srv.URL, ClientEnableState: imds.ClientEnabled}), log: zaptest.NewLogger(t)}
	if err := w.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "instance ID") {
		t.Errorf("Run = %v, want an error about the instance ID", err)
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want []string // problems named; none: valid
	}{
		{"defaults", []string{"--queue-url", "https://sqs.us-east-1.amazonaws.com/1/q"}, nil},
		{"lifecycle", []string{"--queue-url", "u", "--group", "g", "--hook", "h", "--poll", "1s"}, nil},
		{"every problem at once", []string{"--concurrency", "0", "--wait", "21s", "--group", "g", "--poll", "0s", "--service-time", "-1s", "extra"},
			[]string{"unexpected arguments", "--queue-url", "--concurrency", "--wait", "--group and --hook", "--poll", "--service-time"}},
		{"wait in fractions", []string{"--queue-url", "u", "--wait", "1500ms"}, []string{"--wait"}},
		{"unknown flag", []string{"--queue", "u"}, []string{"flag provided but not defined"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			_, _, err := parseFlags(tc.args, &out)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("parseFlags: %v", err)
				}
				return
			}
			var u usageError
			if !errors.As(err, &u) {
				t.Fatalf("parseFlags = %v, want a usage error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
			if !strings.Contains(out.String(), "-queue-url") {
				t.Errorf("no usage printed: %q", out.String())
			}
		})
	}
}

// A worker (re)started on an instance that is already terminating takes no
// message and only completes the lifecycle action.
func TestStartOnTerminatingInstance(t *testing.T) {
	t.Parallel()
	c := sqsClient(t)
	url, sent := makeQueue(t, c, 5)
	md := newMetadataServer(t, "i-0fedcba9876543210")
	md.state.Store(stateTerminated)
	done := &completions{}
	w := &Worker{opts: Options{QueueURL: url, Concurrency: 2, Wait: time.Second, GroupName: "workers", HookName: "drain", PollEvery: time.Second},
		sqs: c, asg: done, metadata: imds.New(imds.Options{Endpoint: md.URL, ClientEnableState: imds.ClientEnabled}),
		handle: Sleep(0), log: zaptest.NewLogger(t)}
	if err := w.Run(context.Background()); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if s := w.Stats(); s.Received != 0 {
		t.Errorf("received %d messages on a terminating instance, want 0", s.Received)
	}
	out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)]; got != fmt.Sprint(len(sent)) {
		t.Errorf("%s messages visible, want all %d", got, len(sent))
	}
	if len(done.calls) != 1 || aws.ToString(done.calls[0].InstanceId) != "i-0fedcba9876543210" {
		t.Errorf("CompleteLifecycleAction calls %+v, want one for i-0fedcba9876543210", done.calls)
	}
}

// TestSIGTERM runs the worker program itself against moto and sends it
// SIGTERM while it holds messages: it must exit 0 having deleted every
// message it received; after the visibility timeout the queue holds
// exactly the others.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	m := awstest.Shared(t)
	c := sqsClient(t)
	const total = 12
	url, _ := makeQueue(t, c, total)
	cmd := exec.Command(os.Args[0], "--queue-url", url, "--service-time", "2s", "--concurrency", "3", "--wait", "1s")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "AWS_ENDPOINT_URL="+m.URL, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	// Wait until it holds messages.
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := c.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
		if err != nil {
			t.Fatal(err)
		}
		if out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)] != "0" {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the worker took no message in 20 s: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("worker exited with %v: %s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the worker did not exit within 30 s of SIGTERM: %s", stderr.String())
	}

	var drained struct{ Received, Deleted, Failed int }
	found := false
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, `"msg":"drained"`) {
			if err := json.Unmarshal([]byte(line), &drained); err != nil {
				t.Fatalf("log line %q: %v", line, err)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("no drained line in the log: %s", stderr.String())
	}
	if drained.Received < 1 || drained.Received >= total || drained.Deleted != drained.Received || drained.Failed != 0 {
		t.Errorf("received %d, deleted %d, failed %d; want every received message deleted, and not all %d received",
			drained.Received, drained.Deleted, drained.Failed, total)
	}
	if got := remaining(t, c, url); len(got) != total-drained.Received {
		t.Errorf("%d messages left after the visibility timeout, want %d", len(got), total-drained.Received)
	}
}
