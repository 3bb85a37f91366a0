package web

import (
	"fmt"
	"html/template"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// statusPage is what the status template renders.
type statusPage struct {
	Title  string
	Doc    groupsDoc
	Groups []statusGroup
	Config pageConfig
}

// statusGroup is one group's panel.
type statusGroup struct {
	Index   int
	Doc     groupDoc
	G       map[string]any // the group's JSON object
	Diag    diagnosis
	Charts  []chartView
	Knee    kneeView
	Changes []changeRow // most recent first
}

// changeRow is one change of the desired count, as the page writes it.
type changeRow struct {
	At       time.Time
	From, To string
	Reasons  string
}

// pageConfig is handed to the page's script in a JSON data block, so the
// script and the server share one copy of the words and the chart layout.
type pageConfig struct {
	RefreshMs int64 `json:"refresh_ms"`
	// Group is the one group the page shows (?group=NAME); "" for all.
	Group     string               `json:"group,omitempty"`
	Diagnoses map[string]diagnosis `json:"diagnoses"`
	Charts    []chartSpec          `json:"charts"`
	Knee      kneeSpec             `json:"knee"`
	Geometry  chartGeometry        `json:"geometry"`
}

func newStatusPage(o Options, doc groupsDoc) (statusPage, error) {
	generic, err := genericGroups(doc)
	if err != nil {
		return statusPage{}, err
	}
	p := statusPage{
		Title: "Queue status",
		Doc:   doc,
		Config: pageConfig{
			RefreshMs: refreshEvery(o.refreshInterval()).Milliseconds(),
			Diagnoses: diagnoses,
			Charts:    charts,
			Knee:      knee,
			Geometry:  geometry,
		},
	}
	for i, g := range doc.Groups {
		sg := statusGroup{Index: i, Doc: g, G: generic[i], Diag: diagnosisOf("unknown")}
		if g.Decision != nil {
			sg.Diag = diagnosisOf(g.Decision.Diagnosis)
		}
		for _, spec := range charts {
			c := renderChart(spec, generic[i], g.History, doc.GeneratedAt)
			c.ID = fmt.Sprintf("g%d-%s", i, spec.ID)
			sg.Charts = append(sg.Charts, c)
		}
		sg.Knee = renderKnee(knee, generic[i], g.FleetMinutes)
		sg.Knee.ID = fmt.Sprintf("g%d-%s", i, knee.ID)
		for j := len(g.Changes) - 1; j >= 0; j-- {
			c := g.Changes[j]
			sg.Changes = append(sg.Changes, changeRow{At: c.At, From: formatNumber(float64(c.From)),
				To: formatNumber(float64(c.To)), Reasons: changeReasons(c)})
		}
		p.Groups = append(p.Groups, sg)
	}
	return p, nil
}

// changeReasons is the reasons column of a change: the decision's reasons,
// then why it was not acted on (status.js writes the same).
func changeReasons(c readmodel.Change) string {
	rs := c.Reasons
	if c.NotActed != nil {
		rs = append(slices.Clip(rs), "not acted on: "+c.NotActed.Message)
	}
	return strings.Join(rs, "; ")
}

// fieldHTML is the template function `field`: one number of the page with
// its hook for the script and the tests.
func fieldHTML(g map[string]any, path, format string, null ...string) template.HTML {
	nullText := ""
	nullAttr := ""
	if len(null) > 0 {
		nullText = null[0]
		nullAttr = fmt.Sprintf(` data-null="%s"`, template.HTMLEscapeString(nullText))
	}
	return template.HTML(fmt.Sprintf(`<span data-field="%s" data-fmt="%s"%s>%s</span>`,
		template.HTMLEscapeString(path), template.HTMLEscapeString(format), nullAttr,
		template.HTMLEscapeString(formatField(g, path, format, nullText))))
}

// meterMax is the top of a ratio meter: twice the target.
const meterMax = 2

// meterHTML is the template function `meter`: the value at path against its
// target at of, as a <meter> (empty when either is unknown).
func meterHTML(g map[string]any, path, of, label string) template.HTML {
	r, ok := meterValue(g, path, of)
	value := "0"
	if ok {
		value = strconv.FormatFloat(math.Min(r, meterMax), 'f', -1, 64)
	}
	hidden := ""
	if !ok {
		hidden = " hidden"
	}
	return template.HTML(fmt.Sprintf(
		`<meter data-meter="%s" data-of="%s" min="0" max="%d" low="0.75" high="1" optimum="0" value="%s" aria-label="%s"%s></meter>`,
		template.HTMLEscapeString(path), template.HTMLEscapeString(of), meterMax, value,
		template.HTMLEscapeString(label), hidden))
}

// truthy is the template function `shown`: whether a notice bound to the
// value at path is shown (true, a non-empty string, a non-zero number).
func truthy(g map[string]any, path string) bool {
	switch v := lookup(g, path).(type) {
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return false
}

// serveStatus is the status page: every group's panel; or, with more than
// manyGroups groups, an overview of them all; or, with ?group=NAME, that
// group's panel alone.
func (s *site) serveStatus(w http.ResponseWriter, r *http.Request) {
	var doc groupsDoc
	name, one := groupParam(r)
	switch {
	case one:
		var ok bool
		if doc, ok = oneGroupDoc(s.o, name); !ok {
			http.Error(w, "no group named "+echoName(name), http.StatusNotFound)
			return
		}
	case s.o.views().NumGroups() > manyGroups:
		s.render(w, r, "summary", http.StatusOK, newSummaryPage(s.o))
		return
	default:
		doc = groupsOf(s.o)
	}
	p, err := newStatusPage(s.o, doc)
	if one {
		p.Config.Group = name
	}
	if err != nil {
		http.Error(w, "status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	s.render(w, r, "status", http.StatusOK, p)
}
