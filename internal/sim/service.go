package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
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
