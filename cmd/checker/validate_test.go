package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const configTestdata = "../../internal/config/testdata"

func runValidate(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), append([]string{"validate"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestValidateCommandOK(t *testing.T) {
	t.Parallel()
	groups := map[string]int{ // file -> groups it defines
		"../../config.example.yaml":               2,
		configTestdata + "/minimal.ok.yaml":       1,
		configTestdata + "/explicit-zero.ok.yaml": 1,
		configTestdata + "/anchors.ok.yaml":       2,
		configTestdata + "/emulator.ok.yaml":      1,
		configTestdata + "/forecast.ok.yaml":      4,
		configTestdata + "/prices.ok.yaml":        3,
		configTestdata + "/debug.ok.yaml":         1,
		configTestdata + "/slo.ok.yaml":           3,
	}
	files, err := filepath.Glob(configTestdata + "/*.ok.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no *.ok.yaml in %s: %v", configTestdata, err)
	}
	for _, f := range files {
		if _, ok := groups[f]; !ok {
			t.Errorf("%s has no expected group count here", f)
		}
	}
	for file, n := range groups {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runValidate(t, "--config", file)
			if code != 0 {
				t.Fatalf("exit %d, want 0; stderr:\n%s", code, stderr)
			}
			noun := "groups"
			if n == 1 {
				noun = "group"
			}
			if want := fmt.Sprintf("%s: ok (%d %s)\n", file, n, noun); stdout != want {
				t.Errorf("stdout = %q, want %q", stdout, want)
			}
			if strings.Contains(stderr, "checker validate:") {
				t.Errorf("stderr has an error on a valid file:\n%s", stderr)
			}
		})
	}
}

// wantLineRE splits a line of a .want file, a problem as config formats it,
// into its path and message and its line.
var wantLineRE = regexp.MustCompile(`^(.*?) \(line (\d+)\)$`)

// TestValidateCommandBad runs every *.bad.yaml of the config testdata: exit
// 2, and each expected problem on its own line of stderr as
// FILE:LINE: PATH: MESSAGE (FILE: PATH: MESSAGE when there is no line).
func TestValidateCommandBad(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(configTestdata + "/*.bad.yaml")
	if err != nil || len(files) < 10 {
		t.Fatalf("want at least 10 *.bad.yaml in %s, got %d: %v", configTestdata, len(files), err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".bad.yaml"), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(strings.TrimSuffix(file, ".yaml") + ".want")
			if err != nil {
				t.Fatalf("read the expected problems: %v", err)
			}
			code, stdout, stderr := runValidate(t, "--config", file)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			got := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			want := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
			if strings.HasPrefix(want[0], "parse config ") {
				// Not YAML: one error, with the file and the line.
				path := "testdata/" + filepath.Base(file)
				line := "checker validate: " + strings.Replace(want[0], path, file, 1)
				if len(got) != 1 || got[0] != line {
					t.Errorf("stderr:\n%s\nwant:\n%s", stderr, line)
				}
				return
			}
			var lines []string
			for _, w := range want {
				if m := wantLineRE.FindStringSubmatch(w); m != nil {
					lines = append(lines, fmt.Sprintf("%s:%s: %s", file, m[2], m[1]))
				} else {
					lines = append(lines, fmt.Sprintf("%s: %s", file, w))
				}
			}
			noun := "problems"
			if len(want) == 1 {
				noun = "problem"
			}
			lines = append(lines, fmt.Sprintf("checker validate: %s: invalid configuration: %d %s", file, len(want), noun))
			if strings.Join(got, "\n") != strings.Join(lines, "\n") {
				t.Errorf("stderr:\n%s\nwant:\n%s", stderr, strings.Join(lines, "\n"))
			}
		})
	}
}

func TestValidateCommandUsage(t *testing.T) {
	t.Parallel()
	absent := filepath.Join(t.TempDir(), "absent.yaml")
	observed := filepath.Join(t.TempDir(), "observed.yaml")
	doc := `groups:
  - name: jobs
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs"}]
    workers: {service_time: 200ms}
    target: {latency: 30s}
    fleet: {max: 10}
`
	if err := os.WriteFile(observed, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		args      []string
		code      int
		stdout    string
		stdoutHas []string // instead of stdout
		stderrHas []string
	}{
		{name: "absent file", args: []string{"--config", absent}, code: 2,
			stderrHas: []string{"checker validate: read config: open " + absent + ": no such file or directory"}},
		{name: "no --config", args: nil, code: 2,
			stderrHas: []string{"checker validate: --config is required", "-config"}},
		{name: "stray argument", args: []string{"--config", observed, "extra"}, code: 2,
			stderrHas: []string{`unexpected argument "extra"`}},
		{name: "unknown flag", args: []string{"--conf", observed}, code: 2,
			stderrHas: []string{"flag provided but not defined: -conf"}},
		{name: "help", args: []string{"-h"}, code: 0,
			stdoutHas: []string{"Usage of checker validate:", "-config"}},
		{name: "valid with a note", args: []string{"--config", observed}, code: 0,
			stdout:    observed + ": ok (1 group)\n",
			stderrHas: []string{observed + ": note: groups[0]: no fleet, no cloudwatch_metrics and no keda.listen: the group is only observed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runValidate(t, tt.args...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.code, stderr)
			}
			if tt.stdoutHas == nil && stdout != tt.stdout {
				t.Errorf("stdout = %q, want %q", stdout, tt.stdout)
			}
			for _, s := range tt.stdoutHas {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.stderrHas {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

// TestValidateShippedConfigs runs `checker validate` on every
// configuration the repository ships (config.example.yaml, and the
// config.yaml of every ConfigMap under deploy/ and examples/) and checks
// its exact notes: none says a group is never scaled where something
// scales it (the checker, a target-tracking policy on its metrics, KEDA),
// and a new shipped configuration needs its notes written here.
func TestValidateShippedConfigs(t *testing.T) {
	t.Parallel()
	const (
		everyInterface = "listen: listens on every interface; metrics and the status page are open to the network"
		notMeasured    = "groups[%d].workers: the fleet is not measured: learning the service time needs CloudWatch's deleted count (oldest_age.cloudwatch: true); sizing trusts the configured value"
	)
	kube := []string{everyInterface, fmt.Sprintf(notMeasured, 0), fmt.Sprintf(notMeasured, 1)}
	want := map[string][]string{ // file -> its notes, in order
		"config.example.yaml":                       nil,
		"deploy/kubernetes/configmap.yaml":          kube,
		"deploy/kubernetes/keda/configmap.yaml":     kube,
		"deploy/kubernetes/keda-tls/configmap.yaml": kube,
	}
	found := []string{"config.example.yaml"}
	for _, dir := range []string{"deploy", "examples"} {
		err := filepath.WalkDir(filepath.Join("../..", dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || (filepath.Ext(path) != ".yaml" && filepath.Ext(path) != ".yml") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, []byte("kind: ConfigMap")) && bytes.Contains(b, []byte("config.yaml:")) {
				found = append(found, strings.TrimPrefix(path, "../../"))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(found) != len(want) {
		t.Errorf("shipped configurations %v; notes are written here for %d", found, len(want))
	}
	for _, file := range found {
		notes, ok := want[file]
		if !ok {
			t.Errorf("%s: a shipped configuration without its notes in this test", file)
			continue
		}
		t.Run(file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("../..", file)
			if file != "config.example.yaml" {
				var cm struct {
					Data map[string]string `yaml:"data"`
				}
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := yaml.Unmarshal(b, &cm); err != nil || cm.Data["config.yaml"] == "" {
					t.Fatalf("%s: no data.config.yaml (%v)", file, err)
				}
				path = filepath.Join(t.TempDir(), "config.yaml")
				if err := os.WriteFile(path, []byte(cm.Data["config.yaml"]), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runValidate(t, "--config", path)
			if code != 0 || !strings.HasPrefix(stdout, path+": ok (") {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
			var wantErr strings.Builder
			for _, n := range notes {
				fmt.Fprintf(&wantErr, "%s: note: %s\n", path, n)
			}
			if stderr != wantErr.String() {
				t.Errorf("notes:\n%s\nwant:\n%s", stderr, wantErr.String())
			}
		})
	}
}
