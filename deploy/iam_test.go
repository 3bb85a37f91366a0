package deploy

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// iamPrefixes maps an AWS SDK for Go v2 service package to its IAM service
// prefix. A client of a service missing here fails the test: add it, and its
// actions to deploy/iam/policy.json.
var iamPrefixes = map[string]string{
	"github.com/aws/aws-sdk-go-v2/service/sqs":                    "sqs",
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch":             "cloudwatch",
	"github.com/aws/aws-sdk-go-v2/service/autoscaling":            "autoscaling",
	"github.com/aws/aws-sdk-go-v2/service/ecs":                    "ecs",
	"github.com/aws/aws-sdk-go-v2/service/applicationautoscaling": "application-autoscaling",
	"github.com/aws/aws-sdk-go-v2/service/sts":                    "sts",
	"github.com/aws/aws-sdk-go-v2/service/ssm":                    "ssm",
	"github.com/aws/aws-sdk-go-v2/service/dynamodb":               "dynamodb",
}

// codeCall is an IAM action the code can perform, and where.
type codeCall struct {
	action string
	where  string // file:line of the pinned interface
}

// codeCalls finds, in the non-test Go files under dirs, every unexported
// interface pinned to an SDK client (var _ xAPI = (*svc.Client)(nil)) and
// returns its methods as IAM actions: the operations the code can call.
func codeCalls(t *testing.T, dirs ...string) []codeCall {
	t.Helper()
	fset := token.NewFileSet()
	var calls []codeCall
	for _, dir := range dirs {
		pkgFiles := map[string][]*ast.File{} // by directory: one package each
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			pkgFiles[filepath.Dir(path)] = append(pkgFiles[filepath.Dir(path)], f)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, files := range pkgFiles {
			calls = append(calls, pinnedCalls(t, fset, files)...)
		}
	}
	return calls
}

func pinnedCalls(t *testing.T, fset *token.FileSet, files []*ast.File) []codeCall {
	t.Helper()
	ifaces := map[string]*ast.InterfaceType{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					ifaces[ts.Name.Name] = it
				}
			}
			return true
		})
	}
	var methods func(name string, seen map[string]bool) ([]string, error)
	methods = func(name string, seen map[string]bool) ([]string, error) {
		it, ok := ifaces[name]
		if !ok {
			return nil, fmt.Errorf("interface %s not declared in the package", name)
		}
		if seen[name] {
			return nil, nil
		}
		seen[name] = true
		var out []string
		for _, m := range it.Methods.List {
			if len(m.Names) > 0 {
				for _, n := range m.Names {
					out = append(out, n.Name)
				}
				continue
			}
			embedded, ok := m.Type.(*ast.Ident)
			if !ok {
				return nil, fmt.Errorf("interface %s embeds %T: list the methods instead", name, m.Type)
			}
			more, err := methods(embedded.Name, seen)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
		return out, nil
	}

	var calls []codeCall
	for _, f := range files {
		imports := map[string]string{} // local name -> import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			local := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imports[local] = p
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				iface, ok := vs.Type.(*ast.Ident)
				if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "_" || len(vs.Values) != 1 || ast.IsExported(iface.Name) {
					continue
				}
				pkg, ok := sdkClient(vs.Values[0])
				if !ok {
					continue
				}
				where := fset.Position(vs.Pos()).String()
				path := imports[pkg]
				if !strings.HasPrefix(path, "github.com/aws/aws-sdk-go-v2/service/") {
					continue
				}
				prefix, ok := iamPrefixes[path]
				if !ok {
					t.Errorf("%s: a client of %s, whose IAM prefix this test does not know", where, path)
					continue
				}
				ms, err := methods(iface.Name, map[string]bool{})
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				for _, m := range ms {
					calls = append(calls, codeCall{action: prefix + ":" + m, where: where})
				}
			}
		}
	}
	return calls
}

// sdkClient matches (*pkg.Client)(nil) and returns pkg.
func sdkClient(e ast.Expr) (string, bool) {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if nilArg, ok := call.Args[0].(*ast.Ident); !ok || nilArg.Name != "nil" {
		return "", false
	}
	paren, ok := call.Fun.(*ast.ParenExpr)
	if !ok {
		return "", false
	}
	star, ok := paren.X.(*ast.StarExpr)
	if !ok {
		return "", false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Client" {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	return pkg.Name, true
}

// iamPolicy is a policy document; Action and Resource may be a string or a list.
type iamPolicy struct {
	Version   string `json:"Version"`
	Statement []struct {
		Sid       string                       `json:"Sid"`
		Effect    string                       `json:"Effect"`
		Action    stringOrList                 `json:"Action"`
		NotAction stringOrList                 `json:"NotAction"`
		Resource  stringOrList                 `json:"Resource"`
		Condition map[string]map[string]string `json:"Condition"`
	} `json:"Statement"`
}

type stringOrList []string

func (s *stringOrList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// policyFileActions returns the sorted actions of deploy/iam/policy.json.
func policyFileActions(t *testing.T) []string {
	t.Helper()
	var p iamPolicy
	readJSON(t, "deploy/iam/policy.json", &p)
	var out []string
	for _, st := range p.Statement {
		out = append(out, st.Action...)
	}
	slices.Sort(out)
	return out
}

// TestPolicyActionsAreTheCodesCalls keeps deploy/iam/policy.json equal to
// the AWS operations the code can call: nothing missing (the checker would
// fail with AccessDenied), nothing extra (least privilege).
func TestPolicyActionsAreTheCodesCalls(t *testing.T) {
	t.Parallel()
	calls := codeCalls(t, "internal", "cmd")
	code := map[string][]string{}
	for _, c := range calls {
		code[c.action] = append(code[c.action], c.where)
	}
	// The packages that call AWS must be found, or the comparison says nothing.
	for _, a := range []string{"sqs:GetQueueAttributes", "cloudwatch:PutMetricData"} {
		if _, ok := code[a]; !ok {
			t.Fatalf("found no pinned interface calling %s: the parser no longer sees the code's AWS calls (%v)", a, calls)
		}
	}
	policy := policyFileActions(t)
	for a, where := range code {
		if !slices.Contains(policy, a) {
			t.Errorf("the code calls %s (%s) but deploy/iam/policy.json does not allow it", a, strings.Join(where, ", "))
		}
	}
	for _, a := range policy {
		if _, ok := code[a]; !ok {
			t.Errorf("deploy/iam/policy.json allows %s, which the code never calls", a)
		}
	}
	if dups := len(policy) - len(slices.Compact(slices.Clone(policy))); dups > 0 {
		t.Errorf("deploy/iam/policy.json lists %d actions twice", dups)
	}
}

func TestPolicyScopes(t *testing.T) {
	t.Parallel()
	var p iamPolicy
	readJSON(t, "deploy/iam/policy.json", &p)
	if p.Version != "2012-10-17" {
		t.Errorf("Version %q", p.Version)
	}
	// Where AWS allows a narrower resource, the policy names it.
	scopes := map[string]string{
		"sqs:GetQueueAttributes":                "arn:aws:sqs:",
		"ssm:GetParameter":                      "arn:aws:ssm:", // the config parameter only
		"autoscaling:SetDesiredCapacity":        "arn:aws:autoscaling:",
		"ecs:DescribeServices":                  "arn:aws:ecs:",
		"ecs:UpdateService":                     "arn:aws:ecs:",
		"ecs:ListTasks":                         "*", // scoped by the ecs:cluster condition
		"ecs:DescribeTasks":                     "*",
		"cloudwatch:GetMetricData":              "*", // takes no resource
		"cloudwatch:PutMetricData":              "*", // scoped by the namespace condition
		"autoscaling:DescribeAutoScalingGroups": "*", // describe actions take no resource
		"dynamodb:Scan":                         "arn:aws:dynamodb:",
		"dynamodb:UpdateItem":                   "arn:aws:dynamodb:",
	}
	for _, st := range p.Statement {
		if st.Effect != "Allow" || len(st.NotAction) > 0 {
			t.Errorf("statement %s: effect %s, NotAction %v; want Allow with Action", st.Sid, st.Effect, st.NotAction)
		}
		for _, a := range st.Action {
			want, ok := scopes[a]
			if !ok {
				t.Errorf("statement %s: no scope rule for %s", st.Sid, a)
				continue
			}
			for _, r := range st.Resource {
				if want == "*" && r != "*" || want != "*" && !strings.HasPrefix(r, want) {
					t.Errorf("statement %s: %s on %s, want %s...", st.Sid, a, r, want)
				}
			}
			if a == "ecs:UpdateService" || a == "ecs:DescribeServices" {
				for _, r := range st.Resource {
					if !strings.Contains(r, ":service/") {
						t.Errorf("statement %s: %s on %s, want service ARNs", st.Sid, a, r)
					}
				}
			}
			if a == "autoscaling:SetDesiredCapacity" {
				for _, r := range st.Resource {
					if !strings.Contains(r, ":autoScalingGroupName/") {
						t.Errorf("statement %s: %s on %s, want group ARNs", st.Sid, a, r)
					}
				}
			}
			if strings.HasPrefix(a, "dynamodb:") {
				for _, r := range st.Resource {
					if !strings.Contains(r, ":table/") || strings.Contains(r, "*") {
						t.Errorf("statement %s: %s on %s, want the lease table's ARN and nothing wider", st.Sid, a, r)
					}
				}
			}
			if a == "cloudwatch:PutMetricData" && st.Condition["StringEquals"]["cloudwatch:namespace"] == "" {
				t.Errorf("statement %s: PutMetricData without a cloudwatch:namespace condition", st.Sid)
			}
			if (a == "ecs:ListTasks" || a == "ecs:DescribeTasks") && !strings.Contains(st.Condition["ArnEquals"]["ecs:cluster"], ":cluster/") {
				t.Errorf("statement %s: %s without an ecs:cluster condition naming the workers' cluster", st.Sid, a)
			}
		}
	}
}

// TestNoWildcardActions covers every IAM document in deploy/: the JSON
// policies and the policies inside the CloudFormation templates.
func TestNoWildcardActions(t *testing.T) {
	t.Parallel()
	check := func(where string, actions []string) {
		if len(actions) == 0 {
			t.Errorf("%s: a statement without actions", where)
		}
		for _, a := range actions {
			if strings.Contains(a, "*") || strings.Contains(a, "?") {
				t.Errorf("%s: wildcard action %q", where, a)
			}
		}
	}
	jsonPolicies, err := filepath.Glob(filepath.Join(root, "deploy/iam/*.json"))
	if err != nil || len(jsonPolicies) == 0 {
		t.Fatalf("no policies in deploy/iam (%v)", err)
	}
	for _, path := range jsonPolicies {
		rel, _ := filepath.Rel(root, path)
		var p iamPolicy
		readJSON(t, rel, &p)
		for i, st := range p.Statement {
			if len(st.NotAction) > 0 {
				t.Errorf("%s statement %d: NotAction", rel, i)
			}
			check(fmt.Sprintf("%s statement %d", rel, i), st.Action)
		}
	}
	for _, path := range []string{"deploy/cloudformation/checker-asg.yaml", "deploy/cloudformation/worker-target-tracking.yaml"} {
		tp := loadTemplate(t, path)
		walk(tp, func(v any) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			for _, key := range []string{"PolicyDocument", "AssumeRolePolicyDocument"} {
				if doc, ok := m[key]; ok {
					for _, st := range policyStatements(doc) {
						check(fmt.Sprintf("%s %s %v", path, key, st["Sid"]), actionsOf(st))
					}
				}
			}
		})
	}
}
