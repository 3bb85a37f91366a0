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
