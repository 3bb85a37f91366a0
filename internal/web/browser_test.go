package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// The browser test: the checker's demo in headless Chromium, as an on-call
// engineer would open it. It needs Debian's chromium package; CI installs
// it. Screenshots go to $CHECKER_ARTIFACTS (a temporary directory when
// unset).

const chromiumPath = "/usr/bin/chromium"

// httpClient fetches from the demo beside the browser, never for long.
var httpClient = &http.Client{Timeout: 15 * time.Second}

func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CHECKER_SKIP_BROWSER") != "" {
			t.Skipf("no Chromium at %s and CHECKER_SKIP_BROWSER is set", chromiumPath)
		}
		t.Fatalf("the browser test needs headless Chromium at %s: apt-get install chromium "+
			"(set CHECKER_SKIP_BROWSER=1 to skip this test)", chromiumPath)
	}
	artifacts := os.Getenv("CHECKER_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	} else if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatalf("artifacts directory: %v", err)
	}

	base := startDemo(t)
	ctx := newBrowser(t)
	watch := watchTab(t, ctx, base)

	t.Run("status page shows the API's numbers", func(t *testing.T) {
		testStatusPage(t, ctx, base)
	})
	t.Run("the page says how old its figures are, and never names a time past as expected", func(t *testing.T) {
		testAgesAndTimes(t, ctx, base)
	})
	t.Run("a late cycle, a stale minute, a job under way and a late message, as on-call meets them", func(t *testing.T) {
		testMisleadingMoments(t, ctx)
	})
	t.Run("the promise's error budget, kept, overspent and roughly estimated", func(t *testing.T) {
		testPromiseBudget(t, ctx)
	})
	t.Run("formatting in the page matches the server's", func(t *testing.T) {
		testFormatParity(t, ctx)
	})
	t.Run("the knee chart's arithmetic matches the server's", func(t *testing.T) {
		testKneeParity(t, ctx)
	})
	t.Run("status page without JavaScript", func(t *testing.T) {
		testNoScript(t, ctx, base)
	})
	t.Run("planner computes the worked example", func(t *testing.T) {
		watch.expectError("utilization=1.5")
		testPlanner(t, ctx, base)
	})
	t.Run("planner prices the promise", func(t *testing.T) {
		testPromisePrice(t, ctx, base)
	})
	t.Run("screenshots", func(t *testing.T) {
		for _, s := range []struct {
			name, path string
			width      int64
			phone      bool
			dark       bool
		}{
			{"status-desktop", "/", 1280, false, false},
			{"status-phone", "/", 390, true, false},
			{"status-desktop-dark", "/", 1280, false, true},
			{"plan-desktop", "/plan?" + exampleQuery, 1280, false, false},
			{"plan-phone", "/plan?" + exampleQuery, 390, true, false},
			{"plan-promise-desktop", "/plan?" + promiseQuery + "#promise-title", 1280, false, false},
			{"plan-promise-phone", "/plan?" + promiseQuery + "#promise-title", 390, true, false},
		} {
			file := filepath.Join(artifacts, s.name+".png")
			screenshot(t, ctx, base+s.path, s.width, s.phone, s.dark, file)
			t.Logf("screenshot: %s", file)
		}
	})
	watch.check(t)
}

// ---- The checker under test.

// startDemo builds the checker, starts `checker demo` on a free port and
// returns its base URL; the demo is stopped with SIGTERM when the test
// ends, and must exit cleanly.
func startDemo(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "checker")
	build := exec.Command(goTool(), "build", "-o", bin, "github.com/queuechecker/queue-checker/cmd/checker")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the checker: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "demo", "--listen", "127.0.0.1:0", "--speed", "10")
	setParentDeathSignal(cmd)
	logs := &lineLog{addr: make(chan string, 1)}
	cmd.Stderr = logs
	cmd.Stdout = logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the demo: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() error {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return fmt.Errorf("signal the demo: %w", err)
		}
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			return errors.New("the demo did not stop within 15 s of SIGTERM")
		}
	}

	select {
	case addr := <-logs.addr:
		t.Cleanup(func() {
			if err := stop(); err != nil {
				t.Errorf("stop the demo: %v\n%s", err, logs.tail())
			}
		})
		t.Logf("checker demo listens on %s", addr)
		return "http://" + addr
	case err := <-done:
		t.Fatalf("the demo exited before listening: %v\n%s", err, logs.tail())
	case <-time.After(90 * time.Second):
		_ = stop()
		t.Fatalf("the demo logged no \"listening\" line within 90 s\n%s", logs.tail())
	}
	return ""
}

// goTool is the go command: the one on PATH, else the one in GOROOT.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}

// lineLog keeps the last lines a process writes and reports the address of
// its JSON "listening" line.
type lineLog struct {
	mu    sync.Mutex
	buf   []byte
	lines []string
	addr  chan string
	found bool
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		l.lines = append(l.lines, line)
		if len(l.lines) > 40 {
			l.lines = l.lines[1:]
		}
		var entry struct {
			Msg  string `json:"msg"`
			Addr string `json:"addr"`
		}
		if !l.found && json.Unmarshal([]byte(line), &entry) == nil && entry.Msg == "listening" && entry.Addr != "" {
			l.found = true
			l.addr <- entry.Addr
		}
	}
	return len(p), nil
}

func (l *lineLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(append(l.lines, string(l.buf)), "\n")
}

// ---- The browser.

func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// within runs actions with a deadline, on the tab of ctx.
func within[T any](t *testing.T, ctx context.Context, d time.Duration, a chromedp.Action[T]) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := chromedp.Run(tctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}

// tabWatch records what a tab must never do: throw, log an error, or load
// anything from outside the checker.
type tabWatch struct {
	mu       sync.Mutex
	problems []string
	expected []string // URLs that are meant to answer with an error
}

// expectError allows a failed load of a URL containing part: a page the
// test sends bad input to on purpose.
func (w *tabWatch) expectError(part string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.expected = append(w.expected, part)
}

func (w *tabWatch) isExpected(url string) bool {
	for _, e := range w.expected {
		if strings.Contains(url, e) {
			return true
		}
	}
	return false
}

func watchTab(t *testing.T, ctx context.Context, base string) *tabWatch {
	t.Helper()
	w := &tabWatch{}
	add := func(s string) {
		w.mu.Lock()
		w.problems = append(w.problems, s)
		w.mu.Unlock()
	}
	expected := func(url string) bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.isExpected(url)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			add("JavaScript exception: " + e.ExceptionDetails.Text + describeException(e.ExceptionDetails))
		case *cdpruntime.EventConsoleAPICalled:
			if e.Type == cdpruntime.ConsoleAPICalledTypeError {
				add("console error")
			}
		case *cdplog.EventEntryAdded:
			if e.Entry != nil && e.Entry.Level == cdplog.EntryLevelError && !expected(e.Entry.URL) {
				add("browser log error: " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			if u := e.Request.URL; !strings.HasPrefix(u, base+"/") && u != base {
				add("request outside the checker: " + u)
			}
		}
	})
	if err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("enable the network domain: %v", err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, struct{}{}); err != nil {
		t.Fatalf("enable the log domain: %v", err)
	}
	return w
}

func describeException(d *cdpruntime.ExceptionDetails) string {
	if d.Exception != nil && d.Exception.Description != "" {
		return ": " + d.Exception.Description
	}
	return fmt.Sprintf(" at %s:%d:%d", d.URL, d.LineNumber, d.ColumnNumber)
}

func (w *tabWatch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.problems {
		t.Errorf("%s", p)
	}
}

// ---- The status page.

// pageSnapshot is what the page shows, read in one go.
type pageSnapshot struct {
	Applied int `json:"applied"`
	Fields  []struct {
		Group, Field, Fmt, Null, Text string
	} `json:"fields"`
	DocFields []struct {
		Field, Text string
	} `json:"docFields"`
	Charts []struct {
		Group, Chart     string
		Paths            map[string]string
		YLabels, XLabels []string
		Desc             string
		RefHidden        bool
		RefY             string
		RefLabel         string
	} `json:"charts"`
	Knees []struct {
		Group, Chart     string
		Dots             []string // "class cx,cy r"
		YLabels, XLabels []string
		Desc             string
		CeilingHidden    bool
		CeilingX         string
		LabelX, Anchor   string
		Label            string
		NoData           bool
		KeyHidden        bool
	} `json:"knees"`
	Lists []struct {
		Group, List string
		Rows        []string
	} `json:"lists"`
	Last json.RawMessage `json:"last"`
}

// snapshotJS reads every hook of the page: the fields, the charts and the
// lists, with the document the page's script rendered them from.
const snapshotJS = `(() => {
  const groupOf = (e) => e.closest("[data-group]")?.getAttribute("data-group") ?? null;
  const out = { applied: window.checker ? window.checker.applied : 0, fields: [], docFields: [], charts: [], knees: [], lists: [],
    last: window.checker && window.checker.last ? window.checker.last : null };
  document.querySelectorAll("[data-group] [data-field]").forEach((e) => out.fields.push({
    Group: groupOf(e), Field: e.getAttribute("data-field"), Fmt: e.getAttribute("data-fmt"),
    Null: e.getAttribute("data-null") || "", Text: e.textContent }));
  document.querySelectorAll("[data-doc-field]").forEach((e) => out.docFields.push({
    Field: e.getAttribute("data-doc-field"), Text: e.textContent }));
  document.querySelectorAll("[data-group] [data-chart]").forEach((f) => {
    const paths = {};
    f.querySelectorAll("[data-series]").forEach((p) => { paths[p.getAttribute("data-series")] = p.getAttribute("d") || ""; });
    const ref = f.querySelector("[data-ref]");
    out.charts.push({ Group: groupOf(f), Chart: f.getAttribute("data-chart"), Paths: paths,
      YLabels: [...f.querySelectorAll("[data-ylabel]")].map((x) => x.textContent),
      XLabels: [...f.querySelectorAll("[data-xlabel]")].map((x) => x.textContent),
      Desc: f.querySelector("[data-desc]").textContent,
      RefHidden: ref.hasAttribute("hidden"), RefY: ref.getAttribute("y1"),
      RefLabel: f.querySelector("[data-ref-label]").textContent });
  });
  document.querySelectorAll("[data-group] [data-knee]").forEach((f) => {
    const line = f.querySelector("[data-ceiling]"), label = f.querySelector("[data-ceiling-label]");
    out.knees.push({ Group: groupOf(f), Chart: f.getAttribute("data-knee"),
      Dots: [...f.querySelectorAll("[data-points] circle")].map((c) =>
        c.getAttribute("class") + " " + c.getAttribute("cx") + "," + c.getAttribute("cy") + " " + c.getAttribute("r")),
      YLabels: [...f.querySelectorAll("[data-ylabel]")].map((x) => x.textContent),
      XLabels: [...f.querySelectorAll("[data-xlabel]")].map((x) => x.textContent),
      Desc: f.querySelector("[data-desc]").textContent,
      CeilingHidden: line.hasAttribute("hidden"), CeilingX: line.getAttribute("x1"),
      LabelX: label.getAttribute("x"), Anchor: label.getAttribute("text-anchor"), Label: label.textContent,
      NoData: !f.querySelector("[data-nodata]").hasAttribute("hidden"),
      KeyHidden: f.querySelector("[data-ceiling-key]").hasAttribute("hidden") });
  });
  document.querySelectorAll("[data-group] [data-list]").forEach((l) => out.lists.push({
    Group: groupOf(l), List: l.getAttribute("data-list"),
    Rows: [...l.children].map((r) => r.children.length
      ? [...r.children].map((c) => c.textContent.replace(/\s+/g, " ").trim()).join(" | ")
      : r.textContent.replace(/\s+/g, " ").trim()) }));
  return out;
})()`

// apiDoc is /api/v1/groups in both its typed and its generic JSON forms.
type apiDoc struct {
	typed   groupsDoc
	generic []map[string]any
	raw     []byte
}

func parseDoc(b []byte) (apiDoc, error) {
	d := apiDoc{raw: b}
	if err := json.Unmarshal(b, &d.typed); err != nil {
		return d, fmt.Errorf("decode groups: %w", err)
	}
	var g struct {
		Groups []map[string]any `json:"groups"`
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return d, fmt.Errorf("decode groups: %w", err)
	}
	d.generic = g.Groups
	return d, nil
}

func fetchDoc(t *testing.T, base string) apiDoc {
	t.Helper()
	resp, err := httpClient.Get(base + "/api/v1/groups")
	if err != nil {
		t.Fatalf("get /api/v1/groups: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("get /api/v1/groups: %d %v", resp.StatusCode, err)
	}
	d, err := parseDoc(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (d apiDoc) group(name string) (map[string]any, groupDoc, bool) {
	for i, g := range d.typed.Groups {
		if g.Name == name {
			return d.generic[i], g, true
		}
	}
	return nil, groupDoc{}, false
}

// fieldMismatches lists the page's fields that do not read as the server
// writes the same fields of doc.
func fieldMismatches(s pageSnapshot, doc apiDoc) []string {
	var out []string
	for _, f := range s.Fields {
		g, _, ok := doc.group(f.Group)
		if !ok {
			out = append(out, fmt.Sprintf("group %q is on the page but not in the document", f.Group))
			continue
		}
		if want := formatField(g, f.Field, f.Fmt, f.Null); f.Text != want {
			out = append(out, fmt.Sprintf("%s %s: page shows %q, the document says %q", f.Group, f.Field, f.Text, want))
		}
	}
	return out
}

func testStatusPage(t *testing.T, ctx context.Context, base string) {
	within(t, ctx, 30*time.Second, chromedp.Navigate(base+"/"))
	// Wait for the charts: every group's backlog chart has a line, and the
	// script has refreshed the page at least once.
	within(t, ctx, 90*time.Second, chromedp.Poll[bool](`(() => {
	  const groups = document.querySelectorAll("section.group").length;
	  const drawn = [...document.querySelectorAll('section.group [data-chart="backlog"] path[data-series]')]
	    .filter((p) => /[LH]/.test(p.getAttribute("d") || "")).length;
	  return groups > 0 && drawn === groups && !!window.checker && window.checker.applied > 0;
	})()`, chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(90*time.Second)))

	var lastProblems []string
	matched := false
	for attempt := 0; attempt < 20 && !matched; attempt++ {
		before := fetchDoc(t, base)
		// The page refreshes now from /api/v1/groups; the snapshot is taken
		// when that refresh is applied.
		raw := within(t, ctx, 30*time.Second, chromedp.Evaluate[json.RawMessage](
			`window.checker.refresh().then(() => `+snapshotJS+`)`, chromedp.EvalAwaitPromise))
		after := fetchDoc(t, base)
		var snap pageSnapshot
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatalf("decode the page snapshot: %v", err)
		}
		if len(snap.Fields) == 0 || len(snap.Charts) == 0 || len(snap.Knees) != len(snap.Charts)/len(charts) {
			t.Fatalf("the page has %d fields, %d charts and %d knee charts", len(snap.Fields), len(snap.Charts), len(snap.Knees))
		}
		rendered, err := parseDoc(snap.Last)
		if err != nil {
			t.Fatalf("the page's last document: %v", err)
		}
		// The page's script draws exactly what the server draws from the
		// same document.
		checkAgainstRendered(t, snap, rendered)
		if len(rendered.typed.Groups) != len(before.typed.Groups) {
			t.Fatalf("the page shows %d groups, the API %d", len(rendered.typed.Groups), len(before.typed.Groups))
		}
		// And the numbers are the API's, fetched in the same moment: the
		// document just before the page's refresh, or the one just after.
		a, b := fieldMismatches(snap, before), fieldMismatches(snap, after)
		switch {
		case len(a) == 0 || len(b) == 0:
			matched = true
			t.Logf("the %d numbers on the page match /api/v1/groups (attempt %d)", len(snap.Fields), attempt+1)
			dots := 0
			for _, k := range snap.Knees {
				dots += len(k.Dots)
			}
			t.Logf("the knee charts show %d good minutes", dots)
		default:
			lastProblems = b
		}
	}
	if !matched {
		t.Errorf("the page's numbers never matched /api/v1/groups fetched around a refresh:\n%s",
			strings.Join(lastProblems, "\n"))
	}
}

// testAgesAndTimes reads the status page in the browser after its script
// has refreshed it a few times: every group's backlog, arrival rate and
// oldest age say how old they are ("counted 3 s ago"), the planner link
// says what it carries, the promise included (99.0 % within the latency),
// and no forecast note names as expected a time before the page's own.
func testAgesAndTimes(t *testing.T, ctx context.Context, base string) {
	within(t, ctx, 30*time.Second, chromedp.Navigate(base+"/"))
	within(t, ctx, 60*time.Second, chromedp.Poll[bool](`!!window.checker && window.checker.applied > 1`,
		chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(60*time.Second)))
	type groupText struct {
		Name, Sample, Arrival, Oldest, Carries, Forecast, Generated string
	}
	var seenForecast bool
	for round := range 3 {
		texts := within(t, ctx, 30*time.Second, chromedp.Evaluate[[]groupText](`window.checker.refresh().then(() =>
		  [...document.querySelectorAll("section.group")].map((s) => ({
		    Name: s.dataset.group,
		    Sample: (s.querySelector('[data-age="sample"]') || {}).textContent || "",
		    Arrival: (s.querySelector('[data-age="arrival_rate"]') || {}).textContent || "",
		    Oldest: (s.querySelector('[data-age="oldest_age"]') || {}).textContent || "",
		    Carries: (s.querySelector("[data-plan-carries]") || {}).textContent || "",
		    Forecast: (() => { const n = s.querySelector('[data-show="forecast_note"]'); return n && !n.hidden ? n.textContent : ""; })(),
		    Generated: (document.querySelector('[data-doc-field="generated_at"]') || {}).textContent || "",
		  })))`, chromedp.EvalAwaitPromise))
		if len(texts) == 0 {
			t.Fatal("the page shows no group")
		}
		ago := regexp.MustCompile(`^(counted|estimated) [0-9.]+ (ms|s) ago$|^(counted|estimated) [0-9hms]+ ago$`)
		clock := regexp.MustCompile(`(?:expected at|from) (\d\d:\d\d:\d\d)`)
		for _, g := range texts {
			sample, arrival := strings.Join(strings.Fields(g.Sample), " "), strings.Join(strings.Fields(g.Arrival), " ")
			if !ago.MatchString(sample) || !ago.MatchString(arrival) {
				t.Errorf("round %d, %s: figures' ages %q and %q, want \"counted N ago\" and \"estimated N ago\"", round, g.Name, sample, arrival)
			}
			if o := strings.Join(strings.Fields(g.Oldest), " "); !strings.HasPrefix(o, "read ") {
				t.Errorf("round %d, %s: the oldest age's age reads %q", round, g.Name, o)
			}
			if c := strings.Join(strings.Fields(g.Carries), " "); !strings.Contains(c, "99.0 % of messages within") || !strings.Contains(c, "arrival rate") {
				t.Errorf("round %d, %s: the planner link says %q, want what it carries and the promise", round, g.Name, c)
			}
			if g.Forecast == "" {
				continue
			}
			seenForecast = true
			gen, err := time.Parse("15:04:05", strings.TrimSpace(g.Generated))
			if err != nil {
				t.Fatalf("the page's time %q: %v", g.Generated, err)
			}
			for _, m := range clock.FindAllStringSubmatch(g.Forecast, -1) {
				at, _ := time.Parse("15:04:05", m[1])
				if d := gen.Sub(at); d > 0 && d < 12*time.Hour {
					t.Errorf("round %d, %s: the forecast note %q names %s as expected at %s", round, g.Name, g.Forecast, m[1], g.Generated)
				}
			}
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("forecast notes seen: %t", seenForecast)
}

// checkAgainstRendered holds every hook of the page to what the server
// writes from the document the page's script rendered.
func checkAgainstRendered(t *testing.T, snap pageSnapshot, doc apiDoc) {
	t.Helper()
	for _, m := range fieldMismatches(snap, doc) {
		t.Errorf("script and server disagree: %s", m)
	}
	for _, f := range snap.DocFields {
		if want := formatClock(doc.typed.GeneratedAt); f.Field != "generated_at" || f.Text != want {
			t.Errorf("page field %s shows %q, want %q", f.Field, f.Text, want)
		}
	}
	for _, c := range snap.Charts {
		g, typed, ok := doc.group(c.Group)
		if !ok {
			t.Errorf("chart of unknown group %q", c.Group)
			continue
		}
		var spec *chartSpec
		for i := range charts {
			if charts[i].ID == c.Chart {
				spec = &charts[i]
			}
		}
		if spec == nil {
			t.Errorf("unknown chart %q", c.Chart)
			continue
		}
		want := renderChart(*spec, g, typed.History, doc.typed.GeneratedAt)
		for _, p := range want.Paths {
			if got := c.Paths[p.Key]; got != p.D {
				t.Errorf("%s chart %s, series %s: the script drew\n%q\nthe server draws\n%q", c.Group, c.Chart, p.Key, got, p.D)
			}
		}
		if strings.Join(c.YLabels, "|") != strings.Join(want.YLabels[:], "|") ||
			strings.Join(c.XLabels, "|") != strings.Join(want.XLabels[:], "|") {
			t.Errorf("%s chart %s: axis labels %v %v, want %v %v", c.Group, c.Chart, c.YLabels, c.XLabels, want.YLabels, want.XLabels)
		}
		if c.Desc != want.Desc {
			t.Errorf("%s chart %s: text alternative %q, want %q", c.Group, c.Chart, c.Desc, want.Desc)
		}
		if c.RefHidden != (want.Ref == nil) || (want.Ref != nil && (c.RefLabel != want.Ref.Label || c.RefY != fmt.Sprint(want.RefY))) {
			t.Errorf("%s chart %s: reference line hidden=%v at %s %q, want %+v at %v", c.Group, c.Chart, c.RefHidden, c.RefY, c.RefLabel, want.Ref, want.RefY)
		}
	}
	for _, k := range snap.Knees {
		g, typed, ok := doc.group(k.Group)
		if !ok || k.Chart != knee.ID {
			t.Errorf("knee chart %q of unknown group %q", k.Chart, k.Group)
			continue
		}
		want := renderKnee(knee, g, typed.FleetMinutes)
		var dots []string
		for _, p := range want.Points {
			class := "dot"
			if p.Saturated {
				class += " sat"
			}
			dots = append(dots, fmt.Sprintf("%s %s,%s %d", class, p.X, p.Y, knee.Radius))
		}
		if strings.Join(k.Dots, "|") != strings.Join(dots, "|") {
			t.Errorf("%s knee chart: the script drew the dots\n%q\nthe server draws\n%q", k.Group, k.Dots, dots)
		}
		if strings.Join(k.YLabels, "|") != strings.Join(want.YLabels[:], "|") ||
			strings.Join(k.XLabels, "|") != strings.Join(want.XLabels[:], "|") {
			t.Errorf("%s knee chart: axis labels %v %v, want %v %v", k.Group, k.YLabels, k.XLabels, want.YLabels, want.XLabels)
		}
		if k.Desc != want.Desc {
			t.Errorf("%s knee chart: text alternative %q, want %q", k.Group, k.Desc, want.Desc)
		}
		wantLabel := ""
		if want.Ceiling != nil {
			wantLabel = want.Ceiling.Label
		}
		if k.CeilingHidden != (want.Ceiling == nil) || k.KeyHidden != (want.Ceiling == nil) || k.CeilingX != want.CeilingX || k.LabelX != want.CeilingLabelX ||
			k.Anchor != want.CeilingAnchor || k.Label != wantLabel {
			t.Errorf("%s knee chart: ceiling hidden=%v at %s, label %q at %s %s; want %+v at %s, label at %s %s",
				k.Group, k.CeilingHidden, k.CeilingX, k.Label, k.LabelX, k.Anchor, want.Ceiling, want.CeilingX,
				want.CeilingLabelX, want.CeilingAnchor)
		}
		if k.NoData != want.Empty {
			t.Errorf("%s knee chart: \"No data yet\" shown %v, want %v", k.Group, k.NoData, want.Empty)
		}
	}
	for _, l := range snap.Lists {
		_, typed, ok := doc.group(l.Group)
		if !ok {
			continue
		}
		n := -1
		switch l.List {
		case "failures":
			n = len(typed.Failures)
		case "changes":
			n = len(typed.Changes)
		case "decision.reasons":
			if typed.Decision != nil {
				n = len(typed.Decision.Reasons)
			}
		}
		if n > 0 && len(l.Rows) != n {
			t.Errorf("%s list %s has %d rows, the document %d", l.Group, l.List, len(l.Rows), n)
		}
		if l.List == "changes" && n > 0 {
			c := typed.Changes[len(typed.Changes)-1]
			want := formatClock(c.At) + " | " + formatNumber(float64(c.From)) + " → " + formatNumber(float64(c.To)) +
				" | " + strings.Join(c.Reasons, "; ")
			if l.Rows[0] != want {
				t.Errorf("%s: the newest change reads %q, want %q", l.Group, l.Rows[0], want)
			}
		}
	}
}

// testFormatParity holds the script's number formats to the server's on
// values that exercise every branch and rounding tie.
func testFormatParity(t *testing.T, ctx context.Context) {
	values := []float64{0, 1, -1, 0.5, 0.125, 0.0625, 0.03125, 0.333333, 0.00012345, 0.0000123, 2.4, 12.25,
		12.35, 99.995, 100.25, 1234.55, 9999.95, 10000, 18000, 123456.5, 1e15, 1.2345e16, -2500.5, 0.000049,
		0.00005, 0.0625e-3, 59.94, 59.95, 59.96, 60, 89.5, 2500, 3599.5, 86399.5, 86400, 86430, 90061,
		1000 * 86400, 2e9, 1.005, 0.8, 0.625, 1.2, 0.0005, 0.00049}
	in, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	raw := within(t, ctx, 10*time.Second, chromedp.Evaluate[[][3]string](
		`(`+string(in)+`).map((v) => [window.checker.fmt.number(v), window.checker.fmt.seconds(v), window.checker.fmt.percent(v)])`))
	for i, v := range values {
		want := [3]string{formatNumber(v), formatSeconds(v), formatPercent(v)}
		if raw[i] != want {
			t.Errorf("formats of %v: the script writes %q, the server %q", v, raw[i], want)
		}
	}
	times := []string{"2025-03-14T09:00:00Z", "2025-03-14T09:00:00.1239999Z", "2025-03-14T23:59:59.999999999Z",
		"2025-03-14T10:30:00.5+02:00"}
	ms := within(t, ctx, 10*time.Second, chromedp.Evaluate[[]int64](
		`(`+mustJSON(t, times)+`).map((s) => window.checker.fmt.parseMs(s))`))
	for i, s := range times {
		at, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		if ms[i] != at.UnixMilli() {
			t.Errorf("time %s: the script reads %d ms, the server %d", s, ms[i], at.UnixMilli())
		}
	}
}

// testKneeParity holds the script's knee chart to the server's on groups
// of known minutes, with and without a ceiling: the demo's fleets have no
// downstream limit, and they have no good minute in the test's first
// seconds.
func testKneeParity(t *testing.T, ctx context.Context) {
	var many []readmodel.FleetMinute
	for i := range 30 {
		many = append(many, readmodel.FleetMinute{Workers: 1.5 + float64(i)*0.37, Completions: 3 * math.Sqrt(float64(i)),
			Saturated: i%3 == 0})
	}
	cases := []struct {
		minutes []readmodel.FleetMinute
		ceiling any
	}{
		{minutes: nil, ceiling: nil},
		{minutes: many[:1], ceiling: nil},
		{minutes: many[:7], ceiling: 3.0},
		{minutes: many, ceiling: 9.0},
		{minutes: many, ceiling: 40.0},
		{minutes: []readmodel.FleetMinute{{Workers: 12.345, Completions: 0.0625}, {Workers: -1, Completions: 2}}, ceiling: 0.0},
	}
	type drawn struct {
		YLabels, XLabels []string
		Points           []struct {
			X, Y string
			Sat  bool
		}
		Empty         bool
		Ceiling       *string
		CeilingX      string
		CeilingLabelX string
		CeilingAnchor string
		Desc          string
	}
	var groups []map[string]any
	for _, c := range cases {
		g := map[string]any{"fleet_minutes": c.minutes,
			"decision": map[string]any{"measured": map[string]any{"ceiling_workers": c.ceiling}}}
		if c.minutes == nil {
			g["fleet_minutes"] = []readmodel.FleetMinute{}
		}
		groups = append(groups, g)
	}
	got := within(t, ctx, 10*time.Second, chromedp.Evaluate[[]drawn](
		`(`+mustJSON(t, groups)+`).map((g) => window.checker.renderKnee(JSON.parse(document.getElementById("checker-config").textContent).knee, g))`))
	for i, g := range groups {
		generic := asGeneric(t, g)
		want := renderKnee(knee, generic, cases[i].minutes)
		w := drawn{YLabels: want.YLabels[:], XLabels: want.XLabels[:], Empty: want.Empty, CeilingX: want.CeilingX,
			CeilingLabelX: want.CeilingLabelX, CeilingAnchor: want.CeilingAnchor, Desc: want.Desc}
		for _, p := range want.Points {
			w.Points = append(w.Points, struct {
				X, Y string
				Sat  bool
			}{p.X, p.Y, p.Saturated})
		}
		if want.Ceiling != nil {
			w.Ceiling = &want.Ceiling.Label
		}
		if len(w.Points) == 0 && len(got[i].Points) == 0 {
			got[i].Points = nil
		}
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("case %d: the script draws\n%+v\nthe server\n%+v", i, got[i], w)
		}
	}
}

// asGeneric is v through encoding/json and back, as the page's script and
// the server's renderers read a group.
func asGeneric(t *testing.T, v any) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testNoScript loads the status page in a tab with JavaScript disabled:
// every number and chart is there all the same.
func testNoScript(t *testing.T, parent context.Context, base string) {
	ctx, cancel := chromedp.NewContext(parent)
	defer cancel()
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled,
		emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatalf("disable JavaScript: %v", err)
	}
	within(t, ctx, 30*time.Second, chromedp.Navigate(base+"/"))
	type page struct {
		Script bool     `json:"script"`
		Fields []string `json:"fields"`
		Lines  int      `json:"lines"`
		Charts int      `json:"charts"`
	}
	p := within(t, ctx, 10*time.Second, chromedp.EvaluateAsDevTools[page](`({
	  script: typeof window.checker !== "undefined",
	  fields: [...document.querySelectorAll("[data-group] [data-field]")].map((e) => e.textContent),
	  lines: [...document.querySelectorAll('[data-chart="backlog"] path[data-series]')].filter((p) => (p.getAttribute("d") || "").startsWith("M")).length,
	  charts: document.querySelectorAll("[data-chart] svg").length
	})`))
	if p.Script {
		t.Fatalf("the page's script ran in a tab with JavaScript disabled")
	}
	if len(p.Fields) == 0 || p.Charts == 0 || p.Lines == 0 {
		t.Fatalf("without JavaScript: %d numbers, %d charts, %d drawn backlog lines", len(p.Fields), p.Charts, p.Lines)
	}
	for i, f := range p.Fields {
		if strings.TrimSpace(f) == "" {
			t.Errorf("field %d is empty without JavaScript", i)
		}
	}
}

// ---- The planner.

func testPlanner(t *testing.T, ctx context.Context, base string) {
	within(t, ctx, 30*time.Second, chromedp.Navigate(base+"/plan"))
	fill := func(values map[string]string) chromedp.Action[chromedp.Void] {
		var steps []chromedp.Action[chromedp.Void]
		for id, v := range values {
			if v == "" {
				steps = append(steps, chromedp.Evaluate[chromedp.Void](
					`document.getElementById(`+mustJSON(t, id)+`).value = ""`))
				continue
			}
			steps = append(steps, chromedp.SetValue(chromedp.ID(id), v))
		}
		return chromedp.Steps(steps...)
	}
	// Seed 001: 12 msg/s, 8 workers at 2.4 msg/s, 18,000 messages, 30 min,
	// utilization 0.8: 10 workers.
	within(t, ctx, 30*time.Second, chromedp.Steps(
		fill(map[string]string{"queue": "planner example", "arrival_rate": "12", "workers": "8", "per_worker": "2.4",
			"service_time": "", "backlog": "18000", "drain_target": "30", "utilization": "0.8"}),
		chromedp.Click(chromedp.CSS(`form.plan-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-plan="recommended_workers"]`)),
	))
	got := within(t, ctx, 10*time.Second, chromedp.Text(chromedp.CSS(`[data-plan="recommended_workers"]`)))
	if strings.TrimSpace(got) != "10 workers" {
		t.Errorf("the planner recommends %q, want 10 workers", got)
	}
	loc := within(t, ctx, 10*time.Second, chromedp.Location())
	if !strings.Contains(loc, "arrival_rate=12") || !strings.Contains(loc, "per_worker=2.4") {
		t.Errorf("the form is not a GET of its fields: %s", loc)
	}

	// The export links carry the same query.
	href := within(t, ctx, 10*time.Second, chromedp.AttributeValue(chromedp.CSS(`[data-export="json"]`), "href"))
	resp, err := httpClient.Get(base + "/" + href.Value)
	if err != nil {
		t.Fatalf("get %s: %v", href.Value, err)
	}
	defer resp.Body.Close()
	var plan struct {
		Recommended int `json:"recommended_workers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&plan); err != nil || resp.StatusCode != http.StatusOK || plan.Recommended != 10 {
		t.Errorf("%s: status %d, recommended_workers %d, err %v; want 200 and 10", href.Value, resp.StatusCode, plan.Recommended, err)
	}

	// A bad value is named next to its field.
	within(t, ctx, 30*time.Second, chromedp.Steps(
		fill(map[string]string{"utilization": "1.5"}),
		chromedp.Click(chromedp.CSS(`form.plan-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-error-for="utilization"]`)),
	))
	msg := within(t, ctx, 10*time.Second, chromedp.Text(chromedp.CSS(`[data-error-for="utilization"]`)))
	if !strings.Contains(msg, "(0, 1]") {
		t.Errorf("the utilization error reads %q", msg)
	}
	invalid := within(t, ctx, 10*time.Second, chromedp.AttributeValue(chromedp.ID("utilization"), "aria-invalid"))
	if invalid.Value != "true" {
		t.Errorf("the utilization input is not marked invalid: %+v", invalid)
	}
}

// ---- Screenshots.

// screenshot saves a full-page PNG of url at a width, as a phone (a mobile
// viewport at twice the pixel density) or a desktop, in the light or dark
// colour scheme, and checks that the page does not scroll sideways.
func screenshot(t *testing.T, ctx context.Context, url string, width int64, phone, dark bool, file string) {
	t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
		t.Fatalf("emulate the %s colour scheme: %v", scheme, err)
	}
	var opts []chromedp.EmulateViewportOption
	height := int64(900)
	if phone {
		opts = append(opts, chromedp.EmulateScale(2), chromedp.EmulateMobile)
		height = 844
	}
	png := within(t, ctx, 60*time.Second, func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
		if _, err := chromedp.EmulateViewport(width, height, opts...)(ctx, tg); err != nil {
			return nil, err
		}
		if _, err := chromedp.Navigate(url)(ctx, tg); err != nil {
			return nil, err
		}
		if strings.HasSuffix(url, "/") {
			// Wait for the first refresh, so the picture shows the script's
			// work too.
			if _, err := chromedp.Poll[bool](`!!window.checker && window.checker.applied > 0`,
				chromedp.WithPollingTimeout(30*time.Second))(ctx, tg); err != nil {
				return nil, err
			}
		}
		wide, err := chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)(ctx, tg)
		if err != nil {
			return nil, err
		}
		if wide {
			return nil, errors.New("the page scrolls sideways at this width")
		}
		return chromedp.FullScreenshot(100)(ctx, tg)
	})
	within(t, ctx, 10*time.Second, chromedp.ResetViewport())
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatalf("save the screenshot: %v", err)
	}
}

// promiseQuery is a queue whose promise matters: 5 msg/s of 20 s messages
// keep 100 workers busy; a 1 s mean wait under a 0.95 ceiling, at $0.0416
// a worker-hour. The ceiling alone asks ceil(100 / 0.95) = 106 workers;
// the promise asks more.
const promiseQuery = "queue=promise&arrival_rate=5&workers=100&service_time=20&backlog=0&drain_target=15" +
	"&utilization=0.95&latency_target=1&worker_cost=0.0416"

// handDollars writes dollars rounded to the cent with grouped thousands,
// for comparing the page with a hand computation.
func handDollars(x float64) string {
	s := fmt.Sprintf("%.2f", x)
	whole, frac, _ := strings.Cut(s, ".")
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	return "$" + whole + "." + frac
}

// testPromisePrice opens the planner with a priced queue and checks the
// promise chart as drawn: a line per ceiling, the current one bold, the
// current setting ringed inside the plot, and the current row's dollars
// the export's workers × $0.0416 × 730.
func testPromisePrice(t *testing.T, ctx context.Context, base string) {
	within(t, ctx, 30*time.Second, chromedp.Steps(
		chromedp.Navigate(base+"/plan?"+promiseQuery),
		chromedp.WaitVisible(chromedp.CSS(`svg[data-chart="promise"]`)),
	))
	type drawn struct {
		Lines, Bold, Rings int
		RingInside         bool
		Width              float64
		CurrentRow         []string
		Rows               int
	}
	got := within(t, ctx, 10*time.Second, chromedp.Evaluate[drawn](`(() => {
		const svg = document.querySelector('svg[data-chart="promise"]');
		const box = svg.getBoundingClientRect();
		const ring = svg.querySelector('circle.current-mark');
		const r = ring ? ring.getBoundingClientRect() : null;
		const row = document.querySelector('table.promise-costs tr[data-current]');
		return {
			Lines: svg.querySelectorAll('path.promise-line').length,
			Bold: svg.querySelectorAll('path.promise-line.current').length,
			Rings: svg.querySelectorAll('circle.current-mark').length,
			RingInside: !!r && r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom,
			Width: box.width,
			CurrentRow: row ? Array.from(row.children).map(c => c.textContent.trim()) : [],
			Rows: document.querySelectorAll('table.promise-costs tbody tr').length,
		};
	})()`))
	if got.Lines < 3 || got.Bold != 1 || got.Rings != 1 || !got.RingInside || got.Width < 300 {
		t.Errorf("promise chart drawn as %+v: want at least 3 lines, one bold, one ring inside a visible chart", got)
	}
	if got.Rows != 9 {
		t.Errorf("%d promise rows, want 9 (1s to 10m, the 1s target among them)", got.Rows)
	}
	resp, err := httpClient.Get(base + "/plan.json?" + promiseQuery)
	if err != nil {
		t.Fatalf("get plan.json: %v", err)
	}
	defer resp.Body.Close()
	var plan struct {
		Promises []struct {
			Latency float64 `json:"latency_seconds"`
			Workers int     `json:"workers"`
		} `json:"promise_costs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&plan); err != nil {
		t.Fatalf("decode plan.json: %v", err)
	}
	workers := 0
	for _, r := range plan.Promises {
		if r.Latency == 1 {
			workers = r.Workers
		}
	}
	want := []string{"1 s (current)", strconv.Itoa(workers), "the promise",
		handDollars(float64(workers) * 0.0416), handDollars(float64(workers) * 0.0416 * 730)}
	if workers <= 106 || !slices.Equal(got.CurrentRow, want) {
		t.Errorf("current row %q, want %q", got.CurrentRow, want)
	}
}
