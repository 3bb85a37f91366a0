package sim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Service-time distributions.
const (
	DistExponential = "exponential"
	DistLognormal   = "lognormal"
	DistConstant    = "constant"
)

// Service is the distribution of the time one message takes from pick-up to
// delete.
type Service struct {
	Dist string        // DistExponential (default), DistLognormal or DistConstant
	Mean time.Duration // mean service time
	// CV is the coefficient of variation (standard deviation ÷ mean) of the
	// lognormal distribution; the exponential's is 1 and the constant's 0.
	CV float64
}

// Validate reports a service distribution that cannot be sampled.
func (s Service) Validate() error {
	if s.Mean <= 0 {
		return fmt.Errorf("service time %v: must be > 0", s.Mean)
	}
	switch s.Dist {
	case "", DistExponential, DistConstant:
	case DistLognormal:
		if !(s.CV > 0) || math.IsInf(s.CV, 0) {
			return fmt.Errorf("service time coefficient of variation %v: must be > 0 for a lognormal distribution", s.CV)
		}
	default:
		return fmt.Errorf("unknown service-time distribution %q (want %s)", s.Dist,
			strings.Join([]string{DistExponential, DistLognormal, DistConstant}, ", "))
	}
	return nil
}

// sampler draws service times in seconds.
type sampler struct {
	dist      string
	mean      float64
	mu, sigma float64 // of the underlying normal, for the lognormal
}

func newSampler(s Service) sampler {
	sp := sampler{dist: s.Dist, mean: s.Mean.Seconds()}
	if sp.dist == "" {
		sp.dist = DistExponential
	}
	if sp.dist == DistLognormal {
		// A lognormal with mean m and coefficient of variation v has
		// σ² = ln(1 + v²) and µ = ln m − σ²/2 (E[X] = e^(µ+σ²/2),
		// Var[X]/E[X]² = e^σ² − 1).
		s2 := math.Log1p(s.CV * s.CV)
		sp.sigma = math.Sqrt(s2)
		sp.mu = math.Log(sp.mean) - s2/2
	}
	return sp
}

func (sp sampler) draw(r *rand.Rand) float64 {
	switch sp.dist {
	case DistConstant:
		return sp.mean
	case DistLognormal:
		return math.Exp(sp.mu + sp.sigma*r.NormFloat64())
	default:
		return sp.mean * r.ExpFloat64()
	}
}

// ServiceChange multiplies the service time of every message dispatched
// from At on by Factor. Each factor is relative to the drawn time, not to
// the change before it: {1h, 2} is a deploy that doubles the service time,
// and a further {2h, 1} undoes it. The latest change at or before a
// dispatch is in force.
type ServiceChange struct {
	At     time.Duration // since the start
	Factor float64
}

// MaxServiceFactor bounds a service change's factor, so that no change
// makes a message take longer than any run could last.
const MaxServiceFactor = 1000

func serviceChangeErrors(changes []ServiceChange) []error {
	return changeErrors("service change", changes, func(c ServiceChange) (time.Duration, string) {
		if !(c.Factor > 0 && c.Factor <= MaxServiceFactor) {
			return c.At, fmt.Sprintf("factor %v must be > 0 and at most %d", c.Factor, MaxServiceFactor)
		}
		return c.At, ""
	})
}

// changeErrors checks a list of changes in force from a time on (kind
// names them): each at 0 or later, no time given twice, and its value as
// of says (a problem, or "" when there is none).
func changeErrors[C any](kind string, cs []C, of func(C) (time.Duration, string)) []error {
	var errs []error
	seen := make(map[time.Duration]bool, len(cs))
	for _, c := range cs {
		at, problem := of(c)
		if at < 0 {
			errs = append(errs, fmt.Errorf("%s at %v: must be at 0 or later", kind, at))
		}
		if problem != "" {
			errs = append(errs, fmt.Errorf("%s at %v: %s", kind, at, problem))
		}
		if seen[at] {
			errs = append(errs, fmt.Errorf("%s at %v: given twice", kind, at))
		}
		seen[at] = true
	}
	return errs
}

// timed is a value in force from at seconds since the start on.
type timed[T any] struct {
	at float64
	v  T
}

// inTimeOrder is cs as timed values, in time order.
func inTimeOrder[C, T any](cs []C, of func(C) (time.Duration, T)) []timed[T] {
	out := make([]timed[T], len(cs))
	for i, c := range cs {
		at, v := of(c)
		out[i] = timed[T]{at: at.Seconds(), v: v}
	}
	slices.SortStableFunc(out, func(a, b timed[T]) int { return cmp.Compare(a.at, b.at) })
	return out
}

// newServiceChanges are a world's service changes in time order, their
// factors.
func newServiceChanges(cs []ServiceChange) []timed[float64] {
	return inTimeOrder(cs, func(c ServiceChange) (time.Duration, float64) { return c.At, c.Factor })
}

// startDelays are the start delays of a world's launches, in launch order:
// StartDelay for every one, or, with a coefficient of variation, lognormal
// draws from a stream of their own. Delays are drawn ahead when peeked, so
// the oracle can see the delays of its next launches and every run with
// the same seed meets the same sequence.
type startDelays struct {
	fixed bool
	mean  float64 // seconds
	s     sampler
	r     *rand.Rand
	ahead []float64 // drawn, not yet launched; from head on
	head  int
}

func newStartDelays(c Config) startDelays {
	d := startDelays{mean: c.StartDelay.Seconds()}
	if c.StartDelay <= 0 || c.StartDelayCV == 0 {
		d.fixed = true
		return d
	}
	d.s = newSampler(Service{Dist: DistLognormal, Mean: c.StartDelay, CV: c.StartDelayCV})
	d.r = rand.New(rand.NewPCG(c.Seed, 0x73746172)) // "star"
	return d
}

// peek is the delay of the launch i after the next one (0: the next).
func (d *startDelays) peek(i int) float64 {
	if d.fixed {
		return d.mean
	}
	for len(d.ahead)-d.head <= i {
		d.ahead = append(d.ahead, d.s.draw(d.r))
	}
	return d.ahead[d.head+i]
}

// next is the delay of the next launch, which takes it.
func (d *startDelays) next() float64 {
	v := d.peek(0)
	if d.fixed {
		return v
	}
	d.head++
	// Keep the buffer from creeping: once most of it is taken, move the
	// rest to the front.
	if d.head >= 64 && 2*d.head >= len(d.ahead) {
		d.ahead = d.ahead[:copy(d.ahead, d.ahead[d.head:])]
		d.head = 0
	}
	return v
}
