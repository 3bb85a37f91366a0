package config

import (
	"net"
	"regexp"
	"strconv"
	"strings"
)

// KEDA serves KEDA's external scaler (gRPC) from the daemon: the KEDA
// operator of a cluster asks it, per ScaledObject, whether a group's
// workers should run and how many (docs/kubernetes.md). Off while Listen
// is empty, the default.
type KEDA struct {
	// Listen is the gRPC listener's host:port; empty serves nothing.
	Listen string `yaml:"listen"`
	// TLS, when present, serves TLS, and mutual TLS with a client CA.
	TLS *KEDATLS `yaml:"tls"`
	// MaxStreams bounds the streams open at once, of every streaming
	// method together (StreamIsActive, StreamMetricSpec, reflection); more are
	// refused (ResourceExhausted). 0 means DefaultKEDAMaxStreams.
	MaxStreams int `yaml:"max_streams"`
}

// DefaultKEDAMaxStreams is keda.max_streams when not set: each KEDA
// operator replica opens one stream per ScaledObject.
const DefaultKEDAMaxStreams = 1000

// KEDATLS is the scaler's certificate, and the CA its clients' (KEDA's
// tlsClientCert) must chain to; without ClientCAFile any client may ask.
type KEDATLS struct {
	CertFile     string `yaml:"cert_file"`
	KeyFile      string `yaml:"key_file"`
	ClientCAFile string `yaml:"client_ca_file"`
}

// Kubernetes names a workload whose replicas are the group's workers,
// read and set through its scale subresource: a Deployment, a StatefulSet
// or any kind with a scale subresource (ScaleTarget). Exactly one of the
// three.
type Kubernetes struct {
	Namespace   string       `yaml:"namespace"`
	Deployment  string       `yaml:"deployment"`
	StatefulSet string       `yaml:"statefulset"`
	ScaleTarget *ScaleTarget `yaml:"scale_target"`
}

// ScaleTarget is a workload of any kind that has a scale subresource, as
// an HPA's scaleTargetRef names it.
type ScaleTarget struct {
	APIVersion string `yaml:"api_version"` // group/version, such as argoproj.io/v1alpha1
	Kind       string `yaml:"kind"`        // such as Rollout
	Name       string `yaml:"name"`
}

// Workload returns the workload's API version, kind and name, whichever
// key names it; empty strings when none does.
func (k Kubernetes) Workload() (apiVersion, kind, name string) {
	switch {
	case k.Deployment != "":
		return "apps/v1", "Deployment", k.Deployment
	case k.StatefulSet != "":
		return "apps/v1", "StatefulSet", k.StatefulSet
	case k.ScaleTarget != nil:
		return k.ScaleTarget.APIVersion, k.ScaleTarget.Kind, k.ScaleTarget.Name
	}
	return "", "", ""
}

var (
	// dnsLabelRE is a Kubernetes namespace name (RFC 1123 label).
	dnsLabelRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	// dnsSubdomainRE is a Kubernetes object name (RFC 1123 subdomain).
	dnsSubdomainRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// apiVersionRE is group/version or a core version (v1).
	apiVersionRE = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?v[0-9]+((alpha|beta)[0-9]+)?$`)
	// kindRE is a Kubernetes kind: CamelCase letters and digits.
	kindRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

func (k *KEDA) validate(p *problems) {
	if k.Listen != "" {
		validateAddr(p, "keda.listen", k.Listen, "127.0.0.1:9103")
	}
	if k.MaxStreams < 0 || k.MaxStreams > 100000 {
		p.add("keda.max_streams", "must be from 1 to 100000, or 0 for the default %d; got %d", DefaultKEDAMaxStreams, k.MaxStreams)
	}
	t := k.TLS
	if t == nil {
		return
	}
	if k.Listen == "" {
		p.add("keda.tls", "needs keda.listen: TLS of a scaler that is not served")
	}
	if t.CertFile == "" {
		p.add("keda.tls.cert_file", "required: the PEM certificate the scaler presents")
	}
	if t.KeyFile == "" {
		p.add("keda.tls.key_file", "required: the PEM private key of cert_file")
	}
}

// validateAddr checks a host:port listen address.
func validateAddr(p *problems, path, addr, example string) {
	if _, port, err := net.SplitHostPort(addr); err != nil {
		p.add(path, "must be host:port, such as %s; got %q", example, addr)
	} else if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.add(path, "port must be a number from 0 to 65535 (0 picks a free port), got %q", port)
	}
}

func (k *Kubernetes) validate(p *problems, path string) {
	nsp := joinPath(path, "namespace")
	switch {
	case k.Namespace == "":
		p.add(nsp, "required: the namespace of the workload, such as workers")
	case len(k.Namespace) > 63 || !dnsLabelRE.MatchString(k.Namespace):
		p.add(nsp, "must be a namespace name (at most 63 lower-case letters, digits and '-'), got %q", k.Namespace)
	}
	named := 0
	for _, n := range []bool{k.Deployment != "", k.StatefulSet != "", k.ScaleTarget != nil} {
		if n {
			named++
		}
	}
	switch {
	case named == 0:
		p.add(path, "name the workload: deployment, statefulset or scale_target {api_version, kind, name}")
	case named > 1:
		p.add(path, "set one of deployment, statefulset and scale_target, not several")
	}
	objectName(p, joinPath(path, "deployment"), k.Deployment, false)
	objectName(p, joinPath(path, "statefulset"), k.StatefulSet, false)
	if t := k.ScaleTarget; t != nil {
		tp := joinPath(path, "scale_target")
		switch {
		case t.APIVersion == "":
			p.add(joinPath(tp, "api_version"), "required: the workload's group/version, such as argoproj.io/v1alpha1")
		case !apiVersionRE.MatchString(t.APIVersion):
			p.add(joinPath(tp, "api_version"), "must be group/version such as apps/v1, got %q", t.APIVersion)
		}
		switch {
		case t.Kind == "":
			p.add(joinPath(tp, "kind"), "required: the workload's kind, such as Rollout")
		case !kindRE.MatchString(t.Kind):
			p.add(joinPath(tp, "kind"), "must be a kind such as Deployment (a capital letter, then letters and digits), got %q", t.Kind)
		}
		objectName(p, joinPath(tp, "name"), t.Name, true)
	}
}

// objectName checks a Kubernetes object name; empty is a problem only
// when required.
func objectName(p *problems, path, name string, required bool) {
	switch {
	case name == "" && required:
		p.add(path, "required: the workload's name")
	case name == "":
	case len(name) > 253 || !dnsSubdomainRE.MatchString(name):
		p.add(path, "must be a Kubernetes object name (lower-case letters, digits, '-' and '.'), got %q", name)
	}
}

// kubeFleetKey identifies a Kubernetes workload across groups: namespace,
// API group (not version: one object answers under every version), kind
// and name.
func kubeFleetKey(k *Kubernetes) string {
	apiVersion, kind, name := k.Workload()
	if name == "" {
		return ""
	}
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	return "kubernetes\x00" + k.Namespace + "\x00" + group + "\x00" + kind + "\x00" + name
}

// fleetKinds counts the fleet kinds the block names: autoscaling_group,
// ecs_service and kubernetes. One is a fleet, none is no fleet.
func (f Fleet) fleetKinds() int {
	n := 0
	for _, set := range []bool{f.AutoScalingGroup != nil, f.ECSService != nil, f.Kubernetes != nil} {
		if set {
			n++
		}
	}
	return n
}
