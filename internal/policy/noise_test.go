package policy

import (
	"math"
	"testing"
)

// An estimate alternating a msg/s either side of c has a slow mean of c and
// a spread of a; a steady one has none, and then Poisson counting, λ ÷ 2τ,
// is the floor.
func TestRateNoiseSpread(t *testing.T) {
	t.Parallel()
	const c, a, dt, tau = 50.0, 3.0, 5.0, 60.0
	var rn rateNoise
	if _, ok := rn.sigma(c, tau); ok {
		t.Fatal("a spread with no estimates")
	}
	for i := range 2000 {
		rn.observe(c+a*float64(1-2*(i%2)), dt, tau)
	}
	sigma, ok := rn.sigma(c, tau)
	if !ok || math.Abs(rn.m-c) > 0.2 || math.Abs(sigma-a) > 0.1 {
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
