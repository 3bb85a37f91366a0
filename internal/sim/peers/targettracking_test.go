package peers

import (
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

func TestTargetTrackingAlarms(t *testing.T) {
	t.Parallel()
	f := model.Fleet{Desired: 40, InService: 40, Min: 1, Max: 100}
	tests := []struct {
		name   string
		points []float64 // 1-minute datapoints of backlog per instance, target 50
		want   int
		act    bool
	}{
		{"two breaching minutes are not enough", []float64{10, 80, 80}, 0, false},
		{"three breaching minutes scale out to ceil(40 × 80/50)", []float64{80, 80, 80}, 64, true},
		{"fourteen low minutes are not enough", append([]float64{60}, slices.Repeat([]float64{10}, 14)...), 0, false},
		{"fifteen low minutes remove 10 % (ceil(40 × 10/50) = 8 is further)", slices.Repeat([]float64{10}, 15), 36, true},
		{"below the target but not 10 % below: no scale-in", slices.Repeat([]float64{46}, 15), 0, false},
		{"just under 90 %: ceil(40 × 44/50) = 36, the 10 % step", slices.Repeat([]float64{44}, 15), 36, true},
		{"at the target nothing happens", slices.Repeat([]float64{50}, 15), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &TargetTracking{Target: 50, OutAfter: 3, InAfter: 15, InBelow: 0.9, InStep: 10, Cooldown: 300 * time.Second, points: tt.points}
			got, act := p.decide(f, t0)
			if act != tt.act || (act && got != tt.want) {
				t.Errorf("decide = %d, %v; want %d, %v", got, act, tt.want, tt.act)
			}
		})
	}
}

// Scale-in steps are a cooldown apart, each at most 10 % of the fleet, and
// stop at min.
func TestTargetTrackingScalesInGradually(t *testing.T) {
	t.Parallel()
	p := &TargetTracking{Target: 50, OutAfter: 3, InAfter: 15, InBelow: 0.9, InStep: 10, Cooldown: 300 * time.Second,
		points: slices.Repeat([]float64{0}, 15)}
	f := model.Fleet{Desired: 20, InService: 20, Min: 15, Max: 100}
	var got []int
	for s := 0; s <= 1200; s += 60 {
		if n, ok := p.decide(f, t0.Add(time.Duration(s)*time.Second)); ok {
			got = append(got, n)
			f.Desired, f.InService = n, n
		}
	}
	// 20 → 18 (ceil 2.0) at 0 s, → 16 at 300 s, → 15 (min) at 600 s, then nothing.
	if want := []int{18, 16, 15}; !slices.Equal(got, want) {
		t.Errorf("scale-ins = %v, want %v", got, want)
	}
}
