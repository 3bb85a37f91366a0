package web

import (
	"cmp"
	"fmt"
	"html"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// manyGroups is the number of groups above which the status page shows an
// overview of every group and one group's panel on demand (?group=NAME),
// instead of every panel: thousands of panels with their charts would make
// a page of tens of megabytes.
const manyGroups = 50

// summaryPage is what the summary template renders.
type summaryPage struct {
	Title       string
	GeneratedAt time.Time
	Total       int
	Counts      []stateCount // per diagnosis, most severe first
	Rows        []summaryRow // most severe first, then in configuration order
	// RowsHTML is the table's rows, written out here: for thousands of rows
	// html/template's per-value escaping through reflection costs ten times
	// more. Every text is escaped with html.EscapeString.
	RowsHTML template.HTML
	// AWSCost is the checker's own AWS bill, as a sentence.
	AWSCost string
}

type stateCount struct {
	Label, Level string
	N            int
}

// summaryRow is one group, formatted.
type summaryRow struct {
	Name, Link          string
	Label, Level, Flags string
	Backlog, Oldest     string
	Current, Desired    string
	severity            int
}

var levelSeverity = map[string]int{"bad": 0, "warn": 1, "info": 2, "ok": 3}

func newSummaryPage(o Options) summaryPage {
	sums := o.views().Summaries()
	p := summaryPage{Title: "Queue status", GeneratedAt: o.Now(), Total: len(sums), Rows: make([]summaryRow, 0, len(sums)),
		AWSCost: awsCostOf(o.views().AWSCost()).Summary}
	counts := map[string]*stateCount{}
	for _, s := range sums {
		diag := diagnosisOf("unknown")
		r := summaryRow{Name: s.Name, Link: "?group=" + url.QueryEscape(s.Name),
			Backlog: "–", Oldest: "–", Current: "–", Desired: "–"}
		var flags []string
		if d := s.Decision; d != nil {
			diag = diagnosisOf(d.Diagnosis)
			r.Backlog = formatNumber(float64(d.Backlog))
			if d.OldestAgeSeconds != nil {
				r.Oldest = formatSeconds(*d.OldestAgeSeconds)
				if a := agesOf(d, p.GeneratedAt); a.OldestAgeNote != "" {
					r.Oldest += " (as of " + formatSeconds(math.Round(*a.OldestAge)) + " ago)"
				}
			}
			r.Current = formatNumber(float64(d.CurrentWorkers))
			r.Desired = formatNumber(float64(d.DesiredWorkers))
			switch {
			case d.Paused:
				flags = append(flags, "paused")
			case d.Held:
				flags = append(flags, "held: "+d.HoldReason)
			}
			if d.Pinned != nil {
				flags = append(flags, "pinned")
			}
			if d.Capped {
				flags = append(flags, "capped")
			}
		}
		if s.FleetError {
			flags = append(flags, "fleet not read")
		}
		if s.ActionError {
			flags = append(flags, "action failed")
		}
		r.Label, r.Level = diag.Label, diag.Level
		r.severity = levelSeverity[diag.Level]
		if len(flags) > 0 && r.severity > 1 {
			r.severity = 1 // a held, paused or failing group needs a look
		}
		for j, f := range flags {
			if j > 0 {
				r.Flags += ", "
			}
			r.Flags += f
		}
		p.Rows = append(p.Rows, r)
		c := counts[diag.Label]
		if c == nil {
			c = &stateCount{Label: diag.Label, Level: diag.Level}
			counts[diag.Label] = c
		}
		c.N++
	}
	slices.SortStableFunc(p.Rows, func(a, b summaryRow) int { return cmp.Compare(a.severity, b.severity) })
	var b strings.Builder
	b.Grow(len(p.Rows) * 200)
	cell := func(v string) {
		b.WriteString("<td>")
		b.WriteString(html.EscapeString(v))
		b.WriteString("</td>")
	}
	for _, r := range p.Rows {
		b.WriteString(`<tr><th scope="row"><a href="`)
		b.WriteString(html.EscapeString(r.Link))
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(r.Name))
		b.WriteString(`</a></th><td class="level-`)
		b.WriteString(html.EscapeString(r.Level))
		b.WriteString(`">`)
		b.WriteString(html.EscapeString(r.Label))
		b.WriteString("</td>")
		for _, v := range []string{r.Flags, r.Backlog, r.Oldest, r.Current, r.Desired} {
			cell(v)
		}
		b.WriteString("</tr>\n")
	}
	p.RowsHTML = template.HTML(b.String())

	for _, c := range counts {
		p.Counts = append(p.Counts, *c)
	}
	slices.SortFunc(p.Counts, func(a, b stateCount) int {
		return cmp.Or(cmp.Compare(levelSeverity[a.Level], levelSeverity[b.Level]), cmp.Compare(a.Label, b.Label))
	})
	return p
}

// oneGroupDoc is the document of the group named name alone.
func oneGroupDoc(o Options, name string) (groupsDoc, bool) {
	v, ok := o.views().Group(name)
	if !ok {
		return groupsDoc{}, false
	}
	now := o.Now()
	return groupsDoc{
		Groups:         []groupDoc{groupOf(v, now)},
		GeneratedAt:    now,
		RefreshSeconds: refreshEvery(o.refreshInterval()).Seconds(),
		AWSCost:        awsCostOf(o.views().AWSCost()),
	}, true
}

// groupParam is the ?group= of a request, and whether it was given.
// echoName is a group name from a request as an error repeats it: quoted,
// and cut short.
func echoName(name string) string {
	const most = 128
	if len(name) <= most {
		return strconv.Quote(name)
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return strconv.Quote(name[:cut]) + fmt.Sprintf("… (%d bytes)", len(name))
}

func groupParam(r *http.Request) (string, bool) {
	q := r.URL.Query()
	if !q.Has("group") {
		return "", false
	}
	return q.Get("group"), true
}
