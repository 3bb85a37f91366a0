package architecture

import (
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the longest function, in lines from func to its closing
// brace, of the trees in longFuncTrees.
const maxFuncLines = 80

// longFuncTrees are the parts of the module that talk to the world or
// wire it, where a long function is most often two jobs in one.
var longFuncTrees = []string{"cmd", "internal/poller", "internal/sim", "internal/lease", "internal/awsclient", "internal/simulate"}

// No function of longFuncTrees (tests aside) is longer than maxFuncLines,
// except those the architecture page lists with a reason; and the page
// lists none that is not long.
func TestNoLongFunctions(t *testing.T) {
	t.Parallel()
	allowed := map[string]string{} // reason, by "file Func"
	for _, cells := range tableRows(t, section(t, "long functions")) {
		if len(cells) != 3 || len(codes(cells[0])) != 1 || len(codes(cells[1])) != 1 || cells[2] == "" {
			t.Fatalf("%s: long functions row %q: want | `file` | `Func` | reason |", page, cells)
		}
		allowed[codes(cells[0])[0]+" "+codes(cells[1])[0]] = cells[2]
	}
	long := map[string]int{}
	for _, tree := range longFuncTrees {
		err := filepath.WalkDir(filepath.Join(root, tree), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			for name, n := range funcLines(t, path) {
				if n > maxFuncLines {
					long[filepath.ToSlash(rel)+" "+name] = n
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(long)) {
		if _, ok := allowed[key]; !ok {
			file, name, _ := strings.Cut(key, " ")
			t.Errorf("%s: %s is %d lines, more than %d: split it, or list it in %s with a reason", file, name, long[key], maxFuncLines, page)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(allowed)) {
		if _, ok := long[key]; !ok {
			t.Errorf("%s lists %s as longer than %d lines; it is not (or is gone): take it off", page, key, maxFuncLines)
		}
	}
}
