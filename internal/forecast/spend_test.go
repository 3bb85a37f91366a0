package forecast

import (
	"testing"
	"time"
)

// SpendOn: the recent bursts' level kept is the highest excess that bursts
// at least that high reach within the horizon with the chance given. Twelve
// bursts 100 to 650 msg/s above a base of 50, counted over 270 minutes, a
// horizon of 3: k of them come within it with chance 1 − exp(−k × 3 ÷ 270).
// At 5 % that takes five (the fifth highest, 450 above the base), at 10 %
// ten (200), at 20 % twenty, more than there are.
func TestSpendOnLeavesRarerBurstsToTheAllowance(t *testing.T) {
	t.Parallel()
	const base = 50.0
	f := newForecaster()
	f.have, f.base, f.baseOK = true, base, true
	for i := range 12 {
		f.memEx[i] = 100 + 50*float64(i)
	}
	f.memN, f.memSpan, f.memHorizon = 12, 270, 3
	f.memExcess = f.memLevel(memoryChance)
	now := fcStart.Add(4 * time.Hour)
	for _, tc := range []struct {
		chance float64
		want   float64 // the rate forecast, 0: none
	}{
		{0, base + 450}, {MemoryChance, base + 450}, {0.01, base + 450}, {0.10, base + 200}, {0.20, 0},
	} {
		f.SpendOn(tc.chance)
		r := f.Forecast(now, fcHorizon, base, true)
		got := 0.0
		if r.OK {
			got = r.Rate
		}
		if got != tc.want {
			t.Errorf("SpendOn(%v): forecast %v msg/s, want %v", tc.chance, got, tc.want)
		}
		if spends := tc.want < base+450; f.Spends() != spends {
			t.Errorf("SpendOn(%v): Spends %v, want %v", tc.chance, f.Spends(), spends)
		}
	}
}
