package web

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
)

// fieldRE finds the numbers of the status page and their hooks.
var fieldRE = regexp.MustCompile(`<span data-field="([^"]+)" data-fmt="([^"]+)"(?: data-null="([^"]*)")?>([^<]*)</span>`)

// section returns the part of the status page that is the panel of group
// name (its HTML-escaped form in data-group).
func section(t *testing.T, body, name string) string {
	t.Helper()
	start := strings.Index(body, `<section class="group" id="`)
	marker := `data-group="` + html.EscapeString(name) + `" aria-labelledby=`
	i := strings.Index(body[max(start, 0):], marker)
	if start < 0 || i < 0 {
		t.Fatalf("no panel for group %q", name)
	}
	rest := body[start+i:]
	for _, next := range []string{`<section class="group"`, `id="checker-config"`} {
		if end := strings.Index(rest, next); end >= 0 {
			rest = rest[:end]
		}
	}
	return rest
}

func TestStatusPage(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 40, 10*time.Second)
	h := newTestHandler(c, now)
	rec := get(t, h, "/")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	views := c.Views().Groups()
	busy := views[0]
	d := busy.Decision
	if d == nil {
		t.Fatal("the busy group has no decision")
	}

	t.Run("headers", func(t *testing.T) {
		t.Parallel()
		for key, want := range map[string]string{
			"Content-Type":            "text/html; charset=utf-8",
			"Content-Security-Policy": contentSecurityPolicy,
			"X-Content-Type-Options":  "nosniff",
		} {
			if got := rec.Header().Get(key); got != want {
				t.Errorf("%s: %q, want %q", key, got, want)
			}
		}
	})

	t.Run("the numbers of the busy group appear", func(t *testing.T) {
		t.Parallel()
		panel := section(t, body, groupBusy)
		fields := map[string]string{}
		for _, m := range fieldRE.FindAllStringSubmatch(panel, -1) {
			fields[m[1]] = html.UnescapeString(m[4])
		}
		tests := []struct {
			name, field, want string
		}{
			{"backlog", "decision.backlog", formatNumber(float64(d.Backlog))},
			{"visible", "decision.visible", formatNumber(float64(d.Visible))},
			{"current workers", "decision.current_workers", fmt.Sprint(d.CurrentWorkers)},
			{"in service", "decision.in_service_workers", fmt.Sprint(d.InServiceWorkers)},
			{"pending", "decision.pending_workers", fmt.Sprint(d.PendingWorkers)},
			{"draining", "decision.draining_workers", "3"},
			{"recommended", "decision.recommended_workers", formatNumber(float64(d.RecommendedWorkers))},
			{"desired", "decision.desired_workers", fmt.Sprint(d.DesiredWorkers)},
			{"min", "settings.min", "2"},
			{"max", "settings.max", "40"},
			{"cap", "settings.cap", "30"},
			{"backlog per worker", "decision.backlog_per_worker", formatNumber(d.BacklogPerWorker)},
			{"its target", "decision.target_backlog_per_worker", "75"},
			{"oldest age", "decision.oldest_age_seconds", formatSeconds(*d.OldestAgeSeconds)},
			{"the promise", "settings.latency_seconds", "30 s"},
			{"diagnosis", "decision.diagnosis", diagnosisOf(d.Diagnosis).Label},
			{"decided at", "decision.at", now.UTC().Format("15:04:05")},
		}
		if d.ArrivalRate != nil {
			tests = append(tests, struct{ name, field, want string }{"arrival rate", "decision.arrival_rate",
				formatNumber(*d.ArrivalRate) + " msg/s"})
		}
		if d.Utilization != nil {
			tests = append(tests, struct{ name, field, want string }{"utilisation", "decision.utilization",
				formatPercent(*d.Utilization)})
		}
		if c := d.Floors.UtilizationCeiling; c != nil {
			tests = append(tests, struct{ name, field, want string }{"utilisation ceiling", "decision.floors.utilization_ceiling",
				formatPercent(*c)})
		}
		for _, tt := range tests {
			got, ok := fields[tt.field]
			if !ok {
				t.Errorf("%s: no data-field=%q on the page", tt.name, tt.field)
				continue
			}
			if got != tt.want {
				t.Errorf("%s: the page shows %q, want %q", tt.name, got, tt.want)
			}
		}
		if !strings.Contains(panel, html.EscapeString(diagnosisOf(d.Diagnosis).Advice)) {
			t.Errorf("the advice for %s is missing", d.Diagnosis)
		}
	})

	t.Run("group names and messages are escaped", func(t *testing.T) {
		t.Parallel()
		for _, raw := range []string{groupOdd, "<not allowed>", "<timeout>", "<odd>", "odd<queue>"} {
			if strings.Contains(body, raw) {
				t.Errorf("the page contains %q unescaped", raw)
			}
		}
		panel := section(t, body, groupOdd)
		for _, want := range []string{
			`<h2 id="g1-name">&lt;b&gt;&#34;odd&#34; &amp; &#39;co&#39;&lt;/b&gt;</h2>`,
			`href="plan?group=%3cb%3e%22odd%22%20%26%20%27co%27%3c%2fb%3e"`,
			`<td>odd&lt;queue&gt;</td>`,
			`AccessDenied: &lt;not allowed&gt; &amp; &#34;denied&#34;`,
		} {
			if !strings.Contains(panel, want) {
				t.Errorf("the odd group's panel lacks %s", want)
			}
		}
	})

	t.Run("held and failing groups say so", func(t *testing.T) {
		t.Parallel()
		panel := section(t, body, groupOdd)
		odd := views[1]
		for _, want := range []string{
			`<p class="notice warn" data-show="decision.held">`,
			`<p class="notice bad" data-show="action_error">`,
			`<p class="notice bad" data-show="fleet.error">`,
			html.EscapeString(odd.Decision.HoldReason),
			diagnosisOf("unknown").Label,
		} {
			if !strings.Contains(panel, want) {
				t.Errorf("the odd group's panel lacks %s", want)
			}
		}
		if strings.Contains(section(t, body, groupBusy), `<p class="notice bad" data-show="action_error">`) {
			t.Errorf("the busy group shows an action error it does not have")
		}
	})

	t.Run("charts are drawn on the server", func(t *testing.T) {
		t.Parallel()
		panel := section(t, body, groupBusy)
		if n := strings.Count(panel, `<svg viewBox=`); n != len(charts)+1 {
			t.Errorf("%d charts, want %d and the knee", n, len(charts))
		}
		for _, key := range []string{"backlog", "current_workers", "desired_workers", "recommended_workers", "oldest_age_seconds"} {
			re := regexp.MustCompile(`data-series="` + key + `" d="M[0-9.]+,[0-9.]+[LHV]`)
			if !re.MatchString(panel) {
				t.Errorf("series %s has no line", key)
			}
		}
		if !strings.Contains(panel, `<title id="g0-backlog-t">Backlog</title>`) || !strings.Contains(panel, `<desc id="g0-backlog-d" data-desc>Last `) {
			t.Errorf("the backlog chart has no text alternative")
		}
	})

	t.Run("the last decisions are listed", func(t *testing.T) {
		t.Parallel()
		panel := section(t, body, groupBusy)
		if len(busy.Changes) == 0 {
			t.Fatal("the scripted world made no change of the desired count")
		}
		last := busy.Changes[len(busy.Changes)-1]
		want := fmt.Sprintf(`<td class="num">%d → %d</td><td>%s</td>`, last.From, last.To,
			html.EscapeString(strings.Join(last.Reasons, "; ")))
		if !strings.Contains(panel, want) {
			t.Errorf("the newest change is not listed: want %s", want)
		}
	})

	t.Run("nothing is loaded from outside", func(t *testing.T) {
		t.Parallel()
		for _, m := range regexp.MustCompile(`(?:src|href|action)="([^"]*)"`).FindAllStringSubmatch(body, -1) {
			if u := m[1]; strings.Contains(u, "//") || strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "/static/") {
				t.Errorf("a link leaves the checker: %s", u)
			}
		}
	})

	t.Run("the script's configuration is a JSON data block", func(t *testing.T) {
		t.Parallel()
		re := regexp.MustCompile(`(?s)<script type="application/json" id="checker-config">(.*?)</script>`)
		m := re.FindStringSubmatch(body)
		if m == nil {
			t.Fatal("no configuration block")
		}
		var cfg pageConfig
		if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
			t.Fatalf("the configuration is not JSON: %v\n%s", err, m[1])
		}
		if cfg.RefreshMs != 5000 || len(cfg.Charts) != len(charts) || cfg.Diagnoses["stuck"].Advice == "" || cfg.Knee != knee {
			t.Errorf("configuration %+v", cfg)
		}
	})
}

func TestStatusPageWithoutGroups(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 0, time.Second)
	if err := c.Reload(nil, &controllertest.Observer{}, nil); err != nil {
		t.Fatal(err)
	}
	rec := get(t, newTestHandler(c, now), "/")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "No groups are configured.") {
		t.Errorf("GET / with no groups: %d\n%s", rec.Code, rec.Body)
	}
}

func TestStatusPageBeforeTheFirstCycle(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 0, time.Second)
	rec := get(t, newTestHandler(c, now), "/")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d %s", rec.Code, rec.Body)
	}
	panel := section(t, rec.Body.String(), groupBusy)
	for _, want := range []string{
		`<span data-field="decision.backlog" data-fmt="count">unknown</span>`,
		`<span data-field="decision.at" data-fmt="clock" data-null="no decision yet">no decision yet</span>`,
		`<li class="none">No decision yet.</li>`,
		`No data yet`,
	} {
		if !strings.Contains(panel, want) {
			t.Errorf("the panel lacks %s", want)
		}
	}
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 2, time.Second)
	h := newTestHandler(c, now)
	tests := []struct {
		name, target string
		status       int
		contentType  string
	}{
		{"status page", "/", http.StatusOK, "text/html; charset=utf-8"},
		{"groups", "/api/v1/groups", http.StatusOK, "application/json; charset=utf-8"},
		{"planner", "/plan", http.StatusOK, "text/html; charset=utf-8"},
		{"stylesheet", "/static/style.css", http.StatusOK, "text/css; charset=utf-8"},
		{"script", "/static/status.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"icon", "/static/icon.svg", http.StatusOK, "image/svg+xml"},
		{"unknown asset", "/static/nope.js", http.StatusNotFound, ""},
		{"asset under a wrong directory", "/static/assets/style.css", http.StatusNotFound, ""},
		{"template source", "/static/../templates/plan.html", http.StatusTemporaryRedirect, ""},
		{"unknown page", "/nope", http.StatusNotFound, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := get(t, h, tt.target)
			if rec.Code != tt.status {
				t.Fatalf("GET %s: %d, want %d", tt.target, rec.Code, tt.status)
			}
			if tt.contentType != "" && rec.Header().Get("Content-Type") != tt.contentType {
				t.Errorf("GET %s: Content-Type %q, want %q", tt.target, rec.Header().Get("Content-Type"), tt.contentType)
			}
		})
	}
}

func TestAssetsRevalidate(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 0, time.Second)
	h := newTestHandler(c, now)
	first := get(t, h, "/static/style.css")
	etag := first.Header().Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, err := http.NewRequest(http.MethodGet, "/static/style.css", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", etag)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotModified {
		t.Errorf("revalidation: %d, want 304", rec.Code)
	}
}
