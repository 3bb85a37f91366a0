package peers

import "testing"

func TestStepScalingThresholds(t *testing.T) {
	t.Parallel()
	p := NewStepScaling(nil, Defaults())
	tests := []struct {
		avg  float64
		want int
	}{{0, -1}, {99.9, -1}, {100, 0}, {999, 0}, {1000, 1}, {1499, 1}, {1500, 2}, {1e6, 2}}
	for _, tt := range tests {
		if got := p.change(tt.avg); got != tt.want {
			t.Errorf("change(%v) = %d, want %d", tt.avg, got, tt.want)
		}
	}
}
