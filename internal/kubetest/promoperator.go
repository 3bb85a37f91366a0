package kubetest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// PrometheusOperatorModule is the Prometheus Operator release whose CRDs
// the tests validate the ServiceMonitor and PrometheusRule against: its
// module carries them in example/prometheus-operator-crd.
const PrometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"

var (
	promOpOnce sync.Once
	promOpDir  string
	promOpErr  string
)

// PrometheusOperatorCRDs returns the Operator's ServiceMonitor and
// PrometheusRule CRDs, read from PrometheusOperatorModule in the Go module
// cache (`go mod download` brings it there once). Without the module the
// test is skipped, saying why; under CI it fails.
func PrometheusOperatorCRDs(t testing.TB) []string {
	t.Helper()
	promOpOnce.Do(func() { promOpDir, promOpErr = moduleDir(PrometheusOperatorModule) })
	if promOpDir == "" {
		msg := "the Prometheus Operator's CRDs are not in the module cache (" + promOpErr + "); is the Go module proxy reachable?"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var docs []string
	for _, f := range []string{"monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"} {
		b, err := os.ReadFile(filepath.Join(promOpDir, "example", "prometheus-operator-crd", f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return docs
}

// moduleDir downloads module (path@version) into the module cache, outside
// any module so that go.mod is neither read nor changed, and returns its
// directory, or "" and why not.
func moduleDir(module string) (dir, why string) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GO111MODULE=on")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Dir == "" {
		why = "go mod download " + module + ": " + string(out)
		if err != nil {
			why += err.Error()
		}
		return "", why
	}
	return mod.Dir, ""
}
