package architecture

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// page is the architecture page, from the module's root.
const page = "docs/architecture.md"

// section returns the lines of the page between <!-- begin NAME --> and
// <!-- end NAME -->.
func section(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	begin, end := "<!-- begin "+name+" -->", "<!-- end "+name+" -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %s ... %s", page, begin, end)
	}
	return strings.Split(strings.TrimSpace(text[i+len(begin):j]), "\n")
}

// codeRE finds the `code` spans of a table cell.
var codeRE = regexp.MustCompile("`([^`]+)`")

// tableRows splits the rows of a Markdown table into cells, leaving out
// its header and separator.
func tableRows(t *testing.T, lines []string) [][]string {
	t.Helper()
	var rows [][]string
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "|") {
			continue
		}
		if i < 2 { // the header and the separator
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for k := range cells {
			cells[k] = strings.TrimSpace(cells[k])
		}
		rows = append(rows, cells)
	}
	return rows
}

// codes returns the code spans of a cell.
func codes(cell string) []string {
	var out []string
	for _, m := range codeRE.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}
