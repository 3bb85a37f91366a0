package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/queuechecker/queue-checker/internal/awstest"
)

// ssmDocument is a valid configuration of n groups on queue url, listening
// on a free port, dry run.
func ssmDocument(endpoint, url string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "interval: 1s\nlisten: 127.0.0.1:0\ndry_run: true\naws: {region: %s, endpoint_url: %s, cloudwatch_protocol: json}\ngroups:\n", east, endpoint)
	for i := range n {
		shared := ""
		if i > 0 {
			shared = ", shared: true"
		}
		fmt.Fprintf(&b, "  - name: g%d\n    queues: [{url: %q%s}]\n    workers: {service_time: 1s}\n    target: {latency: 30s}\n    fleet: {max: 5}\n", i, url, shared)
	}
	return b.String()
}

// TestE2EConfigFromSSM stores the configuration in moto's Parameter Store
// and runs validate, once and run against it: by --config ssm:NAME and by
// CHECKER_CONFIG; run with --config-refresh picks up a changed parameter,
// keeps the running configuration when the new one is invalid (logging it
// once).
func TestE2EConfigFromSSM(t *testing.T) {
	moto := awstest.Shared(t)
	f := direct(t)
	t.Setenv("AWS_ENDPOINT_URL_SSM", moto.URL)
	t.Setenv(envConfig, "")
	ctx := context.Background()
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(east), awsconfig.WithBaseEndpoint(moto.URL))
	if err != nil {
		t.Fatal(err)
	}
	client := ssm.NewFromConfig(cfg)
	name := "/queue-checker/" + awstest.UniqueName(t, "config")
	put := func(doc string) {
		t.Helper()
		if _, err := client.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String(name), Value: aws.String(doc),
			Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true)}); err != nil {
			t.Fatalf("PutParameter: %v", err)
		}
	}
	q := makeQueue(t, f, queueSpec{region: east, visible: 3})
	put(ssmDocument(moto.URL, q.url, 1))

	runCmd := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := run(ctx, args, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, errOut := runCmd("validate", "--config", "ssm:"+name); code != 0 || out != "ssm:"+name+": ok (1 group)\n" {
		t.Errorf("validate ssm: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	t.Setenv(envConfig, "ssm:"+name)
	if code, out, errOut := runCmd("once", "--output", "json"); code != 0 || !strings.Contains(out, `"group": "g0"`) {
		t.Errorf("once with %s: exit %d, stdout %q, stderr %q", envConfig, code, out, errOut)
	}
	if code, _, errOut := runCmd("validate", "--config", "ssm:/queue-checker/absent"); code != 2 || !strings.Contains(errOut, "ParameterNotFound") {
		t.Errorf("validate of a missing parameter: exit %d, stderr %q; want 2 naming ParameterNotFound", code, errOut)
	}

	// An invalid document: every problem, with its path and line, exit 2.
	bad := strings.Replace(ssmDocument(moto.URL, q.url, 1), "max: 5", "max: -5", 1)
	badName := name + "-bad"
	if _, err := client.PutParameter(ctx, &ssm.PutParameterInput{Name: aws.String(badName), Value: aws.String(bad),
		Type: ssmtypes.ParameterTypeString}); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCmd("validate", "--config", "ssm:"+badName); code != 2 ||
		!strings.Contains(errOut, "ssm:"+badName+":10: groups[0].fleet.max: must be at least 1, got -5") {
		t.Errorf("validate of an invalid parameter: exit %d, stderr %q", code, errOut)
	}

	// The daemon, refreshing every second.
	dctx, cancel := context.WithCancel(ctx)
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(dctx, []string{"run", "--config-refresh", "1s"}, io.Discard, logs) }()
	defer func() {
		cancel()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Error("the daemon did not stop")
		}
	}()
	addr := listenAddr(t, logs, 30*time.Second)
	groups := func() int {
		_, body := get(t, "http://"+addr+"/api/v1/groups")
		return strings.Count(body, `"name": "g`)
	}
	eventually(t, 10*time.Second, "one group served", func() bool { return groups() == 1 })
	put(ssmDocument(moto.URL, q.url, 3))
	eventually(t, 10*time.Second, "three groups after the parameter changed", func() bool { return groups() == 3 })
	put(strings.Replace(ssmDocument(moto.URL, q.url, 2), "max: 5", "max: -5", 1))
	eventually(t, 10*time.Second, "the invalid document logged", func() bool { return strings.Contains(logs.String(), "reload failed") })
	time.Sleep(3 * time.Second) // three more refreshes of the same invalid document
	if n := strings.Count(logs.String(), "reload failed"); n != 1 || groups() != 3 {
		t.Errorf("invalid parameter: %d failures logged, %d groups served; want 1 and the running 3", n, groups())
	}
	if n := strings.Count(logs.String(), "configuration reloaded"); n != 1 {
		t.Errorf("%d reloads logged, want 1", n)
	}

	// A document that gains a coordination block is refused: applied, this
	// checker would act beside the ones sharing the table. The running
	// configuration stays, logged at error, and /healthz fails until the
	// checker restarts (or the running document comes back).
	shared := strings.Replace(ssmDocument(moto.URL, q.url, 2), "groups:\n",
		fmt.Sprintf("coordination:\n  dynamodb: {table: %s, region: %s}\ngroups:\n", awstest.UniqueName(t, "leases"), east), 1)
	put(shared)
	eventually(t, 10*time.Second, "the coordination change refused", func() bool { return strings.Contains(logs.String(), "reload refused") })
	if n := groups(); n != 3 {
		t.Errorf("%d groups served after a refused reload, want the running 3", n)
	}
	// Asked again for up to 10 s: a cycle that missed its deadline on a
	// loaded machine may be what /healthz names first.
	var code int
	var body string
	if !pollUntil(10*time.Second, 200*time.Millisecond, func() bool {
		code, body = get(t, "http://"+addr+"/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "restart needed")
	}) {
		t.Errorf("/healthz after a refused coordination change: %d %q, want 503 naming the restart", code, body)
	}
	put(ssmDocument(moto.URL, q.url, 3))
	eventually(t, 10*time.Second, "healthy again with the running document back", func() bool {
		code, _ := get(t, "http://"+addr+"/healthz")
		return code == http.StatusOK
	})
}
