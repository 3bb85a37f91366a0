package policy

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The sliding maximum against a brute-force scan of every value pushed: never
// lower than the exact maximum over the window, never higher than the exact
// maximum over the window stretched by one slot, and bounded in size.
func TestSlidingMaxAgainstBruteForce(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		window time.Duration
		slots  int
		gap    func(r *rand.Rand) time.Duration
		value  func(r *rand.Rand, i int) float64
	}{
		{"5 s samples, random values", 5 * time.Minute, stabilizationSlots,
			func(*rand.Rand) time.Duration { return 5 * time.Second },
			func(r *rand.Rand, _ int) float64 { return r.Float64() * 100 }},
		{"1 s samples, falling values (the worst case for size)", 5 * time.Minute, stabilizationSlots,
			func(*rand.Rand) time.Duration { return time.Second },
			func(_ *rand.Rand, i int) float64 { return float64(100000 - i) }},
		{"irregular gaps, rising and falling", 15 * time.Minute, 15,
			func(r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(40 * time.Second))) },
			func(r *rand.Rand, i int) float64 { return float64(i%97) + r.Float64() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(7, 11))
			var m slidingMax[float64]
			var all []timed[float64]
			slot := tc.window / time.Duration(tc.slots)
			now := t0
			for i := range 5000 {
				now = now.Add(tc.gap(r))
				v := tc.value(r, i)
				m.push(now, v, tc.window, tc.slots)
				all = append(all, timed[float64]{now, v})
				got, ok := m.highest(now, tc.window)
				exact, loose := 0.0, 0.0
				for j := len(all) - 1; j >= 0 && !all[j].at.Before(now.Add(-tc.window-slot)); j-- {
					loose = max(loose, all[j].v)
					if !all[j].at.Before(now.Add(-tc.window)) {
						exact = max(exact, all[j].v)
					}
				}
				if !ok || got < exact || got > loose {
					t.Fatalf("push %d: highest %v, want within [%v, %v]", i, got, exact, loose)
				}
				if len(m.e) > tc.slots+2 {
					t.Fatalf("push %d: %d entries, want at most %d", i, len(m.e), tc.slots+2)
				}
			}
		})
	}
}
