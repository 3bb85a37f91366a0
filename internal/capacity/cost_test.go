package capacity

import (
	"encoding/json"
	"math"
	"testing"
)

// The worked example of docs/cost.md: 100 msg/s at 1 msg/s per worker
// under a 0.7 ceiling needs ceil(100 / 0.7) = ceil(142.86) = 143 workers;
// at $0.0416 a worker-hour that is 143 × 0.0416 = $5.9488 an hour and
// 5.9488 × 730 = $4,342.624 a month.
func TestPlanCostWorkedExample(t *testing.T) {
	t.Parallel()
	p := mustPlan(t, PlanInput{ArrivalRate: 100, PerWorker: 1, DrainTarget: 900, Utilization: 0.7, WorkerCostPerHour: 0.0416})
	if p.RecommendedWorkers != 143 {
		t.Fatalf("recommended %d, want 143", p.RecommendedWorkers)
	}
	if p.Cost == nil {
		t.Fatal("no cost with a worker price")
	}
	if got, want := p.Cost.DollarsPerHour, 5.9488; math.Abs(got-want) > 1e-9 {
		t.Errorf("dollars per hour %v, want %v", got, want)
	}
	if got, want := p.Cost.DollarsPerMonth, 4342.624; math.Abs(got-want) > 1e-9 {
		t.Errorf("dollars per month %v, want %v", got, want)
	}
	if got := FormatDollars(p.Cost.DollarsPerMonth); got != "$4,342.62" {
		t.Errorf("formatted %q, want $4,342.62", got)
	}
	// Without a price: no cost, and the promise rows still count workers.
	p = mustPlan(t, PlanInput{ArrivalRate: 100, PerWorker: 1, DrainTarget: 900, Utilization: 0.7})
	if p.Cost != nil {
		t.Errorf("cost %+v without a price, want null", p.Cost)
	}
	for _, r := range p.PromiseCosts {
		if r.DollarsPerMonth != nil || r.Workers == 0 {
			t.Errorf("row %+v: want workers and no dollars without a price", r)
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc["cost"]; !ok || v != nil {
		t.Errorf("cost in JSON = %v, want null", v)
	}
}

// erlangCDirect is P(wait) of M/M/c from its textbook sum, with no
// recursion: C = (a^c/c!)(c/(c−a)) / (Σ_{k<c} a^k/k! + (a^c/c!)(c/(c−a))).
func erlangCDirect(c int, a float64) float64 {
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a)
	return top / (sum + top)
}

// handQuantileFloor is the smallest c > a for which at most miss of the
// messages wait longer than w: C·e^−(cμ − λ)w ≤ miss.
func handQuantileFloor(lam, mu, w, miss float64) int {
	for c := int(lam/mu) + 1; ; c++ {
		if erlangCDirect(c, lam/mu)*math.Exp(-(float64(c)*mu-lam)*w) <= miss {
			return c
		}
	}
}

// Each promise row's workers are the larger of the utilisation floor and
// a wait floor found here by the direct Erlang C sum, and its dollars
// those workers × the price × 730.
func TestPromiseCostsByHand(t *testing.T) {
	t.Parallel()
	const lam, service, price = 50.0, 0.2, 0.10 // 10 busy servers
	in := PlanInput{ArrivalRate: lam, ServiceTime: service, Concurrency: 1, DrainTarget: 900,
		Utilization: 0.8, LatencyTarget: 0.05, SafetyWorkers: 1, WorkerCostPerHour: price}
	p := mustPlan(t, in)
	util := int(math.Ceil(lam * service / 0.8)) // 12.5 → 13
	if len(p.PromiseCosts) != len(PromiseLatencies)+1 {
		t.Fatalf("%d promise rows, want the %d listed and the target", len(p.PromiseCosts), len(PromiseLatencies))
	}
	currents := 0
	for i, r := range p.PromiseCosts {
		if i > 0 && r.LatencySeconds <= p.PromiseCosts[i-1].LatencySeconds {
			t.Errorf("rows not in order of latency at %d", i)
		}
		wait := handQuantileFloor(lam, 1/service, r.LatencySeconds, 0.01)
		want := max(util, wait) + 1
		if r.Workers != want || r.WaitFloor != wait || r.UtilizationFloor != util {
			t.Errorf("promise %vs: workers %d (wait %d, util %d), want %d (wait %d, util %d)",
				r.LatencySeconds, r.Workers, r.WaitFloor, r.UtilizationFloor, want, wait, util)
		}
		if r.DollarsPerMonth == nil || math.Abs(*r.DollarsPerMonth-float64(want)*price*730) > 1e-9 {
			t.Errorf("promise %vs: dollars a month %v, want %v", r.LatencySeconds, r.DollarsPerMonth, float64(want)*price*730)
		}
		if r.Current {
			currents++
			if r.LatencySeconds != 0.05 || r.Workers != p.SteadyStateWorkers {
				t.Errorf("current row %+v: want the 50ms target at the steady-state %d", r, p.SteadyStateWorkers)
			}
		}
	}
	if currents != 1 {
		t.Errorf("%d current rows, want 1", currents)
	}
	// 99 % within 5 ms needs more workers than the 13 of the ceiling.
	if p5 := mustPlan(t, PlanInput{ArrivalRate: lam, ServiceTime: service, Concurrency: 1, DrainTarget: 900,
		Utilization: 0.8, LatencyTarget: 0.005}); p5.PromiseCosts[0].Binding != BindingWait ||
		p5.PromiseCosts[0].Workers != handQuantileFloor(lam, 1/service, 0.005, 0.01) {
		t.Errorf("5ms promise %+v, want the wait floor %d binding", p5.PromiseCosts[0], handQuantileFloor(lam, 1/service, 0.005, 0.01))
	}
	if last := p.PromiseCosts[len(p.PromiseCosts)-1]; last.Binding != BindingUtilization || last.Workers != util+1 {
		t.Errorf("10m promise %+v, want the utilisation floor %d + 1", last, util)
	}
	for _, r := range p.UtilizationCosts {
		uf := int(math.Ceil(lam*service/r.Utilization - 1e-9))
		want := max(uf, *p.WaitFloor) + 1
		if r.UtilizationFloor != uf || r.Workers != want {
			t.Errorf("ceiling %v: floor %d workers %d, want %d and %d", r.Utilization, r.UtilizationFloor, r.Workers, uf, want)
		}
		if r.Current != (r.Utilization == 0.8) {
			t.Errorf("ceiling %v: current %v", r.Utilization, r.Current)
		}
	}
}

func TestFormatDollars(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    float64
		want string
	}{
		{4342.624, "$4,342.62"},
		{143 * 0.0416 * 730, "$4,342.62"},
		{0, "$0.00"},
		{0.004, "< $0.01"},
		{-0.004, "> -$0.01"},
		{-12.5, "-$12.50"},
		{1234567.891, "$1,234,567.89"},
		{0.125, "$0.12"}, // 0.125 is exact in binary: the tie rounds to even
	} {
		if got := FormatDollars(c.x); got != c.want {
			t.Errorf("FormatDollars(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

// SteadyFleet is the larger of ceil(λ·S ÷ (k·u)) and the 99 % wait floor
// in servers (by hand: the smallest c with C(c, a)·e^−(cμ − λ)t ≤ 1 %)
// rounded up to workers of k servers, plus the safety workers.
func TestSteadyFleet(t *testing.T) {
	t.Parallel()
	tight := handQuantileFloor(50, 5, 0.05, 0.01) // servers: 99 % within 50 ms at 50 msg/s, 200 ms each
	if tight <= 13 {
		t.Fatalf("hand wait floor %d: the tight case must bind above the utilisation floor 13", tight)
	}
	if (tight+3)/4 <= 3 {
		t.Fatalf("hand wait floor %d: in workers of 4 it must bind above the utilisation floor 3", tight)
	}
	cases := []struct {
		name        string
		rate, svc   float64
		k, safety   int
		util, wait  float64
		want        int
		wantBinding string
	}{
		// 50 × 0.2 ÷ 0.8 = 12.5: 13; 99 % within 10 s needs 11 servers.
		{"utilisation binds", 50, 0.2, 1, 0, 0.8, 10, 13, BindingUtilization},
		{"wait binds", 50, 0.2, 1, 0, 0.8, 0.05, tight, BindingWait},
		{"safety workers", 50, 0.2, 1, 2, 0.8, 0.05, tight + 2, BindingWait},
		// 50 × 0.2 ÷ (4 × 0.95) = 2.63: 3 workers; the wait floor's
		// servers in workers of 4.
		{"concurrency", 50, 0.2, 4, 0, 0.95, 0.05, (tight + 3) / 4, BindingWait},
		{"no latency target", 50, 0.2, 1, 0, 0.8, 0, 13, BindingUtilization},
		{"no arrivals", 0, 0.2, 1, 0, 0.8, 10, 0, BindingUtilization},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := SteadyFleet(Steady{Rate: c.rate, PerWorker: float64(c.k) / c.svc, PerServer: 1 / c.svc, Concurrency: c.k,
				Utilization: c.util, Latency: c.wait, Quantile: 0.99, Safety: c.safety})
			if got.Workers != c.want || got.Binding != c.wantBinding {
				t.Errorf("SteadyFleet = %d workers (%s), want %d (%s)", got.Workers, got.Binding, c.want, c.wantBinding)
			}
		})
	}
}
