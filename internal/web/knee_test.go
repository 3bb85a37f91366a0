package web

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// drawKneeSVG renders the knee chart of minutes, with the ceiling when
// ceiling > 0, through the status page's template.
func drawKneeSVG(t *testing.T, minutes []readmodel.FleetMinute, ceiling float64) (kneeView, string) {
	t.Helper()
	g := map[string]any{"decision": map[string]any{"measured": map[string]any{"ceiling_workers": nil}}}
	if ceiling > 0 {
		g["decision"].(map[string]any)["measured"].(map[string]any)["ceiling_workers"] = ceiling
	}
	v := renderKnee(knee, g, minutes)
	v.ID = "g0-knee"
	pages, err := parsePages()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := pages["status"].ExecuteTemplate(&b, "knee", v); err != nil {
		t.Fatalf("render the knee chart: %v", err)
	}
	return v, b.String()
}

var (
	circleRE  = regexp.MustCompile(`<circle class="(dot(?: sat)?)" cx="([^"]+)" cy="([^"]+)" r="3"></circle>`)
	ceilingRE = regexp.MustCompile(`<line class="ref" data-ceiling x1="([^"]+)" x2="([^"]+)" y1="10" y2="148"( hidden)?></line>`)
	labelRE   = regexp.MustCompile(`<text class="ref-label" data-ceiling-label x="([^"]+)" y="10" dy="0.9em" text-anchor="(start|end)"( hidden)?>([^<]*)</text>`)
)

func TestKneeChart(t *testing.T) {
	t.Parallel()
	// The plot is x 52..390 (338 wide) and y 10..148 (138 high).
	minutes := []readmodel.FleetMinute{
		{Workers: 2, Completions: 4},
		{Workers: 5, Completions: 10, Saturated: true},
		{Workers: 10, Completions: 12, Saturated: true},
	}
	tests := []struct {
		name    string
		minutes []readmodel.FleetMinute
		ceiling float64
		// dots as "class cx,cy"
		dots   []string
		xLabel string // the right end of the workers axis
		yLabel string // the top of the completions axis
		// the ceiling line's x, its label's x, anchor and text; "" for none
		lineX, labelX, anchor, label string
		desc                         string
	}{
		{
			name: "no ceiling", minutes: minutes,
			// workers up to niceMax(10) = 10, completions up to niceMax(12) = 20
			dots:   []string{"dot 119.6,120.4", "dot sat 221,79", "dot sat 390,65.2"},
			xLabel: "10 workers", yLabel: "20",
			desc: "Last 3 good minutes: 2 to 10 workers in service completed 4 to 12 msg/s; 2 saturated (filled dots); " +
				"newest 10 workers at 12 msg/s. No downstream ceiling found.",
		},
		{
			name: "a ceiling within the points", minutes: minutes, ceiling: 8,
			dots:   []string{"dot 119.6,120.4", "dot sat 221,79", "dot sat 390,65.2"},
			xLabel: "10 workers", yLabel: "20",
			// 52 + 0.8 × 338 = 322.4, right of the middle (221): the label on its left
			lineX: "322.4", labelX: "318.4", anchor: "end", label: "ceiling 8",
			desc: "Last 3 good minutes: 2 to 10 workers in service completed 4 to 12 msg/s; 2 saturated (filled dots); " +
				"newest 10 workers at 12 msg/s. Downstream ceiling near 8 workers (dashed line).",
		},
		{
			name: "a ceiling beyond the points widens the axis", minutes: minutes[:1], ceiling: 15,
			// workers up to niceMax(15) = 20, completions up to niceMax(4) = 5
			dots:   []string{"dot 85.8,37.6"},
			xLabel: "20 workers", yLabel: "5",
			lineX: "305.5", labelX: "301.5", anchor: "end", label: "ceiling 15",
			desc: "Last 1 good minute: 2 workers in service completed 4 msg/s; 0 saturated (filled dots); " +
				"newest 2 workers at 4 msg/s. Downstream ceiling near 15 workers (dashed line).",
		},
		{
			name: "a low ceiling has its label on its right", minutes: minutes, ceiling: 3,
			dots:   []string{"dot 119.6,120.4", "dot sat 221,79", "dot sat 390,65.2"},
			xLabel: "10 workers", yLabel: "20",
			lineX: "153.4", labelX: "157.4", anchor: "start", label: "ceiling 3",
			desc: "Last 3 good minutes: 2 to 10 workers in service completed 4 to 12 msg/s; 2 saturated (filled dots); " +
				"newest 10 workers at 12 msg/s. Downstream ceiling near 3 workers (dashed line).",
		},
		{
			name: "no minutes", xLabel: "1 worker", yLabel: "1",
			desc: "No good minute of the fleet measured yet.",
		},
		{
			name: "not finite or negative minutes are not drawn",
			minutes: []readmodel.FleetMinute{{Workers: -1, Completions: 3}, {Workers: 4, Completions: -2},
				{Workers: 4, Completions: 2}},
			dots:   []string{"dot 322.4,10"}, // 4 of niceMax(4) = 5 workers, 2 of 2 msg/s
			xLabel: "5 workers", yLabel: "2",
			desc: "Last 1 good minute: 4 workers in service completed 2 msg/s; 0 saturated (filled dots); " +
				"newest 4 workers at 2 msg/s. No downstream ceiling found.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, svg := drawKneeSVG(t, tt.minutes, tt.ceiling)

			var dots []string
			for _, m := range circleRE.FindAllStringSubmatch(svg, -1) {
				dots = append(dots, m[1]+" "+m[2]+","+m[3])
			}
			if strings.Join(dots, "|") != strings.Join(tt.dots, "|") {
				t.Errorf("dots %q, want %q", dots, tt.dots)
			}
			if strings.Count(svg, "<circle") != len(tt.dots) {
				t.Errorf("%d circles, want %d", strings.Count(svg, "<circle"), len(tt.dots))
			}
			if v.XLabels[2] != tt.xLabel || v.YLabels[2] != tt.yLabel {
				t.Errorf("axes end at %q and %q, want %q and %q", v.XLabels[2], v.YLabels[2], tt.xLabel, tt.yLabel)
			}
			if !strings.Contains(svg, `data-xlabel="2">`+tt.xLabel+`</text>`) {
				t.Errorf("the workers axis does not end at %q", tt.xLabel)
			}

			line, label := ceilingRE.FindStringSubmatch(svg), labelRE.FindStringSubmatch(svg)
			if line == nil || label == nil {
				t.Fatalf("no ceiling line or label in\n%s", svg)
			}
			if tt.lineX == "" {
				if line[3] == "" || label[3] == "" || label[4] != "" {
					t.Errorf("a ceiling line is shown without a ceiling: %q %q", line[0], label[0])
				}
			} else if line[3] != "" || label[3] != "" || line[1] != tt.lineX || line[2] != tt.lineX ||
				label[1] != tt.labelX || label[2] != tt.anchor || label[4] != tt.label {
				t.Errorf("ceiling %q %q, want a line at x=%s and %q at x=%s, anchor %s",
					line[0], label[0], tt.lineX, tt.label, tt.labelX, tt.anchor)
			}

			if key := strings.Contains(svg, `<span class="key s-ref" data-ceiling-key>ceiling</span>`); key != (tt.lineX != "") {
				t.Errorf("the legend's ceiling key shown %v, want %v", key, tt.lineX != "")
			}
			nodata := strings.Contains(svg, `text-anchor="middle">No data yet</text>`)
			hiddenNoData := strings.Contains(svg, `text-anchor="middle" hidden>No data yet</text>`)
			if empty := len(tt.dots) == 0; nodata != empty || hiddenNoData == empty {
				t.Errorf("\"No data yet\" shown %v, want %v", nodata, empty)
			}
			if !strings.Contains(svg, `aria-labelledby="g0-knee-t g0-knee-d"`) ||
				!strings.Contains(svg, `<title id="g0-knee-t">`+knee.Title+`</title>`) ||
				!strings.Contains(svg, `<desc id="g0-knee-d" data-desc>`+tt.desc+`</desc>`) {
				t.Errorf("text alternative: want the title and %q in\n%s", tt.desc, svg)
			}
		})
	}
}

func TestKneeChartKeepsTheNewestMinutes(t *testing.T) {
	t.Parallel()
	var minutes []readmodel.FleetMinute
	for i := range 30 {
		minutes = append(minutes, readmodel.FleetMinute{Workers: float64(i + 1), Completions: 1})
	}
	v := renderKnee(knee, map[string]any{}, minutes)
	if len(v.Points) != knee.MaxPoints {
		t.Fatalf("%d dots, want the newest %d", len(v.Points), knee.MaxPoints)
	}
	// The oldest drawn is the 7th minute: 7 of niceMax(30) = 50 workers.
	if v.Points[0].X != "99.3" {
		t.Errorf("the oldest dot is at x=%s, want 99.3 (7 workers)", v.Points[0].X)
	}
}

// The page's panel has the chart, and the endpoint's minutes are the
// view's (the scripted world's fleet is measured).
func TestKneeChartOnThePage(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 3, 10*time.Second)
	body := get(t, newTestHandler(c, now), "/").Body.String()
	panel := section(t, body, groupBusy)
	if !strings.Contains(panel, `<figure class="chart" data-knee="knee">`) ||
		!strings.Contains(panel, `<title id="g0-knee-t">Throughput against workers (msg/s)</title>`) {
		t.Errorf("the busy group's panel has no knee chart")
	}
}
