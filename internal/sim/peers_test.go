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
	if k := NewKEDA(w, 20*time.Second, DefaultPeers()); k.QueueLength != 320 {
		t.Errorf("queueLength = %v, want 320", k.QueueLength)
	}
	pp := DefaultPeers()
	pp.KEDAQueueLength = 5
	if k := NewKEDA(w, 20*time.Second, pp); k.QueueLength != 5 {
		t.Errorf("queueLength = %v, want the 5 given", k.QueueLength)
	}
}

// KEDA reads the queue every polling interval; the HPA syncs every 15 s on
// the value read last, so a backlog that appears just after a poll is
// acted on at the next poll.
func TestKEDAPollsEvery30Seconds(t *testing.T) {
	t.Parallel()
	// 1,000 messages arrive at once at 31 s; nothing is served (1-hour service).
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n31,100000\n31.01,0\n"), Service: Service{Dist: DistConstant, Mean: time.Hour},
		Min: 1, Max: 1000, Workers: 1, Seed: 1, LatencyTarget: 10 * time.Second})
	k := NewKEDA(w, 10*time.Second, DefaultPeers()) // queueLength 10 ÷ 3600 × 1: tiny, so any backlog scales out
	ctx := context.Background()
	for s := 0.0; s <= 45; s += 5 {
		if err := k.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
		desired := observe(t, w, s).Fleet.Desired
		// Polls at 0 and 30 s see nothing; the next, at 60 s, sees the backlog.
		if desired != 1 {
			t.Fatalf("desired at %v s = %d, want 1: the backlog arrived after the last poll", s, desired)
		}
	}
	for s := 50.0; s <= 60; s += 5 {
		if err := k.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
	}
	if desired := observe(t, w, 60).Fleet.Desired; desired <= 1 {
		t.Errorf("desired at 60 s = %d, want a scale-out after the poll at 60 s", desired)
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

// The metric reaches the alarms a lag after its minute: a backlog that
// appears in minute 0 is first read at 2 minutes with a 1-minute lag, and
// the third breaching datapoint (minute 2) at 4 minutes.
func TestTargetTrackingSeesMetricsLate(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,1000\n"), Service: Service{Dist: DistConstant, Mean: time.Hour},
		Min: 1, Max: 10000, Workers: 1, Seed: 1, LatencyTarget: 10 * time.Second})
	p := NewTargetTracking(w, 10*time.Second, DefaultPeers())
	ctx := context.Background()
	first := -1.0
	for s := 0.0; s <= 600; s += 5 {
		if err := p.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
		if first < 0 && observe(t, w, s).Fleet.Desired > 1 {
			first = s
		}
	}
	if first != 240 {
		t.Errorf("first scale-out at %v s, want 240 s", first)
	}
}

func TestStepScalingThresholds(t *testing.T) {
	t.Parallel()
	p := NewStepScaling(nil, DefaultPeers())
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

// Step scaling evaluates 1-minute datapoints and waits out its 300 s
// cooldown: with a backlog that only grows, the fleet gains two workers
// every 5 minutes.
func TestStepScalingActsOncePerPeriod(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,100\n"), Service: Service{Dist: DistConstant, Mean: time.Hour},
		Min: 1, Max: 100, Workers: 1, Seed: 1})
	p := NewStepScaling(w, DefaultPeers())
	ctx := context.Background()
	for s := 0.0; s <= 1800; s += 5 {
		if err := p.Step(ctx, at(s)); err != nil {
			t.Fatal(err)
		}
	}
	// The first minute's average (≈ 2,750 messages) is past 1,500: +2 at
	// 60 s, then +2 at 360, 660, 960, 1260 and 1560 s once each cooldown
	// has passed: 1 + 12.
	if got := observe(t, w, 1800).Fleet.Desired; got != 13 {
		t.Errorf("desired after 30 minutes = %d, want 13", got)
	}
}

// oneWorker is an observation of an empty queue and a fleet of one.
var oneWorker = model.Observation{Fleet: model.Fleet{Desired: 1, InService: 1}}

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
		if got := o.size(oneWorker, at(tt.s)); got != want {
			t.Errorf("size at %v s = %d, want %d (Erlang C for %v msg/s)", tt.s, got, want, tt.rate)
		}
	}
	// A backlog raises it to clear the backlog within the latency target:
	// (50 + 1000/10) / 5 = 30 workers.
	backlog := oneWorker
	backlog.Sample.Visible = 1000
	if got := o.size(backlog, at(0)); got != 30 {
		t.Errorf("size with 1000 waiting = %d, want 30", got)
	}
}

// With a start delay the oracle sizes for the rate up to one start delay
// and one interval ahead: it launches for the step at 100 s from 35 s on.
func TestOracleLaunchesOneStartDelayAhead(t *testing.T) {
	t.Parallel()
	sc := csvScenario(t, "0,50\n100,500\n200,50\n")
	w := mustWorld(t, Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, StartDelay: time.Minute, Min: 1, Max: 1000, Workers: 1})
	o := NewOracle(w, 10*time.Second, 5*time.Second)
	low, _ := capacity.WaitQuantileFloor(50, 5, 10, 0.01)
	high, _ := capacity.WaitQuantileFloor(500, 5, 10, 0.01)
	for _, tt := range []struct {
		s    float64
		want int
	}{{0, low}, {35, low}, {36, high}, {199, high}, {200, low}} {
		if got := o.size(oneWorker, at(tt.s)); got != tt.want {
			t.Errorf("size at %v s = %d, want %d", tt.s, got, tt.want)
		}
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
