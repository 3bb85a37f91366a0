package readmodel

import (
	"math"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

func intp(n int) *int { return &n }

// Ten minutes of 143 workers at $0.0416, by hand: 143 × 600 s = 23.8333
// worker-hours, × 0.0416 = $0.99147; 100 msg/s served is 60,000 messages,
// $0.99147 / 60,000 × 10^6 = $16.52 per million. The rule asked for 150
// with the forecast and 140 without: 150 × 600 / 3600 × 0.0416 = $1.04
// against $0.97067, so the forecast's saving is −$0.06933 (it cost money).
func TestMeterBill(t *testing.T) {
	t.Parallel()
	s := policy.Settings{Group: "g", Min: 1, Max: 200, WorkerCostPerHour: 0.0416}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rate := 100.0
	var m meter
	for i := 0; i <= 10; i++ {
		m.add(s, model.Fleet{}, model.Decision{At: start.Add(time.Duration(i) * time.Minute), CurrentWorkers: 143,
			RecommendedWorkers: 150, NeedWithoutForecast: intp(140), ArrivalRate: &rate})
	}
	b := m.bill(s.WorkerCostPerHour, 143)
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("billed seconds", b.BilledSeconds, 600)
	near("worker-hours", b.WorkerHours, 143*600.0/3600)
	near("dollars", b.Dollars, 143*600.0/3600*0.0416)
	near("dollars per hour", b.DollarsPerHour, 143*0.0416)
	near("messages", b.Messages, 60000)
	if b.PerMillionMessages == nil {
		t.Fatal("no cost per million messages")
	}
	near("per million", *b.PerMillionMessages, 143*600.0/3600*0.0416/60000*1e6)
	near("with forecast", b.SizedWithForecastDollars, 150*600.0/3600*0.0416)
	near("without forecast", b.SizedWithoutForecastDollars, 140*600.0/3600*0.0416)
	near("saving", b.ForecastSavingDollars, -10*600.0/3600*0.0416)

	// A gap of an hour (a stopped checker) is billed for 5 minutes; a day
	// later (25 h 30 m from the start) everything before has left the window.
	m.add(s, model.Fleet{}, model.Decision{At: start.Add(70 * time.Minute), CurrentWorkers: 143, RecommendedWorkers: 150})
	near("after a gap", m.bill(0.0416, 143).BilledSeconds, 900)
	m.add(s, model.Fleet{}, model.Decision{At: start.Add(25*time.Hour + 30*time.Minute), CurrentWorkers: 10, RecommendedWorkers: 10})
	near("a day on", m.bill(0.0416, 10).BilledSeconds, 300)

	// No price: worker-hours, no dollars.
	if nb := m.bill(0, 10); nb.Priced || nb.Dollars != 0 || nb.PerMillionMessages != nil || nb.WorkerHours == 0 {
		t.Errorf("unpriced bill %+v", nb)
	}
}

// The asks are billed within min, max and the cap, and within the fleet's
// own maximum (an Auto Scaling group's MaxSize) when it is lower: the
// count the policy may set.
func TestClampTo(t *testing.T) {
	t.Parallel()
	s := policy.Settings{Min: 2, Max: 50, Cap: 40}
	none := model.Fleet{}
	own := model.Fleet{Kind: "autoscaling", Known: true, Desired: 10, Max: 30}
	for _, c := range []struct {
		f        model.Fleet
		in, want int
	}{{none, 0, 2}, {none, 30, 30}, {none, 45, 40}, {none, 99, 40}, {own, 25, 25}, {own, 35, 30}, {own, 99, 30}, {own, 1, 2}} {
		if got := clampTo(s, c.f, c.in); got != c.want {
			t.Errorf("clampTo(fleet max %d, %d) = %d, want %d", c.f.Max, c.in, got, c.want)
		}
	}
	// Billed: ten minutes at a recommendation of 45 for a group whose own
	// max is 30 are 30 workers' ten minutes, 300 worker-minutes, not 400.
	var m meter
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i <= 10; i++ {
		m.add(s, own, model.Decision{At: start.Add(time.Duration(i) * time.Minute), CurrentWorkers: 30, RecommendedWorkers: 45})
	}
	if got, want := m.bill(3600, 30).SizedWithForecastDollars, 30*600.0; math.Abs(got-want) > 1e-6 {
		t.Errorf("sized with the forecast: $%v at $1 a worker-second, want $%v", got, want)
	}
}
