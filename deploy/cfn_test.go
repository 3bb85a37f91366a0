package deploy

import (
	"fmt"
	"net"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/publisher"
)

// A CloudFormation template as plain values: maps, lists and scalar
// strings, with the short-form intrinsic functions (!Ref, !Sub, !GetAtt,
// ...) turned into their long form ({"Ref": x}, {"Fn::Sub": x}, ...), so
// that checks read both forms the same way.
type tmpl = map[string]any

func loadTemplate(t *testing.T, path string) tmpl {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(readFile(t, path), &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	v, err := cfnValue(&doc)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	m, ok := v.(tmpl)
	if !ok {
		t.Fatalf("%s: not a mapping", path)
	}
	return m
}

func cfnValue(n *yaml.Node) (any, error) {
	var v any
	switch n.Kind {
	case yaml.DocumentNode:
		return cfnValue(n.Content[0])
	case yaml.AliasNode:
		return cfnValue(n.Alias)
	case yaml.ScalarNode:
		v = n.Value
	case yaml.SequenceNode:
		list := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			cv, err := cfnValue(c)
			if err != nil {
				return nil, err
			}
			list = append(list, cv)
		}
		v = list
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("line %d: key %q twice", n.Content[i].Line, k)
			}
			cv, err := cfnValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k] = cv
		}
		v = m
	}
	tag := n.Tag
	if !strings.HasPrefix(tag, "!") || strings.HasPrefix(tag, "!!") {
		return v, nil
	}
	switch fn := tag[1:]; fn {
	case "Ref", "Condition":
		return map[string]any{fn: v}, nil
	case "GetAtt":
		if s, ok := v.(string); ok { // !GetAtt Resource.Attribute
			res, attr, found := strings.Cut(s, ".")
			if !found {
				return nil, fmt.Errorf("line %d: !GetAtt %q has no attribute", n.Line, s)
			}
			v = []any{res, attr}
		}
		return map[string]any{"Fn::GetAtt": v}, nil
	case "Base64", "Sub", "If", "Equals", "Not", "And", "Or", "Join", "Select", "Split",
		"FindInMap", "GetAZs", "ImportValue", "Cidr", "Length", "ToJsonString":
		return map[string]any{"Fn::" + fn: v}, nil
	default:
		return nil, fmt.Errorf("line %d: unknown tag %s", n.Line, tag)
	}
}

// at walks a path of map keys and list indexes.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func ref(name string) map[string]any { return map[string]any{"Ref": name} }

func equal(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// walk calls f on every value of the tree.
func walk(v any, f func(any)) {
	f(v)
	switch x := v.(type) {
	case map[string]any:
		for _, c := range x {
			walk(c, f)
		}
	case []any:
		for _, c := range x {
			walk(c, f)
		}
	}
}

// pseudoParameters are the names AWS defines for Ref and ${} in every template.
var pseudoParameters = []string{"AWS::AccountId", "AWS::NoValue", "AWS::NotificationARNs", "AWS::Partition",
	"AWS::Region", "AWS::StackId", "AWS::StackName", "AWS::URLSuffix"}

// checkReferences fails on a Ref, GetAtt, ${} or condition naming nothing.
func checkReferences(t *testing.T, name string, tp tmpl) {
	t.Helper()
	params, _ := tp["Parameters"].(map[string]any)
	resources, _ := tp["Resources"].(map[string]any)
	conditions, _ := tp["Conditions"].(map[string]any)
	known := func(n string) bool {
		_, p := params[n]
		_, r := resources[n]
		return p || r || slices.Contains(pseudoParameters, n)
	}
	subVar := regexp.MustCompile(`\$\{([^}!]+)\}`)
	walk(tp, func(v any) {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return
		}
		for fn, arg := range m {
			switch fn {
			case "Ref":
				if s, _ := arg.(string); !known(s) {
					t.Errorf("%s: Ref %v names nothing", name, arg)
				}
			case "Fn::GetAtt":
				if l, _ := arg.([]any); len(l) != 2 || resources[fmt.Sprint(l[0])] == nil {
					t.Errorf("%s: GetAtt %v names no resource", name, arg)
				}
			case "Fn::Sub":
				s, _ := arg.(string)
				for _, sm := range subVar.FindAllStringSubmatch(s, -1) {
					res, _, _ := strings.Cut(sm[1], ".")
					if !known(sm[1]) && resources[res] == nil {
						t.Errorf("%s: ${%s} in a Sub names nothing", name, sm[1])
					}
				}
			case "Fn::If":
				if c := at(arg, 0); conditions[fmt.Sprint(c)] == nil {
					t.Errorf("%s: If on unknown condition %v", name, c)
				}
			}
		}
	})
	for rname, r := range resources {
		if c, ok := at(r, "Condition").(string); ok && conditions[c] == nil {
			t.Errorf("%s: resource %s has unknown condition %s", name, rname, c)
		}
	}
}

// policyStatements returns a policy document's statements, taking both
// branches of an Fn::If and dropping AWS::NoValue.
func policyStatements(doc any) []map[string]any {
	var out []map[string]any
	var add func(v any)
	add = func(v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if branches, ok := m["Fn::If"].([]any); ok && len(branches) == 3 {
			add(branches[1])
			add(branches[2])
			return
		}
		if equal(m, ref("AWS::NoValue")) {
			return
		}
		out = append(out, m)
	}
	switch s := at(doc, "Statement").(type) {
	case []any:
		for _, st := range s {
			add(st)
		}
	default:
		add(s)
	}
	return out
}

// actionsOf lists a statement's actions, a single string or a list.
func actionsOf(st map[string]any) []string {
	switch a := st["Action"].(type) {
	case string:
		return []string{a}
	case []any:
		out := make([]string, 0, len(a))
		for _, x := range a {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}

func TestCheckerASGTemplate(t *testing.T) {
	t.Parallel()
	const path = "deploy/cloudformation/checker-asg.yaml"
	tp := loadTemplate(t, path)
	checkReferences(t, path, tp)
	res := func(name, typ string) map[string]any {
		t.Helper()
		r, _ := at(tp, "Resources", name).(map[string]any)
		if r == nil || r["Type"] != typ {
			t.Fatalf("no %s resource %s", typ, name)
		}
		return r
	}

	group := res("Group", "AWS::AutoScaling::AutoScalingGroup")
	for _, key := range []string{"MinSize", "MaxSize", "DesiredCapacity"} {
		if v := at(group, "Properties", key); !equal(v, ref("DesiredCapacity")) {
			t.Errorf("Group %s = %v, want the DesiredCapacity parameter", key, v)
		}
	}
	if v := at(tp, "Parameters", "DesiredCapacity", "Default"); !equal(v, 1) && !equal(v, "1") {
		t.Errorf("DesiredCapacity defaults to %v, want 1 (one checker, no lease table)", v)
	}
	if lt := at(group, "Properties", "LaunchTemplate", "LaunchTemplateId"); !equal(lt, ref("LaunchTemplate")) {
		t.Errorf("Group launch template %v", lt)
	}
	if n := at(group, "CreationPolicy", "ResourceSignal", "Count"); !equal(n, ref("DesiredCapacity")) {
		t.Errorf("Group waits for %v signals, want one per instance (each reports its checker healthy)", n)
	}

	// Two checkers and more: the lease table, on demand, with time to live on
	// the items' ttl, its key the one internal/lease writes.
	table := res("LeaseTable", "AWS::DynamoDB::Table")
	if c := at(table, "Condition"); !equal(c, "Coordinated") {
		t.Errorf("LeaseTable condition %v, want Coordinated (no table for one checker)", c)
	}
	for _, kv := range []struct {
		path []any
		want any
	}{
		{[]any{"Properties", "BillingMode"}, "PAY_PER_REQUEST"},
		{[]any{"Properties", "TimeToLiveSpecification", "AttributeName"}, "ttl"},
		{[]any{"Properties", "TimeToLiveSpecification", "Enabled"}, true},
		{[]any{"Properties", "KeySchema"}, []any{map[string]any{"AttributeName": "key", "KeyType": "HASH"}}},
		{[]any{"Properties", "AttributeDefinitions"}, []any{map[string]any{"AttributeName": "key", "AttributeType": "S"}}},
	} {
		if v := at(table, kv.path...); !equal(v, kv.want) {
			t.Errorf("LeaseTable %v = %v, want %v", kv.path, v, kv.want)
		}
	}
	if n := at(group, "UpdatePolicy", "AutoScalingRollingUpdate", "MinInstancesInService"); !equal(n, "0") {
		t.Errorf("rolling update keeps %v in service; with 1 two checkers would overlap", n)
	}

	lt := res("LaunchTemplate", "AWS::EC2::LaunchTemplate")
	data := at(lt, "Properties", "LaunchTemplateData")
	image := at(data, "ImageId")
	imageParam, _ := at(image, "Ref").(string)
	if pt := at(tp, "Parameters", imageParam, "Type"); !equal(pt, "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>") {
		t.Errorf("ImageId %v is not an SSM-resolved AMI parameter (type %v)", image, pt)
	}
	if def, _ := at(tp, "Parameters", imageParam, "Default").(string); !strings.HasPrefix(def, "/aws/service/ami-amazon-linux-latest/al2023-") {
		t.Errorf("AMI parameter default %q is not Amazon Linux 2023", def)
	}
	if v := at(data, "MetadataOptions", "HttpTokens"); !equal(v, "required") {
		t.Errorf("IMDS HttpTokens %v, want required (IMDSv2 only)", v)
	}
	if v := at(data, "IamInstanceProfile", "Arn"); !equal(v, map[string]any{"Fn::GetAtt": []any{"InstanceProfile", "Arn"}}) {
		t.Errorf("instance profile %v", v)
	}
	if v := at(res("InstanceProfile", "AWS::IAM::InstanceProfile"), "Properties", "Roles"); !equal(v, []any{ref("InstanceRole")}) {
		t.Errorf("instance profile roles %v", v)
	}

	// Ingress: the metrics port from the given CIDR, nothing else.
	sg := res("SecurityGroup", "AWS::EC2::SecurityGroup")
	ingress, _ := at(sg, "Properties", "SecurityGroupIngress").([]any)
	if len(ingress) != 1 {
		t.Fatalf("%d ingress rules, want 1", len(ingress))
	}
	rule, _ := ingress[0].(map[string]any)
	wantRule := map[string]any{"IpProtocol": "tcp", "FromPort": ref("MetricsPort"), "ToPort": ref("MetricsPort"), "CidrIp": ref("MetricsCidr")}
	for k, want := range wantRule {
		if !equal(rule[k], want) {
			t.Errorf("ingress %s = %v, want %v", k, rule[k], want)
		}
	}
	for k := range rule {
		if _, ok := wantRule[k]; !ok && k != "Description" {
			t.Errorf("ingress rule has %s: only the CIDR parameter may reach the metrics port", k)
		}
	}
	for name, r := range at(tp, "Resources").(map[string]any) {
		if typ := at(r, "Type"); typ == "AWS::EC2::SecurityGroupIngress" {
			t.Errorf("extra ingress resource %s", name)
		}
	}

	// The checker's policy is the one in deploy/iam/policy.json, with parameters for ARNs.
	checker := res("CheckerPolicy", "AWS::IAM::ManagedPolicy")
	if v := at(checker, "Properties", "Roles"); !equal(v, []any{ref("InstanceRole")}) {
		t.Errorf("CheckerPolicy roles %v", v)
	}
	stmts := policyStatements(at(checker, "Properties", "PolicyDocument"))
	var got []string
	bySid := map[string]map[string]any{}
	for _, st := range stmts {
		got = append(got, actionsOf(st)...)
		bySid[fmt.Sprint(st["Sid"])] = st
	}
	want := policyFileActions(t)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("CheckerPolicy actions %v, deploy/iam/policy.json has %v", got, want)
	}
	scoped := []struct {
		action   string
		resource any
	}{
		{"sqs:GetQueueAttributes", ref("QueueArns")},
		{"ssm:GetParameter", map[string]any{"Fn::Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter${ConfigParameterName}"}},
		{"autoscaling:SetDesiredCapacity", ref("WorkerGroupArns")},
		{"ecs:UpdateService", ref("WorkerServiceArns")},
		{"dynamodb:UpdateItem", map[string]any{"Fn::GetAtt": []any{"LeaseTable", "Arn"}}},
		{"dynamodb:Scan", map[string]any{"Fn::GetAtt": []any{"LeaseTable", "Arn"}}},
		{"cloudwatch:PutMetricData", "*"},
	}
	for _, s := range scoped {
		for _, st := range stmts {
			if slices.Contains(actionsOf(st), s.action) && !equal(st["Resource"], s.resource) {
				t.Errorf("%s on %v, want %v", s.action, st["Resource"], s.resource)
			}
		}
	}
	if c := at(bySid["PublishGroupMetrics"], "Condition", "StringEquals", "cloudwatch:namespace"); !equal(c, ref("MetricsNamespace")) {
		t.Errorf("PutMetricData condition on the namespace: %v", c)
	}

	// Around the checker: its log group, nothing wider.
	boot := res("BootstrapPolicy", "AWS::IAM::Policy")
	for _, st := range policyStatements(at(boot, "Properties", "PolicyDocument")) {
		if equal(st["Resource"], "*") {
			t.Errorf("bootstrap statement %v on every resource", st["Sid"])
		}
	}
	userData := fmt.Sprint(at(data, "UserData", "Fn::Base64", "Fn::Sub"))
	for _, want := range []string{"${ConfigParameterName}", "${LogGroup}", "${BinarySha256}", "sha256sum -c", "checker validate", "checker health", "cfn-signal"} {
		if !strings.Contains(userData, want) {
			t.Errorf("user data does not mention %s", want)
		}
	}
	if v := at(res("LogGroup", "AWS::Logs::LogGroup"), "Properties", "RetentionInDays"); v == nil {
		t.Error("the log group keeps logs forever")
	}

	// The unit the instance installs is the one in deploy/systemd, logging to the shipped file.
	embedded := regexp.MustCompile(`(?s)cat > /etc/systemd/system/queue-checker.service <<'UNIT'\n(.*?)\nUNIT\n`).FindStringSubmatch(userData)
	if embedded == nil {
		t.Fatal("user data installs no queue-checker.service")
	}
	inst, err := parseUnit([]byte(embedded[1]))
	if err != nil {
		t.Fatal(err)
	}
	std, err := parseUnit(readFile(t, "deploy/systemd/queue-checker.service"))
	if err != nil {
		t.Fatal(err)
	}
	delete(std["Unit"], "Documentation")
	// The instance's unit reads its config from the SSM parameter, not a file.
	if got, want := inst.get("Service", "ExecStart"), "/usr/local/bin/checker run --config ssm:${ConfigParameterName} --config-refresh 5m"; got != want {
		t.Errorf("the instance's unit runs %q, want %q", got, want)
	}
	if got := inst.get("Service", "Environment"); got != "AWS_REGION=${AWS::Region}" {
		t.Errorf("the instance's unit sets %q, want AWS_REGION=${AWS::Region}", got)
	}
	delete(std["Unit"], "ConditionPathExists")
	inst["Service"] = maps(inst["Service"], "StandardOutput", "StandardError", "ExecStart", "Environment")
	std["Service"] = maps(std["Service"], "ExecStart")
	for _, d := range unitDiff(inst, std) {
		t.Errorf("the unit in user data differs from deploy/systemd/queue-checker.service: %s", d)
	}
}

// unitDiff lists the directives whose values differ between two units.
func unitDiff(a, b unit) []string {
	var out []string
	seen := map[[2]string]bool{}
	for _, u := range []unit{a, b} {
		for section, keys := range u {
			for key := range keys {
				k := [2]string{section, key}
				if seen[k] {
					continue
				}
				seen[k] = true
				if va, vb := a[section][key], b[section][key]; !slices.Equal(va, vb) {
					out = append(out, fmt.Sprintf("[%s] %s: %q against %q", section, key, va, vb))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// maps returns m without the given keys.
func maps(m map[string][]string, drop ...string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		if !slices.Contains(drop, k) {
			out[k] = v
		}
	}
	return out
}

func TestWorkerTargetTrackingTemplate(t *testing.T) {
	t.Parallel()
	const path = "deploy/cloudformation/worker-target-tracking.yaml"
	tp := loadTemplate(t, path)
	checkReferences(t, path, tp)

	ratio, _ := at(tp, "Resources", "BacklogRatioPolicy").(map[string]any)
	math, _ := at(tp, "Resources", "BacklogMathPolicy").(map[string]any)
	if ratio == nil || math == nil {
		t.Fatal("want the resources BacklogRatioPolicy and BacklogMathPolicy")
	}
	for name, p := range map[string]map[string]any{"BacklogRatioPolicy": ratio, "BacklogMathPolicy": math} {
		if p["Type"] != "AWS::AutoScaling::ScalingPolicy" || !equal(at(p, "Properties", "PolicyType"), "TargetTrackingScaling") {
			t.Errorf("%s is not a target-tracking scaling policy", name)
		}
		if !equal(at(p, "Properties", "AutoScalingGroupName"), ref("WorkerGroupName")) {
			t.Errorf("%s is not on the worker group", name)
		}
		target, _ := at(p, "Properties", "TargetTrackingConfiguration", "TargetValue", "Ref").(string)
		if def := at(tp, "Parameters", target, "Default"); !equal(def, "1.0") && !equal(def, "1") {
			t.Errorf("%s tracks %s, default %v; want 1.0", name, target, def)
		}
	}
	// Exactly one of the two exists for any parameter value.
	c1, c2 := fmt.Sprint(ratio["Condition"]), fmt.Sprint(math["Condition"])
	e1, _ := at(tp, "Conditions", c1, "Fn::Equals").([]any)
	e2, _ := at(tp, "Conditions", c2, "Fn::Equals").([]any)
	if len(e1) != 2 || len(e2) != 2 || !equal(e1[0], e2[0]) || equal(e1[1], e2[1]) {
		t.Errorf("conditions %s %v and %s %v must compare one parameter with two values", c1, e1, c2, e2)
	}

	spec := at(ratio, "Properties", "TargetTrackingConfiguration", "CustomizedMetricSpecification")
	if v := at(spec, "MetricName"); !equal(v, publisher.MetricBacklogPerWorkerRatio) {
		t.Errorf("tracks %v, the checker publishes %s", v, publisher.MetricBacklogPerWorkerRatio)
	}
	if v := at(spec, "Dimensions", 0, "Name"); !equal(v, publisher.DimensionGroup) {
		t.Errorf("dimension %v, the checker publishes %s", v, publisher.DimensionGroup)
	}
	if d, _ := at(spec, "Dimensions").([]any); len(d) != 1 {
		t.Errorf("%d dimensions, the checker publishes one", len(d))
	}
	if v := at(spec, "Namespace"); !equal(v, ref("MetricsNamespace")) {
		t.Errorf("namespace %v", v)
	}

	queries, _ := at(math, "Properties", "TargetTrackingConfiguration", "CustomizedMetricSpecification", "Metrics").([]any)
	ids := map[string]string{}
	var expr string
	returned := 0
	for _, q := range queries {
		if equal(at(q, "ReturnData"), "true") {
			returned++
			expr = fmt.Sprint(at(q, "Expression", "Fn::Sub"))
		}
		if name := at(q, "MetricStat", "Metric", "MetricName"); name != nil {
			ids[fmt.Sprint(name)] = fmt.Sprint(at(q, "Id"))
		}
	}
	visible, inService := ids["ApproximateNumberOfMessagesVisible"], ids["GroupInServiceInstances"]
	if returned != 1 || visible == "" || inService == "" {
		t.Fatalf("metric math: %d returned series, metrics %v; want one expression over the queue's visible messages and the in-service instances", returned, ids)
	}
	if want := regexp.MustCompile(`^` + visible + ` / ` + inService + ` / \$\{\w+\}$`); !want.MatchString(expr) {
		t.Errorf("expression %q, want %s / %s / ${acceptable backlog per instance}", expr, visible, inService)
	}
}

// TestDefaultsAgreeWithTheDaemon keeps the port and the namespace written
// into the deployment files equal to the daemon's defaults.
func TestDefaultsAgreeWithTheDaemon(t *testing.T) {
	t.Parallel()
	_, port, err := net.SplitHostPort(config.DefaultListen)
	if err != nil {
		t.Fatal(err)
	}
	asg := loadTemplate(t, "deploy/cloudformation/checker-asg.yaml")
	tracking := loadTemplate(t, "deploy/cloudformation/worker-target-tracking.yaml")
	var policy iamPolicy
	readJSON(t, "deploy/iam/policy.json", &policy)
	var namespace string
	for _, st := range policy.Statement {
		if v := st.Condition["StringEquals"]["cloudwatch:namespace"]; v != "" {
			namespace = v
		}
	}
	var task struct {
		Containers []ecsContainer `json:"containerDefinitions"`
	}
	readJSON(t, "deploy/ecs/task-definition.json", &task)
	var ecsPort, ecsProbe string
	for _, c := range task.Containers {
		if c.Name == "checker" && len(c.PortMappings) > 0 && c.HealthCheck != nil {
			ecsPort = fmt.Sprint(c.PortMappings[0].ContainerPort)
			ecsProbe = strings.Join(c.HealthCheck.Command, " ")
		}
	}
	dockerfile := string(readFile(t, "Dockerfile"))
	tests := []struct {
		name      string
		got, want string
	}{
		{"CloudFormation MetricsPort default", fmt.Sprint(at(asg, "Parameters", "MetricsPort", "Default")), port},
		{"ECS container port", ecsPort, port},
		{"policy namespace condition", namespace, config.DefaultNamespace},
		{"checker-asg MetricsNamespace default", fmt.Sprint(at(asg, "Parameters", "MetricsNamespace", "Default")), config.DefaultNamespace},
		{"worker-target-tracking MetricsNamespace default", fmt.Sprint(at(tracking, "Parameters", "MetricsNamespace", "Default")), config.DefaultNamespace},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %q, the daemon's default is %q", tt.name, tt.got, tt.want)
		}
	}
	// The container health checks, which replace the checker when they
	// fail, probe liveness: /healthz and /readyz fail while AWS does, and
	// a replaced checker would only lose its windows.
	probe := "http://127.0.0.1:" + port + "/livez"
	for name, text := range map[string]string{"Dockerfile": dockerfile, "ECS health check": ecsProbe} {
		if !strings.Contains(text, probe) {
			t.Errorf("%s does not probe %s", name, probe)
		}
		for _, ready := range []string{"/healthz", "/readyz"} {
			if strings.Contains(text, ready) {
				t.Errorf("%s probes %s, which fails during an AWS outage: the checker would be replaced", name, ready)
			}
		}
	}
	if !strings.Contains(dockerfile, "EXPOSE "+port) {
		t.Errorf("Dockerfile does not expose %s", port)
	}
}
