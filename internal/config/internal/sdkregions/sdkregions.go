// Package sdkregions reads the regions of the AWS partitions from the
// aws-sdk-go-v2 module the build uses (its partitions.json, which the SDK
// keeps in an internal package), for genregions and for the test that
// keeps the generated copy in step with the SDK.
package sdkregions

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Module returns the directory and version of the aws-sdk-go-v2 module
// the build uses.
func Module() (string, string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}} {{.Version}}", "github.com/aws/aws-sdk-go-v2").Output()
	if err != nil {
		return "", "", fmt.Errorf("find aws-sdk-go-v2: %w", err)
	}
	dir, version, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok || dir == "" {
		return "", "", fmt.Errorf("find aws-sdk-go-v2: %q", out)
	}
	return dir, version, nil
}

// Read returns the regions of the SDK module in dir, region -> partition,
// leaving out each partition's pseudo-region for its global endpoints
// (aws-global).
func Read(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "internal", "endpoints", "awsrulesfn", "partitions.json"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Partitions []struct {
			ID      string                     `json:"id"`
			Regions map[string]json.RawMessage `json:"regions"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("partitions.json: %w", err)
	}
	out := map[string]string{}
	for _, p := range doc.Partitions {
		for r := range p.Regions {
			if strings.HasSuffix(r, "-global") {
				continue
			}
			out[r] = p.ID
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("partitions.json lists no region")
	}
	return out, nil
}
