package readmodel

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/slo"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestHistoryKeepsTheWindowAndAtMostMaxPoints(t *testing.T) {
	t.Parallel()
	var r ring
	for i := range maxPoints + 100 {
		r.add(Point{At: t0.Add(time.Duration(i) * time.Second), Backlog: int64(i)}, 10*time.Hour)
	}
	all := r.since(10 * time.Hour)
	if len(all) != maxPoints || all[0].Backlog != 100 || all[len(all)-1].Backlog != maxPoints+99 {
		t.Fatalf("ring holds %d points from %d to %d; want %d from 100", len(all), all[0].Backlog, all[len(all)-1].Backlog, maxPoints)
	}
	last := r.since(time.Minute)
	if len(last) != 61 {
		t.Errorf("a one-minute window at 1 s holds %d points, want 61 (both ends)", len(last))
	}
	var empty ring
	if got := empty.since(time.Hour); len(got) != 0 {
		t.Errorf("empty ring gave %d points", len(got))
	}
}

// TestHistoryDropsPointsOlderThanTheWindow: at one point every 5 s with a
// one-hour window the ring keeps 721 points however long it runs, in a
// buffer at most a quarter larger, and gives back the values put in.
func TestHistoryDropsPointsOlderThanTheWindow(t *testing.T) {
	t.Parallel()
	var r ring
	age := 12.5
	for i := range 5 * 720 {
		p := Point{At: t0.Add(time.Duration(i) * 5 * time.Second), Backlog: int64(i), Current: i % 7, Desired: i % 11, Recommended: i % 13}
		if i%2 == 0 {
			p.OldestAge = &age
		}
		r.add(p, time.Hour)
	}
	got := r.since(time.Hour)
	if len(got) != 721 || got[len(got)-1].Backlog != 5*720-1 {
		t.Fatalf("%d points, last backlog %d; want 721 ending at %d", len(got), got[len(got)-1].Backlog, 5*720-1)
	}
	if kept := len(r.buf) - r.head; kept != 721 || cap(r.buf) > 721*5/4+16 {
		t.Errorf("buffer of %d (capacity %d) for %d points kept", len(r.buf), cap(r.buf), kept)
	}
	for _, p := range got {
		i := int(p.Backlog)
		want := t0.Add(time.Duration(i) * 5 * time.Second)
		if !p.At.Equal(want) || p.Current != i%7 || p.Desired != i%11 || p.Recommended != i%13 ||
			(i%2 == 0) != (p.OldestAge != nil) || (p.OldestAge != nil && *p.OldestAge != age) {
			t.Fatalf("point %d = %+v, want the values put in", i, p)
		}
	}
}

// The status page's history keeps each decision's arrival estimate and
// forecast, nil where there was none.
func TestHistoryKeepsArrivalsAndForecast(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	rate := 14.5
	var r ring
	r.add(pointOf(model.Decision{At: at, ArrivalRate: &rate, Forecast: &model.Forecast{Rate: 212, At: at.Add(time.Minute)}}, nil), time.Hour)
	r.add(pointOf(model.Decision{At: at.Add(5 * time.Second)}, nil), time.Hour)
	got := r.since(time.Hour)
	if len(got) != 2 {
		t.Fatalf("%d points, want 2", len(got))
	}
	if got[0].Arrival == nil || *got[0].Arrival != 14.5 || got[0].Forecast == nil || *got[0].Forecast != 212 {
		t.Errorf("first point %+v, want arrivals 14.5 and forecast 212", got[0])
	}
	if got[1].Arrival != nil || got[1].Forecast != nil {
		t.Errorf("second point %+v, want neither known", got[1])
	}
}

// The history keeps the error budget left, drawn at 0 once overspent, and
// nil while there is no estimate.
func TestHistoryKeepsTheBudgetLeft(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	var r ring
	r.add(pointOf(model.Decision{At: at}, &slo.Status{BudgetLeft: 0.75}), time.Hour)
	r.add(pointOf(model.Decision{At: at.Add(5 * time.Second)}, &slo.Status{BudgetLeft: -2.5}), time.Hour)
	r.add(pointOf(model.Decision{At: at.Add(10 * time.Second)}, nil), time.Hour)
	got := r.since(time.Hour)
	if len(got) != 3 {
		t.Fatalf("%d points, want 3", len(got))
	}
	if got[0].BudgetLeft == nil || *got[0].BudgetLeft != 0.75 {
		t.Errorf("first point's budget %v, want 0.75", got[0].BudgetLeft)
	}
	if got[1].BudgetLeft == nil || *got[1].BudgetLeft != 0 {
		t.Errorf("overspent point's budget %v, want 0", got[1].BudgetLeft)
	}
	if got[2].BudgetLeft != nil {
		t.Errorf("point without an estimate has budget %v, want none", *got[2].BudgetLeft)
	}
}
