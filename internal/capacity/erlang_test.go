package capacity

import (
	"fmt"
	"math"
	"math/big"
	"testing"
)

// logSpaceErlangC is an independent Erlang C straight from the textbook
// formula, C = (a^c/c! · c/(c−a)) / (Σ_{i<c} a^i/i! + a^c/c! · c/(c−a)),
// with every term taken in log space through log-gamma so that nothing
// overflows. It costs O(c) logs and exps and shares no code with ErlangB.
func logSpaceErlangC(c int, a float64) float64 {
	logs := make([]float64, c+1)
	la := math.Log(a)
	top := math.Inf(-1)
	for i := 0; i <= c; i++ {
		lg, _ := math.Lgamma(float64(i + 1))
		logs[i] = float64(i)*la - lg
		if i == c {
			logs[i] += math.Log(float64(c) / (float64(c) - a))
		}
		top = math.Max(top, logs[i])
	}
	var sum float64
	for _, l := range logs {
		sum += math.Exp(l - top)
	}
	return math.Exp(logs[c]-top) / sum
}

// bigErlangC is the same formula in 256-bit floating point, with the terms
// a^i/i! built one from the last; for the small pools of the seeds it is
// exact to far more digits than float64 holds.
func bigErlangC(c int, a float64) float64 {
	const prec = 256
	ba := new(big.Float).SetPrec(prec).SetFloat64(a)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	sum := new(big.Float).SetPrec(prec)
	for i := 0; i < c; i++ {
		sum.Add(sum, term)
		term.Mul(term, ba)
		term.Quo(term, new(big.Float).SetPrec(prec).SetInt64(int64(i+1)))
	}
	// term is now a^c/c!; multiply by c/(c−a).
	ratio := new(big.Float).SetPrec(prec).Quo(
		new(big.Float).SetPrec(prec).SetInt64(int64(c)),
		new(big.Float).SetPrec(prec).Sub(new(big.Float).SetPrec(prec).SetInt64(int64(c)), ba))
	last := new(big.Float).SetPrec(prec).Mul(term, ratio)
	sum.Add(sum, last)
	out, _ := new(big.Float).SetPrec(prec).Quo(last, sum).Float64()
	return out
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
func ms(x float64) string  { return fmt.Sprintf("%.1f", 1000*x) }

// TestErlangPoolSizes checks every row of the Erlang C example's first table: 50 jobs
// a second, 200 ms each, to the printed digit.
func TestErlangPoolSizes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		workers                 int
		util, wait, wq, latency string
	}{
		{11, "90.9%", "68.2%", "136.4", "336.4"},
		{12, "83.3%", "44.9%", "44.9", "244.9"},
		{13, "76.9%", "28.5%", "19.0", "219.0"},
		{14, "71.4%", "17.4%", "8.7", "208.7"},
		{16, "62.5%", "5.7%", "1.9", "201.9"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d workers", tt.workers), func(t *testing.T) {
			t.Parallel()
			const service = 0.2
			q := ErlangC(tt.workers, 50, 1/service)
			if !q.Stable {
				t.Fatalf("ErlangC(%d, 50, 5) unstable", tt.workers)
			}
			got := [4]string{pct(q.Utilization), pct(q.WaitProbability), ms(q.MeanWait), ms(q.MeanWait + service)}
			want := [4]string{tt.util, tt.wait, tt.wq, tt.latency}
			if got != want {
				t.Errorf("utilisation, waits, Wq ms, latency ms = %v, want %v", got, want)
			}
			// Little's law ties the queue length to the wait: Lq = λ·Wq.
			if !near(q.MeanQueueLength, 50*q.MeanWait, 1e-12) {
				t.Errorf("Lq = %v, want λ·Wq = %v", q.MeanQueueLength, 50*q.MeanWait)
			}
		})
	}
}

// TestBigPoolsBeatSmallPools checks every row of the Erlang C example's second
// table: 80 % utilisation and 200 ms jobs at every pool size.
func TestBigPoolsBeatSmallPools(t *testing.T) {
	t.Parallel()
	tests := []struct {
		workers  int
		arrival  float64
		wait, wq string
	}{
		{2, 8, "71.1%", "355.6"},
		{5, 20, "55.4%", "110.8"},
		{10, 40, "40.9%", "40.9"},
		{20, 80, "25.6%", "12.8"},
		{50, 200, "8.7%", "1.7"},
		{100, 400, "2.0%", "0.2"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d workers", tt.workers), func(t *testing.T) {
			t.Parallel()
			q := ErlangC(tt.workers, tt.arrival, 5)
			if got := pct(q.Utilization); got != "80.0%" {
				t.Errorf("utilisation = %s, want 80.0%%", got)
			}
			if got := [2]string{pct(q.WaitProbability), ms(q.MeanWait)}; got != [2]string{tt.wait, tt.wq} {
				t.Errorf("waits, Wq ms = %v, want [%s %s]", got, tt.wait, tt.wq)
			}
		})
	}
}

func TestErlangByHand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		servers         int
		arrival, rate   float64
		wantC, wantWq   float64
		wantLq, wantRho float64
	}{
		// M/M/1: C = ρ = 0.8; Wq = ρ/(μ − λ) = 0.8 s; Lq = ρ²/(1 − ρ) = 3.2.
		{"M/M/1", 1, 4, 5, 0.8, 0.8, 3.2, 0.8},
		// M/M/2 with ρ = 0.5: C = 2ρ²/(1 + ρ) = 1/3; Wq = C/(2 − 1) = 1/3.
		{"M/M/2", 2, 1, 1, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0.5},
		// No arrivals: nobody waits.
		{"idle pool", 3, 0, 1, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := ErlangC(tt.servers, tt.arrival, tt.rate)
			if !q.Stable || !near(q.WaitProbability, tt.wantC, 1e-12) || !near(q.MeanWait, tt.wantWq, 1e-12) ||
				!near(q.MeanQueueLength, tt.wantLq, 1e-12) || !near(q.Utilization, tt.wantRho, 1e-12) {
				t.Errorf("ErlangC = %+v; want C %v, Wq %v, Lq %v, ρ %v", q, tt.wantC, tt.wantWq, tt.wantLq, tt.wantRho)
			}
		})
	}
}

func TestErlangB(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		servers int
		offered float64
		want    float64
	}{
		{"no servers block everything", 0, 3, 1},
		// B(1, a) = a/(1 + a).
		{"one server", 1, 3, 0.75},
		// B(2, 1) = (1/2)/(1 + 1 + 1/2) = 0.2.
		{"two servers", 2, 1, 0.2},
		{"no load", 5, 0, 0},
		{"negative servers", -1, 3, 1},
		{"NaN load", 3, math.NaN(), 1},
		{"infinite load", 3, math.Inf(1), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ErlangB(tt.servers, tt.offered); !near(got, tt.want, 1e-12) {
				t.Errorf("ErlangB(%d, %v) = %v, want %v", tt.servers, tt.offered, got, tt.want)
			}
		})
	}
}

// TestErlangCAgainstReferences compares the recursion with the big-float
// formula on small pools and the log-space formula on pools up to 100,000
// and beyond, where a^c/c! overflows float64 by thousands of orders.
func TestErlangCAgainstReferences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		servers int
		offered float64
		useBig  bool
		tol     float64
	}{
		{"Erlang C example pool, big float", 11, 10, true, 1e-14},
		{"light load, big float", 8, 0.5, true, 1e-13},
		{"near saturation, big float", 50, 49.9, true, 1e-13},
		{"300 servers, big float", 300, 280, true, 1e-12},
		{"1,000 servers at 0.95", 1000, 950, false, 1e-9},
		// At ρ = 0.5 C is about 1e-4000: both give exactly 0, not NaN.
		{"100,000 servers at 0.5 underflows to zero", 100_000, 50_000, false, 1e-8},
		{"100,000 servers at 0.995", 100_000, 99_500, false, 1e-8},
		{"100,000 servers at 0.99", 100_000, 99_000, false, 1e-8},
		{"100,000 servers at 0.999", 100_000, 99_900, false, 1e-8},
		{"100,000 servers at 0.99999", 100_000, 99_999, false, 1e-8},
		{"1,000,000 servers at 0.999", 1_000_000, 999_000, false, 1e-7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := ErlangC(tt.servers, tt.offered, 1)
			want := 0.0
			if tt.useBig {
				want = bigErlangC(tt.servers, tt.offered)
			} else {
				want = logSpaceErlangC(tt.servers, tt.offered)
			}
			if !q.Stable || !(math.Abs(q.WaitProbability-want) <= tt.tol*want) {
				t.Errorf("C(%d, %v) = %v, reference %v", tt.servers, tt.offered, q.WaitProbability, want)
			}
			wantWq := want / (float64(tt.servers) - tt.offered)
			if !(math.Abs(q.MeanWait-wantWq) <= tt.tol*wantWq) {
				t.Errorf("Wq = %v, reference %v", q.MeanWait, wantWq)
			}
		})
	}
}

func TestErlangCUnstableAndInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		servers       int
		arrival, rate float64
		wantUtil      float64
	}{
		{"at capacity", 10, 50, 5, 1},
		{"over capacity", 10, 60, 5, 1.2},
		{"no servers", 0, 1, 1, 0},
		{"no service rate", 3, 1, 0, 0},
		{"negative arrivals", 3, -1, 1, 0},
		{"NaN arrivals", 3, math.NaN(), 1, 0},
		{"infinite arrivals", 3, math.Inf(1), 1, 0},
		{"beyond MaxServers", MaxServers + 1, 1, 1, 1 / float64(MaxServers+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			q := ErlangC(tt.servers, tt.arrival, tt.rate)
			if q.Stable || q.WaitProbability != 0 || q.MeanWait != 0 || q.MeanQueueLength != 0 {
				t.Errorf("ErlangC = %+v, want unstable with zero wait fields", q)
			}
			if !near(q.Utilization, tt.wantUtil, 1e-12) {
				t.Errorf("utilisation = %v, want %v", q.Utilization, tt.wantUtil)
			}
			if math.IsNaN(q.OfferedLoad) || math.IsInf(q.OfferedLoad, 0) || math.IsNaN(q.Utilization) {
				t.Errorf("non-finite figures in %+v", q)
			}
		})
	}
}

// TestErlangCMonotone: adding a server never raises the chance of waiting
// or the mean wait, at any load.
func TestErlangCMonotone(t *testing.T) {
	t.Parallel()
	for _, a := range []float64{0.3, 4.5, 10, 99.5, 2500} {
		t.Run(fmt.Sprintf("a=%v", a), func(t *testing.T) {
			t.Parallel()
			prev := ErlangC(int(a)+1, a, 1)
			for c := int(a) + 2; c < int(a)+200; c++ {
				q := ErlangC(c, a, 1)
				if q.WaitProbability > prev.WaitProbability || q.MeanWait > prev.MeanWait {
					t.Fatalf("c=%d: C %v, Wq %v above c=%d: C %v, Wq %v",
						c, q.WaitProbability, q.MeanWait, c-1, prev.WaitProbability, prev.MeanWait)
				}
				prev = q
			}
		})
	}
}

func TestWaitExceeds(t *testing.T) {
	t.Parallel()
	mm1 := ErlangC(1, 4, 5)
	tests := []struct {
		name string
		q    Queueing
		t    float64
		want float64
	}{
		// M/M/1: P(Wq > t) = ρ·e^−(μ−λ)t = 0.8·e^−1 at t = 1 s.
		{"M/M/1 at one second", mm1, 1, 0.8 * math.Exp(-1)},
		{"M/M/1 at zero is P(wait)", mm1, 0, 0.8},
		// M/M/2, λ = 4, μ = 5: ρ = 0.4, C = 2ρ²/(1+ρ) = 0.32/1.4; spare 6/s.
		{"M/M/2 at half a second", ErlangC(2, 4, 5), 0.5, 0.32 / 1.4 * math.Exp(-3)},
		{"unstable pool: everyone waits", ErlangC(1, 6, 5), 10, 1},
		{"invalid pool", ErlangC(0, 6, 5), 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.q.WaitExceeds(tt.t); !near(got, tt.want, 1e-12) {
				t.Errorf("WaitExceeds(%v) = %v, want %v", tt.t, got, tt.want)
			}
		})
	}
}

// referenceWaitFloor finds the smallest pool meeting a mean-wait target by
// scanning pools with the log-space formula.
func referenceWaitFloor(arrival, rate, target float64) int {
	a := arrival / rate
	for c := int(a) + 1; ; c++ {
		if float64(c) <= a {
			continue
		}
		if logSpaceErlangC(c, a)/(float64(c)*rate-arrival) <= target {
			return c
		}
	}
}

// referenceQuantileFloor is the smallest stable c for which at most miss of
// the messages wait longer than t, by the log-space Erlang C sum.
func referenceQuantileFloor(arrival, rate, t, miss float64) int {
	a := arrival / rate
	for c := int(a) + 1; ; c++ {
		if float64(c) <= a {
			continue
		}
		if logSpaceErlangC(c, a)*math.Exp(-(float64(c)*rate-arrival)*t) <= miss {
			return c
		}
	}
}

func TestWaitFloor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		arrival, rate float64
		target        float64
		want          int
		ok            bool
	}{
		// docs/model.md 10.8: 136.4 ms at 11, 44.9 ms at 12, 19.0 at 13, 8.7 at 14.
		{"Erlang C example at 100 ms", 50, 5, 0.1, 12, true},
		{"Erlang C example at 10 ms", 50, 5, 0.01, 14, true},
		{"Erlang C example at 20 ms", 50, 5, 0.02, 13, true},
		{"Erlang C example at one second: just above the load", 50, 5, 1, 11, true},
		// M/M/1 λ = 4, μ = 5 waits 0.8 s: a 1 s target needs one server.
		{"hand: M/M/1 meets one second", 4, 5, 1, 1, true},
		// ... and 0.5 s needs two: M/M/2 waits (0.32/1.4)/6 = 38 ms.
		{"hand: half a second needs two", 4, 5, 0.5, 2, true},
		{"integer offered load starts above it", 10, 1, 1e9, 11, true},
		{"no arrivals need nobody", 0, 5, 0.1, 0, true},
		{"no service rate", 50, 0, 0.1, 0, false},
		{"zero target", 50, 5, 0, 0, false},
		{"NaN target", 50, 5, math.NaN(), 0, false},
		{"load beyond MaxServers", 2 * MaxServers, 1, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := WaitFloor(tt.arrival, tt.rate, tt.target)
			if got != tt.want || ok != tt.ok {
				t.Errorf("WaitFloor = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestWaitFloorMatchesReference checks WaitFloor against the log-space
// formula over a spread of loads and targets, big pools included: the pool
// it returns meets the target and one server fewer does not (the mean wait
// falls as servers are added, TestErlangCMonotone). Small loads are also
// checked against a full scan.
func TestWaitFloorMatchesReference(t *testing.T) {
	t.Parallel()
	tests := []struct {
		arrival, rate, target float64
	}{
		{3, 1, 0.05}, {7.3, 2, 0.01}, {120, 0.5, 1}, {999, 1, 0.001}, {10_000, 0.1, 0.5},
		{99_000, 1, 0.0001}, {99_990, 1, 0.01},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("λ=%v μ=%v W=%v", tt.arrival, tt.rate, tt.target), func(t *testing.T) {
			t.Parallel()
			got, ok := WaitFloor(tt.arrival, tt.rate, tt.target)
			a := tt.arrival / tt.rate
			wq := func(c int) float64 { return logSpaceErlangC(c, a) / (float64(c)*tt.rate - tt.arrival) }
			if !ok || wq(got) > tt.target {
				t.Fatalf("WaitFloor = %d, %v: reference Wq there is %v, above %v", got, ok, wq(got), tt.target)
			}
			if float64(got-1) > a && wq(got-1) <= tt.target {
				t.Errorf("WaitFloor = %d, but %d servers already wait %v ≤ %v", got, got-1, wq(got-1), tt.target)
			}
			if a < 1000 {
				if want := referenceWaitFloor(tt.arrival, tt.rate, tt.target); got != want {
					t.Errorf("WaitFloor = %d; scan gives %d", got, want)
				}
			}
		})
	}
}

func TestWaitQuantileFloor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		arrival, rate float64
		t, miss       float64
		want          int
		ok            bool
	}{
		// M/M/1, λ = 4, μ = 5: P(Wq > 0.5) = 0.8·e^−0.5 = 0.485.
		{"hand: one server misses under half", 4, 5, 0.5, 0.5, 1, true},
		// With 10 % allowed, M/M/2 gives (0.32/1.4)·e^−3 = 0.0114.
		{"hand: two servers for ten percent", 4, 5, 0.5, 0.1, 2, true},
		// t = 0 is P(wait) itself: Erlang C example at 12 is 44.9 %, at 13 28.5 %.
		{"Erlang C example: under 30 % wait at all", 50, 5, 0, 0.3, 13, true},
		{"negative t is zero", 50, 5, -1, 0.3, 13, true},
		{"no arrivals", 0, 5, 1, 0.01, 0, true},
		{"miss of one is no answer", 50, 5, 1, 1, 0, false},
		{"miss of zero is no answer", 50, 5, 1, 0, 0, false},
		{"no service rate", 50, 0, 1, 0.01, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := WaitQuantileFloor(tt.arrival, tt.rate, tt.t, tt.miss)
			if got != tt.want || ok != tt.ok {
				t.Errorf("WaitQuantileFloor = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func BenchmarkErlangC(b *testing.B) {
	for _, c := range []int{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			a := 0.9 * float64(c)
			for b.Loop() {
				ErlangC(c, a, 1)
			}
		})
	}
}

func BenchmarkWaitFloor(b *testing.B) {
	for _, a := range []float64{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("a=%v", a), func(b *testing.B) {
			for b.Loop() {
				WaitFloor(a, 1, 0.01)
			}
		})
	}
}

func BenchmarkWaitQuantileFloor(b *testing.B) {
	for _, a := range []float64{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("a=%v", a), func(b *testing.B) {
			for b.Loop() {
				WaitQuantileFloor(a, 1, 0.1, 0.01)
			}
		})
	}
}

// The wait floor in workers, against the smallest pool found by trying
// every one with Erlang C from its textbook sum (handQuantileFloor): the fewest servers with
// P(wait > t) = C(c, a)·e^−(cμ−λ)t ≤ 1 − quantile, in whole workers of
// concurrency servers; and none beyond maxBusy busy servers.
func TestWaitFloorWorkers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		lam, mu, t, q float64
		conc          int
		cv            float64 // the service time's; the spread is (1 + cv²)/2
	}{
		{10, 1, 5, 0.99, 1, 1},
		{10, 1, 0, 0.99, 1, 1},
		{10, 1, 5, 0.99, 3, 1},
		{40, 5, 2, 0.95, 2, 1},
		{7.5, 0.5, 30, 0.999, 4, 1},
		{80, 2, 1, 0.9, 1, 1},
		// Allen–Cunneen: the waits of those that wait stretch by the
		// spread, P(Wq > t) = C·e^−(cμ−λ)t/k: the M/M/c floor for t ÷ k.
		{10, 1, 5, 0.99, 1, 2},
		{40, 5, 2, 0.95, 2, 3},
		{10, 1, 5, 0.99, 1, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("λ %g μ %g t %g q %g conc %d cv %g", tt.lam, tt.mu, tt.t, tt.q, tt.conc, tt.cv), func(t *testing.T) {
			t.Parallel()
			a := tt.lam / tt.mu
			k := (1 + tt.cv*tt.cv) / 2
			servers := handQuantileFloor(tt.lam, tt.mu, tt.t/k, 1-tt.q)
			want := (servers + tt.conc - 1) / tt.conc
			got, ok := WaitFloorWorkers(tt.lam, tt.mu, tt.t, tt.q, ServiceSpread(tt.cv), tt.conc, 0)
			if !ok || got != want {
				t.Errorf("WaitFloorWorkers = %d, %v; want %d (%d servers)", got, ok, want, servers)
			}
			if _, ok := WaitFloorWorkers(tt.lam, tt.mu, tt.t, tt.q, ServiceSpread(tt.cv), tt.conc, int(a)-1); ok {
				t.Errorf("computed beyond %d busy servers", int(a)-1)
			}
		})
	}
	if _, ok := WaitFloorWorkers(10, 1, 5, 1, 0, 1, 0); ok {
		t.Error("a quantile of 1 has an answer")
	}
	if got, ok := WaitFloorWorkers(0, 1, 5, 0.99, 0, 2, 0); !ok || got != 0 {
		t.Errorf("no arrivals: %d, %v; want 0 workers", got, ok)
	}
	// No spread given is exponential service.
	if a, _ := WaitFloorWorkers(10, 1, 5, 0.99, 0, 1, 0); a != handQuantileFloor(10, 1, 5, 0.01) {
		t.Errorf("spread 0: %d workers, want the M/M/c floor %d", a, handQuantileFloor(10, 1, 5, 0.01))
	}
}

// The Allen–Cunneen factor and the M/G/c queue it gives: (1 + cv²) ÷ 2, the
// chance of waiting unchanged, the mean wait and queue length and the
// tail's time scale stretched by it.
func TestServiceSpread(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ cv, want float64 }{{1, 1}, {0, 0.5}, {2, 2.5}, {0.5, 0.625}, {-1, 1}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		if got := ServiceSpread(c.cv); got != c.want {
			t.Errorf("ServiceSpread(%v) = %v, want %v", c.cv, got, c.want)
		}
	}
	mm := ErlangC(12, 50, 5)
	mg := mm.WithSpread(2.5)
	if mg.WaitProbability != mm.WaitProbability || math.Abs(mg.MeanWait-2.5*mm.MeanWait) > 1e-15 || math.Abs(mg.MeanQueueLength-2.5*mm.MeanQueueLength) > 1e-12 {
		t.Errorf("with spread 2.5: P(wait) %v, Wq %v, Lq %v; want %v, 2.5 × %v, 2.5 × %v", mg.WaitProbability, mg.MeanWait, mg.MeanQueueLength, mm.WaitProbability, mm.MeanWait, mm.MeanQueueLength)
	}
	if got, want := mg.WaitExceeds(0.5), mm.WaitExceeds(0.2); math.Abs(got-want) > 1e-15 {
		t.Errorf("P(Wq > 0.5 s) with spread 2.5 = %v, want M/M/c's P(Wq > 0.2 s) = %v", got, want)
	}
	if mm.WithSpread(1) != mm || mm.WithSpread(0) != mm {
		t.Error("a spread of 1 or 0 changed the M/M/c queue")
	}
}
