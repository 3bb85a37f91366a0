package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

func runPlan(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), append([]string{"plan"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

// planJSON runs `checker plan --output json` and decodes the result into a
// generic document, so the test reads the keys scripts rely on, not the Go
// field names.
func planJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	code, out, errOut := runPlan(t, append(args, "--output", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("decode %q: %v", out, err)
	}
	return doc
}

var plannerExampleArgs = []string{
	"--arrival-rate", "12", "--workers", "8", "--per-worker", "2.4",
	"--backlog", "18000", "--drain-target", "30m", "--utilization", "0.8",
}

func TestPlanJSONContract(t *testing.T) {
	t.Parallel()
	doc := planJSON(t, plannerExampleArgs...)
	for _, key := range []string{
		"queue", "inputs", "modeled_arrival_rate", "effective_per_worker", "backlog_at_start", "drain_floor",
		"utilization_floor", "wait_floor", "recommended_workers", "capped", "planned_workers", "current",
		"queueing", "plan_points", "sensitivity", "burn_down", "checkpoints",
	} {
		if _, ok := doc[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	// Seed 001: 10 workers; the current 8 drain 18,000 in 18000/7.2 = 2500 s.
	if doc["recommended_workers"] != 10.0 || doc["planned_workers"] != 10.0 || doc["capped"] != false {
		t.Errorf("recommended %v, planned %v, capped %v; want 10, 10, false",
			doc["recommended_workers"], doc["planned_workers"], doc["capped"])
	}
	if doc["wait_floor"] != nil {
		t.Errorf("wait_floor = %v without a latency target, want null", doc["wait_floor"])
	}
	current := doc["current"].(map[string]any)
	for key, want := range map[string]any{
		"workers": 8.0, "service_rate": 19.2, "net_drain": 7.2, "drain_seconds": 2500.0, "utilization": 0.625,
	} {
		if current[key] != want {
			t.Errorf("current.%s = %v, want %v", key, current[key], want)
		}
	}
	queueing := doc["queueing"].(map[string]any)
	for _, key := range []string{"workers", "wait_probability", "mean_wait_seconds", "mean_queue_length", "stable"} {
		if _, ok := queueing[key]; !ok {
			t.Errorf("queueing lacks %q", key)
		}
	}
	if queueing["workers"] != 10.0 || queueing["stable"] != true {
		t.Errorf("queueing = %v, want 10 workers, stable", queueing)
	}
	rowKeys := map[string][]string{
		"plan_points": {"point", "workers", "net_drain", "drain_seconds", "utilization", "note"},
		"sensitivity": {"workers", "drain_seconds", "utilization", "wait_probability", "mean_wait_seconds"},
		"burn_down":   {"t_seconds", "backlog"},
		"checkpoints": {"checkpoint", "signal", "action", "note"},
	}
	for list, keys := range rowKeys {
		rows, _ := doc[list].([]any)
		if len(rows) == 0 {
			t.Errorf("%s is empty", list)
			continue
		}
		for _, key := range keys {
			if _, ok := rows[0].(map[string]any)[key]; !ok {
				t.Errorf("%s[0] lacks %q", list, key)
			}
		}
	}
	var points []string
	for _, r := range doc["plan_points"].([]any) {
		points = append(points, r.(map[string]any)["point"].(string))
	}
	if got := strings.Join(points, ","); got != "current,drain floor,utilization floor,target" {
		t.Errorf("plan points %s", got)
	}
	// Sensitivity is target −2 … +3: 8 to 13.
	sens := doc["sensitivity"].([]any)
	if first, last := sens[0].(map[string]any)["workers"], sens[len(sens)-1].(map[string]any)["workers"]; first != 8.0 || last != 13.0 {
		t.Errorf("sensitivity spans %v..%v, want 8..13", first, last)
	}
}

func TestPlanSeedExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want map[string]any
	}{
		{
			// 25 msg/s modeled, 1.8 msg/s a worker, 30,000 in 20 min: 28, capped at 14.
			name: "planner example burst and overhead against a cap",
			args: []string{"--arrival-rate", "20", "--burst", "25", "--per-worker", "2", "--overhead", "10",
				"--backlog", "30000", "--drain-target", "20m", "--cap", "14"},
			want: map[string]any{"modeled_arrival_rate": 25.0, "effective_per_worker": 1.8, "drain_floor": 28.0,
				"recommended_workers": 28.0, "capped": true, "planned_workers": 14.0},
		},
		{
			// 40/(5 × 0.8) = 10.
			name: "planner example zero backlog",
			args: []string{"--arrival-rate", "40", "--per-worker", "5", "--utilization", "0.8"},
			want: map[string]any{"utilization_floor": 10.0, "recommended_workers": 10.0, "backlog_at_start": 0.0},
		},
		{
			// Seed 002: 50/s at 200 ms; a mean wait of 8.7 ms at 14 workers,
			// 19.0 ms at 13. The daemon's promise, 99 % within 10 ms, needs
			// 19: at 18, P(Wq > 10 ms) = C·e^−(90 − 50)·0.01 = 1.07 %; at 19,
			// 0.50 % (the capacity package checks these against a scan).
			name: "Erlang C example latency target",
			args: []string{"--arrival-rate", "50", "--service-time", "200ms", "--latency-target", "10ms"},
			want: map[string]any{"mean_wait_floor": 14.0, "wait_floor": 19.0, "utilization_floor": 13.0, "recommended_workers": 19.0,
				"service_time_seconds": 0.2, "offered_load": 10.0},
		},
		{
			// The seed's own promise, the mean: --latency-quantile does not
			// change the mean's line.
			name: "a lower quantile",
			args: []string{"--arrival-rate", "50", "--service-time", "200ms", "--latency-target", "10ms", "--latency-quantile", "0.5"},
			want: map[string]any{"mean_wait_floor": 14.0, "utilization_floor": 13.0},
		},
		{
			// Four messages at a time: a worker is four servers of 5 msg/s. The
			// 10 ms mean wait floor of 14 servers is ceil(14/4) = 4 workers,
			// the 99 % one of 19 servers ceil(19/4) = 5; the utilisation floor
			// 50/(20 × 0.8) = 3.1: 4.
			name: "concurrency makes a worker several servers",
			args: []string{"--arrival-rate", "50", "--service-time", "200ms", "--concurrency", "4", "--latency-target", "10ms"},
			want: map[string]any{"wait_floor": 5.0, "mean_wait_floor": 4.0, "utilization_floor": 4.0, "servers_per_worker": 4.0, "effective_per_worker": 20.0},
		},
		{
			// 18000 − 7.2 × 300 = 15840 at start; (12 + 8.8)/2.4 = 8.67: 9, + 2 safety.
			name: "start delay and safety",
			args: append([]string{"--start-delay", "5m", "--safety", "2"}, plannerExampleArgs...),
			want: map[string]any{"backlog_at_start": 15840.0, "drain_floor": 9.0, "recommended_workers": 11.0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := planJSON(t, tt.args...)
			for key, want := range tt.want {
				if doc[key] != want {
					t.Errorf("%s = %v, want %v", key, doc[key], want)
				}
			}
		})
	}
}

func TestPlanTextOutputs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		args   []string
		wants  []string
		absent []string
	}{
		{
			name: "table is the default and prints every section",
			args: plannerExampleArgs,
			wants: []string{
				"Recommended worker target: 10", "Inputs", "Queue metrics", "Worker plan", "Worker sensitivity",
				"Backlog burn-down", "Checkpoints", "Erlang C by pool size", "41m40s", "drain floor", "10 (target)",
			},
			absent: []string{"Warnings", "|"},
		},
		{
			name: "Erlang C example rows in the table",
			args: []string{"--arrival-rate", "50", "--service-time", "200ms", "--latency-target", "10ms", "--cap", "13", "--queue-name", "thumbnails"},
			wants: []string{
				"Capacity plan for thumbnails", "90.9 %", "68.2 %", "136.4 ms", "336.4 ms", "44.9 ms", "244.9 ms",
				"8.7 ms", "208.7 ms", "wait floor",
			},
		},
		{
			name: "markdown",
			args: append([]string{"--output", "markdown", "--cap", "8"}, plannerExampleArgs...),
			wants: []string{
				"# Capacity plan for (unnamed)", "## Worker plan", "| Plan point | Workers |", "| current | 8 |",
				"## Warnings", "Capped at 8", "## Erlang C by pool size",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runPlan(t, tt.args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			for _, w := range tt.wants {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(out, a) {
					t.Errorf("output has %q", a)
				}
			}
		})
	}
}

func TestPlanCSV(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPlan(t, append([]string{"--output", "csv"}, plannerExampleArgs...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := csv.NewReader(strings.NewReader(out))
	r.FieldsPerRecord = -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("read CSV: %v", err)
	}
	bySection := map[string][][]string{}
	for _, rec := range recs {
		bySection[rec[0]] = append(bySection[rec[0]], rec)
	}
	if bySection["section"] == nil {
		t.Fatal("no header rows")
	}
	var target, current []string
	for _, rec := range bySection["plan_points"] {
		switch rec[1] {
		case "target":
			target = rec
		case "current":
			current = rec
		}
	}
	// point, workers, net_drain, drain_seconds, utilization, note.
	if len(target) < 6 || target[2] != "10" || target[3] != "12" || target[4] != "1500" || target[5] != "0.5" {
		t.Errorf("target row %q, want 10 workers, net 12, 1500 s, 0.5", target)
	}
	if len(current) < 6 || current[4] != "2500" {
		t.Errorf("current row %q, want a 2500 s drain", current)
	}
	if n := len(bySection["burn_down"]); n < 30 {
		t.Errorf("CSV has %d burn-down samples, want every one", n)
	}
}

func TestPlanRejectsBadFlags(t *testing.T) {
	t.Parallel()
	base := []string{"--arrival-rate", "12", "--per-worker", "2.4"}
	tests := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"negative arrival rate", []string{"--arrival-rate", "-1", "--per-worker", "2"}, []string{"--arrival-rate"}},
		{"arrival rate missing", []string{"--per-worker", "2"}, []string{"--arrival-rate: required"}},
		{"zero throughput", []string{"--arrival-rate", "1", "--per-worker", "0"}, []string{"--per-worker"}},
		{"negative throughput", []string{"--arrival-rate", "1", "--per-worker", "-2"}, []string{"--per-worker"}},
		{"neither throughput nor service time", []string{"--arrival-rate", "1"}, []string{"--per-worker"}},
		{"both throughput and service time", append([]string{"--service-time", "200ms"}, base...), []string{"not both"}},
		{"zero service time", []string{"--arrival-rate", "1", "--service-time", "0s"}, []string{"--service-time"}},
		{"negative service time", []string{"--arrival-rate", "1", "--service-time", "-1s"}, []string{"--service-time"}},
		{"zero concurrency", []string{"--arrival-rate", "1", "--service-time", "1s", "--concurrency", "0"}, []string{"--concurrency"}},
		{"concurrency with throughput", append([]string{"--concurrency", "4"}, base...), []string{"--concurrency"}},
		{"zero utilisation", append([]string{"--utilization", "0"}, base...), []string{"--utilization"}},
		{"utilisation above one", append([]string{"--utilization", "1.2"}, base...), []string{"--utilization"}},
		{"utilisation as a percent", append([]string{"--utilization", "80"}, base...), []string{"--utilization"}},
		{"NaN arrival rate", []string{"--arrival-rate", "NaN", "--per-worker", "2"}, []string{"--arrival-rate"}},
		{"negative backlog", append([]string{"--backlog", "-5"}, base...), []string{"--backlog"}},
		{"zero drain target", append([]string{"--drain-target", "0s"}, base...), []string{"--drain-target"}},
		{"overhead of 100 %", append([]string{"--overhead", "100"}, base...), []string{"--overhead"}},
		// 12 msg/s at 2.4 × 1e-12 msg/s per worker: 5e12 workers, more than
		// any fleet holds; refused rather than printed as 2^31 − 1.
		{"overhead of 99.9999999999 %", append([]string{"--overhead", "99.9999999999"}, base...),
			[]string{"the target is more than 10,000,000 workers", "after 99.9999999999 % overhead", "--cap"}},
		{"a rate in the wrong unit", []string{"--arrival-rate", "3e7", "--per-worker", "2"}, []string{"more than any fleet holds"}},
		{"negative burst", append([]string{"--burst", "-10"}, base...), []string{"--burst"}},
		{"negative start delay", append([]string{"--start-delay", "-1m"}, base...), []string{"--start-delay"}},
		{"negative cap", append([]string{"--cap", "-1"}, base...), []string{"--cap"}},
		{"negative safety", append([]string{"--safety", "-1"}, base...), []string{"--safety"}},
		{"negative latency target", append([]string{"--latency-target", "-1s"}, base...), []string{"--latency-target"}},
		{"unknown output", append([]string{"--output", "xml"}, base...), []string{"--output", "xml"}},
		{"every problem at once", []string{"--arrival-rate", "-1", "--utilization", "2", "--output", "yaml"},
			[]string{"--arrival-rate", "--utilization", "--output", "--per-worker"}},
		{"not a number", append([]string{"--workers", "many"}, base...), []string{"-workers"}},
		{"stray argument", append([]string{"extra"}, base...), []string{"unexpected argument"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runPlan(t, tt.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, w := range tt.wants {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not name %q", errOut, w)
				}
			}
		})
	}
}

func TestPlanHelp(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPlan(t, "-h")
	if code != 0 || errOut != "" || !strings.Contains(out, "usage: checker plan") || !strings.Contains(out, "-latency-target") {
		t.Errorf("exit %d, help on stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(out, "to start 99 % of messages within it") || strings.Contains(out, "%%") {
		t.Errorf("help %q, want \"99 %% of messages\" with one percent sign", out)
	}
}

// A target past what any fleet holds is kept with a cap, which binds, and
// flagged: the first warning says so, and beyond_any_fleet is true.
func TestPlanBeyondAnyFleetWithACap(t *testing.T) {
	t.Parallel()
	doc := planJSON(t, "--arrival-rate", "12", "--per-worker", "2.4", "--overhead", "99.9999999999", "--cap", "50")
	warnings, _ := doc["warnings"].([]any)
	if doc["beyond_any_fleet"] != true || doc["planned_workers"] != 50.0 || doc["capped"] != true || len(warnings) == 0 ||
		!strings.HasPrefix(fmt.Sprint(warnings[0]), "the target is more than 10,000,000 workers") {
		t.Errorf("beyond_any_fleet %v, planned %v, capped %v, warnings %v; want true, 50, true and the first warning saying so",
			doc["beyond_any_fleet"], doc["planned_workers"], doc["capped"], warnings)
	}
}

// The price contract: the planner example's 10 workers at $0.0416 a worker-hour cost
// 10 × 0.0416 = $0.416 an hour and 0.416 × 730 = $303.68 a month; each
// promise row costs its workers × 0.0416 × 730, looser promises never
// need more workers, and the configured 10 s promise is the one marked.
func TestPlanWorkerCost(t *testing.T) {
	t.Parallel()
	doc := planJSON(t, append(plannerExampleArgs, "--worker-cost", "0.0416")...)
	cost, ok := doc["cost"].(map[string]any)
	if !ok {
		t.Fatalf("cost = %v, want an object", doc["cost"])
	}
	if h, m := cost["dollars_per_hour"].(float64), cost["dollars_per_month"].(float64); !near(h, 0.416) || !near(m, 303.68) {
		t.Errorf("cost %v, want $0.416 an hour and $303.68 a month", cost)
	}
	if doc := planJSON(t, plannerExampleArgs...); doc["cost"] != nil {
		t.Errorf("cost without --worker-cost = %v, want null", doc["cost"])
	}

	// 5 msg/s of 20 s messages is 100 busy workers; with no ceiling to
	// speak of, the promise alone sets the pool.
	doc = planJSON(t, "--arrival-rate", "5", "--service-time", "20s", "--utilization", "1",
		"--latency-target", "10s", "--worker-cost", "0.0416")
	rows, _ := doc["promise_costs"].([]any)
	if len(rows) != 9 {
		t.Fatalf("%d promise rows, want 9 (1s … 10m, the 10s target among them)", len(rows))
	}
	prev, current := 0.0, 0
	for i, x := range rows {
		r := x.(map[string]any)
		w, l := r["workers"].(float64), r["latency_seconds"].(float64)
		if d := r["dollars_per_month"].(float64); !near(d, w*0.0416*730) {
			t.Errorf("row %v: %v dollars a month, want %v × 0.0416 × 730", l, d, w)
		}
		if w <= 100 || (i > 0 && w > prev) {
			t.Errorf("row %v: %v workers (previous %v): want more than 100, never more for a looser promise", l, w, prev)
		}
		if r["current"] == true {
			current++
			if l != 10 {
				t.Errorf("row %v marked current, want 10", l)
			}
		}
		prev = w
	}
	if current != 1 || rows[0].(map[string]any)["workers"].(float64) <= prev {
		t.Errorf("current rows %d (want 1); a 1 s promise must cost more than a 10 min one", current)
	}
	code, _, errOut := runPlan(t, append(plannerExampleArgs, "--worker-cost", "-1")...)
	if code != 2 || !strings.Contains(errOut, "--worker-cost") {
		t.Errorf("negative price: exit %d, %q; want 2 naming --worker-cost", code, errOut)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
