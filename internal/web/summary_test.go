package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/policy/policytest"
)

// manyController is a controller of n groups, every group with a backlog
// of 100 and four workers, group 7 with a fleet that cannot be read, after
// cycles cycles every interval from testStart.
func manyController(tb testing.TB, n, cycles int, interval time.Duration) (*controller.Controller, time.Time) {
	tb.Helper()
	groups := make([]policy.Settings, n)
	for i := range groups {
		groups[i] = policytest.Settings(fmt.Sprintf("group-%05d", i), func(s *policy.Settings) {
			s.ServiceTime, s.Latency, s.StaleAfter = time.Second, 30*time.Second, time.Minute
		})
	}
	obs := controllertest.NewObserver(func(_ context.Context, now time.Time) ([]model.Observation, error) {
		out := make([]model.Observation, n)
		for i, g := range groups {
			age := 12.0
			out[i] = model.Observation{
				Sample: model.GroupSample{Group: g.Group, At: now, Visible: 100, Backlog: 100, Queues: 1, Answered: 1,
					OldestAge: &model.Reading{Value: age, At: now}},
				Fleet: model.Fleet{Kind: "autoscaling", Name: g.Group, At: now, Known: true, Desired: 4, InService: 4, Max: 50},
			}
			if i == 7 {
				out[i].Fleet = model.Fleet{Kind: "autoscaling", Name: g.Group, At: now, Err: fmt.Errorf("not found")}
			}
		}
		return out, nil
	})
	c, err := controller.New(controller.Options{Groups: groups, Observer: obs})
	if err != nil {
		tb.Fatal(err)
	}
	now := testStart
	for i := range cycles {
		now = testStart.Add(time.Duration(i) * interval)
		if _, err := c.RunOnce(context.Background(), now); err != nil {
			tb.Fatal(err)
		}
	}
	return c, now
}

func TestStatusPageSummarisesManyGroups(t *testing.T) {
	t.Parallel()
	const n = 5000
	c, now := manyController(t, n, 2, 5*time.Second)
	h := newTestHandler(c, now)

	rec := get(t, h, "/")
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d", rec.Code)
	}
	if rec.Body.Len() > 1<<20 {
		t.Errorf("the page of %d groups is %d bytes, want at most 1 MB", n, rec.Body.Len())
	}
	if strings.Contains(body, `<section class="group"`) || strings.Contains(body, "<svg") {
		t.Error("the summary renders panels or charts")
	}
	if got := strings.Count(body, `<a href="?group=group-`); got != n {
		t.Errorf("%d group links, want %d", got, n)
	}
	// The group whose fleet is not read comes first, flagged.
	first := strings.Index(body, `<a href="?group=group-`)
	if !strings.HasPrefix(body[first:], `<a href="?group=group-00007">`) || !strings.Contains(body, "fleet not read") {
		t.Errorf("the failing group is not listed first: %.200s", body[first:])
	}

	// One group's panel on demand, and its API document.
	rec = get(t, h, "/?group=group-00042")
	if rec.Code != http.StatusOK || strings.Count(rec.Body.String(), `<section class="group"`) != 1 ||
		!strings.Contains(rec.Body.String(), `data-group="group-00042"`) || !strings.Contains(rec.Body.String(), `"group":"group-00042"`) {
		t.Errorf("GET /?group=group-00042: %d, want one panel of that group and its name in the page config", rec.Code)
	}
	rec = get(t, h, "/api/v1/groups?group=group-00042")
	var doc struct {
		Groups []struct {
			Name string `json:"name"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil || len(doc.Groups) != 1 || doc.Groups[0].Name != "group-00042" {
		t.Errorf("API for one group: %d groups (%v)", len(doc.Groups), err)
	}
	for _, target := range []string{"/?group=nope", "/api/v1/groups?group=nope"} {
		if rec := get(t, h, target); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", target, rec.Code)
		}
	}
}

func TestFewGroupsKeepEveryPanel(t *testing.T) {
	t.Parallel()
	c, now := manyController(t, manyGroups, 1, 5*time.Second)
	body := get(t, newTestHandler(c, now), "/").Body.String()
	if got := strings.Count(body, `<section class="group"`); got != manyGroups {
		t.Errorf("%d panels for %d groups, want every one", got, manyGroups)
	}
}

// BenchmarkStatusPage5000 serves / for 5,000 groups with an hour of
// history at 5 s; bytes/op is the page's size.
func BenchmarkStatusPage5000(b *testing.B) {
	c, now := manyController(b, 5000, benchCycles, 5*time.Second)
	h := newTestHandler(c, now)
	b.ReportAllocs()
	size := 0
	for b.Loop() {
		rec := get(b, h, "/")
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// benchCycles is an hour of cycles at 5 s: the history the page's groups
// carry.
var benchCycles = 720

// TestSummaryEscapes: the overview writes its rows itself; a name and a
// hold reason that need escaping are escaped.
func TestSummaryEscapes(t *testing.T) {
	t.Parallel()
	groups := make([]policy.Settings, manyGroups+1)
	for i := range groups {
		groups[i] = policy.Settings{Group: fmt.Sprintf("g%d", i), ServiceTime: time.Second, Latency: 30 * time.Second, Max: 5}
	}
	groups[3].Group = groupOdd
	obs := controllertest.NewObserver(func(context.Context, time.Time) ([]model.Observation, error) { return nil, nil })
	c, err := controller.New(controller.Options{Groups: groups, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(context.Background(), testStart); err != nil {
		t.Fatal(err)
	}
	body := get(t, newTestHandler(c, testStart), "/").Body.String()
	if strings.Contains(body, groupOdd) || !strings.Contains(body, `&lt;b&gt;&#34;odd&#34; &amp; &#39;co&#39;&lt;/b&gt;`) {
		t.Errorf("the odd name is not escaped in the overview")
	}
	if !strings.Contains(body, `href="?group=%3Cb%3E%22odd%22+%26+%27co%27%3C%2Fb%3E"`) {
		t.Errorf("the odd group's link is not query-escaped")
	}
	if !strings.Contains(body, "held: missing data") {
		t.Errorf("the hold reason is not shown")
	}
}
