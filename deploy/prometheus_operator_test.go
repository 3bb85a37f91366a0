package deploy

import (
	"reflect"
	"regexp"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// operatorDir is the Prometheus Operator's kustomize component.
const operatorDir = "deploy/kubernetes/prometheus-operator/"

// TestPrometheusRuleIsTheAlerts: the PrometheusRule's spec.groups are
// deploy/prometheus/alerts.yaml's groups, rule for rule, so that the
// rules promtool tests are the rules the Operator loads; only the
// runbooks and descriptions, written for Kubernetes, may differ.
func TestPrometheusRuleIsTheAlerts(t *testing.T) {
	t.Parallel()
	alerts, rule := alertsFile(t), prometheusRule(t)
	if len(alerts) == 0 {
		t.Fatal("alerts.yaml has no groups")
	}
	for _, groups := range [][]any{alerts, rule} {
		forEachRule(groups, func(r map[string]any) {
			if a, ok := r["annotations"].(map[string]any); ok {
				delete(a, "runbook")
				delete(a, "description")
			}
		})
	}
	if !reflect.DeepEqual(rule, alerts) {
		t.Errorf("prometheusrule.yaml's spec.groups differ from alerts.yaml's groups but for runbooks and descriptions: copy alerts.yaml's groups under spec:")
		for i := range min(len(rule), len(alerts)) {
			if !reflect.DeepEqual(rule[i], alerts[i]) {
				t.Logf("group %d:\n rule   %v\n alerts %v", i, rule[i], alerts[i])
			}
		}
	}
}

// awsOnly are remedies that exist only on AWS's own platforms (EC2 Auto
// Scaling, ECS, the DynamoDB lease table, a systemd unit): a runbook for
// Kubernetes that names one sends the on-call engineer to the wrong place.
var awsOnly = regexp.MustCompile(`(?i)auto ?scaling|\bASG\b|\bECS\b|fargate|cloudwatch logs|dynamodb|lease table|security group|\bEC2\b|instance role|SetDesiredCapacity|UpdateService|MaxSize|systemd`)

// kubernetesWords are what a Kubernetes runbook points at.
var kubernetesWords = regexp.MustCompile(`kubectl|\bpods?\b|Deployment|StatefulSet|\bLeases?\b|ScaledObject|\bHPA\b|ServiceMonitor|\bRole\b`)

// TestKubernetesRunbooks: every rule of the PrometheusRule, whatever its
// alert, has a runbook; none of its annotations (template expressions
// aside) names a remedy that exists only on AWS's own platforms, and each
// runbook points at something of Kubernetes. The AWS runbooks of
// alerts.yaml do name them, so the check is a real one.
func TestKubernetesRunbooks(t *testing.T) {
	t.Parallel()
	template := regexp.MustCompile(`\{\{.*?\}\}`)
	check := func(groups []any, where string) (rules, aws int) {
		forEachRule(groups, func(r map[string]any) {
			name, _ := r["alert"].(string)
			if name == "" {
				return // a recording rule: no annotations
			}
			rules++
			a, _ := r["annotations"].(map[string]any)
			runbook, _ := a["runbook"].(string)
			if where == "prometheusrule.yaml" && (runbook == "" || !kubernetesWords.MatchString(runbook)) {
				t.Errorf("%s: %s: the runbook %q points at nothing of Kubernetes (kubectl, pods, Deployments, Leases ...)", where, name, runbook)
			}
			for key, v := range a {
				text, _ := v.(string)
				if m := awsOnly.FindString(template.ReplaceAllString(text, "")); m != "" {
					aws++
					if where == "prometheusrule.yaml" {
						t.Errorf("%s: %s: annotations.%s names %q, a remedy only AWS's platforms have:\n%s", where, name, key, m, text)
					}
				}
			}
		})
		return rules, aws
	}
	if n, _ := check(prometheusRule(t), "prometheusrule.yaml"); n == 0 {
		t.Fatal("prometheusrule.yaml has no alerts")
	}
	if _, aws := check(alertsFile(t), "alerts.yaml"); aws == 0 {
		t.Error("no annotation of alerts.yaml names an AWS-only remedy: the pattern finds nothing it should")
	}
}

// alertsFile is deploy/prometheus/alerts.yaml's groups.
func alertsFile(t *testing.T) []any {
	t.Helper()
	var alerts struct {
		Groups []any `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/alerts.yaml"), &alerts); err != nil {
		t.Fatal(err)
	}
	return alerts.Groups
}

// prometheusRule is the PrometheusRule's spec.groups.
func prometheusRule(t *testing.T) []any {
	t.Helper()
	var rule struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Spec       struct {
			Groups []any `yaml:"groups"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(readFile(t, operatorDir+"prometheusrule.yaml"), &rule); err != nil {
		t.Fatal(err)
	}
	if rule.APIVersion != "monitoring.coreos.com/v1" || rule.Kind != "PrometheusRule" {
		t.Errorf("prometheusrule.yaml is a %s %s", rule.APIVersion, rule.Kind)
	}
	return rule.Spec.Groups
}

// forEachRule calls f with every rule of groups.
func forEachRule(groups []any, f func(rule map[string]any)) {
	for _, g := range groups {
		gm, _ := g.(map[string]any)
		rules, _ := gm["rules"].([]any)
		for _, r := range rules {
			if rm, ok := r.(map[string]any); ok {
				f(rm)
			}
		}
	}
}

// TestServiceMonitorFindsTheService: the ServiceMonitor selects the
// Service of deploy/kubernetes by its labels, in its namespace, on a port
// the Service names; the component lists both of its objects.
func TestServiceMonitorFindsTheService(t *testing.T) {
	t.Parallel()
	type meta struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	}
	var svc struct {
		Metadata meta `yaml:"metadata"`
		Spec     struct {
			Ports []struct {
				Name string `yaml:"name"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/kubernetes/service.yaml"), &svc); err != nil {
		t.Fatal(err)
	}
	var sm struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			NamespaceSelector struct {
				MatchNames []string `yaml:"matchNames"`
			} `yaml:"namespaceSelector"`
			Endpoints []struct {
				Port string `yaml:"port"`
				Path string `yaml:"path"`
			} `yaml:"endpoints"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(readFile(t, operatorDir+"servicemonitor.yaml"), &sm); err != nil {
		t.Fatal(err)
	}
	if sm.Kind != "ServiceMonitor" || len(sm.Spec.Selector.MatchLabels) == 0 {
		t.Fatalf("servicemonitor.yaml: kind %q, selector %v", sm.Kind, sm.Spec.Selector.MatchLabels)
	}
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Metadata.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s; the Service's labels are %v", k, v, svc.Metadata.Labels)
		}
	}
	if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{svc.Metadata.Namespace}) {
		t.Errorf("the ServiceMonitor looks in %v; the Service is in %s", sm.Spec.NamespaceSelector.MatchNames, svc.Metadata.Namespace)
	}
	// The alerts name job="queue-checker"; the Operator's job label is the
	// Service's name unless jobLabel says otherwise.
	if svc.Metadata.Name != "queue-checker" {
		t.Errorf("the Service is %s: the alerts' job=\"queue-checker\" would not match", svc.Metadata.Name)
	}
	if len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Fatalf("endpoints %+v, want one, on /metrics", sm.Spec.Endpoints)
	}
	if !slices.ContainsFunc(svc.Spec.Ports, func(p struct {
		Name string `yaml:"name"`
	}) bool {
		return p.Name == sm.Spec.Endpoints[0].Port
	}) {
		t.Errorf("the ServiceMonitor scrapes port %q, which the Service does not name", sm.Spec.Endpoints[0].Port)
	}

	var k struct {
		Kind      string   `yaml:"kind"`
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(readFile(t, operatorDir+"kustomization.yaml"), &k); err != nil {
		t.Fatal(err)
	}
	if k.Kind != "Component" || !slices.Equal(k.Resources, []string{"servicemonitor.yaml", "prometheusrule.yaml"}) {
		t.Errorf("kustomization.yaml: kind %s, resources %v", k.Kind, k.Resources)
	}
}
