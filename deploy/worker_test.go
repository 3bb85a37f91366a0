package deploy

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// The example worker's drain, from examples/worker: a receive under way
// lasts at most its long-poll wait, and the target lifecycle state is read
// every --poll.
const (
	workerMaxWait = 20 * time.Second
	workerPoll    = 5 * time.Second
)

// workerFlags are the flags examples/worker defines.
func workerFlags(t *testing.T) []string {
	t.Helper()
	src := string(readFile(t, "examples/worker/main.go"))
	var out []string
	for _, m := range regexp.MustCompile(`fs\.\w+Var\(&[\w.]+, "([a-z-]+)"`).FindAllStringSubmatch(src, -1) {
		out = append(out, m[1])
	}
	if len(out) < 5 {
		t.Fatalf("found %d flags in examples/worker/main.go: the pattern no longer matches", len(out))
	}
	return out
}

// flagArgs reads "--name value" pairs and fails on a flag the worker lacks.
func flagArgs(t *testing.T, where string, args []string) map[string]string {
	t.Helper()
	known := workerFlags(t)
	out := map[string]string{}
	for i := 0; i < len(args); i += 2 {
		name, ok := strings.CutPrefix(args[i], "--")
		if !ok || i+1 >= len(args) {
			t.Fatalf("%s: %q is not a --flag value pair", where, args[i:])
		}
		if !slices.Contains(known, name) {
			t.Errorf("%s: the worker has no flag --%s", where, name)
		}
		out[name] = args[i+1]
	}
	return out
}

// workerCodeActions are the IAM actions examples/worker can call.
func workerCodeActions(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, c := range codeCalls(t, "examples/worker") {
		out = append(out, c.action)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestWorkerFleetTemplate(t *testing.T) {
	t.Parallel()
	const path = "deploy/cloudformation/worker-fleet.yaml"
	tp := loadTemplate(t, path)
	checkReferences(t, path, tp)
	res := func(name, typ string) map[string]any {
		t.Helper()
		r, _ := at(tp, "Resources", name).(map[string]any)
		if r == nil || r["Type"] != typ {
			t.Fatalf("no %s resource %s", typ, name)
		}
		return r
	}

	group := res("Group", "AWS::AutoScaling::AutoScalingGroup")
	if v := at(group, "Properties", "AutoScalingGroupName"); !equal(v, ref("WorkerGroupName")) {
		t.Errorf("group name %v, want the WorkerGroupName parameter (the checker's config and the IAM scope name it)", v)
	}
	if v := at(group, "Properties", "DesiredCapacity"); v != nil {
		t.Errorf("DesiredCapacity %v: a stack update would undo the checker's count", v)
	}

	// One termination hook, continuing by default, timed by the service time.
	hooks, _ := at(group, "Properties", "LifecycleHookSpecificationList").([]any)
	if len(hooks) != 1 {
		t.Fatalf("%d lifecycle hooks, want 1", len(hooks))
	}
	hook := hooks[0]
	if v := at(hook, "LifecycleTransition"); !equal(v, "autoscaling:EC2_INSTANCE_TERMINATING") {
		t.Errorf("hook transition %v", v)
	}
	if v := at(hook, "DefaultResult"); !equal(v, "CONTINUE") {
		t.Errorf("hook default result %v, want CONTINUE: an instance whose worker died still terminates", v)
	}
	hookName := fmt.Sprint(at(hook, "LifecycleHookName"))
	heartbeat := at(hook, "HeartbeatTimeout")
	lookup, _ := at(heartbeat, "Fn::FindInMap").([]any)
	if len(lookup) != 3 || !equal(lookup[1], ref("MaxServiceTime")) {
		t.Fatalf("HeartbeatTimeout %v, want a FindInMap keyed by MaxServiceTime", heartbeat)
	}
	mapping, _ := at(tp, "Mappings", fmt.Sprint(lookup[0])).(map[string]any)
	allowed, _ := at(tp, "Parameters", "MaxServiceTime", "AllowedValues").([]any)
	if len(allowed) == 0 || len(mapping) != len(allowed) {
		t.Fatalf("MaxServiceTime allows %v; mapping %s has %d entries, want one per value", allowed, lookup[0], len(mapping))
	}
	for _, a := range allowed {
		service, err := strconv.Atoi(fmt.Sprint(a))
		if err != nil {
			t.Fatalf("MaxServiceTime value %v: %v", a, err)
		}
		hb, err := strconv.Atoi(fmt.Sprint(at(mapping, fmt.Sprint(a), fmt.Sprint(lookup[2]))))
		if err != nil {
			t.Fatalf("heartbeat for %v: %v", a, err)
		}
		// The worker drains within one receive, one poll and one service
		// time; Auto Scaling takes 30 to 7200 seconds.
		drain := time.Duration(service)*time.Second + workerMaxWait + workerPoll
		if time.Duration(hb)*time.Second < drain || hb != service+60 || hb < 30 || hb > 7200 {
			t.Errorf("MaxServiceTime %ds: heartbeat %ds, want %ds (service time + 60 s, at least the %v drain, 30..7200)",
				service, hb, service+60, drain)
		}
	}

	// The instance's worker completes this hook of this group.
	lt := res("LaunchTemplate", "AWS::EC2::LaunchTemplate")
	data := at(lt, "Properties", "LaunchTemplateData")
	if v := at(data, "MetadataOptions", "HttpTokens"); !equal(v, "required") {
		t.Errorf("IMDS HttpTokens %v, want required (the worker speaks IMDSv2)", v)
	}
	if v := at(data, "MetadataOptions", "HttpEndpoint"); !equal(v, "enabled") {
		t.Errorf("IMDS endpoint %v: the worker reads its target lifecycle state there", v)
	}
	sub, _ := at(data, "UserData", "Fn::Base64", "Fn::Sub").([]any)
	if len(sub) != 2 {
		t.Fatalf("user data is not a Sub with variables: %v", at(data, "UserData"))
	}
	script, vars := fmt.Sprint(sub[0]), sub[1]
	if v := at(vars, "HookName"); !equal(v, hookName) {
		t.Errorf("user data hook name %v, the group's hook is %s", v, hookName)
	}
	if v := at(vars, "HeartbeatTimeout"); !equal(v, heartbeat) {
		t.Errorf("user data heartbeat %v, the hook's is %v", v, heartbeat)
	}
	exec := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/worker (.*)$`).FindStringSubmatch(script)
	if exec == nil {
		t.Fatal("user data starts no worker")
	}
	args := flagArgs(t, "ExecStart", strings.Fields(exec[1]))
	for flag, want := range map[string]string{"group": "${WorkerGroupName}", "hook": "${HookName}", "queue-url": "${QueueUrl}", "poll": workerPoll.String()} {
		if args[flag] != want {
			t.Errorf("worker --%s %q, want %q", flag, args[flag], want)
		}
	}
	if !strings.Contains(script, "TimeoutStopSec=${HeartbeatTimeout}") || !strings.Contains(script, "KillSignal=SIGTERM") {
		t.Error("systemd must stop the worker with SIGTERM and give it the heartbeat timeout to drain")
	}
	for _, want := range []string{"${BinarySha256}", "sha256sum -c"} {
		if !strings.Contains(script, want) {
			t.Errorf("user data does not mention %s", want)
		}
	}

	// The instance may do what the worker calls, on its queue and its group only.
	policy := res("WorkerPolicy", "AWS::IAM::Policy")
	var got []string
	for _, st := range policyStatements(at(policy, "Properties", "PolicyDocument")) {
		for _, a := range actionsOf(st) {
			got = append(got, a)
			var want any
			switch {
			case strings.HasPrefix(a, "sqs:"):
				want = ref("QueueArn")
			case a == "autoscaling:CompleteLifecycleAction":
				want = map[string]any{"Fn::Sub": "arn:${AWS::Partition}:autoscaling:${AWS::Region}:${AWS::AccountId}:autoScalingGroup:*:autoScalingGroupName/${WorkerGroupName}"}
			}
			if !equal(st["Resource"], want) {
				t.Errorf("%s on %v, want %v", a, st["Resource"], want)
			}
		}
	}
	slices.Sort(got)
	if want := workerCodeActions(t); !slices.Equal(got, want) {
		t.Errorf("worker policy allows %v, examples/worker calls %v", got, want)
	}
	if v := at(tp, "Outputs", "HeartbeatTimeout", "Value"); !equal(v, heartbeat) {
		t.Errorf("output HeartbeatTimeout %v, want the hook's %v", v, heartbeat)
	}
}

// On ECS the notice is SIGTERM; SIGKILL follows stopTimeout seconds later
// (at most 120 on Fargate). The worker's drain must fit.
func TestWorkerTaskDefinition(t *testing.T) {
	t.Parallel()
	var td struct {
		RequiresCompatibilities []string       `json:"requiresCompatibilities"`
		Containers              []ecsContainer `json:"containerDefinitions"`
	}
	readJSON(t, "deploy/ecs/worker-task-definition.json", &td)
	var stop struct {
		Containers []struct {
			Name        string `json:"name"`
			StopTimeout *int   `json:"stopTimeout"`
		} `json:"containerDefinitions"`
	}
	readJSON(t, "deploy/ecs/worker-task-definition.json", &stop)
	if len(td.Containers) != 1 || td.Containers[0].Name != "worker" {
		t.Fatalf("containers %+v, want one named worker", td.Containers)
	}
	c := td.Containers[0]
	st := stop.Containers[0].StopTimeout
	if st == nil {
		t.Fatal("no stopTimeout: ECS would kill the worker 30 s after SIGTERM")
	}
	stopTimeout := time.Duration(*st) * time.Second
	if slices.Contains(td.RequiresCompatibilities, "FARGATE") && stopTimeout > 120*time.Second {
		t.Errorf("stopTimeout %v, Fargate allows at most 120 s", stopTimeout)
	}
	args := flagArgs(t, "worker command", c.Command)
	if _, ok := args["group"]; ok {
		t.Error("a task has no lifecycle hook: --group and --hook are for instances")
	}
	wait, err := time.ParseDuration(args["wait"])
	if err != nil {
		t.Fatalf("--wait %q: %v", args["wait"], err)
	}
	service, err := time.ParseDuration(args["service-time"])
	if err != nil {
		t.Fatalf("--service-time %q: %v", args["service-time"], err)
	}
	if drain := wait + service + 10*time.Second; drain > stopTimeout {
		t.Errorf("drain after SIGTERM up to %v (wait %v + service %v + 10 s), stopTimeout %v", drain, wait, service, stopTimeout)
	}
	if !c.ReadOnlyFS || c.User == "" || strings.HasPrefix(c.User, "0") {
		t.Errorf("worker: read-only root %v, user %q; want read-only and non-root", c.ReadOnlyFS, c.User)
	}

	var p iamPolicy
	readJSON(t, "deploy/iam/worker-task-policy.json", &p)
	var got []string
	for _, s := range p.Statement {
		got = append(got, s.Action...)
	}
	slices.Sort(got)
	var want []string
	for _, a := range workerCodeActions(t) {
		if strings.HasPrefix(a, "sqs:") {
			want = append(want, a)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("worker task policy allows %v, the worker's SQS calls are %v", got, want)
	}
}

// TestCfnLint runs cfn-lint over every template when it is installed
// (pip install cfn-lint).
func TestCfnLint(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint)")
	}
	templates, err := filepath.Glob(filepath.Join(root, "deploy", "cloudformation", "*.yaml"))
	if err != nil || len(templates) < 3 {
		t.Fatalf("templates %v: %v", templates, err)
	}
	out, err := exec.Command(bin, templates...).CombinedOutput()
	if err != nil {
		t.Errorf("cfn-lint: %v\n%s", err, out)
	}
}

// TestWorkerHookOnMoto puts the template's lifecycle hook on a group in
// moto through the API and reads it back. moto stores hooks, but does not
// act on them: a scale-in removes instances at once (no Terminating:Wait)
// and CompleteLifecycleAction is not served.
func TestWorkerHookOnMoto(t *testing.T) {
	t.Parallel()
	m := awstest.Shared(t)
	c := autoscaling.New(autoscaling.Options{Region: "us-east-1", BaseEndpoint: aws.String(m.URL),
		Credentials: credentials.NewStaticCredentialsProvider("testing", "testing", "")})
	name := awstest.UniqueName(t, "workers")
	awstest.CreateAutoScalingGroup(t, c, "us-east-1", name, 1, 5, 2)

	tp := loadTemplate(t, "deploy/cloudformation/worker-fleet.yaml")
	hook := at(tp, "Resources", "Group", "Properties", "LifecycleHookSpecificationList", 0)
	lookup, _ := at(hook, "HeartbeatTimeout", "Fn::FindInMap").([]any)
	def := fmt.Sprint(at(tp, "Parameters", "MaxServiceTime", "Default"))
	heartbeat, err := strconv.Atoi(fmt.Sprint(at(tp, "Mappings", fmt.Sprint(lookup[0]), def, fmt.Sprint(lookup[2]))))
	if err != nil {
		t.Fatalf("heartbeat for the default MaxServiceTime %s: %v", def, err)
	}
	in := &autoscaling.PutLifecycleHookInput{
		AutoScalingGroupName: aws.String(name),
		LifecycleHookName:    aws.String(fmt.Sprint(at(hook, "LifecycleHookName"))),
		LifecycleTransition:  aws.String(fmt.Sprint(at(hook, "LifecycleTransition"))),
		HeartbeatTimeout:     aws.Int32(int32(heartbeat)),
		DefaultResult:        aws.String(fmt.Sprint(at(hook, "DefaultResult"))),
	}
	ctx := context.Background()
	if _, err := c.PutLifecycleHook(ctx, in); err != nil {
		t.Fatalf("PutLifecycleHook: %v", err)
	}
	out, err := c.DescribeLifecycleHooks(ctx, &autoscaling.DescribeLifecycleHooksInput{AutoScalingGroupName: aws.String(name)})
	if err != nil {
		t.Fatalf("DescribeLifecycleHooks: %v", err)
	}
	if len(out.LifecycleHooks) != 1 {
		t.Fatalf("%d hooks, want 1", len(out.LifecycleHooks))
	}
	h := out.LifecycleHooks[0]
	if aws.ToString(h.LifecycleHookName) != aws.ToString(in.LifecycleHookName) ||
		aws.ToString(h.LifecycleTransition) != "autoscaling:EC2_INSTANCE_TERMINATING" ||
		aws.ToInt32(h.HeartbeatTimeout) != int32(heartbeat) || aws.ToString(h.DefaultResult) != "CONTINUE" {
		t.Errorf("hook read back %s %s %d %s, want %s autoscaling:EC2_INSTANCE_TERMINATING %d CONTINUE",
			aws.ToString(h.LifecycleHookName), aws.ToString(h.LifecycleTransition), aws.ToInt32(h.HeartbeatTimeout),
			aws.ToString(h.DefaultResult), aws.ToString(in.LifecycleHookName), heartbeat)
	}
}
