package config

import (
	"testing"
)

// TestKubernetesFleet loads a file of Kubernetes fleets and a KEDA
// listener, all valid, and checks what they decode to and which workload
// each names.
func TestKubernetesFleet(t *testing.T) {
	t.Parallel()
	c, err := Load("testdata/kubernetes.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	check(t, "keda.listen", c.KEDA.Listen, "0.0.0.0:9103")
	if c.KEDA.TLS == nil || c.KEDA.TLS.ClientCAFile != "/tls/ca.pem" {
		t.Errorf("keda.tls = %+v, want client_ca_file /tls/ca.pem", c.KEDA.TLS)
	}
	want := []struct{ ns, apiVersion, kind, name string }{
		{"workers", "apps/v1", "Deployment", "thumbnails"},
		{"workers", "apps/v1", "StatefulSet", "emails"},
		{"jobs", "argoproj.io/v1alpha1", "Rollout", "video"},
	}
	if len(c.Groups) != len(want) {
		t.Fatalf("got %d groups, want %d", len(c.Groups), len(want))
	}
	for i, w := range want {
		k := c.Groups[i].Fleet.Kubernetes
		if k == nil {
			t.Fatalf("groups[%d].fleet.kubernetes: nil", i)
		}
		apiVersion, kind, name := k.Workload()
		check(t, "namespace", k.Namespace, w.ns)
		check(t, "api_version", apiVersion, w.apiVersion)
		check(t, "kind", kind, w.kind)
		check(t, "name", name, w.name)
	}
	// The statefulset group leaves its workload to KEDA (keda.listen):
	// no note says it is never scaled.
	for _, n := range c.Notes() {
		if n.Path == "groups[1].actions" {
			t.Errorf("a note on the group KEDA scales: %v", n)
		}
	}
}

// TestKubernetesOwners: two groups acting on one workload are refused
// whatever version names it; reading it from a second group is fine.
func TestKubernetesOwners(t *testing.T) {
	t.Parallel()
	base := func(name string, k *Kubernetes, act bool) Group {
		g := DefaultGroup()
		g.Name = name
		g.Queues = []Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/" + name}}
		g.Workers.ServiceTime = 1
		g.Target.Latency = 1e9
		g.Fleet.Max = 5
		g.Fleet.Kubernetes = k
		g.Actions.SetDesiredCapacity = act
		return g
	}
	dep := &Kubernetes{Namespace: "w", Deployment: "a"}
	same := &Kubernetes{Namespace: "w", ScaleTarget: &ScaleTarget{APIVersion: "apps/v1beta2", Kind: "Deployment", Name: "a"}}
	other := &Kubernetes{Namespace: "x", Deployment: "a"}
	for _, tc := range []struct {
		name string
		b    *Kubernetes
		act  bool
		want []string
	}{
		{"same workload, both act", same, true, []string{"groups[1].fleet.kubernetes: the same fleet as groups[0].fleet.kubernetes, which also acts on it (set_desired_capacity or cloudwatch_metrics); a fleet has one owner"}},
		{"same workload, second reads", same, false, nil},
		{"another namespace", other, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := Default()
			c.Groups = []Group{base("a", dep, true), base("b", tc.b, tc.act)}
			var got []string
			for _, p := range Problems(c.Validate()) {
				got = append(got, p.Error())
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("problems:\n got  %q\n want %q", got, tc.want)
			}
		})
	}
}
