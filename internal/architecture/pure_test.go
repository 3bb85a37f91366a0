package architecture

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// ioImports are the standard library's packages that do I/O: a package
// importing one of them (or below one) is not pure. net/url, net/netip
// and io (a writer handed in) are plain values.
var ioImports = []string{"database", "embed", "io/fs", "io/ioutil", "log", "net$", "net/http", "net/rpc",
	"net/smtp", "os", "path/filepath", "plugin", "syscall"}

// doesIO reports whether importing imp does I/O: a standard package of
// ioImports, or any package outside the standard library and this module
// (the SDKs, clients, loggers and metrics).
func doesIO(imp string) bool {
	if imp == module || strings.HasPrefix(imp, module+"/") {
		return false
	}
	if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
		return true
	}
	for _, p := range ioImports {
		if exact, ok := strings.CutSuffix(p, "$"); ok {
			if imp == exact {
				return true
			}
		} else if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}

// lintConfig is what the test reads of .golangci.yml.
type lintConfig struct {
	Linters struct {
		Settings struct {
			Depguard struct {
				Rules map[string]struct {
					Files []string `yaml:"files"`
					Deny  []struct {
						Pkg string `yaml:"pkg"`
					} `yaml:"deny"`
				} `yaml:"rules"`
			} `yaml:"depguard"`
		} `yaml:"settings"`
		Exclusions struct {
			Rules []struct {
				PathExcept string   `yaml:"path-except"`
				Linters    []string `yaml:"linters"`
			} `yaml:"rules"`
		} `yaml:"exclusions"`
	} `yaml:"linters"`
}

func readLintConfig(t *testing.T) lintConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, ".golangci.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c lintConfig
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// globDirs reads depguard file globs of the form **/DIR/** as DIRs,
// leaving out negations ("!$test").
func globDirs(t *testing.T, globs []string) []string {
	t.Helper()
	var dirs []string
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			continue
		}
		dir, prefixed := strings.CutPrefix(g, "**/")
		dir, suffixed := strings.CutSuffix(dir, "/**")
		if !prefixed || !suffixed || strings.Contains(dir, "*") {
			t.Fatalf("depguard glob %q: this test reads globs of the form **/DIR/**", g)
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// under reports whether the package directory rel is dir or below it.
func under(rel string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return rel == d || strings.HasPrefix(rel, d+"/") })
}

// The lint's rules for pure packages (depguard's pure and pure-no-io, and
// forbidigo's time.Now ban) name exactly the packages whose code imports
// nothing that does I/O: a new pure package must join them, and a package
// that starts doing I/O must leave them (or stop).
func TestPurePackagesAreInTheLintRules(t *testing.T) {
	t.Parallel()
	cfg := readLintConfig(t)
	rules := cfg.Linters.Settings.Depguard.Rules
	var forbid *regexp.Regexp
	for _, r := range cfg.Linters.Exclusions.Rules {
		if slices.Contains(r.Linters, "forbidigo") && r.PathExcept != "" {
			forbid = regexp.MustCompile(r.PathExcept)
		}
	}
	if forbid == nil {
		t.Fatal(".golangci.yml: no path-except exclusion of forbidigo, the rule that keeps time.Now out of the pure packages")
	}
	for _, name := range []string{"pure", "pure-no-io"} {
		if len(rules[name].Files) == 0 {
			t.Fatalf(".golangci.yml: no depguard rule %q with files", name)
		}
	}
	var denied []string
	for _, d := range rules["pure-no-io"].Deny {
		if !strings.Contains(d.Pkg, ".") { // the standard library's
			denied = append(denied, d.Pkg)
		}
	}
	slices.Sort(denied)
	if want := slices.Sorted(slices.Values(ioImports)); !slices.Equal(denied, want) {
		t.Errorf("depguard pure-no-io denies %q of the standard library; this test takes %q for I/O", denied, want)
	}

	pure := map[string]bool{}
	for _, p := range packages(t) {
		if !strings.HasPrefix(p.rel(), "internal/") || !p.hasCode(t) {
			continue // commands and examples do I/O; a package of tests has no code to keep pure
		}
		pure[p.rel()] = !slices.ContainsFunc(p.Imports, doesIO)
	}
	if !pure["internal/capacity"] || pure["internal/poller"] {
		t.Fatalf("the test's reading of the imports is wrong: %v", pure)
	}
	pureDirs := globDirs(t, rules["pure"].Files)
	noIODirs := globDirs(t, rules["pure-no-io"].Files)
	for _, rel := range slices.Sorted(maps.Keys(pure)) {
		want := pure[rel]
		for _, check := range []struct {
			rule string
			in   bool
		}{
			{"depguard pure", under(rel, pureDirs)},
			{"depguard pure-no-io", under(rel, noIODirs)},
			{"forbidigo's time.Now ban (path-except)", forbid.MatchString(rel + "/file.go")},
		} {
			switch {
			case want && !check.in:
				t.Errorf("%s imports nothing that does I/O but is not in %s", rel, check.rule)
			case !want && check.in:
				t.Errorf("%s does I/O but is in %s: move the I/O out, or the package out of the rule", rel, check.rule)
			}
		}
	}
}

// doesIO is the test's reading of an import.
func TestDoesIO(t *testing.T) {
	t.Parallel()
	for imp, want := range map[string]bool{
		"os": true, "os/exec": true, "net": true, "net/http/pprof": true, "path/filepath": true,
		"log/slog": true, "github.com/aws/aws-sdk-go-v2/aws": true, "go.uber.org/zap": true,
		"net/url": false, "net/netip": false, "io": false, "path": false, "time": false, "math/rand/v2": false,
		module + "/internal/config": false, "osx": false,
	} {
		if got := doesIO(imp); got != want {
			t.Errorf("doesIO(%q) = %v, want %v", imp, got, want)
		}
	}
}
