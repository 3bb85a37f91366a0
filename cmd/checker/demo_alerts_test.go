package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	pmodel "github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
	"github.com/prometheus/prometheus/util/annotations"
	"go.yaml.in/yaml/v3"
)

// scrapes holds scraped samples in memory for Prometheus's query engine:
// each series with its samples in time order, as Prometheus's storage
// would serve them.
type scrapes struct {
	series map[string]*scraped
}

type scraped struct {
	lbls    labels.Labels
	samples []chunks.Sample
}

func (s *scrapes) append(lbls labels.Labels, at time.Time, v float64) {
	if s.series == nil {
		s.series = map[string]*scraped{}
	}
	k := lbls.String()
	if s.series[k] == nil {
		s.series[k] = &scraped{lbls: lbls}
	}
	s.series[k].samples = append(s.series[k].samples, floatSample{t: at.UnixMilli(), f: v})
}

// Querier serves the series that match every matcher, sorted by labels.
func (s *scrapes) Querier(_, _ int64) (storage.Querier, error) {
	return &storage.MockQuerier{SelectMockFunction: func(_ bool, _ *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
		out := &seriesList{}
		for _, e := range s.series {
			match := true
			for _, m := range ms {
				match = match && m.Matches(e.lbls.Get(m.Name))
			}
			if match {
				out.list = append(out.list, storage.NewListSeries(e.lbls, e.samples))
			}
		}
		slices.SortFunc(out.list, func(a, b storage.Series) int { return labels.Compare(a.Labels(), b.Labels()) })
		return out
	}}, nil
}

// seriesList is a storage.SeriesSet over a slice.
type seriesList struct {
	list []storage.Series
	at   int // 1 + the index of the current series
}

func (l *seriesList) Next() bool                        { l.at++; return l.at <= len(l.list) }
func (l *seriesList) At() storage.Series                { return l.list[l.at-1] }
func (l *seriesList) Err() error                        { return nil }
func (l *seriesList) Warnings() annotations.Annotations { return nil }

// floatSample is one float sample of a series.
type floatSample struct {
	t int64
	f float64
}

func (s floatSample) T() int64                      { return s.t }
func (s floatSample) ST() int64                     { return 0 }
func (s floatSample) F() float64                    { return s.f }
func (s floatSample) H() *histogram.Histogram       { return nil }
func (s floatSample) FH() *histogram.FloatHistogram { return nil }
func (s floatSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (s floatSample) Copy() chunks.Sample           { return s }

// checkerHealthAlerts are the alerts on the checker itself, not on the
// fleets: none may fire against a demo that runs well.
var checkerHealthAlerts = []string{"QueueCheckerDown", "QueueCheckerAbsent", "QueueCheckerStale", "QueueCheckerGroupUnowned", "QueueCheckerActionsFailing"}

// notInTheDemo are series an alert reads that a healthy demo never
// exports, and why: the test checks they are indeed absent.
var notInTheDemo = map[string]string{
	"checker_action_errors_total": "a series once an action fails; the demo's simulated fleets take every count",
	"checker_groups_unowned":      "with coordination only: the demo shares its groups with no other checker",
}

// TestDemoExercisesEveryAlert scrapes the demo's /metrics three times, a
// second apart, into a Prometheus TSDB at the wall-clock times of the
// scrapes (as job="queue-checker", with up = 1), and evaluates every alert
// of deploy/prometheus/alerts.yaml there with Prometheus's own engine:
// each expression evaluates, reads only series the demo exports (but
// those of notInTheDemo), and none of the checker's own health alerts
// fires; every liveness timestamp (*_timestamp_seconds) is on the wall
// clock, not the demo's faster simulated one, so QueueCheckerStale stays
// silent while the demo runs and fires when its cycles stop.
func TestDemoExercisesEveryAlert(t *testing.T) {
	logs := &syncBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"demo", "--listen", "127.0.0.1:0", "--speed", "100", "--for", "8s"}, &strings.Builder{}, logs)
	}()
	defer func() {
		if code := <-done; code != 0 {
			t.Errorf("demo exited %d; logs:\n%s", code, logs.String())
		}
	}()
	addr := listenAddr(t, logs, 10*time.Second)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := get(t, "http://"+addr+"/livez"); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("/livez never turned 200")
		}
		time.Sleep(20 * time.Millisecond)
	}

	store := &scrapes{}
	exported := map[string]bool{"up": true}
	var first, last time.Time
	for i := range 3 {
		if i > 0 {
			time.Sleep(time.Second)
		}
		at := time.Now()
		if first.IsZero() {
			first = at
		}
		last = at
		_, body := get(t, "http://"+addr+"/metrics")
		p := expfmt.NewTextParser(pmodel.UTF8Validation)
		families, err := p.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatalf("parse /metrics: %v", err)
		}
		n := 0
		add := func(name string, v float64, ls []*dto.LabelPair, extra ...string) {
			b := labels.NewScratchBuilder(len(ls) + 4)
			b.Add(pmodel.MetricNameLabel, name)
			b.Add("job", "queue-checker")
			b.Add("instance", addr)
			for _, l := range ls {
				b.Add(l.GetName(), l.GetValue())
			}
			for j := 0; j+1 < len(extra); j += 2 {
				b.Add(extra[j], extra[j+1])
			}
			b.Sort()
			store.append(b.Labels(), at, v)
			n++
			exported[name] = true
			if strings.HasSuffix(name, "_timestamp_seconds") && (v < float64(first.Add(-time.Minute).Unix()) || v > float64(at.Unix())+1) {
				t.Errorf("%s%v = %v (%s), not on the wall clock: scraped at %s", name, ls, v, time.Unix(int64(v), 0).UTC(), at.UTC())
			}
		}
		add("up", 1, nil)
		for name, f := range families {
			for _, m := range f.GetMetric() {
				switch f.GetType() {
				case dto.MetricType_COUNTER:
					add(name, m.GetCounter().GetValue(), m.GetLabel())
				case dto.MetricType_GAUGE:
					add(name, m.GetGauge().GetValue(), m.GetLabel())
				case dto.MetricType_UNTYPED:
					add(name, m.GetUntyped().GetValue(), m.GetLabel())
				case dto.MetricType_HISTOGRAM:
					h := m.GetHistogram()
					for _, b := range h.GetBucket() {
						add(name+"_bucket", float64(b.GetCumulativeCount()), m.GetLabel(), "le", fmt.Sprint(b.GetUpperBound()))
					}
					add(name+"_bucket", float64(h.GetSampleCount()), m.GetLabel(), "le", "+Inf")
					add(name+"_sum", h.GetSampleSum(), m.GetLabel())
					add(name+"_count", float64(h.GetSampleCount()), m.GetLabel())
				case dto.MetricType_SUMMARY:
					s := m.GetSummary()
					for _, q := range s.GetQuantile() {
						add(name, q.GetValue(), m.GetLabel(), "quantile", fmt.Sprint(q.GetQuantile()))
					}
					add(name+"_sum", s.GetSampleSum(), m.GetLabel())
					add(name+"_count", float64(s.GetSampleCount()), m.GetLabel())
				}
			}
		}
		if n < 50 {
			t.Fatalf("only %d samples in /metrics", n)
		}
	}
	if !exported["checker_last_success_timestamp_seconds"] {
		t.Fatal("the demo exports no checker_last_success_timestamp_seconds")
	}

	raw, err := os.ReadFile("../../deploy/prometheus/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert  string `yaml:"alert"`
				Record string `yaml:"record"`
				Expr   string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 1e6, Timeout: 10 * time.Second, LookbackDelta: 5 * time.Minute})
	eval := func(expr string, at time.Time) (promql.Vector, error) {
		q, err := engine.NewInstantQuery(context.Background(), store, nil, expr, at)
		if err != nil {
			return nil, err
		}
		defer q.Close()
		res := q.Exec(context.Background())
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Vector()
	}
	// Recording rules, in the file's order, are evaluated at the last
	// scrape and their series stored, as Prometheus would before the
	// alerts that read them; what they read is checked like an alert's.
	recorded := map[string]bool{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				recorded[r.Record] = true
			}
		}
	}
	alerts := map[string]string{}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			name := r.Alert + r.Record
			if r.Alert != "" {
				alerts[r.Alert] = r.Expr
			}
			expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
				if vs, ok := n.(*parser.VectorSelector); ok {
					if _, why := notInTheDemo[vs.Name]; !exported[vs.Name] && !recorded[vs.Name] && !why {
						t.Errorf("%s reads %s, which the demo does not export: the alert cannot be tried against it", name, vs.Name)
					}
				}
				return nil
			})
			v, err := eval(r.Expr, last)
			if err != nil {
				t.Errorf("%s: evaluate %q: %v", name, r.Expr, err)
			}
			if r.Record != "" {
				for _, smp := range v {
					b := labels.NewBuilder(smp.Metric)
					b.Set(pmodel.MetricNameLabel, r.Record)
					store.append(b.Labels(), last, smp.F)
				}
			}
			t.Logf("%s: %d series", name, len(v))
		}
	}
	for name, why := range notInTheDemo {
		if exported[name] {
			t.Errorf("%s is exported by the demo after all; notInTheDemo says: %s", name, why)
		}
	}
	for _, a := range checkerHealthAlerts {
		expr, ok := alerts[a]
		if !ok {
			t.Errorf("alerts.yaml has no %s", a)
			continue
		}
		if v, err := eval(expr, last); err != nil || len(v) != 0 {
			t.Errorf("%s fires against a demo that runs well: %v (%v)", a, v, err)
		}
	}

	// Liveness: the seconds since the last good cycle, as Prometheus sees
	// them, are within a scrape of 0 now, and four minutes later (the
	// demo's samples still within the lookback) QueueCheckerStale fires.
	age, err := eval("time() - checker_last_success_timestamp_seconds", last)
	if err != nil || len(age) != 1 || age[0].F < -1 || age[0].F > 2 {
		t.Errorf("time() - checker_last_success_timestamp_seconds = %v (%v), want 0 to 2 s", age, err)
	}
	later := last.Add(4 * time.Minute)
	stale, err := eval(alerts["QueueCheckerStale"], later)
	if err != nil || len(stale) != 1 || math.Abs(stale[0].F-later.Sub(last).Seconds()) > 3 {
		t.Errorf("QueueCheckerStale 4 minutes after the demo's last scrape: %v (%v), want one series of about 240 s", stale, err)
	}
}
