package config

import (
	"maps"
	"os/exec"
	"testing"

	"github.com/queuechecker/queue-checker/internal/config/internal/sdkregions"
)

// The generated list of regions is the SDK's: after an upgrade of
// aws-sdk-go-v2, `go generate ./internal/config` brings it in step.
func TestRegionsAreTheSDKs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to find the SDK module")
	}
	dir, version, err := sdkregions.Module()
	if err != nil {
		t.Fatal(err)
	}
	want, err := sdkregions.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(sdkRegions, want) {
		t.Errorf("regions_sdk.go differs from aws-sdk-go-v2 %s's regions: run go generate ./internal/config", version)
	}
	for _, r := range []string{"us-east-1", "eu-west-3", "cn-north-1", "us-gov-west-1", "eusc-de-east-1"} {
		if p := regionProblem(r); p != "" {
			t.Errorf("regionProblem(%q) = %q, want none", r, p)
		}
	}
	for _, r := range []string{"us-esat-1", "eu-west-4", "us-east-l", "aws-global", ""} {
		if regionProblem(r) == "" {
			t.Errorf("regionProblem(%q) = none, want a problem", r)
		}
	}
}
