package architecture

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The package map of docs/architecture.md has one row for every package of
// `go list ./...`, none for a package that is gone, and each row lists the
// packages of this module the package imports, as go list does.
func TestPackageMap(t *testing.T) {
	t.Parallel()
	rows := map[string][]string{} // imports, by package
	for _, cells := range tableRows(t, section(t, "package map")) {
		if len(cells) != 3 {
			t.Fatalf("%s: package map row %q: want | package | what it does | imports |", page, cells)
		}
		name := codes(cells[0])
		if len(name) != 1 {
			t.Fatalf("%s: package map row %q: the first cell names one package in backquotes", page, cells)
		}
		if _, dup := rows[name[0]]; dup {
			t.Errorf("%s: %s has two rows", page, name[0])
		}
		if cells[1] == "" {
			t.Errorf("%s: %s: say what the package does", page, name[0])
		}
		imports := codes(cells[2])
		slices.Sort(imports)
		rows[name[0]] = imports
	}
	seen := map[string]bool{}
	for _, p := range packages(t) {
		rel := p.rel()
		seen[rel] = true
		want := p.moduleImports()
		got, ok := rows[rel]
		switch {
		case !ok:
			t.Errorf("%s: no row for %s; add\n%s", page, rel, mapRow(rel, firstSentence(p.Doc), want))
		case !slices.Equal(got, want):
			t.Errorf("%s: %s imports %q, the map says %q", page, rel, want, got)
		}
	}
	for name := range rows {
		if !seen[name] {
			t.Errorf("%s: %s is in the package map but not in the module", page, name)
		}
	}
}

// mapRow is a row of the package map.
func mapRow(rel, what string, imports []string) string {
	cells := make([]string, len(imports))
	for i, imp := range imports {
		cells[i] = "`" + imp + "`"
	}
	deps := strings.Join(cells, ", ")
	if deps == "" {
		deps = "none"
	}
	return fmt.Sprintf("| `%s` | %s | %s |", rel, what, deps)
}

// firstSentence is a package comment's first sentence, for a row to add.
func firstSentence(doc string) string {
	if i := strings.Index(doc, ". "); i >= 0 {
		return doc[:i+1]
	}
	return doc
}
