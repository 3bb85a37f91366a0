package web

import (
	"encoding/json"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// inputValue is the value of the planner's input id on a page.
func inputValue(t *testing.T, body, id string) string {
	t.Helper()
	re := regexp.MustCompile(`<input id="` + regexp.QuoteMeta(id) + `" name="[^"]*" value="([^"]*)"`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no input %q", id)
	}
	return html.UnescapeString(m[1])
}

// fieldError is the error shown next to the input id, or "".
func fieldError(body, id string) string {
	re := regexp.MustCompile(`<p class="field-error" id="` + regexp.QuoteMeta(id) + `-error" data-error-for="[^"]*">([^<]*)</p>`)
	if m := re.FindStringSubmatch(body); m != nil {
		return html.UnescapeString(m[1])
	}
	return ""
}

func TestPlanPage(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 10, 10*time.Second)
	h := newTestHandler(c, now)
	tests := []struct {
		name   string
		query  string
		status int
		want   []string          // in the page
		errors map[string]string // input id: part of its error
		absent []string
	}{
		{
			name:   "the planner's worked example: 10 workers",
			query:  exampleQuery,
			status: http.StatusOK,
			want: []string{`<p class="big-number" data-plan="recommended_workers">10 workers</p>`,
				"Scale out from 8 workers to 10 workers.",
				`<th scope="row">Current drain time</th><td class="num">41m40s</td>`,
				`<th scope="row">drain floor</th><td class="num">10</td>`,
				`<th scope="row">utilization floor</th><td class="num">7</td>`,
				`href="plan.json?arrival_rate=12&amp;backlog=18000&amp;`,
				`href="plan.csv?arrival_rate=12&amp;backlog=18000&amp;`,
				`<title id="burn-t">Backlog burn-down</title>`,
				`<title id="sens-t">Drain time by pool size</title>`,
				`<th scope="row" class="num">10 workers</th>`, // the Erlang C table
				`<th scope="row">after the drain</th>`,        // a checkpoint
			},
		},
		{
			name:   "a service time and a latency target",
			query:  "arrival_rate=50&workers=10&service_time=0.2&concurrency=1&backlog=0&drain_target=15&utilization=0.9&latency_target=0.05",
			status: http.StatusOK,
			// 99 % within 50 ms (the daemon's promise): at 16 workers
			// C·e^−(80 − 50)·0.05 = 1.28 % wait longer, at 17 0.54 %. The
			// mean wait alone needs 12 (the Erlang C example: 44.9 ms).
			want: []string{`data-plan="recommended_workers">17 workers</p>`,
				`<th scope="row">Wait floor</th><td class="num">17 workers</td>`,
				`<th scope="row">Mean wait floor</th><td class="num">12 workers</td>`,
			},
		},
		{
			name:   "the Erlang C example's mean wait at 12 workers",
			query:  "arrival_rate=50&workers=10&service_time=0.2&concurrency=1&backlog=0&drain_target=15&utilization=0.9&latency_target=0.05&cap=12",
			status: http.StatusOK,
			want:   []string{`<td class="num">44.9 ms</td>`},
		},
		{
			name:   "a cap below the target",
			query:  exampleQuery + "&cap=9",
			status: http.StatusOK,
			want: []string{`<section class="headline capped"`, "the plan is blocked at 9 workers",
				`<th scope="row">capped</th><td class="num">9</td>`},
		},
		{
			name:   "an empty form",
			query:  "",
			status: http.StatusOK,
			want:   []string{"No plan yet", `value="0.8"`, `value="15"`},
			absent: []string{`data-plan="recommended_workers"`, "field-error"},
		},
		{
			name:   "bad numbers are named next to their fields",
			query:  "arrival_rate=lots&workers=8.5&per_worker=2.4&backlog=-1&drain_target=30&utilization=1.5",
			status: http.StatusBadRequest,
			errors: map[string]string{"arrival_rate": "must be a number", "workers": "whole number",
				"backlog": "between 0 and", "utilization": "(0, 1]"},
			want:   []string{`aria-invalid="true"`, `role="alert"`, `value="lots"`},
			absent: []string{`data-plan="recommended_workers"`},
		},
		{
			name:   "required fields",
			query:  "queue=q&arrival_rate=&workers=&per_worker=&backlog=&drain_target=&utilization=",
			status: http.StatusBadRequest,
			errors: map[string]string{"arrival_rate": "required", "workers": "required", "backlog": "required",
				"drain_target": "required", "utilization": "required", "per_worker": "required"},
		},
		{
			name:   "a throughput and a service time",
			query:  exampleQuery + "&service_time=0.4",
			status: http.StatusBadRequest,
			errors: map[string]string{"per_worker": "not both"},
		},
		{
			name:   "a drain target in minutes checked in seconds",
			query:  "arrival_rate=1&workers=1&per_worker=1&backlog=0&drain_target=0.001&utilization=0.8",
			status: http.StatusBadRequest,
			errors: map[string]string{"drain_target": "the form takes minutes"},
		},
		{
			name:   "a queue name is escaped",
			query:  exampleQuery[len("queue=example"):] + "&queue=" + url.QueryEscape(`<script>alert("q")</script>`),
			status: http.StatusOK,
			want:   []string{`value="&lt;script&gt;alert(&#34;q&#34;)&lt;/script&gt;"`},
			absent: []string{`<script>alert`},
		},
		{
			name:   "huge and odd numbers give no server error",
			query:  "arrival_rate=1e308&workers=99999999999&per_worker=NaN&backlog=Inf&drain_target=-0&utilization=0x10&cap=1e400",
			status: http.StatusBadRequest,
			errors: map[string]string{"per_worker": "must be a number", "backlog": "must be a number",
				"workers": "between 0 and", "arrival_rate": "between 0 and"},
		},
		{
			name:   "an unknown group",
			query:  "group=nope",
			status: http.StatusBadRequest,
			want:   []string{`There is no group named &#34;nope&#34;.`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := get(t, h, "/plan?"+tt.query)
			body := rec.Body.String()
			if rec.Code != tt.status {
				t.Fatalf("GET /plan?%s: %d, want %d\n%s", tt.query, rec.Code, tt.status, body)
			}
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("the page lacks %s", w)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(body, a) {
					t.Errorf("the page has %s", a)
				}
			}
			for id, part := range tt.errors {
				if got := fieldError(body, id); !strings.Contains(got, part) {
					t.Errorf("error of %s: %q, want it to contain %q", id, got, part)
				}
			}
		})
	}
}

func TestPlanPrefilledFromGroup(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 12, 10*time.Second)
	h := newTestHandler(c, now)
	busy := c.Views().Groups()[0]
	d := busy.Decision
	if d == nil || d.ArrivalRate == nil {
		t.Fatal("the busy group has no arrival estimate")
	}
	rec := get(t, h, "/plan?group="+url.QueryEscape(groupBusy))
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /plan?group=%s: %d\n%s", groupBusy, rec.Code, body)
	}
	tests := []struct {
		id, want string
	}{
		{"queue", groupBusy},
		{"arrival_rate", strconv.FormatFloat(math.Round(*d.ArrivalRate*1e4)/1e4, 'f', -1, 64)}, // to 4 decimals
		{"workers", strconv.Itoa(d.CurrentWorkers)},
		{"per_worker", ""},
		{"service_time", "0.4"},
		{"concurrency", "1"},
		{"backlog", strconv.FormatInt(d.Backlog, 10)},
		{"drain_target", "15"},
		{"utilization", "0.8"},
		{"latency_target", "30"},
		{"start_delay", "90"},
		{"safety", "0"},
		{"cap", "30"}, // the cap, lower than the max of 40
		{"burst", "0"},
		{"overhead", "0"},
	}
	for _, tt := range tests {
		if got := inputValue(t, body, tt.id); got != tt.want {
			t.Errorf("input %s prefilled with %q, want %q", tt.id, got, tt.want)
		}
	}
	if !strings.Contains(body, `data-plan="recommended_workers">`) {
		t.Errorf("no plan computed from the group's numbers")
	}
	if !strings.Contains(body, `<input type="hidden" name="group" value="thumbnails">`) {
		t.Errorf("the form does not carry the group")
	}

	// What the query gives wins over the group's numbers.
	rec = get(t, h, "/plan?group="+groupBusy+"&workers=3")
	if got := inputValue(t, rec.Body.String(), "workers"); got != "3" {
		t.Errorf("workers %q with workers=3 in the query, want 3", got)
	}
}

func TestPlanExports(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 0, time.Second)
	h := newTestHandler(c, now)

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		rec := get(t, h, "/plan.json?"+exampleQuery)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Fatalf("GET /plan.json: %d %s", rec.Code, rec.Header().Get("Content-Type"))
		}
		var p struct {
			Queue       string `json:"queue"`
			Recommended int    `json:"recommended_workers"`
			Current     struct {
				Drain *float64 `json:"drain_seconds"`
			} `json:"current"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		if p.Queue != "example" || p.Recommended != 10 || p.Current.Drain == nil || *p.Current.Drain != 2500 {
			t.Errorf("plan %+v, want queue example, 10 workers, current drain 2500 s", p)
		}
	})

	t.Run("CSV", func(t *testing.T) {
		t.Parallel()
		rec := get(t, h, "/plan.csv?"+exampleQuery)
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
			t.Fatalf("GET /plan.csv: %d %s", rec.Code, rec.Header().Get("Content-Type"))
		}
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename="plan-example.csv"` {
			t.Errorf("Content-Disposition %q", cd)
		}
		if !strings.HasPrefix(rec.Body.String(), "section,") {
			t.Errorf("CSV starts %q", rec.Body.String()[:min(60, rec.Body.Len())])
		}
	})

	t.Run("bad input", func(t *testing.T) {
		t.Parallel()
		rec := get(t, h, "/plan.json?arrival_rate=12&workers=8&per_worker=2.4&backlog=18000&drain_target=30&utilization=2")
		if rec.Code != http.StatusBadRequest {
			t.Fatalf("GET /plan.json with utilization 2: %d, want 400", rec.Code)
		}
		var e struct {
			Errors []formError `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if len(e.Errors) != 1 || e.Errors[0].Field != "utilization" {
			t.Errorf("errors %+v, want one naming utilization", e.Errors)
		}
		rec = get(t, h, "/plan.csv?utilization=2")
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "Utilization ceiling:") {
			t.Errorf("GET /plan.csv with bad input: %d %s", rec.Code, rec.Body)
		}
		rec = get(t, h, "/plan.json")
		if rec.Code != http.StatusBadRequest {
			t.Errorf("GET /plan.json without inputs: %d, want 400", rec.Code)
		}
	})
}

func TestGroupCap(t *testing.T) {
	t.Parallel()
	asg := func(maxSize int) model.Fleet {
		return model.Fleet{Kind: model.KindAutoScaling, Known: true, Min: 0, Max: maxSize}
	}
	tests := []struct {
		name          string
		limit, maxima int
		f             model.Fleet
		want          int
	}{
		{"neither", 0, 0, model.Fleet{}, 0},
		{"only a max", 0, 40, model.Fleet{}, 40},
		{"only a cap", 30, 0, model.Fleet{}, 30},
		{"the cap is lower", 30, 40, model.Fleet{}, 30},
		{"the max is lower", 50, 40, model.Fleet{}, 40},
		{"the group's own max is lowest", 50, 40, asg(25), 25},
		{"the group's own max alone", 0, 0, asg(25), 25},
		{"the group's own max above both", 30, 40, asg(60), 30},
		{"an ECS service's 0 is none", 0, 40, model.Fleet{Kind: "ecs", Known: true}, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := policy.Settings{Min: 1, Max: tt.maxima, Cap: 7}
			if got := groupCap(s, tt.limit, tt.f); got != tt.want {
				t.Errorf("groupCap(max %d, %d, %+v) = %d, want %d", tt.maxima, tt.limit, tt.f, got, tt.want)
			}
		})
	}
}

func TestFileSafe(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"plain", "emails-eu_1.v2", "emails-eu_1.v2"},
		{"quotes and slashes", `a"b/c\d`, "a_b_c_d"},
		{"long", strings.Repeat("x", 100), strings.Repeat("x", 64)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := fileSafe(tt.in); got != tt.want {
				t.Errorf("fileSafe(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// A group that sizes with its measured fleet prefills the planner with
// what was measured: the per-worker throughput (not the configured service
// time), the start delay and the learned ceiling, below a looser cap.
func TestPlanPrefilledWithTheMeasuredFleet(t *testing.T) {
	t.Parallel()
	pw, sd, conf, svc := 2.4, 95.0, 0.9, 0.41
	ceiling := 18
	view := func(sizing string) readmodel.GroupView {
		return readmodel.GroupView{
			Settings: policy.Settings{Group: "g", ServiceTime: 200 * time.Millisecond, Concurrency: 4,
				Latency: 30 * time.Second, StartDelay: time.Minute, Max: 40, Cap: 30},
			Decision: &model.Decision{CurrentWorkers: 10, Measured: model.Measured{
				ServiceTimeSeconds: &svc, PerWorkerThroughput: &pw, StartDelaySeconds: &sd,
				Confidence: &conf, CeilingWorkers: &ceiling, SizingWith: sizing}},
		}
	}
	tests := []struct {
		sizing string
		want   map[string]string
	}{
		{"measured", map[string]string{"per_worker": "2.4", "concurrency": "1", "start_delay": "95", "cap": "18"}},
		// Not yet trusted: the configured service time, but the measured
		// start delay and ceiling (learn: act) still apply.
		{"configured", map[string]string{"service_time": "0.2", "concurrency": "4", "start_delay": "95", "cap": "18"}},
	}
	for _, tt := range tests {
		p := groupPrefill(view(tt.sizing))
		for k, want := range tt.want {
			if p[k] != want {
				t.Errorf("sizing with the %s value: %s prefilled %q, want %q", tt.sizing, k, p[k], want)
			}
		}
		if tt.sizing == "measured" && p["service_time"] != "" {
			t.Errorf("the configured service time %q prefilled beside the measured throughput", p["service_time"])
		}
	}
}

// The planner in dollars: the planner example's 10 workers at $0.0416 a worker-hour
// are 10 × 0.0416 × 730 = $303.68 a month and $0.42 an hour (0.416
// rounded to the cent); without a price the page says so.
func TestPlanPageDollars(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 0, time.Second)
	h := newTestHandler(c, now)
	body := get(t, h, "/plan?"+exampleQuery+"&worker_cost=0.0416").Body.String()
	for _, want := range []string{"$303.68 a month", "$0.42 an hour", `data-chart="promise"`, "Price of the promise", "(current)"} {
		if !strings.Contains(body, want) {
			t.Errorf("the priced plan lacks %q", want)
		}
	}
	body = get(t, h, "/plan?"+exampleQuery).Body.String()
	if !strings.Contains(body, "no price set") || strings.Contains(body, "$303.68") {
		t.Errorf("a plan without a price does not say so")
	}
	if rec := get(t, h, "/plan?"+exampleQuery+"&worker_cost=-1"); rec.Code != http.StatusBadRequest ||
		!strings.Contains(rec.Body.String(), `data-error-for="worker_cost"`) {
		t.Errorf("a negative price: %d, want 400 naming the field", rec.Code)
	}
}
