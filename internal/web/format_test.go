package web

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/readmodel"
)

func TestFormatNumber(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"zero", 0, "0"},
		{"a count", 18000, "18,000"},
		{"a big count", 1234567, "1,234,567"},
		{"a rate", 2.4, "2.4"},
		{"two decimals below 100", 12.345, "12.35"},
		{"one decimal below 10,000", 1867.66, "1,867.7"},
		{"a tie rounds to even", 0.125, "0.125"},
		{"a tie at two decimals", 12.125, "12.12"},
		{"below one", 1.0 / 3, "0.333"},
		{"tiny", 0.0000123, "1.23e-05"},
		{"huge", 1.2345e16, "1.234e+16"},
		{"negative", -2500.5, "-2,500.5"},
		{"infinite", math.Inf(1), "∞"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := formatNumber(tt.in); got != tt.want {
				t.Errorf("formatNumber(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   float64
		want string
	}{
		{"zero", 0, "0 s"},
		{"milliseconds", 0.1364, "136.4 ms"},
		{"microseconds", 0.00005, "0.05 ms"},
		{"seconds", 12.5, "12.5 s"},
		{"whole seconds", 30, "30 s"},
		{"just under a minute", 59.94, "59.9 s"},
		{"a minute after rounding", 59.95, "1m"},
		{"minutes", 2500, "41m40s"},
		{"hours", 10000, "2h46m40s"},
		{"days round to the minute", 90061, "1d1h1m"},
		{"very long", 2e9, "23,148 days"},
		{"never", math.Inf(1), "never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := formatSeconds(tt.in); got != tt.want {
				t.Errorf("formatSeconds(%v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFormatField(t *testing.T) {
	t.Parallel()
	group := map[string]any{
		"settings": map[string]any{"cap": 0.0, "latency_seconds": 0.0, "max": 40.0},
		"decision": map[string]any{"backlog": 18000.0, "arrival_rate": 12.0, "drain_seconds": nil,
			"utilization": 0.625, "diagnosis": "not_consuming", "at": "2025-03-14T09:05:07.9Z", "hold_reason": ""},
		"last_action": map[string]any{"scaled": true, "from": 8.0, "to": 10.0, "metrics_published": 6.0, "dry_run": true},
	}
	unknownArrivals := map[string]any{"decision": map[string]any{"arrival_rate": nil, "drain_seconds": nil}}
	tests := []struct {
		name        string
		g           map[string]any
		path, f, nt string
		want        string
	}{
		{"a count", group, "decision.backlog", "count", "", "18,000"},
		{"a rate", group, "decision.arrival_rate", "rate", "", "12 msg/s"},
		{"a percentage", group, "decision.utilization", "percent", "", "62.5 %"},
		{"no cap", group, "settings.cap", "cap", "", "none"},
		{"a cap", group, "settings.max", "cap", "", "40"},
		{"no promise", group, "settings.latency_seconds", "promise", "", "none"},
		{"never drains", group, "decision.drain_seconds", "drain", "", "never"},
		{"drain with unknown arrivals", unknownArrivals, "decision.drain_seconds", "drain", "", "unknown"},
		{"a diagnosis", group, "decision.diagnosis", "diagnosis", "", "Not consuming"},
		{"a time of day", group, "decision.at", "clock", "", "09:05:07"},
		{"an age", map[string]any{"ages": map[string]any{"sample_seconds": 172.4}}, "ages.sample_seconds", "ago", "", "2m52s ago"},
		{"an age under a second", map[string]any{"ages": map[string]any{"sample_seconds": 0.4}}, "ages.sample_seconds", "ago", "", "0 s ago"},
		{"an action", group, "last_action", "action", "", "desired set 8 → 10; 6 metrics published; dry run: nothing changed in AWS"},
		{"an empty text", group, "decision.hold_reason", "text", "", "unknown"},
		{"a missing path", group, "fleet.desired", "count", "", "unknown"},
		{"a null text of its own", group, "nothing", "action", "none yet", "none yet"},
		{"a value of the wrong kind", group, "decision.diagnosis", "count", "", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := formatField(tt.g, tt.path, tt.f, tt.nt); got != tt.want {
				t.Errorf("formatField(%s, %s) = %q, want %q", tt.path, tt.f, got, tt.want)
			}
		})
	}
}

func TestNiceMax(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in, out float64
	}{
		{"nothing", 0, 1},
		{"below one", 0.3, 1},
		{"two", 1.5, 2},
		{"two and a half", 2.2, 2.5},
		{"five", 4, 5},
		{"ten", 7, 10},
		{"a power of ten", 1000, 1000},
		{"just above", 1001, 2000},
		{"infinite", math.Inf(1), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := niceMax(tt.in); got != tt.out {
				t.Errorf("niceMax(%v) = %v, want %v", tt.in, got, tt.out)
			}
		})
	}
}

func TestRenderChart(t *testing.T) {
	t.Parallel()
	end := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	age := func(x float64) *float64 { return &x }
	points := func(n int, step time.Duration, f func(i int) readmodel.Point) []readmodel.Point {
		var out []readmodel.Point
		for i := range n {
			p := f(i)
			p.At = end.Add(-time.Duration(n-1-i) * step)
			out = append(out, p)
		}
		return out
	}
	g := geometry
	bottom, top := float64(g.Top+g.plotH()), float64(g.Top)
	tests := []struct {
		name     string
		spec     int // index into charts
		history  []readmodel.Point
		group    map[string]any
		wantD    map[string]string
		wantX    [3]string
		wantY    [3]string
		wantDesc string
		wantRef  bool
	}{
		{
			name: "backlog over five minutes",
			spec: 0,
			history: points(2, 5*time.Minute, func(i int) readmodel.Point {
				return readmodel.Point{Backlog: int64(1000 * (i + 1))}
			}),
			wantD:    map[string]string{"backlog": "M" + coord(float64(g.Left)) + "," + coord(bottom-0.5*float64(g.plotH())) + "L" + coord(float64(g.Width-g.Right)) + "," + coord(top)},
			wantX:    [3]string{"09:55", "09:57", "10:00"},
			wantY:    [3]string{"0", "1,000", "2,000"},
			wantDesc: "Last 5m. backlog: now 2,000, highest 2,000.",
		},
		{
			name: "workers in steps",
			spec: 1,
			history: points(3, 2*time.Minute, func(i int) readmodel.Point {
				return readmodel.Point{Current: 2, Desired: 2 + 2*i, Recommended: 4}
			}),
			wantY:    [3]string{"0", "5", "10"},
			wantDesc: "Last 5m. current: now 2, highest 2; desired: now 6, highest 6; recommended: now 4, highest 4.",
		},
		{
			name: "gaps where the age is unknown, and the promise",
			spec: 2,
			history: points(4, 20*time.Minute, func(i int) readmodel.Point {
				if i == 1 {
					return readmodel.Point{}
				}
				return readmodel.Point{OldestAge: age(float64(10 * i))}
			}),
			group:    map[string]any{"settings": map[string]any{"latency_seconds": 60.0}},
			wantX:    [3]string{"09:00", "09:30", "10:00"},
			wantY:    [3]string{"0 s", "50 s", "1m40s"},
			wantDesc: "Last 1h. oldest age: now 30 s, highest 30 s; promise 1m.",
			wantRef:  true,
		},
		{
			name:     "no history",
			spec:     0,
			wantD:    map[string]string{"backlog": ""},
			wantX:    [3]string{"09:00", "09:30", "10:00"},
			wantDesc: "Last 1h. backlog: no data.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := renderChart(charts[tt.spec], tt.group, tt.history, end)
			for _, p := range v.Paths {
				if want, ok := tt.wantD[p.Key]; ok && p.D != want {
					t.Errorf("series %s: d = %q, want %q", p.Key, p.D, want)
				}
			}
			if tt.wantX != ([3]string{}) && v.XLabels != tt.wantX {
				t.Errorf("time labels %v, want %v", v.XLabels, tt.wantX)
			}
			if tt.wantY != ([3]string{}) && v.YLabels != tt.wantY {
				t.Errorf("value labels %v, want %v", v.YLabels, tt.wantY)
			}
			if v.Desc != tt.wantDesc {
				t.Errorf("text alternative %q, want %q", v.Desc, tt.wantDesc)
			}
			if (v.Ref != nil) != tt.wantRef {
				t.Errorf("reference line %v, want %v", v.Ref, tt.wantRef)
			}
			if v.Empty != (len(tt.history) == 0) {
				t.Errorf("empty %v with %d points", v.Empty, len(tt.history))
			}
		})
	}
}

func TestRenderChartSteps(t *testing.T) {
	t.Parallel()
	end := time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC)
	hist := []readmodel.Point{
		{At: end.Add(-5 * time.Minute), Desired: 2},
		{At: end.Add(-150 * time.Second), Desired: 4},
		{At: end, Desired: 4},
	}
	v := renderChart(charts[1], nil, hist, end)
	g := geometry
	x := func(ms int64) string {
		return coord(float64(g.Left) + float64(ms)/float64(5*60_000)*float64(g.plotW()))
	}
	y := func(n float64) string { return coord(float64(g.Top) + float64(g.plotH()) - n/5*float64(g.plotH())) }
	want := "M" + x(0) + "," + y(2) + "H" + x(150_000) + "V" + y(4) + "H" + x(300_000)
	for _, p := range v.Paths {
		if p.Key == "desired_workers" && p.D != want {
			t.Errorf("desired: d = %q, want %q", p.D, want)
		}
	}
}

func TestPickKeepsTheHighestOfAColumn(t *testing.T) {
	t.Parallel()
	g := geometry
	start := int64(0)
	w := g.WindowMs
	col := w / int64(g.plotW()) // one pixel column
	samples := []sample{{ms: 0, v: 1}, {ms: 1, v: 7}, {ms: 2, nil: true}, {ms: 3, v: 3}, {ms: col + 1, nil: true}, {ms: 3 * col, v: 2}}
	tests := []struct {
		name string
		step bool
		want []sample
	}{
		{"lines keep the highest", false, []sample{{ms: 1, v: 7}, {ms: col + 1, nil: true}, {ms: 3 * col, v: 2}}},
		{"steps keep the last", true, []sample{{ms: 3, v: 3}, {ms: col + 1, nil: true}, {ms: 3 * col, v: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pick(samples, start, w, tt.step, g)
			if len(got) != len(tt.want) {
				t.Fatalf("pick = %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("pick[%d] = %v, want %v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
