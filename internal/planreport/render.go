package planreport

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

// Format is an output format of a plan.
type Format string

// The formats.
const (
	FormatTable    Format = "table"    // aligned text, every section (the default)
	FormatJSON     Format = "json"     // the capacity.Plan JSON contract
	FormatMarkdown Format = "markdown" // headings and pipe tables, every section
	FormatCSV      Format = "csv"      // every section, raw numbers, one block per section
)

// Formats lists the formats, the default first.
func Formats() []Format { return []Format{FormatTable, FormatJSON, FormatMarkdown, FormatCSV} }

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Formats(), f) {
		return f, nil
	}
	names := make([]string, 0, 4)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown format %q (want %s)", s, strings.Join(names, ", "))
}

// Write renders p in format f.
func Write(w io.Writer, p capacity.Plan, f Format) error {
	switch f {
	case FormatTable:
		return WriteTable(w, p)
	case FormatJSON:
		return WriteJSON(w, p)
	case FormatMarkdown:
		return WriteMarkdown(w, p)
	case FormatCSV:
		return WriteCSV(w, p)
	}
	return fmt.Errorf("write plan: unknown format %q", f)
}

// WriteJSON writes the plan as indented JSON, the contract of
// capacity.Plan.
func WriteJSON(w io.Writer, p capacity.Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("write plan as JSON: %w", err)
	}
	return nil
}

// WriteCSV writes the named sections of the plan (all of them when none is
// named) as CSV. Each section is a block: a header row, then its rows, every
// row led by the section's name, so one section is the rows whose first
// field is its name; blocks are separated by an empty line. Numbers are raw:
// msg/s, seconds and 0..1 ratios; an empty field is "none" (a drain that
// never ends, a wait with no finite answer).
func WriteCSV(w io.Writer, p capacity.Plan, sections ...string) error {
	cw := csv.NewWriter(w)
	first := true
	for _, s := range Sections(p) {
		if len(sections) > 0 && !slices.Contains(sections, s.Name) {
			continue
		}
		if !first {
			if err := cw.Write(nil); err != nil {
				return fmt.Errorf("write plan as CSV: %w", err)
			}
		}
		first = false
		header := []string{"section"}
		for _, c := range s.Columns {
			header = append(header, c.Key)
		}
		if err := cw.Write(header); err != nil {
			return fmt.Errorf("write plan as CSV: %w", err)
		}
		for _, r := range s.Rows {
			rec := []string{s.Name}
			for _, c := range r {
				rec = append(rec, csvSafe(c.Raw))
			}
			if err := cw.Write(rec); err != nil {
				return fmt.Errorf("write plan as CSV: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write plan as CSV: %w", err)
	}
	return nil
}

// csvSafe keeps a text field (a queue name, a note) from being read as a
// formula when the CSV is opened in a spreadsheet: text that starts with
// =, +, -, @, a tab or a carriage return gets a leading apostrophe. Numbers,
// negative ones included, are left as they are.
func csvSafe(field string) string {
	if field == "" || !strings.ContainsRune("=+-@\t\r", rune(field[0])) {
		return field
	}
	if _, err := strconv.ParseFloat(field, 64); err == nil {
		return field
	}
	return "'" + field
}

// maxBurnDownRows is how many burn-down samples the text forms show; the
// JSON and CSV carry them all.
const maxBurnDownRows = 16

// WriteTable writes every section of the plan as aligned text.
func WriteTable(w io.Writer, p capacity.Plan) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "Capacity plan for %s\n%s\n", queueName(p.Queue), headline(p))
	for _, s := range textSections(p) {
		fmt.Fprintf(bw, "\n%s\n%s\n", s.Title, strings.Repeat("-", len([]rune(s.Title))))
		if s.Name == SectionCheckpoints || s.Name == SectionWarnings {
			writeList(bw, s)
			continue
		}
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
		cols := visible(s.Columns)
		row := make([]string, 0, len(cols))
		for _, i := range cols {
			row = append(row, s.Columns[i].Title)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
		for _, r := range s.Rows {
			row = row[:0]
			for _, i := range cols {
				row = append(row, strings.ReplaceAll(r[i].Text, "\t", " "))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write plan as a table: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write plan as a table: %w", err)
	}
	return nil
}

// writeList writes a section of long texts as one block per row: the first
// cell as a heading, the others indented under their column titles. A
// one-column section is a bulleted list.
func writeList(w io.Writer, s Section) {
	cols := visible(s.Columns)
	width := 0
	for _, i := range cols[1:] {
		width = max(width, len([]rune(s.Columns[i].Title)))
	}
	for _, r := range s.Rows {
		if len(cols) == 1 {
			fmt.Fprintf(w, "- %s\n", r[cols[0]].Text)
			continue
		}
		fmt.Fprintf(w, "%s\n", r[cols[0]].Text)
		for _, i := range cols[1:] {
			title := strings.ToLower(s.Columns[i].Title) + ":"
			fmt.Fprintf(w, "  %-*s %s\n", width+1, title, r[i].Text)
		}
	}
}

// WriteMarkdown writes every section of the plan as Markdown.
func WriteMarkdown(w io.Writer, p capacity.Plan) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# Capacity plan for %s\n\n%s\n", mdEscape(queueName(p.Queue)), mdEscape(headline(p)))
	for _, s := range textSections(p) {
		fmt.Fprintf(bw, "\n## %s\n\n", s.Title)
		cols := visible(s.Columns)
		var head, rule []string
		for _, i := range cols {
			head = append(head, mdEscape(s.Columns[i].Title))
			rule = append(rule, "---")
		}
		fmt.Fprintf(bw, "| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
		for _, r := range s.Rows {
			var cells []string
			for _, i := range cols {
				cells = append(cells, mdEscape(r[i].Text))
			}
			fmt.Fprintf(bw, "| %s |\n", strings.Join(cells, " | "))
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write plan as Markdown: %w", err)
	}
	return nil
}

// headline is the plan in one sentence.
func headline(p capacity.Plan) string {
	floors := fmt.Sprintf("drain floor %d, utilization floor %d", p.DrainFloor, p.UtilizationFloor)
	if p.WaitFloor != nil {
		floors += fmt.Sprintf(", wait floor %d", *p.WaitFloor)
	}
	s := fmt.Sprintf("Recommended worker target: %d (%s, + %d safety); current %d.",
		p.RecommendedWorkers, floors, p.Inputs.SafetyWorkers, p.Current.Workers)
	if p.Capped {
		s += fmt.Sprintf(" Capped at %d: the target is blocked.", p.PlannedWorkers)
	}
	return s
}

// textSections are the sections the text forms print: the burn-down
// thinned to at most maxBurnDownRows samples, with a bar for the table.
func textSections(p capacity.Plan) []Section {
	out := Sections(p)
	for i, s := range out {
		if s.Name != SectionBurnDown {
			continue
		}
		keep := thin(p.BurnDown, maxBurnDownRows)
		samples := make([]capacity.BurnDownPoint, 0, len(keep))
		for _, k := range keep {
			samples = append(samples, p.BurnDown[k])
		}
		thinned := burnDown(samples)
		thinned.Columns = append(thinned.Columns, Column{Key: "bar", Title: ""})
		top := 0.0
		for _, b := range samples {
			top = math.Max(top, b.Backlog)
		}
		for j, b := range samples {
			n := 0
			if top > 0 {
				n = int(math.Round(30 * b.Backlog / top))
			}
			thinned.Rows[j] = append(thinned.Rows[j], Cell{Text: strings.Repeat("#", n)})
		}
		out[i] = thinned
	}
	return out
}

// thin picks at most about n of the samples, evenly spaced, keeping the
// first, the last and every sample where the line bends (the start delay,
// the moment the queue empties).
func thin(samples []capacity.BurnDownPoint, n int) []int {
	if len(samples) <= n {
		idx := make([]int, len(samples))
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	every := (len(samples) + n - 1) / n
	var idx []int
	for i := range samples {
		if i == 0 || i == len(samples)-1 || i%every == 0 || bends(samples, i) {
			idx = append(idx, i)
		}
	}
	return idx
}

// bends reports whether the burn-down changes slope at sample i.
func bends(s []capacity.BurnDownPoint, i int) bool {
	if i == 0 || i == len(s)-1 {
		return false
	}
	before := (s[i].Backlog - s[i-1].Backlog) / (s[i].T - s[i-1].T)
	after := (s[i+1].Backlog - s[i].Backlog) / (s[i+1].T - s[i].T)
	return math.Abs(before-after) > 1e-9*math.Max(1, math.Max(math.Abs(before), math.Abs(after)))
}

func visible(cols []Column) []int {
	var idx []int
	for i, c := range cols {
		if !c.CSVOnly {
			idx = append(idx, i)
		}
	}
	return idx
}

// mdEscaper keeps a cell inside its Markdown table cell.
var mdEscaper = strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ")

func mdEscape(s string) string { return mdEscaper.Replace(s) }
