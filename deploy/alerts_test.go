package deploy

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"go.yaml.in/yaml/v3"

	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
)

// promtoolMissing says what to do when promtool is not installed.
const promtoolMissing = "promtool is not on PATH: run scripts/test-deps (Debian's prometheus package), or set CHECKER_SKIP_PROMTOOL=1 to skip the alert rules' tests"

// ruleTestFiles are the promtool rules test files of deploy/prometheus:
// the error budget's have a file of their own, evaluated less often, for
// their days of data.
var ruleTestFiles = []string{"alerts_test.yaml", "slo_test.yaml"}

// TestAlertRulesFire runs `promtool test rules` over the files of
// ruleTestFiles, which must hold between them, for every alert of
// alerts.yaml, a case where it fires.
func TestAlertRulesFire(t *testing.T) {
	t.Parallel()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CHECKER_SKIP_PROMTOOL") != "" {
			t.Skip(promtoolMissing)
		}
		t.Fatal(promtoolMissing)
	}
	cmd := exec.Command(promtool, append([]string{"test", "rules"}, ruleTestFiles...)...)
	cmd.Dir = filepath.Join(root, "deploy/prometheus")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	fires := firingCases(t)
	for _, name := range alertNames(t) {
		if len(fires[name]) == 0 {
			t.Errorf("alert %s has no case in %v where it fires", name, ruleTestFiles)
		}
	}
}

// ruleTests is the part of a promtool rules test file read here.
type ruleTests struct {
	Tests []ruleTestCase `yaml:"tests"`
}

// ruleTestCase is one test of a promtool rules test file.
type ruleTestCase struct {
	InputSeries []struct {
		Series string `yaml:"series"`
	} `yaml:"input_series"`
	AlertRuleTest []struct {
		Alertname string `yaml:"alertname"`
		ExpAlerts []any  `yaml:"exp_alerts"`
	} `yaml:"alert_rule_test"`
}

var seriesName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)

// firingCases maps each alert to the metric names of the input series of
// every test case of ruleTestFiles in which it fires, one set per case.
func firingCases(t *testing.T) map[string][]map[string]bool {
	t.Helper()
	var tests []ruleTestCase
	for _, name := range ruleTestFiles {
		var file ruleTests
		if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/"+name), &file); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tests = append(tests, file.Tests...)
	}
	fires := map[string][]map[string]bool{}
	for _, tc := range tests {
		names := map[string]bool{}
		for _, s := range tc.InputSeries {
			names[seriesName.FindString(s.Series)] = true
		}
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = append(fires[a.Alertname], names)
			}
		}
	}
	return fires
}

func alertNames(t *testing.T) []string {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/alerts.yaml"), &file); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				names = append(names, r.Alert)
			}
		}
	}
	return names
}

// seriesOnlyWhen are the series a checker exports only in some states,
// and the alerts that may use them in their firing cases: a failed action
// and groups without an owner (with coordination) are the very states
// their alerts are about.
var seriesOnlyWhen = map[string]string{
	"checker_action_errors_total": "QueueCheckerActionsFailing",
	"checker_groups_unowned":      "QueueCheckerGroupUnowned",
}

// TestAlertsFireOnTheShippedConfigs: the checker built from cmd/checker,
// run on the README's minimal configuration against moto, exports every
// series of at least one firing case of each alert (but those listed in
// seriesOnlyWhen for it): the page needs no setting the README leaves
// out, CloudWatch's age among them, and the error budget's burn alerts
// find the estimate's counters and objective without it. deploy/kubernetes's ConfigMap reads
// no CloudWatch age either, so its groups export the same families.
func TestAlertsFireOnTheShippedConfigs(t *testing.T) {
	// Not parallel: it sets the AWS environment.
	if os.Getenv("CHECKER_SKIP_INTEGRATION") != "" {
		t.Skip("CHECKER_SKIP_INTEGRATION is set")
	}
	readme := string(readFile(t, "README.md"))
	i := strings.Index(readme, "A minimal file;")
	start := strings.Index(readme[i:], "```yaml\n")
	if i < 0 || start < 0 {
		t.Fatal("README.md: no minimal configuration found")
	}
	doc := readme[i+start+len("```yaml\n"):]
	doc = doc[:strings.Index(doc, "```")]
	minimal, err := config.Parse([]byte(doc))
	if err != nil {
		t.Fatalf("README's minimal configuration: %v", err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/kubernetes/configmap.yaml"), &cm); err != nil {
		t.Fatal(err)
	}
	shipped, err := config.Parse([]byte(cm.Data["config.yaml"]))
	if err != nil {
		t.Fatalf("configmap.yaml: %v", err)
	}
	for _, g := range append(minimal.Groups, shipped.Groups...) {
		if g.OldestAge.CloudWatch {
			t.Fatalf("group %s reads CloudWatch's age: the shipped configs were thought not to", g.Name)
		}
	}

	moto := awstest.Shared(t).URL
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	f := awsclienttest.Factory(t, moto)
	g := minimal.Groups[0]
	for _, q := range g.Queues {
		region := strings.Split(strings.TrimPrefix(q.URL, "https://sqs."), ".")[0]
		name := q.URL[strings.LastIndex(q.URL, "/")+1:]
		if _, err := f.SQS(region).CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name)}); err != nil {
			t.Fatal(err)
		}
	}
	asg := g.Fleet.AutoScalingGroup
	awstest.CreateAutoScalingGroup(t, f.AutoScaling(asg.Region), asg.Region, asg.Name, int32(g.Fleet.Min), int32(g.Fleet.Max), int32(g.Fleet.Min))

	bin := filepath.Join(t.TempDir(), "checker")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/checker").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	// The README's document, run against moto, at a 1 s interval.
	run := strings.Replace(doc, "interval: 5s\n", fmt.Sprintf("interval: 1s\nlisten: %s\naws: {endpoint_url: %s, cloudwatch_protocol: json}\n", addr, moto), 1)
	path := filepath.Join(t.TempDir(), "minimal.yaml")
	if err := os.WriteFile(path, []byte(run), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--config", path)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var exported map[string]bool
	deadline := time.Now().Add(30 * time.Second)
	for {
		exported = scrapeNames(t, "http://"+addr+"/metrics")
		if exported["checker_group_drain_seconds"] || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if len(exported) == 0 {
		t.Fatalf("no metrics scraped from the checker; its log:\n%s", logs.String())
	}
	// The promise's estimate is exported without CloudWatch: every series
	// of docs/observability.md's "The promise as an SLO".
	for _, n := range []string{"checker_slo_messages_within_promise_total", "checker_slo_messages_late_total",
		"checker_slo_objective_ratio", "checker_slo_window_seconds", "checker_slo_error_budget_remaining_ratio",
		"checker_slo_estimate_trusted"} {
		if !exported[n] {
			t.Errorf("the checker on the README's configuration exports no %s", n)
		}
	}
	for alert, cases := range firingCases(t) {
		ok := false
		var missing []string
		for _, names := range cases {
			missing = missing[:0]
			for n := range names {
				// Prometheus makes up, for every target.
				if !exported[n] && n != "up" && !strings.Contains(seriesOnlyWhen[n], alert) {
					missing = append(missing, n)
				}
			}
			if len(missing) == 0 {
				ok = true
				break
			}
		}
		if !ok {
			t.Errorf("%s fires in no case whose series the README's configuration exports (missing %v)", alert, missing)
		}
	}
}

// scrapeNames returns the names of the metric families with series on a
// Prometheus text page, or nil when it does not answer.
func scrapeNames(t *testing.T, url string) map[string]bool {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	names := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 16<<20))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		names[seriesName.FindString(line)] = true
	}
	return names
}
