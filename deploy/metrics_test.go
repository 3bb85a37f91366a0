package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	pmodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"go.uber.org/zap"
	"go.yaml.in/yaml/v3"

	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/lease"
	qmodel "github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/policy/policytest"
	"github.com/queuechecker/queue-checker/internal/poller"
)

// recordingRegisterer registers into a real registry and keeps the names of
// every metric described, so that series exported only once their value is
// known (a vector before its first label set) still count as exported, and
// those of the former names of renamed series, whose help opens with
// "Deprecated:".
type recordingRegisterer struct {
	prometheus.Registerer
	mu         sync.Mutex
	names      map[string]bool
	deprecated map[string]string // the new name, by former name
}

var (
	descName       = regexp.MustCompile(`fqName: "([^"]+)"`)
	descDeprecated = regexp.MustCompile(`help: "Deprecated: renamed (checker_[a-z_]+)`)
)

func (r *recordingRegisterer) Register(c prometheus.Collector) error {
	ch := make(chan *prometheus.Desc)
	go func() { c.Describe(ch); close(ch) }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for d := range ch {
		if m := descName.FindStringSubmatch(d.String()); m != nil {
			r.names[m[1]] = true
			if dm := descDeprecated.FindStringSubmatch(d.String()); dm != nil {
				r.deprecated[m[1]] = dm[1]
			} else if strings.Contains(d.String(), `help: "Deprecated`) {
				r.deprecated[m[1]] = "" // a former name that does not say the new one
			}
		}
	}
	return r.Registerer.Register(c)
}

func (r *recordingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err) // the contract of MustRegister; the daemon's code never calls it
		}
	}
}

// observation is a trivial Observer: two groups whose queue answered, with
// CloudWatch readings, and whose fleets were read.
type observation struct{}

func (observation) Observe(_ context.Context, now time.Time) ([]qmodel.Observation, error) {
	at := now.Add(-time.Minute)
	var out []qmodel.Observation
	for _, g := range []string{"thumbnails", "reports"} {
		out = append(out, qmodel.Observation{
			Sample: qmodel.GroupSample{
				Group: g, At: now, Visible: 1500, InFlight: 10, Backlog: 1510, Queues: 1, Answered: 1,
				OldestAge: &qmodel.Reading{Value: 45, At: at},
				Sent:      &qmodel.Reading{Value: 20, At: at},
				Deleted:   &qmodel.Reading{Value: 18, At: at},
			},
			Fleet: qmodel.Fleet{Kind: "autoscaling", Name: g + "-workers", At: now, Known: true,
				Desired: 10, Min: 1, Max: 50, InService: 10},
		})
	}
	return out, nil
}

// actuator scales one group and fails the other, so that both the action
// and the action-error counters have series.
type actuator struct{}

func (actuator) Apply(_ context.Context, d qmodel.Decision, f qmodel.Fleet) (qmodel.Action, error) {
	if d.Group == "reports" {
		return qmodel.Action{}, errors.New("injected failure")
	}
	return qmodel.Action{Group: d.Group, Scaled: true, From: f.Desired, To: f.Desired + 2}, nil
}

// fakeAWS answers the two read calls whose success creates the poller's
// per-queue series, SQS GetQueueAttributes and CloudWatch GetMetricData
// (AWS JSON 1.0), and fails every other call with a server error.
func fakeAWS(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	switch r.Header.Get("X-Amz-Target") {
	case "AmazonSQS.GetQueueAttributes":
		_, _ = io.WriteString(w, `{"Attributes": {"ApproximateNumberOfMessages": "1500",
			"ApproximateNumberOfMessagesNotVisible": "10", "ApproximateNumberOfMessagesDelayed": "0",
			"QueueArn": "arn:aws:sqs:us-east-1:123456789012:thumbnails", "FifoQueue": "false"}}`)
	case "GraniteServiceVersion20100801.GetMetricData":
		var in struct {
			MetricDataQueries []struct {
				ID string `json:"Id"`
			}
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type result struct {
			ID         string `json:"Id"`
			Timestamps []float64
			Values     []float64
			StatusCode string
		}
		out := struct{ MetricDataResults []result }{}
		at := float64(time.Now().Add(-time.Minute).Truncate(time.Minute).Unix())
		for _, q := range in.MetricDataQueries {
			out.MetricDataResults = append(out.MetricDataResults,
				result{ID: q.ID, Timestamps: []float64{at}, Values: []float64{45}, StatusCode: "Complete"})
		}
		_ = json.NewEncoder(w).Encode(out)
	default:
		http.Error(w, `{"__type":"InternalFailure","message":"injected"}`, http.StatusInternalServerError)
	}
}

// exportedMetrics builds the daemon's metrics from its real constructors and
// returns every metric name they export, with the type of those that have
// series: the controller after two cycles of a trivial observer and
// actuator, and the poller and the AWS request metrics after one poll of a
// local endpoint (no AWS account needed).
func exportedMetrics(t *testing.T) (exported map[string]bool, types map[string]dto.MetricType, deprecated map[string]string) {
	t.Helper()
	reg := prometheus.NewRegistry()
	rec := &recordingRegisterer{Registerer: reg, names: map[string]bool{}, deprecated: map[string]string{}}
	ctx := context.Background()

	var groups []policy.Settings
	for _, g := range []string{"thumbnails", "reports"} {
		groups = append(groups, policytest.Settings(g, func(s *policy.Settings) {
			s.Latency, s.Cap, s.StartDelay = 30*time.Second, 40, 90*time.Second
		}).WithDefaults())
	}
	ctrl, err := controller.New(controller.Options{Groups: groups, Observer: observation{}, Actuator: actuator{}, Registerer: rec})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i := range 2 {
		// The error is the failing group's, on purpose.
		if ds, _ := ctrl.RunOnce(ctx, t0.Add(time.Duration(i)*5*time.Second)); len(ds) != len(groups) {
			t.Fatalf("RunOnce decided %d groups, want %d", len(ds), len(groups))
		}
	}

	// Static credentials and no instance metadata: the SDK signs and sends
	// without looking for an account.
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	endpoint := httptest.NewServer(http.HandlerFunc(fakeAWS))
	t.Cleanup(endpoint.Close)
	factory := awsclienttest.Factory(t, endpoint.URL, awsclienttest.MaxAttempts(1), awsclienttest.Registerer(rec))
	cfg := config.Config{
		Interval: 5 * time.Second,
		AWS:      config.AWS{Region: "us-east-1", EndpointURL: endpoint.URL, CallTimeout: 2 * time.Second},
		Groups: []config.Group{{
			Name:      "thumbnails",
			Queues:    []config.Queue{{URL: "https://sqs.us-east-1.amazonaws.com/123456789012/thumbnails"}},
			Count:     config.Count{InFlight: true},
			OldestAge: config.OldestAge{CloudWatch: true},
			Fleet:     config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: "thumbnails-workers"}, Min: 1, Max: 50},
		}},
	}
	// The lease manager's series, which exist with coordination only.
	if _, err := lease.New(factory.DynamoDB("us-east-1"), lease.Options{Table: "leases", Identity: "checker-a",
		Duration: 15 * time.Second, Interval: 5 * time.Second, Registerer: rec}); err != nil {
		t.Fatal(err)
	}
	p, err := poller.New(cfg, factory, rec, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Observe(ctx, time.Now()); err != nil {
		t.Logf("Observe against the local endpoint: %v", err)
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	types = map[string]dto.MetricType{}
	for _, f := range families {
		types[f.GetName()] = f.GetType()
	}
	// Everything with series was described: the recorder sees all there is.
	for name := range types {
		if !rec.names[name] {
			t.Fatalf("%s has series but was not described: the recorder misses registrations", name)
		}
	}
	var lazy []string
	for name := range rec.names {
		if _, ok := types[name]; !ok {
			lazy = append(lazy, name)
		}
	}
	slices.Sort(lazy)
	t.Logf("exported, without series in this run: %v", lazy)
	// The lazily exported families this test sets out to produce.
	for _, name := range []string{"checker_group_backlog_messages", "checker_group_workers",
		"checker_group_diagnosis", "checker_group_oldest_message_age_seconds", "checker_scaling_actions_total",
		"checker_action_errors_total", "checker_aws_requests_total", "checker_aws_request_duration_seconds",
		"checker_queue_messages", "checker_queue_oldest_message_age_seconds", "checker_queue_sample_age_seconds"} {
		if _, ok := types[name]; !ok {
			t.Errorf("%s has no series after the cycles and the poll", name)
		}
	}
	return rec.names, types, rec.deprecated
}

var metricToken = regexp.MustCompile(`[a-zA-Z0-9_:]*checker_[a-zA-Z0-9_:]*`)

// renameRow is a row of docs/observability.md's table of renamed series.
var renameRow = regexp.MustCompile("(?m)^\\| `(checker_[a-z_]+)` \\| `(checker_[a-z_]+)`")

// documentedRenames reads the table of renamed series: the new name, by
// former name.
func documentedRenames(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range renameRow.FindAllStringSubmatch(string(readFile(t, "docs/observability.md")), -1) {
		out[m[1]] = m[2]
	}
	if len(out) == 0 {
		t.Fatal("docs/observability.md: no table of renamed series found")
	}
	return out
}

// queriedMetrics returns the checker metrics named anywhere in text, with
// the histogram suffixes taken off where the base name is a histogram.
// Names with a colon are recording rules' (level:metric:operations), not
// the checker's: recordedNames checks them.
func queriedMetrics(text string, types map[string]dto.MetricType) []string {
	var out []string
	for _, tok := range metricToken.FindAllString(text, -1) {
		if strings.Contains(tok, ":") || !strings.HasPrefix(tok, "checker_") {
			continue
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			base := strings.TrimSuffix(tok, suffix)
			if base != tok {
				if typ, ok := types[base]; ok && (typ == dto.MetricType_HISTOGRAM || typ == dto.MetricType_SUMMARY) {
					tok = base
				}
				break
			}
		}
		if !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	slices.Sort(out)
	return out
}

// grafanaDashboard is the part of a dashboard the checks read.
type grafanaDashboard struct {
	UID        string         `json:"uid"`
	Title      string         `json:"title"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
			Multi      bool   `json:"multi"`
			IncludeAll bool   `json:"includeAll"`
		} `json:"list"`
	} `json:"templating"`
}

type grafanaPanel struct {
	ID         int            `json:"id"`
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Panels     []grafanaPanel `json:"panels"` // of a collapsed row
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	GridPos struct{ X, Y, W, H int } `json:"gridPos"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

func (d grafanaDashboard) allPanels() []grafanaPanel {
	var out []grafanaPanel
	for _, p := range d.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

// grafanaVars are replaced by values PromQL accepts before parsing.
var grafanaVars = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h", "$group", ".*")

func TestDashboardAndAlertsQueryExportedMetrics(t *testing.T) {
	// Not parallel: exportedMetrics sets the AWS environment.
	exported, types, deprecated := exportedMetrics(t)
	renames := documentedRenames(t)
	for former, now := range deprecated {
		if renames[former] != now {
			t.Errorf("%s is served as the former name of %s; docs/observability.md's renamed series say %q", former, now, renames[former])
		}
		if !exported[now] {
			t.Errorf("%s is the former name of %s, which is not exported", former, now)
		}
	}
	for former := range renames {
		if _, ok := deprecated[former]; !ok {
			t.Errorf("docs/observability.md lists %s as renamed, but it is not served under that name", former)
		}
	}
	promql := parser.NewParser(parser.Options{})

	const dashPath = "deploy/grafana/queue-checker.json"
	var dash grafanaDashboard
	readJSON(t, dashPath, &dash)
	const alertsPath = "deploy/prometheus/alerts.yaml"

	for _, path := range []string{dashPath, alertsPath} {
		names := queriedMetrics(string(readFile(t, path)), types)
		if len(names) < 10 {
			t.Errorf("%s: only %d checker metrics found (%v): the extraction is broken", path, len(names), names)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s queries %s, which the daemon does not export", path, n)
			}
			if _, former := deprecated[n]; former {
				t.Errorf("%s queries %s, a former name served for one release: query its new name", path, n)
			}
		}
	}

	t.Run("dashboard", func(t *testing.T) {
		if dash.UID == "" || dash.Title == "" {
			t.Error("no uid or title")
		}
		var groupVar bool
		for _, v := range dash.Templating.List {
			if v.Name == "group" {
				groupVar = true
				m := regexp.MustCompile(`^label_values\((checker_[a-z_]+), group\)$`).FindStringSubmatch(v.Definition)
				if v.Type != "query" || m == nil || !exported[m[1]] || !v.Multi || !v.IncludeAll {
					t.Errorf("template variable group: %+v; want a multi-value query of label_values(<checker metric>, group)", v)
				}
			}
		}
		if !groupVar {
			t.Error("no template variable group")
		}
		panelExprs := map[string]string{} // title -> every expr of the panel
		ids := map[int]bool{}
		for _, p := range dash.allPanels() {
			if ids[p.ID] {
				t.Errorf("panel id %d twice", p.ID)
			}
			ids[p.ID] = true
			if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W <= 0 || p.GridPos.H <= 0 {
				t.Errorf("panel %q: grid position %+v off the 24 columns", p.Title, p.GridPos)
			}
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
				t.Errorf("panel %q does not use the datasource variable", p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if refs[tg.RefID] || tg.RefID == "" {
					t.Errorf("panel %q: refId %q empty or twice", p.Title, tg.RefID)
				}
				refs[tg.RefID] = true
				if _, err := promql.ParseExpr(grafanaVars.Replace(tg.Expr)); err != nil {
					t.Errorf("panel %q: %q: %v", p.Title, tg.Expr, err)
				}
				panelExprs[p.Title] += tg.Expr + "\n"
			}
		}
		// What on-call must find, each set in one panel.
		wanted := []struct {
			topic   string
			metrics []string
		}{
			{"backlog", []string{"checker_group_backlog_messages"}},
			{"backlog per worker against target", []string{"checker_group_backlog_messages_per_worker", "checker_group_target_backlog_messages_per_worker"}},
			{"workers current, desired, recommended", []string{"checker_group_workers", "current", "desired", "recommended"}},
			{"oldest age against the promise", []string{"checker_group_oldest_message_age_seconds", "checker_group_latency_target_seconds"}},
			{"diagnosis", []string{"checker_group_diagnosis"}},
			{"held", []string{"checker_group_held"}},
			{"capped", []string{"checker_group_capped"}},
			{"AWS errors by outcome", []string{"checker_aws_requests_total", "outcome"}},
			{"share within the promise against its objective", []string{"checker_slo_messages_within_promise_total", "checker_slo_messages_late_total", "checker_slo_objective_ratio"}},
			{"error budget left", []string{"checker_slo_error_budget_remaining_ratio"}},
		}
		for _, w := range wanted {
			found := false
			for _, exprs := range panelExprs {
				if !slices.ContainsFunc(w.metrics, func(m string) bool {
					return !regexp.MustCompile(`\b` + m + `\b`).MatchString(exprs)
				}) {
					found = true
				}
			}
			if !found {
				t.Errorf("no panel shows %s (%v)", w.topic, w.metrics)
			}
		}
	})

	t.Run("recording rules", func(t *testing.T) {
		// Every recorded name read is recorded in the file.
		text := string(readFile(t, alertsPath))
		recorded := recordedNames(t, alertsPath)
		if len(recorded) == 0 {
			t.Fatal("no recording rules found")
		}
		for _, tok := range metricToken.FindAllString(text, -1) {
			if strings.Contains(tok, ":") && !recorded[tok] {
				t.Errorf("%s reads %s, which no rule records", alertsPath, tok)
			}
		}
	})

	t.Run("alerts", func(t *testing.T) {
		rules := parseAlerts(t, alertsPath, promql)
		for name, r := range rules {
			for _, a := range []string{"summary", "description", "runbook"} {
				if strings.TrimSpace(r.Annotations[a]) == "" {
					t.Errorf("alert %s has no %s annotation", name, a)
				}
			}
			if r.Labels["severity"] == "" {
				t.Errorf("alert %s has no severity label", name)
			}
		}
		wanted := []struct {
			what    string
			pattern string // on the expression
			forDur  time.Duration
		}{
			{"oldest age over the promise", `^checker_group_oldest_message_age_seconds > checker_group_latency_target_seconds\s+or\s+\(checker_group_drain_seconds > checker_group_latency_target_seconds\s+unless checker_group_oldest_message_age_seconds\)$`, 5 * time.Minute},
			{"held", `^checker_group_held == 1$`, 10 * time.Minute},
			{"capped", `^checker_group_capped == 1$`, 15 * time.Minute},
			{"not consuming", `^checker_group_diagnosis\{state="` + qmodel.DiagNotConsuming + `"\} == 1$`, 5 * time.Minute},
			{"checker down", `^up\{job="([^"]+)"\} == 0$`, 0},
			{"checker stale", `^time\(\) - checker_last_success_timestamp_seconds > `, 0},
			// The SRE workbook's multiwindow, multi-burn-rate alerts on the
			// error budget of the promise.
			{"error budget burning 14.4x over 1h and 5m", `^group:checker_slo_error:ratio_rate1h > on \(job, group\) \(14\.4 \* \(1 - group:checker_slo_objective:ratio\)\)\s+and on \(job, group\)\s+group:checker_slo_error:ratio_rate5m > on \(job, group\) \(14\.4 \* \(1 - group:checker_slo_objective:ratio\)\)$`, 0},
			{"error budget burning 6x over 6h and 30m", `^group:checker_slo_error:ratio_rate6h > on \(job, group\) \(6 \* \(1 - group:checker_slo_objective:ratio\)\)\s+and on \(job, group\)\s+group:checker_slo_error:ratio_rate30m > on \(job, group\) \(6 \* \(1 - group:checker_slo_objective:ratio\)\)$`, 0},
			{"error budget burning 1x over 3d and 6h", `^group:checker_slo_error:ratio_rate3d > on \(job, group\) \(1 - group:checker_slo_objective:ratio\)\s+and on \(job, group\)\s+group:checker_slo_error:ratio_rate6h > on \(job, group\) \(1 - group:checker_slo_objective:ratio\)$`, 0},
		}
		for _, w := range wanted {
			re := regexp.MustCompile(w.pattern)
			found := false
			for name, r := range rules {
				if re.MatchString(r.Expr) {
					found = true
					if w.forDur > 0 && r.For != w.forDur {
						t.Errorf("alert %s (%s) fires after %s, want %s", name, w.what, r.For, w.forDur)
					}
				}
			}
			if !found {
				t.Errorf("no alert on %s (%s)", w.what, w.pattern)
			}
		}
	})

	t.Run("scrape job matches the alerts", func(t *testing.T) {
		var scrape struct {
			ScrapeConfigs []struct {
				JobName string `yaml:"job_name"`
			} `yaml:"scrape_configs"`
		}
		if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/scrape.example.yaml"), &scrape); err != nil {
			t.Fatal(err)
		}
		jobs := regexp.MustCompile(`up\{job="([^"]+)"\}`).FindAllStringSubmatch(string(readFile(t, alertsPath)), -1)
		if len(scrape.ScrapeConfigs) != 1 || len(jobs) == 0 {
			t.Fatalf("scrape configs %+v, jobs in alerts %v", scrape.ScrapeConfigs, jobs)
		}
		for _, j := range jobs {
			if j[1] != scrape.ScrapeConfigs[0].JobName {
				t.Errorf("alerts watch job %q, the scrape config names %q", j[1], scrape.ScrapeConfigs[0].JobName)
			}
		}
	})
}

// recordedNames returns the names the recording rules of a rule file record.
func recordedNames(t *testing.T, path string) map[string]bool {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(readFile(t, path), &file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := map[string]bool{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				names[r.Record] = true
			}
		}
	}
	return names
}

// alertRule is one rule of a Prometheus rule file, as Prometheus reads it.
type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	ForText     string            `yaml:"for"`
	For         time.Duration     `yaml:"-"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

// alertTemplateFuncs are the template functions Prometheus offers in labels
// and annotations; only their names matter to the parser.
var alertTemplateFuncs = func() template.FuncMap {
	m := template.FuncMap{}
	for _, name := range []string{"query", "first", "label", "value", "strvalue", "args", "reReplaceAll",
		"safeHtml", "match", "title", "toUpper", "toLower", "graphLink", "tableLink", "sortByLabel",
		"stripPort", "stripDomain", "humanize", "humanize1024", "humanizeDuration", "humanizePercentage",
		"humanizeTimestamp", "toTime", "toDuration", "pathPrefix", "externalURL", "parseDuration", "now"} {
		m[name] = func(...any) any { return nil }
	}
	return m
}()

// alertTemplateVars declares the variables Prometheus defines for every
// label and annotation template.
const alertTemplateVars = "{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}" +
	"{{$externalURL := .ExternalURL}}{{$value := .Value}}"

// parseAlerts reads a rule file strictly (unknown keys fail) and checks what
// Prometheus checks on load: every expression parses, every duration
// parses, every label and annotation template parses, alert names are
// unique. It returns the alerting rules by name.
func parseAlerts(t *testing.T, path string, promql parser.Parser) map[string]alertRule {
	t.Helper()
	var file struct {
		Groups []struct {
			Name     string      `yaml:"name"`
			Interval string      `yaml:"interval"`
			Rules    []alertRule `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(readFile(t, path)))
	dec.KnownFields(true)
	if err := dec.Decode(&file); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	rules := map[string]alertRule{}
	for _, g := range file.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("%s: a group without a name or rules", path)
		}
		for _, r := range g.Rules {
			if (r.Alert == "") == (r.Record == "") {
				t.Errorf("%s: a rule must have exactly one of alert and record: %+v", path, r)
				continue
			}
			if _, err := promql.ParseExpr(r.Expr); err != nil {
				t.Errorf("%s: %s: %q: %v", path, r.Alert, r.Expr, err)
			}
			if r.ForText != "" {
				d, err := pmodel.ParseDuration(r.ForText)
				if err != nil {
					t.Errorf("%s: %s: for %q: %v", path, r.Alert, r.ForText, err)
				}
				r.For = time.Duration(d)
			}
			for kind, m := range map[string]map[string]string{"label": r.Labels, "annotation": r.Annotations} {
				for k, v := range m {
					if _, err := template.New(k).Funcs(alertTemplateFuncs).Parse(alertTemplateVars + v); err != nil {
						t.Errorf("%s: %s: %s %s: %v", path, r.Alert, kind, k, err)
					}
				}
			}
			if r.Alert == "" {
				continue
			}
			if _, dup := rules[r.Alert]; dup {
				t.Errorf("%s: alert %s twice", path, r.Alert)
			}
			rules[r.Alert] = r
		}
	}
	return rules
}
