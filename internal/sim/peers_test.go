package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

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
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), Service: Service{Mean: 250 * time.Millisecond},
		Concurrency: 4, Min: 0, Max: 1})
	// 20 s ÷ 0.25 s × 4 messages at once = 320 messages per replica.
	if k := NewKEDA(w, 20*time.Second); k.QueueLength != 320 {
		t.Errorf("queueLength = %v, want 320", k.QueueLength)
	}
}

func TestTargetTrackingAlarms(t *testing.T) {
	t.Parallel()
	f := model.Fleet{Desired: 10, InService: 10, Min: 1, Max: 100}
	tests := []struct {
		name   string
		points []float64 // 1-minute datapoints of backlog per instance, target 50
		want   int
		act    bool
	}{
		{"two breaching minutes are not enough", []float64{10, 80, 80}, 0, false},
		{"three breaching minutes scale out to ceil(10 × 80/50)", []float64{80, 80, 80}, 16, true},
		{"fourteen low minutes are not enough", append([]float64{60}, slices.Repeat([]float64{10}, 14)...), 0, false},
		{"fifteen low minutes scale in to ceil(10 × 10/50)", slices.Repeat([]float64{10}, 15), 2, true},
		{"scale-in stops at min", slices.Repeat([]float64{0}, 15), 1, true},
		{"at the target nothing happens", slices.Repeat([]float64{50}, 15), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &TargetTracking{Target: 50, OutAfter: 3, InAfter: 15, points: tt.points}
			got, act := p.decide(f)
			if act != tt.act || (act && got != tt.want) {
				t.Errorf("decide = %d, %v; want %d, %v", got, act, tt.want, tt.act)
			}
		})
	}
}

func TestStepScalingThresholds(t *testing.T) {
	t.Parallel()
	p := NewStepScaling(nil)
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

// Step scaling acts once per 5-minute period at most: with a backlog that
// only grows, the fleet gains two workers every 5 minutes.
func TestStepScalingActsOncePerPeriod(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,100\n"), Service: Service{Dist: DistConstant, Mean: time.Hour},
		Min: 1, Max: 100, Workers: 1, Seed: 1})
	p := NewStepScaling(w)
	ctx := context.Background()
	for s := 0.0; s <= 1800; s += 5 {
		if err := p.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
	}
	// Periods end at 300, 600, ..., 1800 s: the first period's average
	// (≈ 15,000 messages) is already past 1,500, so six periods add 12.
	if got := observe(t, w, 1800).Fleet.Desired; got != 13 {
		t.Errorf("desired after 30 minutes = %d, want 13", got)
	}
}

func TestOracleSizesForTheComingRate(t *testing.T) {
	t.Parallel()
	sc := csvScenario(t, "0,50\n100,500\n")
	w := mustWorld(t, Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, Min: 1, Max: 1000, Workers: 1})
	o := NewOracle(w, 10*time.Second, 5*time.Second)
	tests := []struct {
		s    float64
		rate float64
	}{{0, 50}, {94, 50}, {96, 500}, {200, 500}}
	for _, tt := range tests {
		want, ok := capacity.WaitQuantileFloor(tt.rate, 5, 10, 0.01)
		if !ok {
			t.Fatal("no Erlang C answer")
		}
		if got := o.size(model.GroupSample{}, at(tt.s)); got != want {
			t.Errorf("size at %v s = %d, want %d (Erlang C for %v msg/s)", tt.s, got, want, tt.rate)
		}
	}
	// A backlog raises it to clear the backlog within the latency target:
	// (50 + 1000/10) / 5 = 30 workers.
	if got := o.size(model.GroupSample{Visible: 1000}, at(0)); got != 30 {
		t.Errorf("size with 1000 waiting = %d, want 30", got)
	}
}

func TestWaitQuantilesWithinTheirBucket(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		draw func() float64
	}{
		{"exponential around 1 s", func() float64 { return r.ExpFloat64() }},
		{"microseconds", func() float64 { return r.Float64() * 2e-3 }},
		{"hours", func() float64 { return 3600 * (1 + r.Float64()) }},
		{"mostly zero", func() float64 { return max(0, r.NormFloat64()) }},
	}
	for _, tt := range tests {
		var ws waitStats
		vals := make([]float64, 20000)
		for i := range vals {
			vals[i] = tt.draw()
			ws.add(vals[i])
		}
		slices.Sort(vals)
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
			want := vals[int(math.Ceil(q*float64(len(vals))))-1] // nearest rank
			got := ws.quantile(q)
			if math.Abs(got-want) > 0.002*want+1e-6 {
				t.Errorf("%s: q%v = %v, want %v", tt.name, q, got, want)
			}
		}
	}
}
