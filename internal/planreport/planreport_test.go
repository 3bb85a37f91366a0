package planreport

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/queuechecker/queue-checker/internal/capacity"
)

func plan(t testing.TB, in capacity.PlanInput) capacity.Plan {
	t.Helper()
	p, err := capacity.NewPlan(in)
	if err != nil {
		t.Fatalf("NewPlan: %v", err)
	}
	return p
}

// plannerExample is the planner example's default queue; plannerCapped adds a start delay,
// a latency target and a cap below the target.
var (
	plannerExample = capacity.PlanInput{Queue: "orders", ArrivalRate: 12, Workers: 8, PerWorker: 2.4,
		Backlog: 18_000, DrainTarget: 1800, Utilization: 0.8}
	plannerCapped = capacity.PlanInput{Queue: "a|b", ArrivalRate: 12, Workers: 8, PerWorker: 2.4,
		Backlog: 18_000, DrainTarget: 1800, Utilization: 0.8, StartDelay: 300, Cap: 8, LatencyTarget: 0.05}
)

func TestParseFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Format
		wantErr bool
	}{
		{"table", FormatTable, false}, {"json", FormatJSON, false}, {"markdown", FormatMarkdown, false},
		{"csv", FormatCSV, false}, {" CSV ", FormatCSV, false}, {"xml", "", true}, {"", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseFormat(tt.in)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ParseFormat(%q) = %q, %v", tt.in, got, err)
			}
			if err != nil && !strings.Contains(err.Error(), "table, json, markdown, csv") {
				t.Errorf("error %q does not list the formats", err)
			}
		})
	}
}

func TestSections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    capacity.PlanInput
		names []string
	}{
		{"no warnings", plannerExample, []string{SectionInputs, SectionSummary, SectionPlanPoints, SectionErlang,
			SectionSensitivity, SectionBurnDown, SectionCheckpoints, SectionPromise, SectionCeilings}},
		{"capped", plannerCapped, []string{SectionInputs, SectionSummary, SectionPlanPoints, SectionErlang,
			SectionSensitivity, SectionBurnDown, SectionCheckpoints, SectionPromise, SectionCeilings, SectionWarnings}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := plan(t, tt.in)
			var names []string
			for _, s := range Sections(p) {
				names = append(names, s.Name)
				for i, r := range s.Rows {
					if len(r) != len(s.Columns) {
						t.Errorf("%s row %d has %d cells for %d columns", s.Name, i, len(r), len(s.Columns))
					}
				}
			}
			if !slices.Equal(names, tt.names) {
				t.Errorf("sections %v, want %v", names, tt.names)
			}
		})
	}
}

// csvSections reads WriteCSV's output back into rows keyed by section.
func csvSections(t *testing.T, out string) map[string][][]string {
	t.Helper()
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("read CSV: %v", err)
	}
	got := map[string][][]string{}
	for _, rec := range recs {
		got[rec[0]] = append(got[rec[0]], rec)
	}
	return got
}

func TestWriteCSV(t *testing.T) {
	t.Parallel()
	p := plan(t, capacity.PlanInput{ArrivalRate: 20, BurstPercent: 25, PerWorker: 2, OverheadPercent: 10,
		Backlog: 30_000, DrainTarget: 1200, Utilization: 0.8, Cap: 14})
	var buf bytes.Buffer
	if err := WriteCSV(&buf, p); err != nil {
		t.Fatal(err)
	}
	secs := csvSections(t, buf.String())
	if n := len(secs["section"]); n != len(Sections(p)) {
		t.Errorf("%d header rows, want one per section (%d)", n, len(Sections(p)))
	}
	summary := map[string][]string{}
	for _, rec := range secs[SectionSummary] {
		summary[rec[1]] = rec
	}
	// The planner example's second example: raw numbers, units apart.
	for key, want := range map[string][2]string{
		"modeled_arrival_rate":  {"25", "msg/s"},
		"effective_per_worker":  {"1.8", "msg/s"},
		"drain_floor":           {"28", "workers"},
		"planned_workers":       {"14", "workers"},
		"capped":                {"true", ""},
		"current_drain_seconds": {"", "s"}, // no workers: it never drains
		"current_utilization":   {"", "ratio"},
		"wait_floor":            {"", "workers"},
	} {
		if rec := summary[key]; len(rec) < 4 || rec[2] != want[0] || rec[3] != want[1] {
			t.Errorf("summary %s = %q, want value %q unit %q", key, rec, want[0], want[1])
		}
	}
	// The capped pool: 14 × 1.8 − 25 = 0.2 msg/s, 30000/0.2 = 150,000 s.
	var capped []string
	for _, rec := range secs[SectionPlanPoints] {
		if rec[1] == capacity.PointCapped {
			capped = rec
		}
	}
	if len(capped) < 5 || capped[2] != "14" || capped[3] != "0.2" || capped[4] != "150000" {
		t.Errorf("capped row %q", capped)
	}
	if len(secs[SectionBurnDown]) != len(p.BurnDown) {
		t.Errorf("CSV has %d burn-down rows, the plan %d", len(secs[SectionBurnDown]), len(p.BurnDown))
	}
}

func TestWriteCSVSections(t *testing.T) {
	t.Parallel()
	p := plan(t, plannerExample)
	var buf bytes.Buffer
	if err := WriteCSV(&buf, p, SectionSensitivity); err != nil {
		t.Fatal(err)
	}
	// One block: the header and six rows, 8 to 13 workers.
	want := "section,workers,net_drain,drain_seconds,utilization,wait_probability,mean_wait_seconds\n" +
		"sensitivity,8,7.2,2500,0.625,"
	if !strings.HasPrefix(buf.String(), want) {
		t.Errorf("CSV starts %q, want %q", buf.String(), want)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 7 {
		t.Errorf("%d lines, want 7", lines)
	}
}

func TestWriteJSON(t *testing.T) {
	t.Parallel()
	p := plan(t, capacity.PlanInput{ArrivalRate: 20, PerWorker: 2, Backlog: 100, DrainTarget: 60, Utilization: 0.8, Cap: 5})
	var buf bytes.Buffer
	if err := Write(&buf, p, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("decode: %v", err)
	}
	// 5 workers × 2 = 10 msg/s against 20: the capped pool never drains and
	// is not stable.
	q := doc["queueing"].(map[string]any)
	if q["stable"] != false || q["mean_wait_seconds"] != nil || q["wait_probability"] != nil {
		t.Errorf("queueing %v, want unstable with null waits", q)
	}
	cur := doc["current"].(map[string]any)
	if cur["drain_seconds"] != nil || cur["utilization"] != nil {
		t.Errorf("current %v, want null drain and utilisation for no workers", cur)
	}
	if strings.Contains(buf.String(), `\u003c`) || strings.Contains(buf.String(), `\u0026`) {
		t.Error("JSON escapes HTML characters")
	}
}

func TestWriteTable(t *testing.T) {
	t.Parallel()
	p := plan(t, plannerCapped)
	var buf bytes.Buffer
	if err := Write(&buf, p, FormatTable); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// Start delay 300 s: 18000 − 7.2 × 300 = 15840 at start; the drain
	// floor is (12 + 15840/1800)/2.4 = 8.67: 9, the wait floor (99 % within
	// 50 ms) 11: at 10 workers C·e^−(24 − 12)·0.05 = 2.0 % wait longer, at
	// 11 0.73 %; the mean wait alone would need 9. The cap of 8 drains the
	// backlog at 8 × 2.4 − 12 = 7.2 msg/s: zero at 300 + 2200 = 2500 s
	// (41m40s), a bend the thinned burn-down keeps.
	for _, w := range []string{
		"Capacity plan for a|b", "Capped at 8", "+5m  ", "15,840", "+41m40s  0", "- the target of 11",
		"arrival rate\n  signal:", "  action:", "Latency target (how long a message may wait)  50.0 ms",
		"Messages within the target", "99.0 %", "Mean wait floor", "9 workers",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n+"); n > maxBurnDownRows+4 || n < 8 {
		t.Errorf("table shows %d burn-down rows", n)
	}
}

func TestWriteMarkdown(t *testing.T) {
	t.Parallel()
	p := plan(t, plannerCapped)
	var buf bytes.Buffer
	if err := Write(&buf, p, FormatMarkdown); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{`# Capacity plan for a\|b`, "## Checkpoints", "| Checkpoint | Signal | Action | Operator note |",
		"| --- | --- | --- | --- |", "| current | 8 |", "## Warnings"} {
		if !strings.Contains(out, w) {
			t.Errorf("markdown lacks %q", w)
		}
	}
	// Every table line has as many cells as its header.
	var want int
	for line := range strings.SplitSeq(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			want = 0
			continue
		}
		cells := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|")
		if want == 0 {
			want = cells
		} else if cells != want {
			t.Errorf("line %q has %d bars, header %d", line, cells, want)
		}
	}
}

func TestThinKeepsBends(t *testing.T) {
	t.Parallel()
	// 0..100 s in 1 s steps; slope −1 until 40 s, then flat at 60.
	var s []capacity.BurnDownPoint
	for i := range 101 {
		s = append(s, capacity.BurnDownPoint{T: float64(i), Backlog: max(60, 100-float64(i))})
	}
	idx := thin(s, 10)
	for _, must := range []int{0, 40, 100} {
		if !slices.Contains(idx, must) {
			t.Errorf("thin drops sample %d: %v", must, idx)
		}
	}
	if len(idx) > 13 {
		t.Errorf("thin keeps %d samples", len(idx))
	}
	if short := thin(s[:5], 10); len(short) != 5 {
		t.Errorf("thin of 5 keeps %d", len(short))
	}
}

type failWriter struct{}

var errDiskFull = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteErrors(t *testing.T) {
	t.Parallel()
	p := plan(t, plannerExample)
	for _, f := range Formats() {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			if err := Write(failWriter{}, p, f); !errors.Is(err, errDiskFull) {
				t.Errorf("Write = %v, want the writer's error", err)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, p, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func BenchmarkWrite(b *testing.B) {
	p := plan(b, plannerCapped)
	for _, f := range Formats() {
		b.Run(string(f), func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := Write(&buf, p, f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestCSVKeepsTextFromBecomingAFormula(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"=HYPERLINK(\"x\")", "'=HYPERLINK(\"x\")"},
		{"+1+1", "'+1+1"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"-cmd", "'-cmd"},
		{"\tx", "'\tx"},
		{"-3.5", "-3.5"},
		{"+2", "+2"},
		{"thumbnails", "thumbnails"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := csvSafe(tt.in); got != tt.want {
			t.Errorf("csvSafe(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	p, err := capacity.NewPlan(capacity.PlanInput{Queue: "=cmd|' /C calc'!A0", ArrivalRate: 12, Workers: 8,
		PerWorker: 2.4, Backlog: 18000, DrainTarget: 1800, Utilization: 0.8})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteCSV(&b, p); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), ",=cmd") || !strings.Contains(b.String(), "'=cmd") {
		t.Errorf("the queue name reached the CSV as a formula:\n%s", b.String())
	}
}

// The price tables in text and CSV: 100 msg/s at 1 msg/s per worker under
// a 0.7 ceiling is ceil(100 / 0.7) = 143 workers, $5.95 an hour at
// $0.0416 (143 × 0.0416 = 5.9488) and 5.9488 × 730 = $4,342.62 a month;
// with a per-worker throughput of 1 msg/s and one server per worker, a
// 1 s mean-wait promise is far below what the 0.7 ceiling already gives.
func TestPriceOfThePromise(t *testing.T) {
	t.Parallel()
	p := plan(t, capacity.PlanInput{Queue: "priced", ArrivalRate: 100, PerWorker: 1, DrainTarget: 900,
		Utilization: 0.7, LatencyTarget: 30, WorkerCostPerHour: 0.0416})
	var b strings.Builder
	if err := WriteTable(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Target cost a month", "$4,342.62", "$5.95", "30 s (current)", "70.0 % (current)", "Price of the promise"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := WriteCSV(&b, p, SectionPromise); err != nil {
		t.Fatal(err)
	}
	rows := csvSections(t, b.String())[SectionPromise]
	found := false
	for _, r := range rows {
		// section, latency_seconds, workers, binding, $/h, $/month, current
		if r[1] == "30" {
			found = true
			if r[2] != "143" || r[3] != "utilization" || r[5] != "4342.624" || r[6] != "true" {
				t.Errorf("30 s row %v, want 143 workers, utilization, 4342.624, current", r)
			}
		}
	}
	if !found {
		t.Errorf("no 30 s row in %v", rows)
	}
	// Without a price the dollars say so.
	b.Reset()
	if err := WriteTable(&b, plan(t, plannerExample)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no price set") {
		t.Errorf("a plan without a price does not say so:\n%s", b.String())
	}
}
