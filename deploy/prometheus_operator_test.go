package deploy

import (
	"reflect"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// operatorDir is the Prometheus Operator's kustomize component.
const operatorDir = "deploy/kubernetes/prometheus-operator/"

// TestPrometheusRuleIsTheAlerts: the PrometheusRule's spec.groups are
// deploy/prometheus/alerts.yaml's groups, rule for rule, so that the
// rules promtool tests are the rules the Operator loads.
func TestPrometheusRuleIsTheAlerts(t *testing.T) {
	t.Parallel()
	var alerts struct {
		Groups []any `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/alerts.yaml"), &alerts); err != nil {
		t.Fatal(err)
	}
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
	if len(alerts.Groups) == 0 {
		t.Fatal("alerts.yaml has no groups")
	}
	if !reflect.DeepEqual(rule.Spec.Groups, alerts.Groups) {
		t.Errorf("prometheusrule.yaml's spec.groups differ from alerts.yaml's groups: copy alerts.yaml's groups under spec:")
		for i := range min(len(rule.Spec.Groups), len(alerts.Groups)) {
			if !reflect.DeepEqual(rule.Spec.Groups[i], alerts.Groups[i]) {
				t.Logf("group %d:\n rule   %v\n alerts %v", i, rule.Spec.Groups[i], alerts.Groups[i])
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
