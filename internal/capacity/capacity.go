// Package capacity is the queueing maths of the checker: Little's law, drain
// time, backlog per worker, the capacity plan of a worker pool and the
// Erlang C model of an M/M/c queue. It is pure: plain values in, plain values
// out, rates in messages per second and times in seconds. It imports the
// standard library only.
package capacity

import "math"

// ceilTolerance is how far above a whole number a count may be and still be
// read as that number: 8/0.8 is 10.000000000000002 in floating point, and a
// plan must say 10 workers, not 11.
const ceilTolerance = 1e-9

// CeilWorkers rounds a worker count up to a whole number, robust to floating
// error: values within a relative 1e-9 of a positive integer round to that
// integer, so 8/0.8 = 10.000000000000002 gives 10. Any positive need, however
// small, is at least one worker. NaN and non-positive inputs give 0; values
// of math.MaxInt32 and above (+Inf included) give math.MaxInt32.
func CeilWorkers(x float64) int {
	if math.IsNaN(x) || x <= 0 {
		return 0
	}
	if x >= math.MaxInt32 {
		return math.MaxInt32
	}
	r := math.Round(x)
	if r >= 1 && math.Abs(x-r) <= ceilTolerance*r {
		return int(r)
	}
	return int(math.Ceil(x))
}

// OfferedLoad is Little's law: a = λ·S, the number of servers that are busy
// on average when λ messages per second each take S seconds.
func OfferedLoad(arrivalRate, serviceTime float64) float64 {
	return arrivalRate * serviceTime
}

// Concurrency is the number of concurrent handlers needed to keep
// utilisation at or below u: ceil(λ·S / u). 500 msg/s at 0.2 s and u = 0.7
// give 143 (docs/model.md, 10.1).
func Concurrency(arrivalRate, serviceTime, utilization float64) int {
	if utilization <= 0 {
		return 0
	}
	return CeilWorkers(OfferedLoad(arrivalRate, serviceTime) / utilization)
}

// DrainSeconds is the time to clear a backlog while arrivals continue:
// backlog / (μ − λ), where μ is the service rate of the whole pool. The
// second result is false when μ − λ ≤ 0 and a non-empty backlog never drains.
// An empty backlog drains in 0 s.
func DrainSeconds(backlog, serviceRate, arrivalRate float64) (float64, bool) {
	if backlog <= 0 {
		return 0, true
	}
	net := serviceRate - arrivalRate
	if !(net > 0) {
		return 0, false
	}
	return backlog / net, true
}

// TargetBacklogPerWorker is the acceptable backlog per worker:
// latency ÷ service time × concurrency. A worker that completes one message
// every S seconds clears latency/S messages within the latency promise.
// AWS's example: 10 s latency, 0.1 s per message, concurrency 1: 100.
func TargetBacklogPerWorker(latency, serviceTime float64, concurrency int) float64 {
	if serviceTime <= 0 || concurrency <= 0 {
		return 0
	}
	return latency / serviceTime * float64(concurrency)
}

// BacklogPerWorkerWorkers is the worker count at which the backlog per worker
// meets its target: ceil(backlog ÷ target). AWS's example: 1,500 messages at
// a target of 100 give 15 workers.
func BacklogPerWorkerWorkers(backlog, target float64) int {
	if target <= 0 {
		return 0
	}
	return CeilWorkers(backlog / target)
}

// EffectiveArrival is λ_eff = λ × (1 + b/100): the arrival rate raised by a
// burst reserve of b percent.
func EffectiveArrival(arrivalRate, burstPercent float64) float64 {
	return arrivalRate * (1 + burstPercent/100)
}

// EffectivePerWorker is μ_eff = μ × (1 − h/100): per-worker throughput lowered
// by a retry or overhead reserve of h percent.
func EffectivePerWorker(perWorker, overheadPercent float64) float64 {
	return perWorker * (1 - overheadPercent/100)
}

// NetDrain is net(c) = c × μ_eff − λ_eff, the rate at which c workers shrink
// the backlog (negative when it grows).
func NetDrain(workers, perWorker, arrivalRate float64) float64 {
	return workers*perWorker - arrivalRate
}

// BacklogAtStart is Q_start = max(0, Q0 − net(c_current) × d): the backlog
// when workers added now start taking messages, d seconds later.
func BacklogAtStart(backlog, currentNetDrain, startDelay float64) float64 {
	return math.Max(0, backlog-currentNetDrain*startDelay)
}

// DrainFloor is c_drain = ceil((λ_eff + Q_start/T) ÷ μ_eff): the workers that
// keep pace with arrivals and remove the backlog within T seconds.
// 12 msg/s, 18,000 messages, 30 min, 2.4 msg/s per worker: 10
// (docs/model.md, 10.4).
// A drain target T ≤ 0 sets no deadline: the floor only keeps pace with
// arrivals. No throughput (μ_eff ≤ 0) gives 0: there is no answer.
func DrainFloor(arrivalRate, perWorker, backlog, drainTarget float64) int {
	if perWorker <= 0 {
		return 0
	}
	need := arrivalRate
	if backlog > 0 && drainTarget > 0 {
		need += backlog / drainTarget
	}
	return CeilWorkers(need / perWorker)
}

// UtilizationFloor is c_util = ceil(λ_eff ÷ (μ_eff × u)): the workers that
// keep steady utilisation at or below the ceiling u. 40 msg/s, 5 msg/s per
// worker, u = 0.8: 10 (docs/model.md, 10.6).
func UtilizationFloor(arrivalRate, perWorker, utilization float64) int {
	if perWorker <= 0 || utilization <= 0 {
		return 0
	}
	return CeilWorkers(arrivalRate / (perWorker * utilization))
}
