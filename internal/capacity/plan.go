package capacity

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Plan is the capacity plan of one queue (docs/model.md): the worker plan,
// joined by the latency-target sizing when a latency target is given. Its JSON
// form is a contract that scripts and the status page rely on. Rates are in
// msg/s, times in seconds. No field is ever NaN or Inf: a pool that never
// drains has a null drain time, an unstable one `stable: false` and null
// wait figures, and a pool of zero workers a null utilisation.
type Plan struct {
	Queue  string    `json:"queue"`
	Inputs PlanInput `json:"inputs"` // as given, with defaults filled in

	ModeledArrivalRate float64 `json:"modeled_arrival_rate"` // λ_eff = λ(1 + b/100)
	EffectivePerWorker float64 `json:"effective_per_worker"` // μ_eff = μ(1 − h/100), μ = k/S with a service time
	ServersPerWorker   int     `json:"servers_per_worker"`   // k with a service time, else 1
	ServiceTime        float64 `json:"service_time_seconds"` // effective seconds per message per server, k/μ_eff
	OfferedLoad        float64 `json:"offered_load"`         // λ_eff/μ_eff, in workers
	BacklogAtStart     float64 `json:"backlog_at_start"`     // Q_start

	DrainFloor       int  `json:"drain_floor"`
	UtilizationFloor int  `json:"utilization_floor"`
	WaitFloor        *int `json:"wait_floor"` // null without a latency target: LatencyQuantile of messages start within it
	// MeanWaitFloor is the smallest pool whose mean queue wait is within
	// the latency target: a weaker promise, shown beside the wait floor and
	// not sized for. Null without a latency target.
	MeanWaitFloor      *int `json:"mean_wait_floor"`
	RecommendedWorkers int  `json:"recommended_workers"`
	SteadyStateWorkers int  `json:"steady_state_workers"` // max(c_util, c_wait) + s: once the backlog is gone
	Capped             bool `json:"capped"`
	PlannedWorkers     int  `json:"planned_workers"` // the recommendation, or the cap when it binds
	// BeyondAnyFleet: the recommendation is above MaxWorkers, more than any
	// fleet holds (an input off by orders of magnitude); a warning says so.
	BeyondAnyFleet bool `json:"beyond_any_fleet"`

	Current     PoolState        `json:"current"`
	Queueing    PoolQueueing     `json:"queueing"` // at PlannedWorkers
	PlanPoints  []PlanPoint      `json:"plan_points"`
	Sensitivity []SensitivityRow `json:"sensitivity"`
	BurnDown    []BurnDownPoint  `json:"burn_down"`
	Checkpoints []Checkpoint     `json:"checkpoints"`
	ErlangTable []ErlangRow      `json:"erlang_table"`
	Warnings    []string         `json:"warnings"`

	// Cost is the recommended target in dollars; null without a worker
	// price. PromiseCosts price each latency promise, UtilizationCosts each
	// utilisation ceiling (see cost.go): in workers always, in dollars with
	// a price.
	Cost             *PlanCost         `json:"cost"`
	PromiseCosts     []PromiseCost     `json:"promise_costs"`
	UtilizationCosts []UtilizationCost `json:"utilization_costs"`
}

// PoolState is a pool of workers against the modeled arrivals.
type PoolState struct {
	Workers      int      `json:"workers"`
	ServiceRate  float64  `json:"service_rate"`  // workers × μ_eff
	NetDrain     float64  `json:"net_drain"`     // service rate − λ_eff
	DrainSeconds *float64 `json:"drain_seconds"` // null when the backlog never drains
	Utilization  *float64 `json:"utilization"`   // λ_eff / service rate; null with no workers
}

// PoolQueueing is the Erlang C estimate for a pool of workers, each
// ServersPerWorker servers. The wait figures are null when the pool is not
// stable (arrivals at or above capacity) or too large to evaluate.
type PoolQueueing struct {
	Workers         int      `json:"workers"`
	Servers         int      `json:"servers"`
	Utilization     *float64 `json:"utilization"`
	WaitProbability *float64 `json:"wait_probability"`
	MeanWaitSeconds *float64 `json:"mean_wait_seconds"`
	MeanQueueLength *float64 `json:"mean_queue_length"`
	Stable          bool     `json:"stable"`
}

// Plan point names.
const (
	PointCurrent          = "current"
	PointDrainFloor       = "drain floor"
	PointUtilizationFloor = "utilization floor"
	PointWaitFloor        = "wait floor"
	PointMeanWaitFloor    = "mean wait floor"
	PointTarget           = "target"
	PointCapped           = "capped"
)

// PlanPoint is one worker count of the plan and what it does to the queue.
// Drain times of the current pool count from now; those of every other
// point from when added workers start, StartDelay later, against the
// backlog then.
type PlanPoint struct {
	Point        string   `json:"point"`
	Workers      int      `json:"workers"`
	NetDrain     float64  `json:"net_drain"`
	DrainSeconds *float64 `json:"drain_seconds"`
	Utilization  *float64 `json:"utilization"`
	Note         string   `json:"note"`
}

// SensitivityRow is one whole-worker count near the target.
type SensitivityRow struct {
	Workers         int      `json:"workers"`
	NetDrain        float64  `json:"net_drain"`
	DrainSeconds    *float64 `json:"drain_seconds"`
	Utilization     *float64 `json:"utilization"`
	WaitProbability *float64 `json:"wait_probability"`
	MeanWaitSeconds *float64 `json:"mean_wait_seconds"`
}

// BurnDownPoint is the modeled backlog t seconds from now.
type BurnDownPoint struct {
	T       float64 `json:"t_seconds"`
	Backlog float64 `json:"backlog"`
}

// Checkpoint is one thing to verify before and after acting on the plan:
// the signal to read, the action it calls for, and why.
type Checkpoint struct {
	Checkpoint string `json:"checkpoint"`
	Signal     string `json:"signal"`
	Action     string `json:"action"`
	Note       string `json:"note"`
}

// ErlangRow is one pool size of the Erlang C table (docs/model.md, section 5): utilisation, the share of
// jobs that wait, the mean queue wait and the total latency (queue wait plus
// the effective service time). Only stable pools appear.
type ErlangRow struct {
	Workers             int     `json:"workers"`
	Servers             int     `json:"servers"`
	Utilization         float64 `json:"utilization"`
	WaitProbability     float64 `json:"wait_probability"`
	MeanWaitSeconds     float64 `json:"mean_wait_seconds"`
	MeanQueueLength     float64 `json:"mean_queue_length"`
	TotalLatencySeconds float64 `json:"total_latency_seconds"`
}

// Shape of the derived tables.
const (
	sensitivityBelow = 2  // sensitivity rows below the target
	sensitivityAbove = 3  // and above it
	erlangRowsBelow  = 3  // Erlang table rows below the planned pool
	erlangRows       = 8  // Erlang table rows in all
	burnDownSteps    = 60 // regular burn-down samples over the horizon, about
)

// NewPlan computes the capacity plan, with the Erlang C wait
// floor when a latency target is given. It returns the errors of Validate
// when the input cannot be planned.
//
//	λ_eff     = λ(1 + b/100)
//	μ_eff     = μ(1 − h/100)                        (μ = k/S with a service time)
//	net(c)    = c·μ_eff − λ_eff
//	Q_start   = max(0, Q0 − net(c_current)·d)
//	c_drain   = ceil((λ_eff + Q_start/T) / μ_eff)
//	c_util    = ceil(λ_eff / (μ_eff·u))
//	c_wait    = ceil(servers(P(Wq > W) ≤ 1 − q) / k) (only with a latency target W; q = 0.99 by default)
//	c_target  = max(c_drain, c_util, c_wait) + s
//	planned   = min(c_target, cap)                  (cap > 0)
//
// The Erlang C model: with a service time S and concurrency k a worker is k
// servers, each completing 1/S msg/s (less the overhead reserve), so a pool
// of w workers is w·k servers and the wait floor in workers is the server
// count rounded up to whole workers; with only a per-worker throughput μ, a
// worker is one server of rate μ_eff and the effective service time is
// 1/μ_eff.
func NewPlan(in PlanInput) (Plan, error) {
	if err := in.Validate(); err != nil {
		return Plan{}, fmt.Errorf("plan inputs: %w", err)
	}
	if in.Concurrency == 0 {
		in.Concurrency = 1
	}
	if in.LatencyQuantile == 0 {
		in.LatencyQuantile = DefaultLatencyQuantile
	}
	if in.Horizon == 0 {
		in.Horizon = in.StartDelay + 2*in.DrainTarget
	}
	m := newModel(in)
	p := Plan{
		Queue:              in.Queue,
		Inputs:             in,
		ModeledArrivalRate: m.lam,
		EffectivePerWorker: m.mu,
		ServersPerWorker:   m.k,
		ServiceTime:        1 / m.perServer,
		OfferedLoad:        m.lam / m.mu,
		BacklogAtStart:     m.qStart,
	}
	p.DrainFloor = DrainFloor(m.lam, m.mu, m.qStart, in.DrainTarget)
	p.UtilizationFloor = UtilizationFloor(m.lam, m.mu, in.Utilization)
	target := max(p.DrainFloor, p.UtilizationFloor)
	if in.LatencyTarget > 0 {
		if w, ok := WaitFloorWorkers(m.lam, m.perServer, in.LatencyTarget, in.LatencyQuantile, m.spread, m.k, 0); ok {
			p.WaitFloor = &w
			target = max(target, w)
			if servers, ok := WaitFloor(m.lam, m.perServer, in.LatencyTarget/m.spread); ok {
				mw := ceilDiv(servers, m.k)
				p.MeanWaitFloor = &mw
			}
		} else {
			p.Warnings = append(p.Warnings, fmt.Sprintf(
				"the latency target of %s needs more than %s servers: the wait floor was not evaluated",
				FormatSeconds(in.LatencyTarget), FormatNumber(MaxServers)))
		}
	}
	p.RecommendedWorkers = target + in.SafetyWorkers
	if p.RecommendedWorkers > MaxWorkers {
		p.BeyondAnyFleet = true
		// No fleet holds it: an input is off by orders of magnitude (an
		// overhead of 99.9999 %, a rate in the wrong unit), and a plan
		// printed with a count at 2^31 − 1 and no word would hide that.
		why := fmt.Sprintf("%s msg/s at %s msg/s per worker", FormatNumber(m.lam), FormatNumber(m.mu))
		if in.OverheadPercent > 0 {
			why += fmt.Sprintf(" after %v %% overhead", in.OverheadPercent)
		}
		if m.qStart > 0 {
			why += fmt.Sprintf(", %s messages waiting", FormatNumber(m.qStart))
		}
		shown := "it"
		if p.RecommendedWorkers >= math.MaxInt32 {
			shown = fmt.Sprintf("%s, the largest count shown,", FormatNumber(math.MaxInt32))
		}
		p.Warnings = append([]string{fmt.Sprintf(
			"the target is more than %s workers (%s), more than any fleet holds: %s stands for a count no fleet reaches; check the inputs",
			FormatNumber(MaxWorkers), why, shown)}, p.Warnings...)
	}
	p.SteadyStateWorkers = SteadyFleet(Steady{Rate: m.lam, PerWorker: m.mu, PerServer: m.perServer, Concurrency: m.k,
		Utilization: in.Utilization, Latency: in.LatencyTarget, Quantile: in.LatencyQuantile, Spread: m.spread, Safety: in.SafetyWorkers}).Workers
	p.PlannedWorkers = p.RecommendedWorkers
	if in.Cap > 0 && p.RecommendedWorkers > in.Cap {
		p.Capped = true
		p.PlannedWorkers = in.Cap
	}

	// Every pool the plan evaluates with Erlang C, in one walk of the recursion.
	pools := slices.Concat(sensitivityWorkers(p.RecommendedWorkers), m.erlangTableWorkers(p.PlannedWorkers),
		[]int{p.PlannedWorkers})
	if p.WaitFloor != nil {
		pools = append(pools, *p.WaitFloor)
	}
	if p.MeanWaitFloor != nil {
		pools = append(pools, *p.MeanWaitFloor)
	}
	m.prepareErlang(pools)

	p.Current = m.pool(in.Workers, in.Backlog)
	p.Sensitivity = m.sensitivity(p.RecommendedWorkers)
	p.ErlangTable = m.erlangTable(p.PlannedWorkers)
	p.Queueing = m.queueing(p.PlannedWorkers)
	p.PlanPoints = planPoints(m, &p)
	p.BurnDown = m.burnDown(p.PlannedWorkers)
	p.Checkpoints = checkpoints(m, &p)
	m.priceCosts(&p)
	p.Warnings = append(p.Warnings, warnings(m, &p)...)
	if p.Warnings == nil {
		p.Warnings = []string{}
	}
	p.tidy()
	return p, nil
}

// tidy rounds every computed figure to 12 significant digits, far inside the
// model's accuracy, so that exact answers read exactly: 18000/(8·2.4 − 12) is
// 2500.0000000000005 in float64 and 2500 in the plan.
func (p *Plan) tidy() {
	for _, x := range []*float64{&p.ModeledArrivalRate, &p.EffectivePerWorker, &p.ServiceTime, &p.OfferedLoad, &p.BacklogAtStart} {
		*x = sig12(*x)
	}
	p.Current.ServiceRate, p.Current.NetDrain = sig12(p.Current.ServiceRate), sig12(p.Current.NetDrain)
	sig12p(p.Current.DrainSeconds)
	sig12u(p.Current.Utilization)
	q := &p.Queueing
	sig12p(q.WaitProbability, q.MeanWaitSeconds, q.MeanQueueLength)
	sig12u(q.Utilization)
	for i := range p.PlanPoints {
		r := &p.PlanPoints[i]
		r.NetDrain = sig12(r.NetDrain)
		sig12p(r.DrainSeconds)
		sig12u(r.Utilization)
	}
	for i := range p.Sensitivity {
		r := &p.Sensitivity[i]
		r.NetDrain = sig12(r.NetDrain)
		sig12p(r.DrainSeconds, r.WaitProbability, r.MeanWaitSeconds)
		sig12u(r.Utilization)
	}
	for i := range p.BurnDown {
		r := &p.BurnDown[i]
		r.T, r.Backlog = sig12(r.T), sig12(r.Backlog)
	}
	for i := range p.ErlangTable {
		r := &p.ErlangTable[i]
		for _, x := range []*float64{&r.WaitProbability, &r.MeanWaitSeconds, &r.MeanQueueLength, &r.TotalLatencySeconds} {
			*x = sig12(*x)
		}
		sig12u(&r.Utilization)
	}
}

// sig12 rounds x to 12 significant digits, ties to even. Where the power of
// ten that scales x to a 12-digit integer is exact in float64 (10^0 …
// 10^22), the integer is rounded and scaled back with one correctly rounded
// operation, which gives the float64 of the 12-digit decimal (scaling may
// move x across a tie only when it lies within an ulp of one); otherwise
// (|x| below 1e-11 or from 1e34 up) it goes through the decimal text.
func sig12(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	p := 11 - int(math.Floor(math.Log10(math.Abs(x))))
	switch {
	case p >= 0 && p <= 22:
		scale := math.Pow10(p)
		return math.RoundToEven(x*scale) / scale
	case p < 0 && p >= -22:
		scale := math.Pow10(-p)
		return math.RoundToEven(x/scale) * scale
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// sig12u rounds a utilisation like sig12, except that one below 1 stays
// below 1: a stable pool never reads as fully utilised.
func sig12u(x *float64) {
	if x == nil {
		return
	}
	if r := sig12(*x); *x >= 1 || r < 1 {
		*x = r
	}
}

func sig12p(xs ...*float64) {
	for _, x := range xs {
		if x != nil {
			*x = sig12(*x)
		}
	}
}

// model holds the derived rates of one plan and evaluates pools against
// them; the Erlang B values of every pool the plan reports are computed in
// one pass.
type model struct {
	in        PlanInput
	lam       float64 // λ_eff
	mu        float64 // μ_eff per worker
	k         int     // servers per worker
	perServer float64 // μ_eff / k
	curNet    float64 // net(c_current)
	qStart    float64
	spread    float64         // the service times' Allen–Cunneen factor (ServiceSpread)
	erlangB   map[int]float64 // servers → B(servers, a)
}

func newModel(in PlanInput) *model {
	m := &model{in: in, k: 1, lam: EffectiveArrival(in.ArrivalRate, in.BurstPercent)}
	raw := in.PerWorker
	if in.ServiceTime > 0 {
		m.k = in.Concurrency
		raw = float64(m.k) / in.ServiceTime
	}
	m.mu = EffectivePerWorker(raw, in.OverheadPercent)
	m.perServer = m.mu / float64(m.k)
	m.curNet = NetDrain(float64(in.Workers), m.mu, m.lam)
	m.qStart = BacklogAtStart(in.Backlog, m.curNet, in.StartDelay)
	m.spread = in.spread()
	return m
}

// ceilDiv is ceil(n/d) for n ≥ 0, d > 0.
func ceilDiv(n, d int) int { return (n + d - 1) / d }

// utilization is λ_eff / (w·μ_eff); nil for an empty pool with arrivals.
func (m *model) utilization(w int) *float64 {
	if w == 0 {
		if m.lam == 0 {
			return ptr(0.0)
		}
		return nil
	}
	return ptr(m.lam / (float64(w) * m.mu))
}

// pool is w workers against the arrivals, draining backlog.
func (m *model) pool(w int, backlog float64) PoolState {
	rate := float64(w) * m.mu
	s := PoolState{Workers: w, ServiceRate: rate, NetDrain: rate - m.lam, Utilization: m.utilization(w)}
	if d, ok := DrainSeconds(backlog, rate, m.lam); ok {
		s.DrainSeconds = ptr(d)
	}
	return s
}

// prepareErlang computes B(servers, a) for the pool of every given worker
// count within MaxServers, walking the recursion once, up to the largest.
func (m *model) prepareErlang(workers []int) {
	a := m.lam / m.perServer
	var servers []int
	for _, w := range workers {
		if w > 0 && w <= MaxServers/m.k {
			servers = append(servers, w*m.k)
		}
	}
	slices.Sort(servers)
	servers = slices.Compact(servers)
	m.erlangB = make(map[int]float64, len(servers))
	b, at := 1.0, 0
	for _, c := range servers {
		for ; at < c; at++ {
			b = a * b / (float64(at+1) + a*b)
		}
		m.erlangB[c] = b
	}
}

// erlang is the Erlang C estimate for w workers, from the prepared B
// values; false when the pool is empty or beyond MaxServers.
func (m *model) erlang(w int) (Queueing, bool) {
	if w <= 0 || w > MaxServers/m.k {
		return Queueing{}, false
	}
	servers := w * m.k
	q, waits := newQueueing(servers, m.lam, m.perServer)
	if !waits {
		return q, true
	}
	b, ok := m.erlangB[servers]
	if !ok {
		b = ErlangB(servers, q.OfferedLoad)
	}
	return q.withC(erlangCFromB(b, q.Utilization)).WithSpread(m.spread), true
}

func (m *model) queueing(w int) PoolQueueing {
	out := PoolQueueing{Workers: w, Servers: w * m.k, Utilization: m.utilization(w)}
	if w == 0 && m.lam == 0 {
		out.Stable = true
		out.WaitProbability, out.MeanWaitSeconds, out.MeanQueueLength = ptr(0.0), ptr(0.0), ptr(0.0)
		return out
	}
	q, ok := m.erlang(w)
	if !ok || !q.Stable {
		return out
	}
	out.Stable = true
	out.WaitProbability = ptr(q.WaitProbability)
	out.MeanWaitSeconds = ptr(q.MeanWait)
	out.MeanQueueLength = ptr(q.MeanQueueLength)
	return out
}

// sensitivity evaluates six whole-worker counts, target−2 to target+3,
// shifted up to start at one worker, draining the backlog at start.
func (m *model) sensitivity(target int) []SensitivityRow {
	ws := sensitivityWorkers(target)
	rows := make([]SensitivityRow, 0, len(ws))
	for _, w := range ws {
		s := m.pool(w, m.qStart)
		r := SensitivityRow{Workers: w, NetDrain: s.NetDrain, DrainSeconds: s.DrainSeconds, Utilization: s.Utilization}
		if q, ok := m.erlang(w); ok && q.Stable {
			r.WaitProbability, r.MeanWaitSeconds = ptr(q.WaitProbability), ptr(q.MeanWait)
		}
		rows = append(rows, r)
	}
	return rows
}

// erlangTable is the Erlang C table for pool sizes around the planned pool:
// from three below it (but no lower than the smallest stable pool), eight
// sizes in all.
func (m *model) erlangTable(planned int) []ErlangRow {
	ws := m.erlangTableWorkers(planned)
	rows := make([]ErlangRow, 0, len(ws))
	for _, w := range ws {
		q, ok := m.erlang(w)
		if !ok || !q.Stable {
			continue
		}
		rows = append(rows, ErlangRow{
			Workers:             w,
			Servers:             q.Servers,
			Utilization:         q.Utilization,
			WaitProbability:     q.WaitProbability,
			MeanWaitSeconds:     q.MeanWait,
			MeanQueueLength:     q.MeanQueueLength,
			TotalLatencySeconds: q.MeanWait + 1/m.perServer,
		})
	}
	return rows
}

// sensitivityWorkers are target−2 … target+3, shifted up to start at one.
func sensitivityWorkers(target int) []int {
	lo := max(1, target-sensitivityBelow)
	ws := make([]int, 0, sensitivityBelow+sensitivityAbove+1)
	for w := lo; w <= lo+sensitivityBelow+sensitivityAbove; w++ {
		ws = append(ws, w)
	}
	return ws
}

// erlangTableWorkers are the pool sizes of the Erlang table: from three
// below the planned pool, but no lower than the smallest stable pool, eight
// in all; none when the pools are beyond MaxServers.
func (m *model) erlangTableWorkers(planned int) []int {
	offered := m.lam / m.mu // in workers
	if !(offered < float64(MaxServers/m.k)) {
		return nil
	}
	stableMin := int(math.Floor(offered)) + 1
	lo := max(stableMin, planned-erlangRowsBelow, 1)
	if lo > MaxServers/m.k {
		return nil
	}
	hi := min(lo+erlangRows-1, MaxServers/m.k)
	ws := make([]int, 0, hi-lo+1)
	for w := lo; w <= hi; w++ {
		ws = append(ws, w)
	}
	return ws
}

// backlogAt is the modeled backlog t seconds from now: the current pool
// until the start delay, the planned pool after.
// From the moment a draining pool empties the queue, the backlog is exactly
// zero, not a rounding error away from it.
func (m *model) backlogAt(t, plannedNet float64) float64 {
	d := m.in.StartDelay
	if t <= d {
		return linearBacklog(m.in.Backlog, m.curNet, t)
	}
	return linearBacklog(m.qStart, plannedNet, t-d)
}

// linearBacklog is max(0, q − net·t), and 0 from t ≥ q/net on when net > 0
// (within the 12 digits sample times are rounded to).
func linearBacklog(q, net, t float64) float64 {
	if net > 0 && t >= q/net*(1-1e-11) {
		return 0
	}
	return math.Max(0, q-net*t)
}

// burnDown samples the backlog over the horizon at a round step, adding the
// start delay and the moments the backlog reaches zero, where the line bends.
func (m *model) burnDown(planned int) []BurnDownPoint {
	h, d := m.in.Horizon, m.in.StartDelay
	net := NetDrain(float64(planned), m.mu, m.lam)
	step := niceStep(h / burnDownSteps)
	ts := []float64{h}
	for i := 0; float64(i)*step < h; i++ {
		ts = append(ts, float64(i)*step)
	}
	if d > 0 && d < h {
		ts = append(ts, d)
	}
	if m.curNet > 0 && m.in.Backlog > 0 {
		if t := m.in.Backlog / m.curNet; t < math.Min(d, h) {
			ts = append(ts, t)
		}
	}
	if net > 0 && m.qStart > 0 {
		if t := d + m.qStart/net; t < h {
			ts = append(ts, t)
		}
	}
	for i, t := range ts {
		ts[i] = sig12(t)
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	out := make([]BurnDownPoint, len(ts))
	for i, t := range ts {
		out[i] = BurnDownPoint{T: t, Backlog: m.backlogAt(t, net)}
	}
	return out
}

// niceStep is the smallest round span of at least x seconds: 1, 2 or 5
// times a power of ten up to 20 s, whole minutes and hours above, then
// days.
func niceStep(x float64) float64 {
	if !(x > 0) {
		return 1
	}
	if x <= 20 {
		p := math.Pow(10, math.Floor(math.Log10(x)))
		for _, f := range []float64{1, 2, 5, 10} {
			if f*p >= x*(1-1e-12) {
				return f * p
			}
		}
	}
	for _, s := range []float64{30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400} {
		if s >= x {
			return s
		}
	}
	return 86400 * niceStep(x/86400)
}

func ptr[T any](v T) *T { return &v }
