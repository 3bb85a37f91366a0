package policy

import (
	"math"

	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// DefaultLateCost is the worker time a message that waits past the promise
// costs, in multiples of the worker time serving it takes (see bet).
const DefaultLateCost = model.DefaultLateCost

// betSteps is how finely bet.workers looks for the cheapest share: in
// sixteenths of the occurrence's workers.
const betSteps = 16

// bet weighs pre-starting workers for an expected occurrence of a recurring
// pattern by expected cost, in worker-seconds.
//
// The occurrence comes with probability p (forecast.Occurrence.Chance),
// at rate msg/s for length seconds, and its wait floor needs `need` workers
// more than the base ones today's arrivals need. Pre-starting x of them
// costs
//
//	x × ((1 − p) × wrong + p × early)  +  p × lateCost × late(base + x)
//
// where wrong is how long a pre-started worker runs for nothing when the
// occurrence does not come (from its launch until the occurrence is
// overdue), early how much longer it runs than a worker launched when the
// load arrives when it does, lateCost the worker-seconds one message past
// the promise costs (Settings.Forecast.LateCost times the worker time one
// message takes), and late(n) the messages past the promise with n workers
// there when it comes (see lateIfMissed). The bet pre-starts the x, in
// sixteenths of need, that costs least: none when the occurrence is
// unlikely or cheap to miss, enough that a fleet reacting once it comes
// keeps its messages within the promise when it is likely, all of need
// when only those do.
type bet struct {
	p        float64 // chance the occurrence comes
	rate     float64 // its arrivals, msg/s
	length   float64 // its length, seconds
	base     int     // workers today's arrivals need
	need     int     // workers its wait floor needs beyond base
	mu       float64 // msg/s one worker serves within the promise (see occurrenceBet)
	most     int     // the most workers the fleet may have
	react    float64 // seconds until workers launched when it comes start
	latency  float64 // the wait the fluid model counts as within the promise, seconds
	lateCost float64 // worker-seconds one late message costs
	wrong    float64 // seconds a pre-started worker runs when it does not come
	early    float64 // seconds a pre-started worker runs early when it does
}

// late is the messages past the promise with n workers there when the
// occurrence comes.
func (b bet) late(n int) float64 {
	return lateIfMissed(b.rate, float64(n)*b.mu, float64(max(b.most, n))*b.mu, b.length, b.react, b.latency)
}

// cost is the expected cost of pre-starting x workers, worker-seconds.
func (b bet) cost(x int) float64 {
	p := math.Min(math.Max(b.p, 0), 1)
	per := (1-p)*math.Max(b.wrong, 0) + p*math.Max(b.early, 0)
	return float64(x)*per + p*b.lateCost*b.late(b.base+x)
}

// workers is the number of workers to pre-start: the cheapest of 0, need
// and the sixteenths between (see bet). Ties go to fewer workers.
func (b bet) workers() int {
	if !(b.p > 0) || b.need <= 0 || !(b.mu > 0) || !(b.lateCost > 0) {
		return 0
	}
	best, bestCost := 0, b.cost(0)
	for i := 1; i <= betSteps; i++ {
		x := int(math.Ceil(float64(i) * float64(b.need) / betSteps))
		if c := b.cost(x); c < bestCost {
			best, bestCost = x, c
		}
	}
	return best
}

// lateIfMissed estimates the messages past the promise of an occurrence at
// rate msg/s lasting length seconds, met by a fleet serving now msg/s that
// can grow to most msg/s once workers launched when it arrives start react
// seconds later:
//
//   - the backlog grows at rate − now from its start; the first messages
//     are served within the promise (latency seconds) until the backlog
//     takes longer than that to serve, after latency × now ÷ (rate − now);
//   - after react seconds (or at its end) the fleet, at most, drains the
//     backlog at most − rate, and every message until it is drained waits
//     too long.
//
// It is 0 when the fleet now keeps pace with the occurrence.
func lateIfMissed(rate, now, most, length, react, latency float64) float64 {
	if !(rate > now) || !(length > 0) {
		return 0
	}
	grow := math.Min(react, length)
	backlog := (rate - now) * grow
	until := length // the end of the late messages, from the start
	if most > rate {
		until = math.Min(length, grow+backlog/(most-rate))
	}
	inTime := math.Max(latency, 0) * now / (rate - now)
	late := rate * (until - inTime)
	if !(late > 0) || math.IsInf(late, 0) {
		return 0
	}
	return late
}

// occurrenceBet is the bet on the occurrence o, expected at rate msg/s and
// needing need workers more than the base ones today's arrivals need, for
// the call's settings and bounds. A worker serves μ_eff msg/s, but a pool
// serves messages within the promise only up to the utilisation its wait
// floor allows (Erlang C): base + need workers hold it at rate, so each of
// n workers is taken to hold rate ÷ (base + need) msg/s of it.
func (c *call) occurrenceBet(o *forecast.Occurrence, rate float64, base, need int) bet {
	s := c.s
	dt := c.st.lastDt
	if dt <= 0 || dt > forecast.MaxObservation {
		dt = 0
	}
	mu := math.Min(c.muEff, rate/float64(max(base+need, 1)))
	horizon := c.horizon.Seconds()
	return bet{
		p:      o.Chance(),
		rate:   rate,
		length: o.Length().Seconds(),
		base:   base,
		need:   need,
		mu:     mu,
		most:   min(c.hi, maxRecommended),
		react:  (s.StartDelay + 2*dt).Seconds(),
		// Half the promise: the fluid backlog leaves out the noise of
		// arrivals and service times, which a fleet at the edge of keeping
		// pace turns into waits of the same order.
		latency:  c.latency() / 2,
		lateCost: s.Forecast.LateCost / c.muEff,
		wrong:    horizon + (o.Early() + o.Overdue()).Seconds(),
		early:    horizon + dt.Seconds(),
	}
}
