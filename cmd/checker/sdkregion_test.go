package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sdkEnv points the SDK's default chain at the environment given and at
// shared config and credentials files of the test's own (configFile's text;
// none when empty), away from the machine's.
func sdkEnv(t *testing.T, configFile string, env map[string]string) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config")
	if err := os.WriteFile(cfgPath, []byte(configFile), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", cfgPath)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"} {
		t.Setenv(k, env[k])
	}
}

// validate resolves the region the SDK would use where the configuration
// names none (AWS_REGION, AWS_DEFAULT_REGION, the shared config profile),
// for what takes it, and refuses a typing error with a suggestion, as it
// does aws.region; an ssm: ARN's region too.
func TestValidateChecksTheSDKRegion(t *testing.T) {
	const profiles = "[default]\nregion = us-west-2\n[profile typo]\nregion = eu-wset-1\n[profile good]\nregion = eu-west-1\n"
	withFleet := `interval: 5s
groups:
  - name: jobs
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}]
    workers: {service_time: 1s}
    target: {latency: 30s}
    fleet:
      autoscaling_group: {name: workers}
      min: 1
      max: 5
    actions: {set_desired_capacity: true}
`
	allRegions := strings.Replace(withFleet, "autoscaling_group: {name: workers}", "autoscaling_group: {name: workers, region: us-east-1}", 1)
	withRegion := "aws: {region: us-east-1}\n" + withFleet
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fleet, explicit, set := write("fleet.yaml", withFleet), write("explicit.yaml", allRegions), write("set.yaml", withRegion)
	for _, tc := range []struct {
		name string
		file string
		env  map[string]string
		want string // "" : valid
	}{
		{"AWS_REGION typo", fleet, map[string]string{"AWS_REGION": "us-esat-1"},
			`aws.region: not set, so the SDK's region from AWS_REGION applies (to groups[0].fleet.autoscaling_group): "us-esat-1" is not a region of any AWS partition; did you mean us-east-1?`},
		{"AWS_DEFAULT_REGION typo", fleet, map[string]string{"AWS_DEFAULT_REGION": "eu-west-4"},
			`aws.region: not set, so the SDK's region from AWS_DEFAULT_REGION applies (to groups[0].fleet.autoscaling_group): "eu-west-4" is not a region`},
		{"profile typo", fleet, map[string]string{"AWS_PROFILE": "typo"},
			`aws.region: not set, so the SDK's region from the shared config profile "typo" applies (to groups[0].fleet.autoscaling_group): "eu-wset-1" is not a region of any AWS partition; did you mean eu-west-1?`},
		{"a profile that is not there", fleet, map[string]string{"AWS_PROFILE": "nope"}, `aws.region: not set, and the SDK's region (for groups[0].fleet.autoscaling_group) is not known`},
		{"AWS_REGION good", fleet, map[string]string{"AWS_REGION": "eu-central-1"}, ""},
		{"profile good", fleet, map[string]string{"AWS_PROFILE": "good"}, ""},
		{"the default profile", fleet, nil, ""},
		{"aws.region set: the SDK's is not used", set, map[string]string{"AWS_REGION": "us-esat-1"}, ""},
		{"every region named: the SDK's is not used", explicit, map[string]string{"AWS_REGION": "us-esat-1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sdkEnv(t, profiles, tc.env)
			code, _, stderr := runValidate(t, "--config", tc.file)
			switch {
			case tc.want == "" && code != 0:
				t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
			case tc.want != "" && (code != 2 || !strings.Contains(stderr, tc.want)):
				t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, tc.want)
			}
		})
	}

	t.Run("ssm ARN", func(t *testing.T) {
		sdkEnv(t, profiles, nil)
		code, _, stderr := runValidate(t, "--config", "ssm:arn:aws:ssm:us-esat-1:123456789012:parameter/queue-checker")
		if want := `the region of the ARN: "us-esat-1" is not a region of any AWS partition; did you mean us-east-1?`; code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and %q", code, stderr, want)
		}
	})
	t.Run("ssm name with an AWS_REGION typo", func(t *testing.T) {
		sdkEnv(t, profiles, map[string]string{"AWS_REGION": "ap-southeast-9"})
		code, _, stderr := runValidate(t, "--config", "ssm:/queue-checker/config")
		if want := `the SDK's region from AWS_REGION: "ap-southeast-9" is not a region`; code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant a failure and %q", code, stderr, want)
		}
	})
}
