package policy

import (
	"math"
	"testing"

	"github.com/queuechecker/queue-checker/internal/forecast"
	"github.com/queuechecker/queue-checker/internal/model"
)

// The recent bursts are kept for at MemoryChance (5 %) while the last hour
// spent the allowance at its rate or faster and while the window's budget is
// short or unknown; a last hour that spent half the rate asks twice the
// chance, a quarter or less four times.
func TestMemoryChanceFollowsTheBudget(t *testing.T) {
	t.Parallel()
	if forecast.MemoryChance != 0.05 {
		t.Fatalf("MemoryChance %v: the table below assumes 5 %%", forecast.MemoryChance)
	}
	for _, tc := range []struct {
		name string
		b    model.Budget
		want float64
	}{
		{"unknown", model.Budget{Left: 1, BurnRate: 0}, 0.05},
		{"spent at the rate", model.Budget{Known: true, Left: 0.8, BurnRate: 1}, 0.05},
		{"spent faster", model.Budget{Known: true, Left: 0.8, BurnRate: 3}, 0.05},
		{"half the rate", model.Budget{Known: true, Left: 0.8, BurnRate: 0.5}, 0.10},
		{"a third", model.Budget{Known: true, Left: 0.8, BurnRate: 1.0 / 3}, 0.15},
		{"nothing spent", model.Budget{Known: true, Left: 1, BurnRate: 0}, 0.20},
		{"short budget", model.Budget{Known: true, Left: 0.2, BurnRate: 0}, 0.05},
		{"overspent", model.Budget{Known: true, Left: -0.5, BurnRate: 0.1}, 0.05},
		{"burn unknown", model.Budget{Known: true, Left: 1, BurnRate: math.NaN()}, 0.05},
	} {
		if got := memoryChance(tc.b); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
