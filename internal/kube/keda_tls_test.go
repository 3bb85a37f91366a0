package kube

import (
	"path/filepath"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestKEDATLSComponent: the keda-tls component's configuration is the
// keda component's with keda.tls, at the paths where its Deployment patch mounts the
// server's Secret; its ScaledObject patch keeps the keda component's trigger and adds
// the TriggerAuthentication, which gives KEDA the three parameters its
// external scaler reads from authParams.
func TestKEDATLSComponent(t *testing.T) {
	t.Parallel()
	base, tls := manifestConfig(t, "keda/configmap.yaml"), manifestConfig(t, "keda-tls/configmap.yaml")
	if tls.KEDA.TLS == nil || tls.KEDA.TLS.ClientCAFile == "" {
		t.Fatalf("keda-tls: keda.tls %+v, want a certificate and a client CA", tls.KEDA.TLS)
	}
	certs := *tls.KEDA.TLS
	tls.KEDA.TLS = nil
	if !reflect.DeepEqual(base, tls) {
		t.Error("keda-tls/configmap.yaml differs from keda/configmap.yaml by more than keda.tls")
	}
	vols, _, _ := unstructured.NestedSlice(readManifest(t, "keda-tls/deployment.yaml").Object, "spec", "template", "spec", "containers")
	mounts, _, _ := unstructured.NestedSlice(vols[0].(map[string]any), "volumeMounts")
	dir, _, _ := unstructured.NestedString(mounts[0].(map[string]any), "mountPath")
	for _, f := range []string{certs.CertFile, certs.KeyFile, certs.ClientCAFile} {
		if filepath.Dir(f) != dir {
			t.Errorf("keda.tls names %s, outside the Secret's mount %s", f, dir)
		}
	}

	baseTriggers, _, _ := unstructured.NestedSlice(readManifest(t, "keda/scaledobject.yaml").Object, "spec", "triggers")
	triggers, _, _ := unstructured.NestedSlice(readManifest(t, "keda-tls/scaledobject.yaml").Object, "spec", "triggers")
	if len(triggers) != 1 || len(baseTriggers) != 1 {
		t.Fatalf("triggers: base %d, component %d", len(baseTriggers), len(triggers))
	}
	tr := triggers[0].(map[string]any)
	auth, _, _ := unstructured.NestedString(tr, "authenticationRef", "name")
	delete(tr, "authenticationRef")
	if !reflect.DeepEqual(tr, baseTriggers[0]) {
		t.Errorf("the component's trigger %v is not the base's %v plus authenticationRef", tr, baseTriggers[0])
	}
	ta := readManifest(t, "keda-tls/triggerauthentication.yaml")
	if ta.GetName() != auth || ta.GetNamespace() != readManifest(t, "keda/scaledobject.yaml").GetNamespace() {
		t.Errorf("authenticationRef %q; the TriggerAuthentication is %s/%s", auth, ta.GetNamespace(), ta.GetName())
	}
	refs, _, _ := unstructured.NestedSlice(ta.Object, "spec", "secretTargetRef")
	params := map[string]bool{}
	for _, r := range refs {
		p, _, _ := unstructured.NestedString(r.(map[string]any), "parameter")
		params[p] = true
	}
	for _, p := range []string{"caCert", "tlsClientCert", "tlsClientKey"} {
		if !params[p] {
			t.Errorf("the TriggerAuthentication does not give KEDA %s", p)
		}
	}
}
