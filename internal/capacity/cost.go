package capacity

import (
	"math"
	"slices"
)

// HoursPerMonth is the month every monthly dollar figure of the checker is
// reckoned over: 730 hours, a year of 8,760 hours over twelve, the month of
// AWS's own price pages.
const HoursPerMonth = 730

// MaxWorkerCost bounds a worker's price, dollars an hour: far above any
// machine, and it keeps every product with MaxWorkers finite.
const MaxWorkerCost = 1e6

// FieldWorkerCost names PlanInput.WorkerCostPerHour in FieldError.
const FieldWorkerCost = "worker_cost_per_hour"

// PromiseLatencies are the latency promises, in seconds, that the plan
// prices: from a second to ten minutes. The plan's own latency target joins
// them when it is not one of them.
var PromiseLatencies = []float64{1, 2, 5, 10, 30, 60, 120, 300, 600}

// UtilizationCeilings are the utilisation ceilings the plan prices; the
// plan's own ceiling joins them when it is not one of them.
var UtilizationCeilings = []float64{0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95}

// PlanCost is what the recommended worker target costs at the given price
// per worker-hour, and what the steady-state pool costs once the backlog is
// gone. Dollars are not rounded here: rounding to cents is for display.
type PlanCost struct {
	WorkerCostPerHour          float64 `json:"worker_cost_per_hour"`
	Workers                    int     `json:"workers"` // the recommended target
	DollarsPerHour             float64 `json:"dollars_per_hour"`
	DollarsPerMonth            float64 `json:"dollars_per_month"` // HoursPerMonth hours
	SteadyStateWorkers         int     `json:"steady_state_workers"`
	SteadyStateDollarsPerMonth float64 `json:"steady_state_dollars_per_month"`
}

// Binding floors of a priced row.
const (
	BindingWait        = "wait"        // the Erlang C wait floor of the promise
	BindingUtilization = "utilization" // the utilisation floor of the ceiling
)

// PromiseCost is the steady-state pool that holds one latency promise (the
// plan's LatencyQuantile of messages start within it, as the plan's
// latency target) under the plan's
// utilisation ceiling, and what it costs:
//
//	workers = max(c_util, c_wait(promise)) + s
//
// The drain floor is left out: a backlog is cleared once, a promise is
// paid for every hour. Dollar figures are null without a price.
type PromiseCost struct {
	LatencySeconds   float64  `json:"latency_seconds"`
	WaitFloor        int      `json:"wait_floor"`
	UtilizationFloor int      `json:"utilization_floor"`
	Workers          int      `json:"workers"`
	Binding          string   `json:"binding"` // wait or utilization
	Capped           bool     `json:"capped"`  // above the cap
	DollarsPerHour   *float64 `json:"dollars_per_hour"`
	DollarsPerMonth  *float64 `json:"dollars_per_month"`
	Current          bool     `json:"current"` // the plan's latency target
}

// UtilizationCost is the steady-state pool under one utilisation ceiling
// that holds the plan's latency target (when it has one), and what it
// costs: max(c_util(ceiling), c_wait) + s.
type UtilizationCost struct {
	Utilization      float64  `json:"utilization"`
	UtilizationFloor int      `json:"utilization_floor"`
	WaitFloor        *int     `json:"wait_floor"` // null without a latency target
	Workers          int      `json:"workers"`
	Binding          string   `json:"binding"`
	Capped           bool     `json:"capped"`
	DollarsPerHour   *float64 `json:"dollars_per_hour"`
	DollarsPerMonth  *float64 `json:"dollars_per_month"`
	Current          bool     `json:"current"` // the plan's ceiling
}

// WorkerDollarsPerHour is what workers cost an hour at pricePerHour each.
func WorkerDollarsPerHour(workers int, pricePerHour float64) float64 {
	return float64(workers) * pricePerHour
}

// WorkerDollarsPerMonth is what workers cost over a month of HoursPerMonth.
func WorkerDollarsPerMonth(workers int, pricePerHour float64) float64 {
	return float64(workers) * pricePerHour * HoursPerMonth
}

// SteadyWorkers is the steady-state pool of a utilisation floor and a wait
// floor (0 for none) with s safety workers, and the floor that binds: the
// wait floor when it is at least the utilisation floor.
func SteadyWorkers(utilFloor, waitFloor, safety int) (int, string) {
	if waitFloor > 0 && waitFloor >= utilFloor {
		return waitFloor + safety, BindingWait
	}
	return utilFloor + safety, BindingUtilization
}

// Steady is what a steady arrival rate is sized with (SteadyFleet).
type Steady struct {
	Rate        float64 // arrivals, msg/s
	PerWorker   float64 // what one worker completes, msg/s
	PerServer   float64 // what one of its servers completes, msg/s
	Concurrency int     // servers a worker (at least 1)
	Utilization float64 // the utilisation ceiling
	// Latency is the promise, seconds (0: none, and no wait floor), and
	// Quantile the share of the messages it starts within it.
	Latency, Quantile float64
	// Spread is the Allen–Cunneen factor of the service times
	// (ServiceSpread; 0: exponential, 1).
	Spread float64
	Safety int // workers added on top
	// MaxBusy bounds the busy servers for which the wait floor is
	// computed (0: MaxServers; see WaitFloorWorkers).
	MaxBusy int
}

// SteadyCount is the steady fleet and the floors it is made of.
type SteadyCount struct {
	Workers     int    // the steady fleet, safety workers included
	Binding     string // the floor that sets it: BindingUtilization or BindingWait
	Utilization int    // keeping pace at the utilisation ceiling
	Wait        int    // the Erlang C wait floor, when WaitOK
	WaitOK      bool
}

// SteadyFleet is the fleet a steady arrival rate needs once no backlog is
// left: the fewest workers that keep pace with it below the utilisation
// ceiling and, with a promise, start Quantile of the messages within it
// (the Erlang C wait floor, WaitFloorWorkers), plus the safety workers
// (SteadyWorkers). It is the one count the policy's rate floors, the
// planner's steady state and the simulator's starting fleet size with.
func SteadyFleet(s Steady) SteadyCount {
	var c SteadyCount
	c.Utilization = max(DrainFloor(s.Rate, s.PerWorker, 0, 0), UtilizationFloor(s.Rate, s.PerWorker, s.Utilization))
	if s.Latency > 0 {
		c.Wait, c.WaitOK = WaitFloorWorkers(s.Rate, s.PerServer, s.Latency, s.Quantile, s.Spread, s.Concurrency, s.MaxBusy)
	}
	c.Workers, c.Binding = SteadyWorkers(c.Utilization, c.Wait, s.Safety)
	return c
}

// priceCosts fills the plan's cost, promise and utilisation tables.
func (m *model) priceCosts(p *Plan) {
	in := m.in
	price := in.WorkerCostPerHour
	dollars := func(w int) (*float64, *float64) {
		if price <= 0 {
			return nil, nil
		}
		return ptr(sig12(WorkerDollarsPerHour(w, price))), ptr(sig12(WorkerDollarsPerMonth(w, price)))
	}
	if price > 0 {
		p.Cost = &PlanCost{
			WorkerCostPerHour:          price,
			Workers:                    p.RecommendedWorkers,
			DollarsPerHour:             sig12(WorkerDollarsPerHour(p.RecommendedWorkers, price)),
			DollarsPerMonth:            sig12(WorkerDollarsPerMonth(p.RecommendedWorkers, price)),
			SteadyStateWorkers:         p.SteadyStateWorkers,
			SteadyStateDollarsPerMonth: sig12(WorkerDollarsPerMonth(p.SteadyStateWorkers, price)),
		}
	}
	capped := func(w int) bool { return in.Cap > 0 && w > in.Cap }

	p.PromiseCosts = []PromiseCost{}
	for _, l := range withValue(PromiseLatencies, in.LatencyTarget) {
		wait, ok := WaitFloorWorkers(m.lam, m.perServer, l, in.LatencyQuantile, m.spread, m.k, 0)
		if !ok {
			continue // beyond MaxServers: the plan's warnings say so for its own target
		}
		r := PromiseCost{LatencySeconds: l, WaitFloor: wait, UtilizationFloor: p.UtilizationFloor,
			Current: in.LatencyTarget > 0 && l == in.LatencyTarget}
		r.Workers, r.Binding = SteadyWorkers(r.UtilizationFloor, r.WaitFloor, in.SafetyWorkers)
		r.Capped = capped(r.Workers)
		r.DollarsPerHour, r.DollarsPerMonth = dollars(r.Workers)
		p.PromiseCosts = append(p.PromiseCosts, r)
	}

	p.UtilizationCosts = []UtilizationCost{}
	for _, u := range withValue(UtilizationCeilings, in.Utilization) {
		r := UtilizationCost{Utilization: u, UtilizationFloor: UtilizationFloor(m.lam, m.mu, u),
			WaitFloor: p.WaitFloor, Current: u == in.Utilization}
		wait := 0
		if p.WaitFloor != nil {
			wait = *p.WaitFloor
		}
		r.Workers, r.Binding = SteadyWorkers(r.UtilizationFloor, wait, in.SafetyWorkers)
		r.Capped = capped(r.Workers)
		r.DollarsPerHour, r.DollarsPerMonth = dollars(r.Workers)
		p.UtilizationCosts = append(p.UtilizationCosts, r)
	}
}

// withValue is list with v added in order, when v > 0 and not in it.
func withValue(list []float64, v float64) []float64 {
	out := slices.Clone(list)
	if v > 0 && !math.IsInf(v, 0) && !slices.Contains(out, v) {
		out = append(out, v)
		slices.Sort(out)
	}
	return out
}
