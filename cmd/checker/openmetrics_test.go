package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// omSuffixes are the sample name suffixes OpenMetrics allows each family
// type ("" is the family's own name).
var omSuffixes = map[string][]string{
	"counter":        {"_total", "_created"},
	"gauge":          {""},
	"unknown":        {""},
	"info":           {"_info"},
	"stateset":       {""},
	"histogram":      {"_bucket", "_count", "_sum", "_created"},
	"gaugehistogram": {"_gbucket", "_gcount", "_gsum"},
	"summary":        {"", "_count", "_sum", "_created"},
}

// checkOpenMetrics holds an exposition to OpenMetrics 1.0's rules on
// metric families, the ones a strict parser refuses: a family's metadata
// comes before its samples, and once; no two families share a name; a
// family's samples are together and named as its type allows; the text
// ends with # EOF. It returns the sample names it read.
func checkOpenMetrics(text string) (samples []string, problems []string) {
	body, ok := strings.CutSuffix(text, "# EOF\n")
	if !ok {
		return nil, []string{"does not end with # EOF"}
	}
	types := map[string]string{}
	closed := map[string]bool{}
	family, inSamples := "", false
	for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		at := fmt.Sprintf("line %d: %q", i+1, line)
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			fields := strings.SplitN(rest, " ", 3)
			if len(fields) < 3 || (fields[0] != "TYPE" && fields[0] != "HELP" && fields[0] != "UNIT") {
				problems = append(problems, at+": not TYPE, HELP or UNIT")
				continue
			}
			name := fields[1]
			if name != family {
				if family != "" {
					closed[family] = true
				}
				if closed[name] {
					problems = append(problems, at+": family "+name+" again, after another (a clash of two families of one name)")
				}
				family, inSamples = name, false
			} else if inSamples {
				problems = append(problems, at+": metadata after the family's samples")
			}
			if fields[0] == "TYPE" {
				if _, ok := omSuffixes[fields[2]]; !ok {
					problems = append(problems, at+": unknown type")
				}
				types[name] = fields[2]
			}
			continue
		}
		name, _, _ := strings.Cut(line, " ")
		name, _, _ = strings.Cut(name, "{")
		samples = append(samples, name)
		inSamples = true
		typ, ok := types[family]
		if !ok {
			typ = "unknown"
		}
		if !slices.ContainsFunc(omSuffixes[typ], func(s string) bool { return name == family+s }) {
			problems = append(problems, fmt.Sprintf("%s: sample %s outside family %s (a %s)", at, name, family, typ))
		}
	}
	return samples, problems
}

// TestCheckOpenMetricsRefusesTheClash: the check refuses what the Go
// collector's default series expose (a gauge and a counter of one family
// name), and what is wrong in other ways.
func TestCheckOpenMetricsRefusesTheClash(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, text, want string }{
		{"the Go collector's clash", "# TYPE go_memstats_alloc_bytes gauge\ngo_memstats_alloc_bytes 1\n# TYPE go_memstats_alloc_bytes counter\ngo_memstats_alloc_bytes_total 2\n# EOF\n", "metadata after the family's samples"},
		{"a family again", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# TYPE a gauge\na{x=\"1\"} 2\n# EOF\n", "family a again"},
		{"no EOF", "# TYPE a gauge\na 1\n", "does not end with # EOF"},
		{"a counter without _total", "# TYPE a counter\na 1\n# EOF\n", "outside family a"},
		{"interleaved", "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x=\"1\"} 2\n# EOF\n", "outside family b"},
		{"metadata after samples", "# TYPE a gauge\na 1\n# HELP a late\n# EOF\n", "metadata after"},
		{"fine", "# HELP a_total x\n# TYPE a counter\na_total 1\na_created 1\n# TYPE b histogram\nb_bucket{le=\"+Inf\"} 1\nb_sum 1\nb_count 1\n# EOF\n", ""},
	} {
		_, problems := checkOpenMetrics(tt.text)
		got := strings.Join(problems, "\n")
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: problems %q, want one with %q", tt.name, got, tt.want)
		}
	}
}

// TestMetricsAreOpenMetrics: the demo's /metrics, asked for OpenMetrics,
// keeps OpenMetrics' rules on families (checkOpenMetrics, and Python's
// prometheus_client parser where it is installed: Debian's
// python3-prometheus-client), and drops none of the series of the text
// format; the Go runtime's series are the Go collector's defaults but the
// clashing counter, which comes under its runtime/metrics name.
func TestMetricsAreOpenMetrics(t *testing.T) {
	logs := &syncBuffer{}
	done := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// One cycle at once, the next 100 s later: the series stay put
		// between the scrapes compared. The test stops it when done; a
		// loaded machine may take seconds to the first cycle.
		done <- run(ctx, []string{"demo", "--listen", "127.0.0.1:0", "--speed", "0.01", "--interval", "1s", "--for", "60s"}, io.Discard, logs)
	}()
	defer func() { cancel(); <-done }()
	addr := listenAddr(t, logs, 10*time.Second)
	scrape := func(accept string) (string, string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/metrics", nil)
			req.Header.Set("Accept", accept)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			// Wait for the first decision's series, the groups' among them.
			if strings.Contains(string(body), "checker_last_success_timestamp_seconds") && strings.Contains(string(body), "checker_group_workers{") ||
				time.Now().After(deadline) {
				return resp.Header.Get("Content-Type"), string(body)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ctype, om := scrape("application/openmetrics-text; version=1.0.0; charset=utf-8")
	if !strings.HasPrefix(ctype, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q, want OpenMetrics", ctype)
	}
	omSamples, problems := checkOpenMetrics(om)
	for _, p := range problems {
		t.Error(p)
	}
	py := ""
	for _, p := range []string{"python3", "/usr/bin/python3"} { // Debian's, where another python3 comes first
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import prometheus_client.openmetrics.parser").Run() == nil {
			py = path
			break
		}
	}
	if py != "" {
		cmd := exec.Command(py, "-c", "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as parse\nprint(len(list(parse(sys.stdin.read()))))")
		cmd.Stdin = strings.NewReader(om)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("Python's prometheus_client refuses /metrics: %v\n%s", err, out)
		} else {
			t.Logf("Python's prometheus_client reads %s families", strings.TrimSpace(string(out)))
		}
	} else {
		t.Log("Python's prometheus_client is not installed (python3-prometheus-client): checked by the rules alone")
	}

	_, text := scrape("text/plain")
	var textSamples []string
	for _, line := range strings.Split(text, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			name, _, _ := strings.Cut(line, " ")
			name, _, _ = strings.Cut(name, "{")
			textSamples = append(textSamples, name)
		}
	}
	for _, name := range textSamples {
		if !slices.Contains(omSamples, name) {
			t.Errorf("%s is in the text format, not in OpenMetrics", name)
		}
	}
	for _, want := range []string{"go_memstats_alloc_bytes", "go_memstats_heap_alloc_bytes", "go_gc_heap_allocs_bytes_total", "go_goroutines", "process_cpu_seconds_total", "checker_build_info", "checker_last_success_timestamp_seconds", "checker_group_workers"} {
		if !slices.Contains(omSamples, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// The Go runtime's families: the default collector's, less the
	// counter that clashes, plus the same value under its runtime/metrics
	// name.
	families := func(g prometheus.Gatherer) []string {
		mfs, err := g.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, mf := range mfs {
			if strings.HasPrefix(mf.GetName(), "go_") {
				names = append(names, mf.GetName())
			}
		}
		return names
	}
	def := prometheus.NewRegistry()
	def.MustRegister(collectors.NewGoCollector())
	base, err := newBaseRegistry()
	if err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(families(def), func(n string) bool { return n == openMetricsClash })
	want = append(want, "go_gc_heap_allocs_bytes_total")
	slices.Sort(want)
	if got := families(base); !slices.Equal(got, want) {
		t.Errorf("the Go runtime's families\n got %v\nwant %v", got, want)
	}
}
