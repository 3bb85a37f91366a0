package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// root is the repository, seen from this package's directory.
const root = ".."

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(readFile(t, path)))
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: trailing data after the JSON value", path)
	}
}

// TestEveryFileParses parses every deployment file by its kind, and fails on
// a file of a kind it does not know, so that nothing lands unchecked.
func TestEveryFileParses(t *testing.T) {
	t.Parallel()
	var files []string
	err := filepath.WalkDir(filepath.Join(root, "deploy"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, rel)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "Dockerfile", ".dockerignore")
	for _, want := range []string{
		"deploy/cloudformation/checker-asg.yaml",
		"deploy/cloudformation/worker-target-tracking.yaml",
		"deploy/cloudformation/worker-fleet.yaml",
		"deploy/ecs/worker-task-definition.json",
		"deploy/iam/worker-task-policy.json",
		"deploy/ecs/task-definition.json",
		"deploy/ecs/service.json",
		"deploy/ecs/README.md",
		"deploy/iam/policy.json",
		"deploy/grafana/queue-checker.json",
		"deploy/prometheus/alerts.yaml",
		"deploy/systemd/queue-checker.service",
	} {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing", want)
		}
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			b := readFile(t, f)
			switch ext := filepath.Ext(f); {
			case ext == ".yaml":
				dec := yaml.NewDecoder(bytes.NewReader(b))
				docs := 0
				for {
					var n yaml.Node
					err := dec.Decode(&n)
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("YAML: %v", err)
					}
					docs++
				}
				if docs != 1 {
					t.Errorf("%d YAML documents, want 1", docs)
				}
			case ext == ".json":
				var v any
				readJSON(t, f, &v)
			case ext == ".service":
				if _, err := parseUnit(b); err != nil {
					t.Fatal(err)
				}
			case ext == ".go", ext == ".md", f == ".dockerignore":
				if len(bytes.TrimSpace(b)) == 0 {
					t.Error("empty")
				}
			case f == "Dockerfile":
				if _, err := parseDockerfile(b); err != nil {
					t.Fatal(err)
				}
			default:
				t.Errorf("no check for files like %s: add one", f)
			}
		})
	}
}

// unit is a systemd unit file: section -> key -> values in order.
type unit map[string]map[string][]string

// parseUnit reads a unit file: sections, Key=Value lines, comments, and
// lines continued with a trailing backslash.
func parseUnit(b []byte) (unit, error) {
	u := unit{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	var cont string
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cont != "" {
			line = cont + " " + line
			cont = ""
		}
		if strings.HasSuffix(line, `\`) {
			cont = strings.TrimSuffix(line, `\`)
			continue
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				return nil, fmt.Errorf("line %d: not a Key=Value line in a section: %q", n, line)
			}
			u[section][strings.TrimSpace(key)] = append(u[section][strings.TrimSpace(key)], strings.TrimSpace(value))
		}
	}
	return u, sc.Err()
}

func (u unit) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	u, err := parseUnit(readFile(t, "deploy/systemd/queue-checker.service"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, section, key string
		want               func(string) bool
	}{
		{"runs the daemon with a config", "Service", "ExecStart", func(v string) bool {
			return strings.HasSuffix(v, "/checker run --config /etc/queue-checker/config.yaml")
		}},
		{"reload is SIGHUP to the main process", "Service", "ExecReload", func(v string) bool {
			return strings.HasSuffix(v, "kill -HUP $MAINPID")
		}},
		{"restarts always", "Service", "Restart", is("always")},
		{"runs as a dynamic user", "Service", "DynamicUser", is("yes")},
		{"no new privileges", "Service", "NoNewPrivileges", is("yes")},
		{"read-only file system", "Service", "ProtectSystem", is("strict")},
		{"no capabilities", "Service", "CapabilityBoundingSet", is("")},
		{"home hidden", "Service", "ProtectHome", is("yes")},
		{"network only", "Service", "RestrictAddressFamilies", is("AF_INET AF_INET6 AF_UNIX")},
		{"starts at boot", "Install", "WantedBy", is("multi-user.target")},
	}
	for _, tt := range tests {
		if _, ok := u[tt.section][tt.key]; !ok {
			t.Errorf("%s: [%s] %s is not set", tt.name, tt.section, tt.key)
			continue
		}
		if v := u.get(tt.section, tt.key); !tt.want(v) {
			t.Errorf("%s: [%s] %s=%q", tt.name, tt.section, tt.key, v)
		}
	}
	if v := u.get("Service", "User"); v == "root" || v == "0" {
		t.Errorf("User=%s", v)
	}

	// systemd's own check of the unit, where systemd is installed.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not installed: the unit is checked by the parser above only")
		return
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "checker")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(readFile(t, "deploy/systemd/queue-checker.service")), "/usr/local/bin/checker", bin)
	path := filepath.Join(dir, "queue-checker.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

func is(want string) func(string) bool { return func(v string) bool { return v == want } }

// dockerInstruction is one instruction of a Dockerfile, continuation lines joined.
type dockerInstruction struct {
	cmd  string // upper case
	args string
}

func parseDockerfile(b []byte) ([]dockerInstruction, error) {
	var out []dockerInstruction
	var cur strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") || (line == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(line, `\`) {
			cur.WriteString(strings.TrimSuffix(line, `\`))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(line)
		full := strings.TrimSpace(cur.String())
		cur.Reset()
		if full == "" {
			continue
		}
		cmd, args, _ := strings.Cut(full, " ")
		if cmd != strings.ToUpper(cmd) {
			return nil, fmt.Errorf("instruction %q is not upper case", cmd)
		}
		out = append(out, dockerInstruction{cmd: cmd, args: strings.TrimSpace(args)})
	}
	if cur.Len() > 0 {
		return nil, errors.New("the last instruction ends in a continuation")
	}
	return out, sc.Err()
}

// execForm decodes the JSON array of an exec-form instruction.
func execForm(args string) ([]string, error) {
	var v []string
	if err := json.Unmarshal([]byte(args), &v); err != nil {
		return nil, fmt.Errorf("not exec form (a JSON array): %q", args)
	}
	return v, nil
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	ins, err := parseDockerfile(readFile(t, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var stages [][]dockerInstruction
	for _, in := range ins {
		if in.cmd == "FROM" {
			stages = append(stages, nil)
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("%s before the first FROM", in.cmd)
			}
			continue
		}
		stages[len(stages)-1] = append(stages[len(stages)-1], in)
	}
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a final one", len(stages))
	}
	fromImage := func(stage []dockerInstruction) string {
		for _, f := range strings.Fields(stage[0].args) {
			if !strings.HasPrefix(f, "--") {
				return f
			}
		}
		return ""
	}
	first := func(stage []dockerInstruction, cmd string) (dockerInstruction, bool) {
		for _, in := range stage {
			if in.cmd == cmd {
				return in, true
			}
		}
		return dockerInstruction{}, false
	}

	build, final := stages[0], stages[len(stages)-1]
	if img := fromImage(build); img != "golang:1.26" {
		t.Errorf("build stage FROM %s, want golang:1.26", img)
	}
	var goBuild string
	for _, in := range build {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") {
			goBuild = in.args
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w -X main.version=$VERSION -X main.commit=$COMMIT"`, "./cmd/checker"} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("the go build step %q lacks %s", goBuild, want)
		}
	}
	for _, arg := range []string{"VERSION", "COMMIT"} {
		if !slices.ContainsFunc(build, func(in dockerInstruction) bool {
			return in.cmd == "ARG" && strings.HasPrefix(in.args, arg)
		}) {
			t.Errorf("build stage has no ARG %s", arg)
		}
	}

	if img := fromImage(final); img != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("final stage FROM %s, want gcr.io/distroless/static-debian12:nonroot", img)
	}
	for _, in := range final {
		if in.cmd == "RUN" {
			t.Errorf("the final stage runs %q: it has no shell", in.args)
		}
	}
	if user, ok := first(final, "USER"); ok {
		if name, _, _ := strings.Cut(user.args, ":"); name == "root" || name == "0" {
			t.Errorf("USER %s", user.args)
		}
	}

	execs := []struct {
		cmd  string
		want []string
	}{
		{"ENTRYPOINT", []string{"/checker"}},
		{"CMD", []string{"run", "--config", "/etc/queue-checker/config.yaml"}},
	}
	for _, e := range execs {
		in, ok := first(final, e.cmd)
		if !ok {
			t.Errorf("no %s", e.cmd)
			continue
		}
		got, err := execForm(in.args)
		if err != nil || !slices.Equal(got, e.want) {
			t.Errorf("%s %s, want %q (%v)", e.cmd, in.args, e.want, err)
		}
	}
	hc, ok := first(final, "HEALTHCHECK")
	if !ok {
		t.Fatal("no HEALTHCHECK")
	}
	_, probe, ok := strings.Cut(hc.args, "CMD ")
	got, err := execForm(strings.TrimSpace(probe))
	if !ok || err != nil || len(got) < 2 || got[0] != "/checker" || got[1] != "health" {
		t.Errorf("HEALTHCHECK %s, want CMD [\"/checker\", \"health\", ...] (%v)", hc.args, err)
	}
	if in, ok := first(final, "COPY"); !ok || !strings.HasSuffix(in.args, " /checker") {
		t.Errorf("the final stage does not copy the binary to /checker")
	}

	// The -X flags must name variables that exist in package main.
	src := string(readFile(t, "cmd/checker/version.go"))
	for _, v := range []string{"version", "commit"} {
		if !strings.Contains(src, "\t"+v+" ") {
			t.Errorf("cmd/checker/version.go declares no %s for -X main.%s", v, v)
		}
	}
}

func TestDockerignoreKeepsTheBuildInputs(t *testing.T) {
	t.Parallel()
	for _, line := range strings.Split(string(readFile(t, ".dockerignore")), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, needed := range []string{"go.mod", "go.sum", "cmd", "internal"} {
			if m, _ := filepath.Match(line, needed); m || line == needed || line == "*" {
				t.Errorf(".dockerignore pattern %q excludes %s, which the build needs", line, needed)
			}
		}
	}
}

// ecsContainer is the part of a container definition the checks read.
type ecsContainer struct {
	Name        string   `json:"name"`
	Image       string   `json:"image"`
	Essential   *bool    `json:"essential"`
	Command     []string `json:"command"`
	EntryPoint  []string `json:"entryPoint"`
	User        string   `json:"user"`
	ReadOnlyFS  bool     `json:"readonlyRootFilesystem"`
	HealthCheck *struct {
		Command     []string `json:"command"`
		StartPeriod int      `json:"startPeriod"`
	} `json:"healthCheck"`
	Secrets []struct {
		Name      string `json:"name"`
		ValueFrom string `json:"valueFrom"`
	} `json:"secrets"`
	DependsOn []struct {
		ContainerName string `json:"containerName"`
		Condition     string `json:"condition"`
	} `json:"dependsOn"`
	MountPoints []struct {
		SourceVolume  string `json:"sourceVolume"`
		ContainerPath string `json:"containerPath"`
		ReadOnly      bool   `json:"readOnly"`
	} `json:"mountPoints"`
	PortMappings []struct {
		ContainerPort int `json:"containerPort"`
	} `json:"portMappings"`
	LogConfiguration *struct {
		LogDriver string            `json:"logDriver"`
		Options   map[string]string `json:"options"`
	} `json:"logConfiguration"`
}

func TestECSTaskDefinition(t *testing.T) {
	t.Parallel()
	var td struct {
		Family                  string         `json:"family"`
		RequiresCompatibilities []string       `json:"requiresCompatibilities"`
		NetworkMode             string         `json:"networkMode"`
		TaskRoleArn             string         `json:"taskRoleArn"`
		ExecutionRoleArn        string         `json:"executionRoleArn"`
		Containers              []ecsContainer `json:"containerDefinitions"`
		Volumes                 []struct {
			Name string `json:"name"`
		} `json:"volumes"`
	}
	readJSON(t, "deploy/ecs/task-definition.json", &td)
	if !slices.Equal(td.RequiresCompatibilities, []string{"FARGATE"}) || td.NetworkMode != "awsvpc" {
		t.Errorf("compatibilities %v, network mode %q; want FARGATE, awsvpc", td.RequiresCompatibilities, td.NetworkMode)
	}
	if !strings.HasPrefix(td.TaskRoleArn, "arn:aws:iam::") || !strings.HasPrefix(td.ExecutionRoleArn, "arn:aws:iam::") {
		t.Errorf("task role %q, execution role %q: both are needed", td.TaskRoleArn, td.ExecutionRoleArn)
	}
	byName := map[string]ecsContainer{}
	for _, c := range td.Containers {
		byName[c.Name] = c
		if c.LogConfiguration == nil || c.LogConfiguration.LogDriver != "awslogs" ||
			c.LogConfiguration.Options["awslogs-group"] == "" || c.LogConfiguration.Options["awslogs-stream-prefix"] == "" {
			t.Errorf("container %s does not log with awslogs to a group and stream prefix", c.Name)
		}
	}
	checker, ok := byName["checker"]
	if !ok {
		t.Fatal("no container named checker")
	}
	if checker.Essential == nil || !*checker.Essential {
		t.Error("the checker container is not essential")
	}
	if hc := checker.HealthCheck; hc == nil || len(hc.Command) < 3 || hc.Command[0] != "CMD" ||
		hc.Command[1] != "/checker" || hc.Command[2] != "health" || hc.StartPeriod <= 0 {
		t.Errorf("health check %+v, want [CMD /checker health ...] with a start period", checker.HealthCheck)
	}
	// The checker reads its config from SSM itself: no init container, no
	// volume, and the task role may read that one parameter.
	if len(checker.Command) != 5 || checker.Command[0] != "run" || checker.Command[1] != "--config" ||
		!strings.HasPrefix(checker.Command[2], "ssm:arn:aws:ssm:") || checker.Command[3] != "--config-refresh" {
		t.Fatalf("checker command %q, want run --config ssm:ARN --config-refresh D", checker.Command)
	}
	if len(td.Containers) != 1 || len(td.Volumes) != 0 || len(checker.DependsOn) != 0 {
		t.Errorf("%d containers, %d volumes, dependsOn %+v: want the checker alone", len(td.Containers), len(td.Volumes), checker.DependsOn)
	}
	param := strings.TrimPrefix(checker.Command[2], "ssm:")
	var task, exec iamPolicy
	readJSON(t, "deploy/iam/policy.json", &task)
	readJSON(t, "deploy/iam/ecs-execution-policy.json", &exec)
	var readers []string
	for _, st := range task.Statement {
		if slices.Contains(st.Action, "ssm:GetParameter") {
			readers = append(readers, st.Resource...)
		}
	}
	if !slices.Equal(readers, []string{param}) {
		t.Errorf("the task policy lets ssm:GetParameter read %q, want exactly the config parameter %q", readers, param)
	}
	for _, st := range exec.Statement {
		for _, a := range st.Action {
			if strings.HasPrefix(a, "ssm:") {
				t.Errorf("the execution role still allows %s: the config is no longer injected", a)
			}
		}
	}
	if !checker.ReadOnlyFS || checker.User == "" || strings.HasPrefix(checker.User, "0") || strings.HasPrefix(checker.User, "root") {
		t.Errorf("checker: read-only root %v, user %q; want read-only and non-root", checker.ReadOnlyFS, checker.User)
	}
	if len(checker.PortMappings) != 1 || checker.PortMappings[0].ContainerPort != 9102 {
		t.Errorf("port mappings %+v, want the metrics port 9102 only", checker.PortMappings)
	}

}

func TestECSService(t *testing.T) {
	t.Parallel()
	var svc struct {
		TaskDefinition          string `json:"taskDefinition"`
		DesiredCount            *int   `json:"desiredCount"`
		DeploymentConfiguration struct {
			MinimumHealthyPercent *int `json:"minimumHealthyPercent"`
			MaximumPercent        *int `json:"maximumPercent"`
		} `json:"deploymentConfiguration"`
		LoadBalancers        []any `json:"loadBalancers"`
		NetworkConfiguration struct {
			AwsvpcConfiguration struct {
				AssignPublicIP string `json:"assignPublicIp"`
			} `json:"awsvpcConfiguration"`
		} `json:"networkConfiguration"`
	}
	readJSON(t, "deploy/ecs/service.json", &svc)
	var td struct {
		Family string `json:"family"`
	}
	readJSON(t, "deploy/ecs/task-definition.json", &td)
	tests := []struct {
		name string
		ok   bool
	}{
		{"runs the task definition's family", svc.TaskDefinition == td.Family},
		{"desired count 2: two checkers share the groups through leases", svc.DesiredCount != nil && *svc.DesiredCount == 2},
		{"minimum healthy 50: one task runs while the other is replaced", svc.DeploymentConfiguration.MinimumHealthyPercent != nil && *svc.DeploymentConfiguration.MinimumHealthyPercent == 50},
		{"maximum 100: one task replaced at a time", svc.DeploymentConfiguration.MaximumPercent != nil && *svc.DeploymentConfiguration.MaximumPercent == 100},
		{"no load balancer", len(svc.LoadBalancers) == 0},
		{"no public IP", svc.NetworkConfiguration.AwsvpcConfiguration.AssignPublicIP == "DISABLED"},
	}
	for _, tt := range tests {
		if !tt.ok {
			t.Errorf("service.json: not %s", tt.name)
		}
	}
}
