package ceiling

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// pool is a fleet whose workers share n connections: each worker completes
// 1/s messages per second, and the fleet at most n/s (0: no limit).
func pool(n int, s float64) func(w float64) float64 {
	return func(w float64) float64 {
		if n > 0 {
			w = math.Min(w, float64(n))
		}
		return w / s
	}
}

// grow feeds one saturated minute per entry of sizes, from minute start.
func grow(d *Detector, start int, sizes []float64, rate func(float64) float64, noise *rand.Rand) int {
	for i, w := range sizes {
		v := rate(w)
		if noise != nil {
			// Poisson counting noise of a minute's completions.
			v += noise.NormFloat64() * math.Sqrt(v*60) / 60
		}
		d.Observe(Observation{At: t0.Add(time.Duration(start+i) * time.Minute), Workers: w, Throughput: v, Saturated: true})
	}
	return start + len(sizes)
}

func TestCeilingFound(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		n     int
		sizes []float64
		want  int // 0: no ceiling
	}{
		{"a pool of 60 met by a scale-up from 40 to 100", 60, []float64{40, 40, 70, 100, 100}, 60},
		{"a pool of 84 met from 50", 84, []float64{50, 60, 80, 100, 120}, 84},
		{"no pool: throughput grows with the workers", 0, []float64{40, 40, 70, 100, 100}, 0},
		{"a pool above every size", 500, []float64{40, 70, 100, 140}, 0},
		{"both sizes past the pool: the lower size is as far as it is known", 30, []float64{40, 40, 80, 80}, 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var d Detector
			end := grow(&d, 0, tt.sizes, pool(tt.n, 0.2), nil)
			c, ok := d.At(t0.Add(time.Duration(end)*time.Minute), false, 1)
			switch {
			case tt.want == 0 && ok:
				t.Fatalf("ceiling %d found where added workers add throughput: %+v", c.Workers, c)
			case tt.want > 0 && !ok:
				t.Fatalf("no ceiling found, want %d", tt.want)
			case ok && c.Workers != tt.want:
				t.Fatalf("ceiling %d, want %d (%+v)", c.Workers, tt.want, c)
			}
		})
	}
}

// TestNoCeilingInNoise: a fleet whose throughput grows with its workers,
// measured with counting noise, never shows a ceiling.
func TestNoCeilingInNoise(t *testing.T) {
	t.Parallel()
	for seed := range uint64(50) {
		var d Detector
		r := rand.New(rand.NewPCG(seed, 1))
		sizes := []float64{10, 12, 14, 17, 20, 24, 28, 28, 33, 40, 40, 47, 55, 55}
		end := grow(&d, 0, sizes, pool(0, 0.2), r)
		if c, ok := d.At(t0.Add(time.Duration(end)*time.Minute), false, 1); ok {
			t.Fatalf("seed %d: ceiling %+v found in noise", seed, c)
		}
	}
}

// TestDeployIsNoCeiling: a deploy that doubles the service time halves the
// throughput per worker at every size; the scale-up after it adds
// throughput in proportion, so it is no ceiling.
func TestDeployIsNoCeiling(t *testing.T) {
	t.Parallel()
	var d Detector
	end := grow(&d, 0, []float64{50, 50, 50}, pool(0, 0.2), nil)
	end = grow(&d, end, []float64{50, 50, 75, 100, 100}, pool(0, 0.4), nil)
	if c, ok := d.At(t0.Add(time.Duration(end)*time.Minute), false, 1); ok {
		t.Fatalf("ceiling %+v found after a deploy", c)
	}
}

func TestProbeAndRelease(t *testing.T) {
	t.Parallel()
	var d Detector
	rate := pool(60, 0.2)
	end := grow(&d, 0, []float64{40, 100, 100}, rate, nil)
	now := t0.Add(time.Duration(end) * time.Minute)
	c, ok := d.At(now, true, 1)
	if !ok || c.Workers != 60 {
		t.Fatalf("ceiling %+v %v, want 60", c, ok)
	}
	// Held at 60 for less than ProbeEvery: no probe.
	end = grow(&d, end, []float64{60, 60, 60}, rate, nil)
	if c, _ := d.At(t0.Add(time.Duration(end)*time.Minute), true, 1); c.Workers != 60 {
		t.Fatalf("probed after %d minutes: %d", end, c.Workers)
	}
	// After ProbeEvery held, one step of 20 %: 72.
	end = grow(&d, end, []float64{60, 60, 60, 60, 60, 60, 60}, rate, nil)
	c, _ = d.At(t0.Add(time.Duration(end)*time.Minute), true, 1)
	if c.Workers != 72 {
		t.Fatalf("after %d minutes held: ceiling %d, want 72", end, c.Workers)
	}
	// One probe at a time: held on, no further step before it is judged.
	if c2, _ := d.At(t0.Add(time.Duration(end)*time.Minute+ProbeLapse/2), true, 1); c2.Workers != 72 {
		t.Fatalf("a second probe while the first is out: %d", c2.Workers)
	}
	// The downstream is fixed: each probe past the ceiling adds throughput
	// in proportion and raises the ceiling at once by a step twice the
	// last (20 %, 40 %, 80 %), so the fleet the load asks for is reached
	// in a few probes, never in one jump.
	fixed := pool(0, 0.2)
	want := []int{72, 101, 182, 328}
	for i, w := range want {
		c, ok := d.At(t0.Add(time.Duration(end)*time.Minute), true, 1)
		if !ok || c.Workers != w {
			t.Fatalf("probe %d: ceiling %+v %v, want %d", i, c, ok, w)
		}
		end = grow(&d, end, []float64{float64(w), float64(w)}, fixed, nil)
	}
}

// TestUnjudgedProbeLapses: a probe that no saturated minute judges within
// ProbeLapse (the burst that asked for it ended before its workers
// started) goes back to the knee, and the next comes ProbeEvery later:
// bursts that never saturate a probed fleet do not ratchet the ceiling up.
func TestUnjudgedProbeLapses(t *testing.T) {
	t.Parallel()
	var d Detector
	end := grow(&d, 0, []float64{40, 100, 100}, pool(60, 0.2), nil)
	at := func(m time.Duration) time.Time { return t0.Add(time.Duration(end)*time.Minute + m) }
	if c, _ := d.At(at(ProbeEvery), true, 1); c.Workers != 72 {
		t.Fatalf("probe %d, want 72", c.Workers)
	}
	if c, _ := d.At(at(ProbeEvery+ProbeLapse-time.Second), true, 1); c.Workers != 72 {
		t.Fatalf("the probe lapsed early: %d", c.Workers)
	}
	if c, _ := d.At(at(ProbeEvery+ProbeLapse), true, 1); c.Workers != 60 {
		t.Fatalf("an unjudged probe after ProbeLapse: ceiling %d, want 60", c.Workers)
	}
	// A saturated minute at the knee keeps the ceiling from being forgotten.
	d.Observe(Observation{At: at(ProbeEvery + ProbeLapse + time.Minute), Workers: 60, Throughput: 300, Saturated: true})
	if c, _ := d.At(at(2*ProbeEvery+ProbeLapse), true, 1); c.Workers != 72 {
		t.Fatalf("the next probe ProbeEvery after the lapse: ceiling %d, want 72", c.Workers)
	}
	// Saturated minutes keep it from being forgotten; none judges a probe.
	for m := 0; m < 60; m += 5 {
		d.Observe(Observation{At: at(time.Duration(m)*time.Minute + 30*time.Minute), Workers: 60, Throughput: 300, Saturated: true})
		if c, _ := d.At(at(time.Duration(m)*time.Minute+30*time.Minute), true, 1); c.Workers > 72 {
			t.Fatalf("the ceiling ratcheted up to %d on unjudged probes", c.Workers)
		}
	}
}

// TestProbeMeetsAGrownPool: a pool of 60 grows to 100. Probes climb past
// 60, and the first that meets the new pool sets the ceiling where its
// throughput says the pool tops out, not back to 60.
func TestProbeMeetsAGrownPool(t *testing.T) {
	t.Parallel()
	var d Detector
	end := grow(&d, 0, []float64{40, 100, 100}, pool(60, 0.2), nil)
	bigger := pool(100, 0.2)
	for range 12 {
		c, ok := d.At(t0.Add(time.Duration(end+10)*time.Minute), true, 1)
		if !ok {
			t.Fatal("the ceiling went: the fleet would buy all a backlog asks for")
		}
		if c.Workers > 200 {
			t.Fatalf("ceiling %d: probes climbed far past the pool of 100", c.Workers)
		}
		end = grow(&d, end+10, []float64{float64(c.Workers), float64(c.Workers)}, bigger, nil)
	}
	if c, _ := d.At(t0.Add(time.Duration(end)*time.Minute), false, 1); c.Workers < 100 || c.Workers > 120 {
		t.Fatalf("after probing a pool of 100: ceiling %d, want 100 to 120", c.Workers)
	}
}

func TestProbeOfUnfixedCeilingSetsItBack(t *testing.T) {
	t.Parallel()
	var d Detector
	rate := pool(60, 0.2)
	end := grow(&d, 0, []float64{40, 100, 100}, rate, nil)
	// The fleet grows past the ceiling again (probes) and meets the same pool.
	end = grow(&d, end, []float64{60, 60, 80, 80}, rate, nil)
	c, ok := d.At(t0.Add(time.Duration(end)*time.Minute), false, 1)
	if !ok || c.Workers != 60 {
		t.Fatalf("ceiling %+v %v, want 60 again", c, ok)
	}
}

// A fleet that jumps at once from an unsaturated size to one past the
// pool: the earlier minutes' capacity (their workers at the service time
// they measured) is what the scale-up promised.
func TestCeilingFromUnsaturatedMinutes(t *testing.T) {
	t.Parallel()
	var d Detector
	const s = 0.2
	for i := range 5 { // 13 workers, 10 busy: 50 msg/s, capacity 13 ÷ 0.2
		d.Observe(Observation{At: t0.Add(time.Duration(i) * time.Minute), Workers: 13, Throughput: 50, Capacity: 13 / s})
	}
	// 200 workers on a pool of 60: 300 msg/s, for two minutes.
	d.Observe(Observation{At: t0.Add(5 * time.Minute), Workers: 200, Throughput: 60 / s, Saturated: true})
	if _, ok := d.At(t0.Add(6*time.Minute), false, 1); ok {
		t.Fatal("a ceiling from one ineffective minute: it takes two")
	}
	d.Observe(Observation{At: t0.Add(6 * time.Minute), Workers: 200, Throughput: 60 / s, Saturated: true})
	c, ok := d.At(t0.Add(7*time.Minute), false, 1)
	if !ok || c.Workers != 60 {
		t.Fatalf("ceiling %+v %v, want 60", c, ok)
	}
	// The same jump after a deploy that tripled the service time at 13
	// workers, to a fleet that needs 150: no ceiling.
	var dep Detector
	for i := range 3 {
		dep.Observe(Observation{At: t0.Add(time.Duration(i) * time.Minute), Workers: 13, Throughput: 50, Capacity: 13 / s})
	}
	for i := 3; i < 6; i++ {
		dep.Observe(Observation{At: t0.Add(time.Duration(i) * time.Minute), Workers: 13, Throughput: 13 / (3 * s), Capacity: 13 / (3 * s), Saturated: true})
	}
	dep.Observe(Observation{At: t0.Add(6 * time.Minute), Workers: 150, Throughput: 150 / (3 * s), Saturated: true})
	if c, ok := dep.At(t0.Add(7*time.Minute), false, 1); ok {
		t.Fatalf("ceiling %+v after a deploy", c)
	}
}

// A deploy that doubles the service time as the fleet scales up reads at
// first as an ineffective scale-up; held at the ceiling, the workers stay as
// slow, and the ceiling goes.
func TestDeployDuringScaleUpReleases(t *testing.T) {
	t.Parallel()
	var d Detector
	const s = 0.2
	for i := range 3 { // 23 workers, unsaturated, 5 msg/s each
		d.Observe(Observation{At: t0.Add(time.Duration(i) * time.Minute), Workers: 23, Throughput: 90, Capacity: 23 / s})
	}
	// The deploy: 65 workers at 0.4 s each, saturated, for two minutes.
	d.Observe(Observation{At: t0.Add(3 * time.Minute), Workers: 65, Throughput: 65 / (2 * s), Saturated: true})
	d.Observe(Observation{At: t0.Add(4 * time.Minute), Workers: 65, Throughput: 65 / (2 * s), Saturated: true})
	c, ok := d.At(t0.Add(5*time.Minute), false, 1)
	if !ok {
		t.Fatal("the confounded scale-up set no ceiling: the test does not exercise the release")
	}
	// Held at the ceiling, still 2.5 msg/s a worker.
	d.Observe(Observation{At: t0.Add(5 * time.Minute), Workers: float64(c.Workers), Throughput: float64(c.Workers) / (2 * s), Saturated: true})
	if c, ok := d.At(t0.Add(6*time.Minute), false, 1); ok {
		t.Fatalf("ceiling %+v kept although the workers at it are as slow as past it", c)
	}
	// The scale-up that follows is no ceiling either.
	d.Observe(Observation{At: t0.Add(6 * time.Minute), Workers: 40, Throughput: 40 / (2 * s), Saturated: true})
	d.Observe(Observation{At: t0.Add(7 * time.Minute), Workers: 40, Throughput: 40 / (2 * s), Saturated: true})
	if c, ok := d.At(t0.Add(8*time.Minute), false, 1); ok {
		t.Fatalf("ceiling %+v after the release", c)
	}
}

// Counting noise in an unsaturated minute's capacity is no ceiling: a
// fleet of 12 whose capacity read 12 % high, then 14 saturated workers doing
// just what 14 workers do.
func TestSmallGrowthFromAnEstimateIsNoCeiling(t *testing.T) {
	t.Parallel()
	var d Detector
	d.Observe(Observation{At: t0, Workers: 12, Throughput: 50, Capacity: 12 * 5 * 1.12})
	d.Observe(Observation{At: t0.Add(time.Minute), Workers: 14, Throughput: 70, Saturated: true})
	d.Observe(Observation{At: t0.Add(2 * time.Minute), Workers: 14, Throughput: 70, Saturated: true})
	if c, ok := d.At(t0.Add(3*time.Minute), false, 1); ok {
		t.Fatalf("ceiling %+v from an estimate's noise", c)
	}
}

func TestForgetAndFloor(t *testing.T) {
	t.Parallel()
	var d Detector
	end := grow(&d, 0, []float64{40, 100, 100}, pool(60, 0.2), nil)
	now := t0.Add(time.Duration(end) * time.Minute)
	if c, ok := d.At(now, false, 75); !ok || c.Workers != 75 {
		t.Fatalf("ceiling %+v %v below the floor 75", c, ok)
	}
	if _, ok := d.At(now.Add(Forget+time.Minute), false, 1); ok {
		t.Fatal("ceiling kept without a saturated minute for longer than Forget")
	}
}

func TestInvalidObservationsIgnored(t *testing.T) {
	t.Parallel()
	var d Detector
	for _, o := range []Observation{
		{},
		{At: t0, Workers: 0, Throughput: 10},
		{At: t0, Workers: 10, Throughput: math.NaN()},
		{At: t0, Workers: math.Inf(1), Throughput: 10},
		{At: t0, Workers: 10, Throughput: -1},
	} {
		d.Observe(o)
	}
	if d.n != 0 {
		t.Fatalf("%d invalid observations kept", d.n)
	}
	d.Observe(Observation{At: t0.Add(time.Minute), Workers: 10, Throughput: 50, Saturated: true})
	d.Observe(Observation{At: t0, Workers: 100, Throughput: 50, Saturated: true}) // older: ignored
	if d.n != 1 {
		t.Fatalf("an older observation was kept: %d", d.n)
	}
}

func FuzzDetector(f *testing.F) {
	f.Add(40.0, 8.0, 100.0, 12.0, int64(60), true)
	f.Fuzz(func(t *testing.T, w1, v1, w2, v2 float64, gap int64, held bool) {
		var d Detector
		d.Observe(Observation{At: t0, Workers: w1, Throughput: v1, Capacity: v1 * 2})
		d.Observe(Observation{At: t0.Add(time.Duration(gap) * time.Second), Workers: w2, Throughput: v2, Saturated: true})
		c, ok := d.At(t0.Add(time.Hour), held, 3)
		if ok && c.Workers < 3 {
			t.Fatalf("ceiling %d below the floor", c.Workers)
		}
	})
}

func BenchmarkObserve(b *testing.B) {
	var d Detector
	b.ReportAllocs()
	for i := range b.N {
		w := float64(40 + i%60)
		d.Observe(Observation{At: t0.Add(time.Duration(i) * time.Minute), Workers: w, Throughput: math.Min(w, 60) * 5, Saturated: true})
	}
}

// TestFailedProbeSetsTheCeilingBack: bursts 20 minutes apart meet a pool
// of 60. Each probe raises the ceiling while the fleet is held at it; the
// probed size's saturated minute completes what 60 workers did, so the
// ceiling goes back to 60 though the minutes that found it have left the
// window. It never climbs past one probe step.
func TestFailedProbeSetsTheCeilingBack(t *testing.T) {
	t.Parallel()
	var d Detector
	rate := pool(60, 0.2)
	end := grow(&d, 0, []float64{40, 100, 100}, rate, nil)
	for burst := range 6 {
		// Quiet minutes between the bursts: not saturated, a small fleet.
		for range 17 {
			d.Observe(Observation{At: t0.Add(time.Duration(end) * time.Minute), Workers: 10, Throughput: 20, Capacity: 50})
			end++
		}
		// The burst needs more than the ceiling: held, probed.
		c, ok := d.At(t0.Add(time.Duration(end)*time.Minute), true, 1)
		if !ok {
			t.Fatalf("burst %d: the ceiling was forgotten", burst)
		}
		if c.Workers > 72 {
			t.Fatalf("burst %d: ceiling %d, past one probe step of 60", burst, c.Workers)
		}
		end = grow(&d, end, []float64{float64(c.Workers), float64(c.Workers)}, rate, nil)
		if c, _ := d.At(t0.Add(time.Duration(end)*time.Minute), false, 1); c.Workers != 60 {
			t.Fatalf("burst %d: after a saturated minute at the probed size the ceiling is %d, want 60", burst, c.Workers)
		}
	}
}

// TestSuspicionLastsUntilTheNextMinute: one ineffective scale-up is a
// suspicion at the fleet's size of that minute; the next saturated
// ineffective minute turns it into a ceiling, an effective one clears it,
// and without either it lapses after SuspectFor.
func TestSuspicionLastsUntilTheNextMinute(t *testing.T) {
	t.Parallel()
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	rate := pool(60, 0.2)

	var d Detector
	end := grow(&d, 0, []float64{40, 100}, rate, nil)
	if w, ok := d.Suspected(at(end)); !ok || w != 100 {
		t.Fatalf("after one ineffective scale-up: suspected %v %v, want 100 workers", w, ok)
	}
	if _, ok := d.Suspected(at(end).Add(SuspectFor)); ok {
		t.Fatal("the suspicion outlived SuspectFor without a minute to settle it")
	}
	end = grow(&d, end, []float64{100}, rate, nil)
	if _, ok := d.Suspected(at(end)); ok {
		t.Fatal("still suspected after a second minute confirmed the ceiling")
	}
	if c, ok := d.At(at(end), false, 1); !ok || c.Workers != 60 {
		t.Fatalf("ceiling %+v %v after the confirming minute, want 60", c, ok)
	}

	// No pool after all: the next minute's workers complete in proportion.
	var e Detector
	end = grow(&e, 0, []float64{40, 100}, rate, nil)
	end = grow(&e, end, []float64{130}, pool(0, 0.2), nil)
	if _, ok := e.Suspected(at(end)); ok {
		t.Fatal("still suspected after a minute whose workers completed what they promised")
	}

	// Throughput that grows with the workers raises no suspicion.
	var f Detector
	end = grow(&f, 0, []float64{40, 100}, pool(0, 0.2), nil)
	if _, ok := f.Suspected(at(end)); ok {
		t.Fatal("suspected where the workers added throughput in proportion")
	}
}

// TestSlowWorkersNoiseIsNoCeiling: workers of 4 s (0.25 msg/s each), some
// 30 of them, complete a few hundred messages a minute, whose counting noise
// is as large as a small scale-up's promise. Three saturated minutes of a
// web server's day without any downstream (26.5 workers completing 7.13
// msg/s, 33 then 7.87, 36.6 then 8.48: 0.269, 0.238 and 0.232 per worker)
// once read as a ceiling of 32 that held the fleet while a surge built a
// backlog of thousands; a pool of 25 met by the same workers is still found.
func TestSlowWorkersNoiseIsNoCeiling(t *testing.T) {
	t.Parallel()
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	var d Detector
	for i, o := range []Observation{
		{Workers: 26.5, Throughput: 7.13, Saturated: true},
		{Workers: 33, Throughput: 8.36 * 7.12 / 8.36, Capacity: 8.36},
		{Workers: 33, Throughput: 7.87, Saturated: true},
		{Workers: 36.6, Throughput: 8.48, Saturated: true},
	} {
		o.At = at(i)
		d.Observe(o)
	}
	if c, ok := d.At(at(4), false, 1); ok {
		t.Fatalf("ceiling %+v found in the counting noise of slow workers", c)
	}

	for seed := range uint64(200) {
		var e Detector
		r := rand.New(rand.NewPCG(seed, 7))
		end := grow(&e, 0, []float64{26, 26, 33, 37, 30, 41, 35, 28, 33, 38}, pool(0, 4), r)
		if c, ok := e.At(at(end), false, 1); ok {
			t.Fatalf("seed %d: ceiling %+v found where every worker adds its 0.25 msg/s", seed, c)
		}
	}

	for seed := range uint64(50) {
		var p Detector
		end := grow(&p, 0, []float64{20, 20, 50, 50}, pool(25, 4), rand.New(rand.NewPCG(seed, 7)))
		if c, ok := p.At(at(end), false, 1); !ok || c.Workers < 21 || c.Workers > 30 {
			t.Fatalf("seed %d: a pool of 25 slow workers met from 20 to 50: ceiling %+v %v, want about 25", seed, c, ok)
		}
	}
}
