package peers

import (
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func TestKEDADecide(t *testing.T) {
	t.Parallel()
	fleet := func(desired int) model.Fleet {
		return model.Fleet{Desired: desired, InService: desired, Min: 1, Max: 100}
	}
	tests := []struct {
		name  string
		prior []recommendation // earlier recommendations, by seconds before now
		// events are earlier scale changes, by seconds before now
		events []scaleEvent
		metric float64
		fleet  model.Fleet
		want   int
	}{
		// queueLength 50: ceil(total/50).
		{"scale out", nil, nil, 900, fleet(10), 18},
		{"within tolerance: 540/(50·10) = 1.08", nil, nil, 540, fleet(10), 10},
		{"just past tolerance: 560/(50·10) = 1.12", nil, nil, 560, fleet(10), 12},
		{"scale-up limited to +100 %", nil, nil, 5000, fleet(10), 20},
		{"scale-up limited to +4 pods when that is more", nil, nil, 5000, fleet(2), 6},
		// 10 replicas of which 2 were added 10 s ago: the period began at 8,
		// so at most max(8 + 4, 2 × 8) = 16.
		{"scale-up limit counts changes within 15 s", nil, []scaleEvent{{t0.Add(-10 * time.Second), 2}}, 5000, fleet(10), 16},
		{"first scale-down waits for the window", nil, nil, 100, fleet(10), 10},
		{"scale-down to the highest recommendation in 300 s",
			[]recommendation{{t0.Add(-400 * time.Second), 30}, {t0.Add(-200 * time.Second), 7}, {t0.Add(-100 * time.Second), 5}},
			nil, 100, fleet(10), 7},
		{"scale-down to the recommendation once the window is clear",
			[]recommendation{{t0.Add(-301 * time.Second), 10}},
			nil, 100, fleet(10), 2},
		{"clamped to min", []recommendation{{t0.Add(-400 * time.Second), 10}}, nil, 0, fleet(10), 1},
		{"clamped to max", nil, nil, 1e6, model.Fleet{Desired: 80, InService: 80, Max: 100}, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := &KEDA{QueueLength: 50, Tolerance: 0.1, DownWindow: 300 * time.Second, UpPods: 4, UpPercent: 100, UpPeriod: 15 * time.Second,
				recs: slices.Clone(tt.prior), events: slices.Clone(tt.events)}
			if got := k.decide(tt.metric, tt.fleet, t0); got != tt.want {
				t.Errorf("decide(%v) = %d, want %d", tt.metric, got, tt.want)
			}
		})
	}
}

func TestKEDAQueueLengthIsLatencyOverServiceTime(t *testing.T) {
	t.Parallel()
	s := Settings{Latency: 20 * time.Second, ServiceTime: 250 * time.Millisecond, Concurrency: 4}
	// 20 s ÷ 0.25 s × 4 messages at once = 320 messages per replica.
	if k := NewKEDA(nil, s, Defaults()); k.QueueLength != 320 {
		t.Errorf("queueLength = %v, want 320", k.QueueLength)
	}
	pp := Defaults()
	pp.KEDAQueueLength = 5
	if k := NewKEDA(nil, s, pp); k.QueueLength != 5 {
		t.Errorf("queueLength = %v, want the 5 given", k.QueueLength)
	}
}

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
