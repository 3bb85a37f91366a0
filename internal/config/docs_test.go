package config

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// keyPaths lists every YAML key of t as the reference names it:
// groups[].fleet.min for a field of a list's items; a struct's keys rather
// than the struct, a value's own key (a duration, a list of scalars) as it.
func keyPaths(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		path := prefix + name
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, path+"[]")
			out = append(out, keyPaths(ft.Elem(), path+"[].")...)
		case ft.Kind() == reflect.Struct && hasKeys(ft):
			out = append(out, keyPaths(ft, path+".")...)
		default:
			out = append(out, path)
		}
	}
	return out
}

func hasKeys(t reflect.Type) bool {
	for f := range t.Fields() {
		if f.Tag.Get("yaml") != "" {
			return true
		}
	}
	return false
}

// docRow is one row of docs/configuration.md's reference table: the keys
// its first cell names and the row's text.
type docRow struct {
	keys []string
	text string
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// referenceRows reads the table under "## Reference". A cell names its
// keys in backticks: a whole path, or after the first, a sibling as
// `.key` (`keda.tls.cert_file` / `.key_file`); `…x.y` is any path ending
// in x.y.
func referenceRows(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## Reference\n")
	if i < 0 {
		t.Fatal("docs/configuration.md has no ## Reference")
	}
	section := doc[i+len("\n## Reference\n"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var rows []docRow
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cell := strings.Split(line, "|")[1]
		var row docRow
		row.text = line
		for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
			k := m[1]
			if strings.HasPrefix(k, ".") && len(row.keys) > 0 {
				first := row.keys[0]
				k = first[:strings.LastIndex(first, ".")] + k
			}
			row.keys = append(row.keys, k)
		}
		rows = append(rows, row)
	}
	if len(rows) < 50 {
		t.Fatalf("only %d rows read from the reference: the reading is broken", len(rows))
	}
	return rows
}

// covers says whether row documents path: it names it, names it by its
// end (…), or names a parent whose row spells out the rest of the path
// (`groups[].fleet.kubernetes`: `namespace` and one of `deployment` ...).
func (r docRow) covers(path string) bool {
	for _, k := range r.keys {
		if rest, ok := strings.CutPrefix(k, "…"); ok {
			if strings.HasSuffix(path, rest) {
				return true
			}
			continue
		}
		if k == path {
			return true
		}
		rest, ok := strings.CutPrefix(path, k+".")
		if !ok {
			continue
		}
		all := true
		for _, seg := range strings.Split(strings.ReplaceAll(rest, "[]", ""), ".") {
			all = all && regexp.MustCompile(`\b`+regexp.QuoteMeta(seg)+`\b`).MatchString(r.text)
		}
		if all {
			return true
		}
	}
	return false
}

// TestReferenceHasEveryKey: docs/configuration.md's reference documents
// every key of Config, and names no key Config lacks.
func TestReferenceHasEveryKey(t *testing.T) {
	t.Parallel()
	rows := referenceRows(t)
	paths := keyPaths(reflect.TypeFor[Config](), "")
	for _, p := range paths {
		found := false
		for _, r := range rows {
			found = found || r.covers(p)
		}
		if !found {
			t.Errorf("docs/configuration.md's reference lacks %s", p)
		}
	}
	for _, r := range rows {
		for _, k := range r.keys {
			known := false
			for _, p := range paths {
				known = known || p == k || strings.HasPrefix(p, k+".") || strings.HasPrefix(p, k+"[].") ||
					(strings.HasPrefix(k, "…") && strings.HasSuffix(p, strings.TrimPrefix(k, "…")))
			}
			if !known {
				t.Errorf("docs/configuration.md's reference names %s, which is no key of the configuration", k)
			}
		}
	}
}
