package kubetest

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// KEDAModule is the KEDA release whose CRDs the tests validate the
// manifests against: its module, from the Go module proxy, carries them in
// config/crd/bases.
const KEDAModule = "github.com/kedacore/keda/v2@v2.21.0"

var (
	kedaOnce sync.Once
	kedaDir  string
	kedaErr  string
)

// KEDACRDs returns KEDA's ScaledObject and TriggerAuthentication CRDs,
// read from KEDAModule in the Go module cache (`go mod download` brings it
// there once, from the module proxy). Without the module the test is
// skipped, saying why; under CI it fails.
func KEDACRDs(t testing.TB) []string {
	t.Helper()
	kedaOnce.Do(func() { kedaDir, kedaErr = moduleDir(KEDAModule) })
	if kedaDir == "" {
		msg := "KEDA's CRDs are not in the module cache (" + kedaErr + "); is the Go module proxy reachable?"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	var docs []string
	for _, f := range []string{"keda.sh_scaledobjects.yaml", "keda.sh_triggerauthentications.yaml"} {
		b, err := os.ReadFile(filepath.Join(kedaDir, "config", "crd", "bases", f))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	return docs
}
