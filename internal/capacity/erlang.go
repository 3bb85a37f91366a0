package capacity

import "math"

// MaxServers is the largest pool the Erlang C functions evaluate.
const MaxServers = 10_000_000

// Queueing is the M/M/c model of a pool of c identical servers fed by one
// queue: Poisson arrivals at λ, exponential service at μ per server.
//
//	a = λ/μ              offered load
//	ρ = a/c              utilisation (the pool is stable only when ρ < 1)
//	C(c, a)              Erlang C: the probability an arrival waits
//	Wq = C / (cμ − λ)    mean time in queue
//	Lq = λ·Wq            mean queue length (Little's law)
//
// When ρ ≥ 1 the queue grows without bound: Stable is false and the wait
// fields are 0, never NaN or Inf; read them as "no finite answer".
type Queueing struct {
	Servers         int     `json:"workers"`
	OfferedLoad     float64 `json:"offered_load"`
	Utilization     float64 `json:"utilization"`
	WaitProbability float64 `json:"wait_probability"`
	MeanWait        float64 `json:"mean_wait_seconds"`
	MeanQueueLength float64 `json:"mean_queue_length"`
	Stable          bool    `json:"stable"`

	arrival, rate float64
	// spread is the Allen–Cunneen factor of the service times (see
	// WithSpread); 0 is exponential service, 1.
	spread float64
}

// MaxServiceTimeCV bounds the coefficient of variation of a service time
// the models take: beyond it the Allen–Cunneen factor is over 5,000 and no
// approximation of that kind says much.
const MaxServiceTimeCV = 100

// ServiceSpread is the Allen–Cunneen factor of service times whose
// coefficient of variation (standard deviation ÷ mean) is cv, with Poisson
// arrivals: (1 + cv²) ÷ 2. It is 1 for exponential service, as Erlang C
// assumes, ½ for a constant service time, and 2.5 for a cv of 2. A cv that
// is negative, NaN or infinite gives 1.
func ServiceSpread(cv float64) float64 {
	if !(cv >= 0) || math.IsInf(cv, 0) {
		return 1
	}
	return (1 + cv*cv) / 2
}

// WithSpread is the M/G/c queue with the same load whose service times have
// the Allen–Cunneen factor k (ServiceSpread): the chance of waiting is
// Erlang C's, and the wait of those that wait k times as long, so the mean
// wait and queue length scale by k and P(Wq > t) = C·e^−(cμ − λ)t/k. A
// factor that is not positive and finite leaves the queue M/M/c.
func (q Queueing) WithSpread(k float64) Queueing {
	if !(k > 0) || math.IsInf(k, 0) || k == 1 {
		return q
	}
	q.spread = k
	q.MeanWait *= k
	q.MeanQueueLength *= k
	return q
}

// ErlangB is the Erlang B blocking probability B(c, a), by the recursion
// B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)), which stays within [0, 1] for
// any c and a and so never overflows, unlike a^c/c!. It is also numerically
// stable: each step shrinks a relative error by k/(k + a·B), so the result
// keeps nearly full precision at c = 100,000 and beyond. It costs O(c).
// Negative c, and a that is negative, NaN or infinite, give 1.
func ErlangB(servers int, offered float64) float64 {
	if servers < 0 || !(offered >= 0) || math.IsInf(offered, 0) {
		return 1
	}
	b := 1.0
	for k := 1; k <= servers; k++ {
		b = offered * b / (float64(k) + offered*b)
	}
	return b
}

// erlangCFromB is C(c, a) = B / (1 − ρ(1 − B)), ρ = a/c < 1.
func erlangCFromB(b, rho float64) float64 {
	return b / (1 - rho*(1-b))
}

// ErlangC evaluates the M/M/c queue with c servers, arrivals at λ msg/s and
// each server completing μ msg/s. 11 servers, λ = 50, μ = 5 give P(wait)
// 68.2 % and Wq 136.4 ms (docs/model.md, 10.8). It costs O(c) and is finite and accurate
// for any c up to MaxServers: the Erlang B recursion never overflows.
//
// Servers ≤ 0, μ ≤ 0, λ < 0, non-finite rates or c > MaxServers give a
// result with Stable false and no wait figures; otherwise OfferedLoad and
// Utilization are always filled in, and the wait figures only when ρ < 1.
func ErlangC(servers int, arrivalRate, perServer float64) Queueing {
	q, waits := newQueueing(servers, arrivalRate, perServer)
	if !waits {
		return q
	}
	return q.withC(erlangCFromB(ErlangB(servers, q.OfferedLoad), q.Utilization))
}

// newQueueing fills in the load of an M/M/c queue and whether it is stable,
// and reports whether its wait figures need C(c, a): only a stable pool with
// arrivals has any.
func newQueueing(servers int, arrivalRate, perServer float64) (Queueing, bool) {
	q := Queueing{Servers: servers, arrival: arrivalRate, rate: perServer}
	if servers <= 0 || !(perServer > 0) || !(arrivalRate >= 0) ||
		math.IsInf(arrivalRate, 0) || math.IsInf(perServer, 0) {
		return q, false
	}
	a := arrivalRate / perServer
	q.OfferedLoad = a
	q.Utilization = a / float64(servers)
	spare := float64(servers)*perServer - arrivalRate
	if servers > MaxServers || !(q.Utilization < 1) || !(spare > 0) {
		return q, false
	}
	q.Stable = true
	return q, arrivalRate > 0
}

func (q Queueing) withC(c float64) Queueing {
	q.WaitProbability = c
	q.MeanWait = c / (float64(q.Servers)*q.rate - q.arrival)
	q.MeanQueueLength = q.arrival * q.MeanWait
	return q
}

// WaitExceeds is P(Wq > t) = C(c, a) · e^−(cμ − λ)t, the share of messages
// that wait longer than t seconds in the queue. It is 1 for an unstable pool.
func (q Queueing) WaitExceeds(t float64) float64 {
	if !q.Stable {
		if q.Servers > 0 && q.rate > 0 {
			return 1
		}
		return 0
	}
	if t <= 0 {
		return q.WaitProbability
	}
	if q.spread > 0 {
		t /= q.spread
	}
	return q.WaitProbability * math.Exp(-(float64(q.Servers)*q.rate-q.arrival)*t)
}

// WaitFloor is the latency-target sizing (docs/model.md, section 5): the smallest number of
// servers whose mean queue wait Wq is at most target seconds. The offered load
// sets the floor (c > a); the target picks the number. It walks up from
// floor(a)+1 with the Erlang B recursion, so it costs O(c). The second result
// is false when there is no answer: no service rate, a target ≤ 0 with
// arrivals, or more than MaxServers needed. No arrivals need 0 servers.
func WaitFloor(arrivalRate, perServer, target float64) (int, bool) {
	if !(perServer > 0) || math.IsInf(perServer, 0) || !(arrivalRate >= 0) ||
		math.IsInf(arrivalRate, 0) || math.IsNaN(target) {
		return 0, false
	}
	if arrivalRate == 0 {
		return 0, true
	}
	if !(target > 0) {
		return 0, false
	}
	return walkServers(arrivalRate, perServer, func(cProb, spare float64) bool {
		return cProb/spare <= target
	})
}

// WaitQuantileFloor is the smallest number of servers for which at most
// `miss` of the messages wait longer than t seconds in the queue:
// P(Wq > t) = C(c, a)·e^−(cμ − λ)t ≤ miss. With miss = 0.01 it sizes for "99 %
// of messages start within t". The second result is false when there is no
// answer (no service rate, miss outside (0, 1), or more than MaxServers).
// No arrivals need 0 servers.
func WaitQuantileFloor(arrivalRate, perServer, t, miss float64) (int, bool) {
	if !(perServer > 0) || math.IsInf(perServer, 0) || !(arrivalRate >= 0) ||
		math.IsInf(arrivalRate, 0) || !(miss > 0 && miss < 1) || math.IsNaN(t) {
		return 0, false
	}
	if arrivalRate == 0 {
		return 0, true
	}
	t = math.Max(t, 0)
	return walkServers(arrivalRate, perServer, func(cProb, spare float64) bool {
		return cProb*math.Exp(-spare*t) <= miss
	})
}

// WaitFloorWorkers is the Erlang C wait floor in workers, the one the
// policy, the planner and its price of the promise size with: the fewest
// workers of concurrency servers each (at least 1), every server taking
// 1/perServer seconds a message, for which at most 1 − quantile of the
// messages wait longer than latency seconds in the queue
// (WaitQuantileFloor, rounded up to whole workers). Service times of
// Allen–Cunneen factor spread (ServiceSpread; ≤ 0: exponential, 1) stretch
// the waits by it, so the floor for latency is the M/M/c floor for
// latency ÷ spread. The second result is false when there is none: no
// answer from WaitQuantileFloor, or more than maxBusy busy servers
// (arrivalRate ÷ perServer; maxBusy ≤ 0: no bound but MaxServers), where
// it is not computed.
func WaitFloorWorkers(arrivalRate, perServer, latency, quantile, spread float64, concurrency, maxBusy int) (int, bool) {
	if maxBusy > 0 && arrivalRate/perServer > float64(maxBusy) {
		return 0, false
	}
	if spread > 0 && !math.IsInf(spread, 0) {
		latency /= spread
	}
	servers, ok := WaitQuantileFloor(arrivalRate, perServer, latency, 1-quantile)
	if !ok {
		return 0, false
	}
	return ceilDiv(servers, max(concurrency, 1)), true
}

// walkServers returns the smallest stable pool c ≤ MaxServers for which
// enough(C(c, a), cμ − λ) holds, walking up from floor(a)+1 with the Erlang B
// recursion. enough must be monotone in c: false, then true from some c on.
// Pools whose spare capacity rounds to ≤ 0 are skipped as unstable.
func walkServers(arrivalRate, perServer float64, enough func(cProb, spare float64) bool) (int, bool) {
	a := arrivalRate / perServer
	if !(a < MaxServers) {
		return 0, false
	}
	start := int(math.Floor(a)) + 1
	b := ErlangB(start-1, a)
	for c := start; c <= MaxServers; c++ {
		b = a * b / (float64(c) + a*b)
		rho := a / float64(c)
		spare := float64(c)*perServer - arrivalRate
		if !(rho < 1) || !(spare > 0) {
			continue
		}
		if enough(erlangCFromB(b, rho), spare) {
			return c, true
		}
	}
	return 0, false
}
