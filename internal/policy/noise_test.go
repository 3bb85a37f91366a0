package policy

import (
	"math"
	"math/rand/v2"
	"testing"
)

// arNoise is an estimate's noise as an EWMA of counts makes it: an AR(1)
// with correlation e^(−dt/τ) and standard deviation sigma, seeded.
func arNoise(n int, sigma, dt, tau float64, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	phi := math.Exp(-dt / tau)
	xs := make([]float64, n)
	x := sigma * r.NormFloat64()
	for i := range xs {
		xs[i] = x
		x = phi*x + math.Sqrt(1-phi*phi)*sigma*r.NormFloat64()
	}
	return xs
}

// The spread of an estimate whose noise is correlated over τ, around a
// still level c, is that noise; a steady one has none, and then Poisson
// counting, λ ÷ 2τ, is the floor.
func TestRateNoiseSpread(t *testing.T) {
	t.Parallel()
	const c, a, dt, tau = 50.0, 3.0, 5.0, 60.0
	var rn rateNoise
	if _, ok := rn.sigma(c, tau); ok {
		t.Fatal("a spread with no estimates")
	}
	// The spread is itself an EWMA over a few correlation times: its
	// mean over a long run is what is checked.
	v := 0.0
	xs := arNoise(40000, a, dt, tau, 1)
	for _, x := range xs {
		rn.observe(c+x, dt, tau)
		v += rn.v / float64(len(xs))
	}
	_, ok := rn.sigma(c, tau)
	if sigma := math.Sqrt(v); !ok || math.Abs(rn.m-c) > 1 || math.Abs(sigma-a) > 0.05*a {
		t.Fatalf("mean %v σ %v (ok %v), want %v and %v", rn.m, sigma, ok, c, a)
	}
	var steady rateNoise
	for range 2000 {
		steady.observe(c, dt, tau)
	}
	if sigma, _ := steady.sigma(c, tau); math.Abs(sigma-math.Sqrt(c/(2*tau))) > 1e-9 {
		t.Fatalf("steady σ %v, want the Poisson floor %v", sigma, math.Sqrt(c/(2*tau)))
	}
}

// A level that moves adds little to the spread: on a climb of slope s the
// estimate runs s × T ahead of an EWMA over T, so measured around the slow
// mean (T = noiseSlow × τ) a climb of a × 0.25 a τ-time would read as a
// spread of a × √(1 + 2.5²) ≈ 2.7 a; around the near mean (T = noiseNear ×
// τ, corrected for the noise it takes in) it reads a × √(1 + 1.5 × 0.5²) ≈
// 1.17 a.
func TestRateNoiseSpreadLeavesOutAMovingLevel(t *testing.T) {
	t.Parallel()
	const c, a, dt, tau = 500.0, 3.0, 5.0, 60.0
	slope := 0.25 * a / tau // msg/s per second
	var rn rateNoise
	v := 0.0
	xs := arNoise(40000, a, dt, tau, 2)
	for i, x := range xs {
		rn.observe(c+slope*dt*float64(i)+x, dt, tau)
		v += rn.v / float64(len(xs))
	}
	sigma := math.Sqrt(v)
	lag := slope * noiseNear * tau / a // the lag behind the near mean, in noise deviations
	want := a * math.Sqrt(1+float64(noiseNear+1)/noiseNear*lag*lag)
	if math.Abs(sigma-want) > 0.05*want {
		t.Fatalf("σ %v on a climb of %v msg/s a second with noise %v, want %v", sigma, slope, a, want)
	}
}

// A level that begins to fall moves within the window it begins in: after
// a steady stretch of whole windows (no drift), the slow mean falling by
// more than its own noise from the window's start is a move at once, not a
// window later; a mean within that noise is none.
func TestRateNoiseSeesAMoveWithinItsWindow(t *testing.T) {
	t.Parallel()
	const dt, tau = 5.0, 60.0
	var rn rateNoise
	for range int(3 * noiseSlow * tau / dt) {
		rn.observe(50, dt, tau)
	}
	sigma, _ := rn.sigma(50, tau)
	sm := noiseSigmas * sigma / math.Sqrt(noiseSlow)
	if rn.moves(sm) {
		t.Fatalf("a steady level moves (drift %v, mean %v from %v)", rn.drift, rn.m, rn.anchor)
	}
	rn.m, rn.anchor = 50-sm/2, 50
	if rn.moves(sm) {
		t.Errorf("a mean %v below the window's start, within its noise %v, moves", sm/2, sm)
	}
	rn.m = 50 - 2*sm
	if !rn.moves(sm) {
		t.Errorf("a mean %v below the window's start, twice its noise %v, does not move", 2*sm, sm)
	}
}
