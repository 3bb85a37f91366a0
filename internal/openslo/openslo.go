// Package openslo writes each group's latency promise as an OpenSLO SLO
// document, for users who generate their SLO rules and dashboards with
// their own tools: the share of messages started within the promise, from
// the checker's two counters, against target.latency_quantile over
// target.slo_window (docs/observability.md, "The promise as an SLO").
//
// Two versions of the format are written: v1, the current one, whose
// indicator is a ratio of two counters; and v1alpha, the one Sloth reads
// (`sloth generate -i FILE`), whose queries carry Sloth's {{.window}}
// placeholder and whose window is a whole number of days.
package openslo

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Versions of the format, as --openslo names them.
const (
	V1      = "v1"
	V1Alpha = "v1alpha"
)

// The checker's counters the indicator divides.
const (
	WithinMetric = "checker_slo_messages_within_promise_total"
	LateMetric   = "checker_slo_messages_late_total"
)

// Group is one group's promise as an SLO.
type Group struct {
	Name      string        // the group's name, its series' group label
	Promise   time.Duration // target.latency
	Objective float64       // target.latency_quantile
	Window    time.Duration // target.slo_window
}

// Problem is a group that a version cannot express.
type Problem struct {
	Index int // the group's index in the configuration
	Msg   string
}

// Documents writes one SLO document per group in the version asked, as a
// YAML stream of documents. Groups the version cannot express are returned
// as problems, and nothing is written.
func Documents(groups []Group, version string) ([]byte, []Problem, error) {
	if version != V1 && version != V1Alpha {
		return nil, nil, fmt.Errorf("unknown OpenSLO version %q: want %s or %s", version, V1, V1Alpha)
	}
	var problems []Problem
	docs := make([]any, 0, len(groups))
	names := map[string]bool{}
	for i, g := range groups {
		name := uniqueName(resourceName(g.Name), names)
		switch version {
		case V1:
			docs = append(docs, v1Doc(g, name))
		case V1Alpha:
			if g.Window <= 0 || g.Window%(24*time.Hour) != 0 {
				problems = append(problems, Problem{Index: i, Msg: fmt.Sprintf(
					"the window %s is not a whole number of days, which OpenSLO v1alpha needs; write it in days or use --openslo v1", durationText(g.Window))})
				continue
			}
			docs = append(docs, v1AlphaDoc(g, name))
		}
	}
	if len(problems) > 0 {
		return nil, problems, nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return nil, nil, fmt.Errorf("encode OpenSLO: %w", err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, nil, fmt.Errorf("encode OpenSLO: %w", err)
	}
	return b.Bytes(), nil, nil
}

// resourceName is a group's name as an OpenSLO name (lower-case letters,
// digits and '-'): queue-checker-<group>.
func resourceName(group string) string {
	var b strings.Builder
	b.WriteString("queue-checker-")
	for _, r := range strings.ToLower(group) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// uniqueName is name, or name-2, name-3... when groups whose names differ
// only in case or punctuation would share it.
func uniqueName(name string, seen map[string]bool) string {
	out := name
	for n := 2; seen[out]; n++ {
		out = name + "-" + strconv.Itoa(n)
	}
	seen[out] = true
	return out
}

// selector is the PromQL selector of a counter of group g.
func selector(metric, group string) string {
	return metric + `{group=` + strconv.Quote(group) + `}`
}

func description(g Group) string {
	return fmt.Sprintf("Messages of queue-checker group %s that a worker started within %s of their arrival, as the checker estimates from the SQS counts (%s and %s).",
		g.Name, durationText(g.Promise), WithinMetric, LateMetric)
}

// durationText writes d in its largest whole unit: 30d, 36h, 90m, 45s.
func durationText(d time.Duration) string {
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if d > 0 && d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return d.String()
}

type metadata struct {
	Name        string `yaml:"name"`
	DisplayName string `yaml:"displayName,omitempty"`
}

// The v1 document: an SLO with its indicator inline.
type (
	v1SLO struct {
		APIVersion string    `yaml:"apiVersion"`
		Kind       string    `yaml:"kind"`
		Metadata   metadata  `yaml:"metadata"`
		Spec       v1SLOSpec `yaml:"spec"`
	}
	v1SLOSpec struct {
		Description     string         `yaml:"description"`
		Service         string         `yaml:"service"`
		Indicator       v1Indicator    `yaml:"indicator"`
		BudgetingMethod string         `yaml:"budgetingMethod"`
		TimeWindow      []v1TimeWindow `yaml:"timeWindow"`
		Objectives      []v1Objective  `yaml:"objectives"`
	}
	v1Indicator struct {
		Metadata metadata `yaml:"metadata"`
		Spec     struct {
			RatioMetric v1RatioMetric `yaml:"ratioMetric"`
		} `yaml:"spec"`
	}
	v1RatioMetric struct {
		Counter bool           `yaml:"counter"`
		Good    v1MetricHolder `yaml:"good"`
		Total   v1MetricHolder `yaml:"total"`
	}
	v1MetricHolder struct {
		MetricSource struct {
			Type string            `yaml:"type"`
			Spec map[string]string `yaml:"spec"`
		} `yaml:"metricSource"`
	}
	v1TimeWindow struct {
		Duration  string `yaml:"duration"`
		IsRolling bool   `yaml:"isRolling"`
	}
	v1Objective struct {
		DisplayName string  `yaml:"displayName"`
		Target      float64 `yaml:"target"`
	}
)

func prometheusSource(query string) v1MetricHolder {
	var h v1MetricHolder
	h.MetricSource.Type = "Prometheus"
	h.MetricSource.Spec = map[string]string{"query": query}
	return h
}

// v1Doc: good is the within counter, total the within and late counters
// added series by series (each checker's pair shares its labels); both
// are counters, which the consumer rates over its own windows.
func v1Doc(g Group, name string) v1SLO {
	d := v1SLO{APIVersion: "openslo/v1", Kind: "SLO",
		Metadata: metadata{Name: name, DisplayName: "Latency promise of " + g.Name}}
	d.Spec.Description = description(g)
	d.Spec.Service = "queue-checker"
	d.Spec.Indicator.Metadata = metadata{Name: name + "-within-promise",
		DisplayName: "Share of messages started within " + durationText(g.Promise)}
	d.Spec.Indicator.Spec.RatioMetric = v1RatioMetric{
		Counter: true,
		Good:    prometheusSource(selector(WithinMetric, g.Name)),
		Total:   prometheusSource(selector(WithinMetric, g.Name) + " + " + selector(LateMetric, g.Name)),
	}
	d.Spec.BudgetingMethod = "Occurrences"
	d.Spec.TimeWindow = []v1TimeWindow{{Duration: durationText(g.Window), IsRolling: true}}
	d.Spec.Objectives = []v1Objective{{DisplayName: "started within " + durationText(g.Promise), Target: g.Objective}}
	return d
}

// The v1alpha document, as Sloth reads it.
type (
	v1AlphaSLO struct {
		APIVersion string         `yaml:"apiVersion"`
		Kind       string         `yaml:"kind"`
		Metadata   metadata       `yaml:"metadata"`
		Spec       v1AlphaSLOSpec `yaml:"spec"`
	}
	v1AlphaSLOSpec struct {
		Service         string             `yaml:"service"`
		Description     string             `yaml:"description"`
		BudgetingMethod string             `yaml:"budgetingMethod"`
		Objectives      []v1AlphaObjective `yaml:"objectives"`
		TimeWindows     []v1AlphaWindow    `yaml:"timeWindows"`
	}
	v1AlphaObjective struct {
		DisplayName  string `yaml:"displayName"`
		RatioMetrics struct {
			Good  v1AlphaQuery `yaml:"good"`
			Total v1AlphaQuery `yaml:"total"`
		} `yaml:"ratioMetrics"`
		Target float64 `yaml:"target"`
	}
	v1AlphaQuery struct {
		Source    string `yaml:"source"`
		QueryType string `yaml:"queryType"`
		Query     string `yaml:"query"`
	}
	v1AlphaWindow struct {
		Count     int    `yaml:"count"`
		Unit      string `yaml:"unit"`
		IsRolling bool   `yaml:"isRolling"`
	}
)

// rateOver is the per-second rate of a group's counter summed over the
// checkers that export it, over Sloth's window placeholder.
func rateOver(metric, group string) string {
	return "sum(rate(" + selector(metric, group) + "[{{.window}}]))"
}

func v1AlphaDoc(g Group, name string) v1AlphaSLO {
	d := v1AlphaSLO{APIVersion: "openslo/v1alpha", Kind: "SLO",
		Metadata: metadata{Name: name, DisplayName: "Latency promise of " + g.Name}}
	d.Spec.Service = "queue-checker"
	d.Spec.Description = description(g)
	d.Spec.BudgetingMethod = "Occurrences"
	o := v1AlphaObjective{DisplayName: "started within " + durationText(g.Promise), Target: g.Objective}
	o.RatioMetrics.Good = v1AlphaQuery{Source: "prometheus", QueryType: "promql", Query: rateOver(WithinMetric, g.Name)}
	o.RatioMetrics.Total = v1AlphaQuery{Source: "prometheus", QueryType: "promql",
		Query: "(" + rateOver(WithinMetric, g.Name) + " + " + rateOver(LateMetric, g.Name) + ")"}
	d.Spec.Objectives = []v1AlphaObjective{o}
	d.Spec.TimeWindows = []v1AlphaWindow{{Count: int(g.Window / (24 * time.Hour)), Unit: "Day", IsRolling: true}}
	return d
}
