package web

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Every number of the status page is an element
//
//	<span data-field="decision.backlog" data-fmt="count">18,000</span>
//
// whose data-field is a path into the group's object of /api/v1/groups and
// whose data-fmt names how it is written. The server fills it in from the
// same document the endpoint serves; the page's script refills it after
// each refresh with the same formatting (assets/status.js). A browser test
// holds the two to each other.

// genericGroups is a groups document in its JSON form: maps, slices,
// float64, string, bool and nil, as the script sees it.
func genericGroups(doc groupsDoc) ([]map[string]any, error) {
	b, err := json.Marshal(doc.Groups)
	if err != nil {
		return nil, fmt.Errorf("encode groups: %w", err)
	}
	var out []map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode groups: %w", err)
	}
	return out, nil
}

// lookup follows a dotted path of object keys; nil when any step is missing.
func lookup(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// formatField writes the value at path of group g in format f. nullText is
// written for a missing or null value ("unknown" when empty).
func formatField(g map[string]any, path, f, nullText string) string {
	if nullText == "" {
		nullText = "unknown"
	}
	v := lookup(g, path)
	if f == "drain" && v == nil {
		// The policy leaves the drain time out when the backlog never
		// drains, and when the arrival rate is unknown.
		if lookup(g, "decision") != nil && lookup(g, "decision.arrival_rate") != nil {
			return "never"
		}
		return nullText
	}
	if v == nil {
		return nullText
	}
	x, isNum := v.(float64)
	switch f {
	case "count":
		if isNum {
			return formatNumber(math.Round(x))
		}
	case "number":
		if isNum {
			return formatNumber(x)
		}
	case "rate":
		if isNum {
			return formatNumber(x) + " msg/s"
		}
	case "seconds", "drain":
		if isNum {
			return formatSeconds(x)
		}
	case "promise":
		if isNum {
			if x == 0 {
				return "none"
			}
			return formatSeconds(x)
		}
	case "percent":
		if isNum {
			return formatPercent(x)
		}
	case "cap":
		if isNum {
			if x == 0 {
				return "none"
			}
			return formatNumber(math.Round(x))
		}
	case "ago":
		if isNum {
			return formatSeconds(math.Round(x)) + " ago"
		}
	case "clock":
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return formatClock(t)
			}
		}
	case "diagnosis":
		if s, ok := v.(string); ok {
			return diagnosisOf(s).Label
		}
	case "action":
		if m, ok := v.(map[string]any); ok {
			return actionText(m)
		}
	case "text":
		if s, ok := v.(string); ok {
			if s == "" {
				return nullText
			}
			return s
		}
	}
	return nullText
}

// actionText says what was done with the last decision.
func actionText(a map[string]any) string {
	num := func(k string) float64 { x, _ := a[k].(float64); return x }
	var parts []string
	if s, _ := a["scaled"].(bool); s {
		parts = append(parts, fmt.Sprintf("desired set %s → %s", formatNumber(num("from")), formatNumber(num("to"))))
	} else {
		parts = append(parts, "desired count not changed")
	}
	if n := num("metrics_published"); n > 0 {
		parts = append(parts, formatNumber(n)+" metrics published")
	}
	if d, _ := a["dry_run"].(bool); d {
		parts = append(parts, "dry run: nothing changed in AWS")
	}
	return strings.Join(parts, "; ")
}

// meterValue is the ratio of the value at path to the value at of, for a
// <meter>; ok is false when either is unknown or the reference is 0.
func meterValue(g map[string]any, path, of string) (float64, bool) {
	x, ok1 := lookup(g, path).(float64)
	r, ok2 := lookup(g, of).(float64)
	if !ok1 || !ok2 || !(r > 0) {
		return 0, false
	}
	return x / r, true
}

// diagnosis is a diagnosis state in words, with what to do about it.
type diagnosis struct {
	Label  string `json:"label"`
	Means  string `json:"means"`
	Advice string `json:"advice"`
	// Level is how it is shown: ok, info, warn or bad.
	Level string `json:"level"`
}

// diagnoses read depth and age against in-flight: each
// state has its own fix, and only under-provisioning is solved by scaling
// out.
var diagnoses = map[string]diagnosis{
	model.DiagHealthy: {Label: "Healthy", Level: "ok",
		Means:  "The workers keep pace with arrivals and the backlog is within its target.",
		Advice: "Nothing to do."},
	model.DiagIdle: {Label: "Idle", Level: "ok",
		Means:  "Nothing is waiting and nothing is arriving.",
		Advice: "Nothing to do; the fleet can rest at its minimum."},
	model.DiagDraining: {Label: "Draining", Level: "info",
		Means:  "A backlog is waiting and the workers are clearing it faster than work arrives.",
		Advice: "Watch the drain time against the target; nothing to do while it falls."},
	model.DiagUnderProvisioned: {Label: "Under-provisioned", Level: "warn",
		Means:  "Work arrives faster than the workers finish it, or the backlog will not clear within its target.",
		Advice: "Scale out: let the checker raise the desired count, and raise the max or the cap if they hold it back."},
	model.DiagLate: {Label: "Late", Level: "warn",
		Means:  "The oldest message has waited longer than the promise, though the workers seem to keep pace.",
		Advice: "Check how old the oldest-age figure is (its CloudWatch minute), and look for messages received and not deleted or hidden by a long visibility timeout; the checker sizes for the old message meanwhile."},
	model.DiagCatchingUp: {Label: "Catching up", Level: "info",
		Means:  "The workers the load needs are asked for and still starting; the oldest message is within the promise.",
		Advice: "Nothing to do: they arrive once their start delay has passed."},
	model.DiagNotConsuming: {Label: "Not consuming", Level: "bad",
		Means:  "Messages wait but almost none are in flight: the workers are not receiving.",
		Advice: "Check the consumers' logs, their permissions on the queue and crash loops. More workers will not help."},
	model.DiagStuck: {Label: "Stuck", Level: "bad",
		Means:  "Workers hold messages in flight without completing them.",
		Advice: "Check downstream: the database, third-party calls and the timeouts the handlers wait on. More workers add contention, not throughput."},
	model.DiagCapped: {Label: "Capped", Level: "warn",
		Means:  "The cap or the max keeps the fleet below what the backlog needs.",
		Advice: "Raise the cap (or the max) if the downstream can take it, or reduce the work."},
	model.DiagDownstreamLimited: {Label: "Downstream-limited", Level: "warn",
		Means:  "Workers added past the learned ceiling raised completions by little: something they share (a connection pool, a database, a rate limit, a FIFO queue's message groups) is the bottleneck.",
		Advice: "Measure where the service time goes before adding workers: raise the downstream's limit, or accept the ceiling. The checker probes above it now and then and lets the fleet grow once throughput follows."},
	model.DiagMessagesHeld: {Label: "Messages held", Level: "bad",
		Means:  "Workers receive messages and do not delete them: in flight stays far above what the deletions explain. Poison messages with no dead-letter queue, an outage of what the workers call, or a downstream that refuses the work.",
		Advice: "Give the queue a dead-letter queue (a redrive policy with maxReceiveCount, such as 5) so that poison messages leave it, and check the workers' errors and what they call. The fleet is held at its count from before: more workers only receive the same messages again."},
	model.DiagUnknown: {Label: "Unknown", Level: "bad",
		Means:  "No data: no queue answered, or no cycle has run yet.",
		Advice: "Check the queue failures below, the checker's logs and its permissions. The fleet is held at its last good size."},
}

func diagnosisOf(state string) diagnosis {
	if d, ok := diagnoses[state]; ok {
		return d
	}
	return diagnosis{Label: state, Level: "info", Means: "A state this page does not know: " + state + ".", Advice: "See the reasons below."}
}
