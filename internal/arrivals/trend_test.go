package arrivals

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// ewmaRun feeds the rate arrivals(t) to an EWMA of time constant tau every
// dt for d, as the arrival estimator smooths its observations, and calls
// each with the time and the estimate after every sample.
func ewmaRun(tau, dt, d time.Duration, arrivals func(t float64) float64, each func(at time.Time, t, est float64)) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	alpha := 1 - math.Exp(-dt.Seconds()/tau.Seconds())
	est := arrivals(0)
	for at := dt; at <= d; at += dt {
		t := at.Seconds()
		est += alpha * (arrivals(t) - est)
		each(t0.Add(at), t, est)
	}
}

func TestTrendSizesARampForTheRateWhenNewWorkersServe(t *testing.T) {
	const tau, start = time.Minute, 45 * time.Second
	// 2 msg/s climbing 12 msg/s a minute: a rate the estimate lags by 12
	// msg/s, more than a tenth of the rate up to 120 msg/s.
	ramp := func(t float64) float64 { return 2 + 0.2*t }
	var tr Trend
	checked := 0
	ewmaRun(tau, 5*time.Second, 15*time.Minute, ramp, func(at time.Time, ts, est float64) {
		tr.Observe(at, est, 2*tau)
		rise, slope := tr.Rise(at, est, tau, start, 0)
		if ts < 5*tau.Seconds() {
			return // the estimate settles on the ramp within a few τ
		}
		if 0.2*tau.Seconds() <= trendMinShare*est {
			// A climb the utilisation ceiling's headroom absorbs.
			if rise != 0 {
				t.Fatalf("at %.0f s: rise %.2f for a climb of %.0f msg/s over τ at %.0f msg/s, want 0", ts, rise, 0.2*tau.Seconds(), est)
			}
			return
		}
		checked++
		// Settled, the EWMA is the rate τ ago; the rate when workers
		// launched now serve is the ramp's a start delay ahead.
		want := ramp(ts + start.Seconds())
		if got := est + rise; math.Abs(got-want) > 0.02*want {
			t.Fatalf("at %.0f s: sized for %.2f msg/s (estimate %.2f + %.2f), want the rate %s ahead, %.2f", ts, got, est, rise, start, want)
		}
		if math.Abs(slope-0.2) > 0.01 {
			t.Fatalf("at %.0f s: slope %.4f msg/s², want the ramp's 0.2", ts, slope)
		}
	})
	if checked < 30 {
		t.Fatalf("%d samples checked on the ramp, want 30 or more", checked)
	}
}

// A step, a flat rate and a falling one add nothing. After a step from 20
// to 100 msg/s the estimate's approach slows, so it is not sized as a ramp:
// the backlog floors and the surge serve a step.
func TestTrendAddsNothingButForAClimb(t *testing.T) {
	const tau = time.Minute
	for name, f := range map[string]func(float64) float64{
		"step": func(t float64) float64 {
			if t < 300 {
				return 20
			}
			return 100
		},
		"flat":    func(float64) float64 { return 50 },
		"falling": func(t float64) float64 { return math.Max(100-0.05*t, 1) },
	} {
		var tr Trend
		ewmaRun(tau, 5*time.Second, 30*time.Minute, f, func(at time.Time, ts, est float64) {
			tr.Observe(at, est, 2*tau)
			if rise, _ := tr.Rise(at, est, tau, time.Minute, 0); rise != 0 {
				t.Fatalf("%s, at %.0f s (estimate %.1f): rise %.2f, want 0", name, ts, est, rise)
			}
		})
	}
}

func TestTrendIgnoresCountingNoise(t *testing.T) {
	const tau, dt = time.Minute, 5 * time.Second
	// Poisson arrivals at 50 msg/s, counted every 5 s and observed with the
	// completions' own counting noise: the observation's variance is about
	// twice the rate's over the interval.
	rng := rand.New(rand.NewPCG(1, 2))
	var tr Trend
	samples, rises := 0, 0
	ewmaRun(tau, dt, 24*time.Hour, func(float64) float64 {
		return 50 + rng.NormFloat64()*math.Sqrt(2*50/dt.Seconds())
	}, func(at time.Time, _ float64, est float64) {
		tr.Observe(at, est, 2*tau)
		samples++
		if rise, _ := tr.Rise(at, est, tau, time.Minute, 0); rise > 0 {
			rises++
		}
	})
	if share := float64(rises) / float64(samples); share > 0.001 {
		t.Fatalf("a steady rate with counting noise climbed in %d of %d samples (%.3f %%), want at most 0.1 %%", rises, samples, 100*share)
	}
}

func TestTrendKeepsTheLastTwoTau(t *testing.T) {
	const tau = time.Minute
	var tr Trend
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		tr.Observe(t0.Add(time.Duration(i)*time.Second), float64(i), 2*tau)
	}
	if n := len(tr.at); n > trendMarks+3 {
		t.Fatalf("%d marks kept at 1 s sampling, want at most %d", n, trendMarks+3)
	}
	now := t0.Add(999 * time.Second).UnixNano()
	if v, ok := tr.value(now - int64(2*tau)); !ok || math.Abs(v-879) > 1e-9 {
		t.Fatalf("the estimate 2τ ago is %v (%v), want 879 (interpolated)", v, ok)
	}
	// A sample older than the newest starts again.
	tr.Observe(t0, 1, 2*tau)
	if len(tr.at) != 1 {
		t.Fatalf("%d marks after a sample back in time, want 1", len(tr.at))
	}
}

// A climb the measured noise explains is no climb: on the same ramp, once
// settled at 60 msg/s (a climb of 12 msg/s over τ, 3σ of Poisson counting
// being 3 × √(2 · 60 ÷ 120) × √(2(1 − e⁻¹)) ≈ 3.4), a measured variance of
// 20 (msg/s)² (3σ ≈ 15 msg/s) holds the rise at 0, one of 5 (3σ ≈ 7.5)
// does not.
func TestTrendIgnoresAClimbTheNoiseExplains(t *testing.T) {
	t.Parallel()
	const tau = time.Minute
	ramp := func(t float64) float64 { return 2 + 0.2*t }
	var tr Trend
	checked := 0
	ewmaRun(tau, 5*time.Second, 15*time.Minute, ramp, func(at time.Time, ts, est float64) {
		tr.Observe(at, est, 2*tau)
		if ts < 5*tau.Seconds() || est < 55 || est > 65 {
			return
		}
		checked++
		if rise, _ := tr.Rise(at, est, tau, time.Minute, 20); rise != 0 {
			t.Errorf("at %.0f msg/s: rise %.2f with a measured variance of 20, want 0", est, rise)
		}
		if rise, _ := tr.Rise(at, est, tau, time.Minute, 5); rise <= 0 {
			t.Errorf("at %.0f msg/s: no rise with a measured variance of 5, want one", est)
		}
	})
	if checked == 0 {
		t.Fatal("the ramp never reached 55-65 msg/s settled")
	}
}
