package sim

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

func mustWorld(t *testing.T, cfg Config) *World {
	t.Helper()
	if cfg.Start.IsZero() {
		cfg.Start = t0
	}
	if cfg.Service.Mean == 0 {
		cfg.Service = Service{Dist: DistConstant, Mean: 10 * time.Second}
	}
	w, err := NewWorld(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

func observe(t *testing.T, w *World, s float64) model.Observation {
	t.Helper()
	obs, err := w.Observe(context.Background(), at(s))
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 {
		t.Fatalf("observations = %d, want 1", len(obs))
	}
	return obs[0]
}

// csvScenario is a scenario from rows of "t,rate".
func csvScenario(t *testing.T, rows string) Scenario {
	t.Helper()
	sc, err := ParseCSV("test", strings.NewReader("t_seconds,arrivals_per_second\n"+rows))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestNewWorldRejectsBadConfig(t *testing.T) {
	t.Parallel()
	steady, _ := Builtin("steady", 1, time.Hour)
	good := Config{Start: t0, Scenario: steady, Service: Service{Mean: time.Second}, Min: 1, Max: 5, Workers: 2}
	tests := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no scenario", func(c *Config) { c.Scenario = Scenario{} }, "no segments"},
		{"no service time", func(c *Config) { c.Service.Mean = 0 }, "service time 0s"},
		{"lognormal without cv", func(c *Config) { c.Service.Dist = DistLognormal }, "coefficient of variation"},
		{"unknown distribution", func(c *Config) { c.Service.Dist = "pareto" }, `"pareto"`},
		{"min above max", func(c *Config) { c.Min, c.Max = 3, 2 }, "min 3, max 2"},
		{"workers above max", func(c *Config) { c.Workers = 9 }, "starting workers 9"},
		{"negative start delay", func(c *Config) { c.StartDelay = -time.Second }, "start delay -1s"},
		{"negative concurrency", func(c *Config) { c.Concurrency = -1 }, "concurrency -1"},
		{"negative assumed service time", func(c *Config) { c.AssumedServiceTime = -time.Second }, "assumed service time -1s"},
		{"negative pool", func(c *Config) { c.DownstreamPool = -2 }, "downstream pool -2"},
		{"a pool change twice", func(c *Config) { c.PoolChanges = []PoolChange{{time.Hour, 10}, {time.Hour, 20}} }, "pool change at 1h0m0s: given twice"},
		{"zero factor", func(c *Config) { c.ServiceChanges = []ServiceChange{{time.Hour, 0}} }, "service change at 1h0m0s: factor 0"},
		{"infinite factor", func(c *Config) { c.ServiceChanges = []ServiceChange{{time.Hour, math.Inf(1)}} }, "factor +Inf"},
		{"change before the start", func(c *Config) { c.ServiceChanges = []ServiceChange{{-time.Second, 2}} }, "service change at -1s"},
		{"change given twice", func(c *Config) { c.ServiceChanges = []ServiceChange{{time.Hour, 2}, {time.Hour, 3}} }, "given twice"},
		{"negative start-delay spread", func(c *Config) { c.StartDelayCV = -1 }, "start delay coefficient of variation -1"},
		{"start-delay spread not a number", func(c *Config) { c.StartDelayCV = math.NaN() }, "start delay coefficient of variation NaN"},
		{"negative metric delay", func(c *Config) { c.MetricDelay = -time.Second }, "metric delay -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := good
			tt.change(&cfg)
			_, err := NewWorld(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestFixedFleetCostsWorkersTimesDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		workers int
		d       float64
	}{
		{"none", 0, 600},
		{"one", 1, 600},
		{"thirteen for two hours", 13, 7200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, _ := Builtin("steady", 5, time.Hour)
			w := mustWorld(t, Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
				Min: tt.workers, Max: tt.workers, Workers: tt.workers, Seed: 1})
			w.Snapshot(at(tt.d))
			want := float64(tt.workers) * tt.d
			if got := w.Scores().WorkerSeconds; math.Abs(got-want) > 1e-6*math.Max(1, want) {
				t.Errorf("worker seconds = %v, want %v", got, want)
			}
		})
	}
}

// About ten messages arrive just after t = 1 s, each taking 10 s; the only
// worker is asked to leave at t = 5 s. It finishes the message in hand and
// leaves at about t = 11 s; the others stay in the queue.
func TestScaleInIsGraceful(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n1,10000\n1.001,0\n"),
		Service: Service{Dist: DistConstant, Mean: 10 * time.Second}, Min: 0, Max: 5, Workers: 1, Seed: 1})
	o := observe(t, w, 5)
	n := w.Scores().Messages
	if n < 2 || o.Sample.InFlight != 1 || o.Sample.Visible != n-1 {
		t.Fatalf("%d messages, in flight %d, visible %d; want >= 2, 1 and the rest", n, o.Sample.InFlight, o.Sample.Visible)
	}
	if !w.SetDesired(at(5), 0) {
		t.Fatal("SetDesired(0) changed nothing")
	}
	o = observe(t, w, 6)
	if o.Fleet.Desired != 0 || o.Fleet.InService != 0 || o.Sample.InFlight != 1 {
		t.Errorf("after scale-in: desired %d, in service %d, in flight %d; want 0, 0, 1",
			o.Fleet.Desired, o.Fleet.InService, o.Sample.InFlight)
	}
	if p := w.Snapshot(at(10.5)); p.Workers != 1 {
		t.Errorf("workers at 10.5 s = %d, want 1 (still finishing)", p.Workers)
	}
	p := w.Snapshot(at(100))
	s := w.Scores()
	if p.Workers != 0 || p.Backlog != n-1 {
		t.Errorf("at 100 s: workers %d, backlog %d; want 0, %d", p.Workers, p.Backlog, n-1)
	}
	if math.Abs(s.WorkerSeconds-11) > 2e-3 {
		t.Errorf("worker seconds = %v, want 11", s.WorkerSeconds)
	}
}

func TestIdleWorkersLeaveAtOnce(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), Min: 0, Max: 5, Workers: 4})
	w.SetDesired(at(10), 1)
	w.Snapshot(at(20))
	if got, want := w.Scores().WorkerSeconds, 4*10.0+1*10; math.Abs(got-want) > 1e-6 {
		t.Errorf("worker seconds = %v, want %v", got, want)
	}
}

func TestStartDelay(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), Min: 0, Max: 10, Workers: 1, StartDelay: time.Minute})
	w.SetDesired(at(10), 3)
	o := observe(t, w, 69)
	if o.Fleet.Pending != 2 || o.Fleet.InService != 1 || o.Fleet.Desired != 3 {
		t.Fatalf("fleet %+v: want 2 pending, 1 in service, desired 3", o.Fleet)
	}
	for _, ps := range o.Fleet.PendingSince {
		if !ps.Equal(at(10)) {
			t.Errorf("pending since %v, want %v", ps, at(10))
		}
	}
	o = observe(t, w, 70)
	if o.Fleet.Pending != 0 || o.Fleet.InService != 3 || len(o.Fleet.PendingSince) != 0 {
		t.Errorf("fleet %+v: want 0 pending, 3 in service", o.Fleet)
	}
	// Starting workers are paid for: 1 × 100 s + 2 × 90 s.
	w.Snapshot(at(100))
	if got := w.Scores().WorkerSeconds; math.Abs(got-280) > 1e-6 {
		t.Errorf("worker seconds = %v, want 280", got)
	}
}

func TestScaleInCancelsStartingWorkersFirst(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), Min: 0, Max: 10, Workers: 2, StartDelay: time.Minute})
	w.SetDesired(at(0), 5)
	w.SetDesired(at(30), 3)
	o := observe(t, w, 31)
	if o.Fleet.Pending != 1 || o.Fleet.InService != 2 {
		t.Errorf("fleet %+v: want 1 pending, 2 in service", o.Fleet)
	}
}

func TestWorkersTakeMessagesFirstInFirstOut(t *testing.T) {
	t.Parallel()
	// Ten messages arrive within the first millisecond-ish; one worker with
	// concurrency 2 and constant 10 s service takes them two at a time.
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,10000\n0.001,0\n"), Concurrency: 2,
		Service: Service{Dist: DistConstant, Mean: 10 * time.Second}, Min: 1, Max: 1, Workers: 1, Seed: 3})
	o := observe(t, w, 1)
	n := w.Scores().Messages
	if o.Sample.InFlight != 2 || o.Sample.Visible != n-2 || o.Sample.Backlog != n {
		t.Fatalf("sample %+v with %d messages: want 2 in flight, the rest visible", o.Sample, n)
	}
	w.Snapshot(at(1000))
	s := w.Scores()
	// Pairs start at 0, 10, 20, ... s: the k-th message (from 0) waits
	// about 10·floor(k/2) s, so the largest wait is 10·floor((n−1)/2).
	if want := 10 * float64((n-1)/2); math.Abs(s.MaxWait-want) > 0.01 {
		t.Errorf("max wait = %v, want %v", s.MaxWait, want)
	}
}

func TestObserveSample(t *testing.T) {
	t.Parallel()
	sc, _ := Builtin("steady", 20, time.Hour)
	w := mustWorld(t, Config{Group: "thumbs", Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
		Min: 1, Max: 9, Workers: 2, Seed: 5})
	o := observe(t, w, 600)
	s, f := o.Sample, o.Fleet
	if s.Group != "thumbs" || !s.At.Equal(at(600)) || s.Queues != 1 || s.Answered != 1 || s.Delayed != 0 {
		t.Errorf("sample header %+v", s)
	}
	if s.Backlog != s.Visible+s.InFlight || s.InFlight > 2 {
		t.Errorf("backlog %d, visible %d, in flight %d", s.Backlog, s.Visible, s.InFlight)
	}
	if s.OldestAge != nil {
		t.Errorf("oldest age %+v, want none unless asked for", s.OldestAge)
	}
	// Two workers at 5 msg/s each cannot keep up with 20 msg/s: they
	// complete 10 msg/s, which the last minute's deletions must show, the
	// minute that ended at 600 s, stamped with its start.
	if s.Deleted == nil || math.Abs(s.Deleted.Value-10) > 1.5 || !s.Deleted.At.Equal(at(540)) {
		t.Errorf("deleted = %+v, want about 10 msg/s at %v", s.Deleted, at(540))
	}
	if f.Kind != FleetKind || f.Name != "thumbs" || !f.Known || f.Desired != 2 || f.InService != 2 || f.Min != 1 || f.Max != 9 {
		t.Errorf("fleet %+v", f)
	}
}

// With nothing served the first message, arriving at about 0 s, is the
// oldest. Exact metrics give its age at the sample; CloudWatch's give the
// highest age of a minute, stamped with the minute's start, once the
// minute is published and the poller has read it (observed every 5 s, it
// reads at 0, 60, 120, ... s).
func TestOldestAgeReading(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		exact   bool
		delay   time.Duration
		until   float64 // the last observation
		wantAge float64 // the age reported then
		wantAt  float64
	}{
		{"exact", true, 0, 100, 100, 100},
		// Read at 60 s: minute 0 ended then, its highest age about 60 s.
		{"CloudWatch, at once", false, 0, 100, 60, 0},
		// Minute 1 is published at 180 s and read then: about 120 s.
		{"CloudWatch, a minute late", false, time.Minute, 200, 120, 60},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := mustWorld(t, Config{Scenario: csvScenario(t, "0,1000\n"), Min: 0, Max: 1, Workers: 0,
				ReportOldestAge: true, MetricsExact: tt.exact, MetricDelay: tt.delay})
			for s := 0.0; s < tt.until; s += 5 {
				observe(t, w, s)
			}
			r := observe(t, w, tt.until).Sample.OldestAge
			if r == nil {
				t.Fatal("no oldest age")
			}
			if math.Abs(r.Value-tt.wantAge) > 0.1 || !r.At.Equal(at(tt.wantAt)) {
				t.Errorf("oldest age %v at %v, want %v at %v", r.Value, r.At, tt.wantAge, at(tt.wantAt))
			}
		})
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		d          model.Decision
		wantTo     int
		wantScaled bool
	}{
		{"scale out", model.Decision{DesiredWorkers: 6}, 6, true},
		{"clamped to max", model.Decision{DesiredWorkers: 60}, 8, true},
		{"clamped to min", model.Decision{DesiredWorkers: 0}, 2, true},
		{"held", model.Decision{DesiredWorkers: 6, Held: true, HoldReason: "stale"}, 3, false},
		{"unchanged", model.Decision{DesiredWorkers: 3}, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), Min: 2, Max: 8, Workers: 3})
			tt.d.At = at(5)
			a, err := w.Apply(context.Background(), tt.d, model.Fleet{})
			if err != nil {
				t.Fatal(err)
			}
			if a.From != 3 || a.To != tt.wantTo || a.Scaled != tt.wantScaled || a.Group != DefaultGroup {
				t.Errorf("action %+v, want from 3 to %d, scaled %v", a, tt.wantTo, tt.wantScaled)
			}
			if got := observe(t, w, 6).Fleet.Desired; got != tt.wantTo {
				t.Errorf("desired = %d, want %d", got, tt.wantTo)
			}
		})
	}
}

func TestTimeNeverGoesBack(t *testing.T) {
	t.Parallel()
	sc, _ := Builtin("steady", 50, time.Hour)
	w := mustWorld(t, Config{Scenario: sc, Service: Service{Mean: 200 * time.Millisecond}, Min: 12, Max: 12, Workers: 12, Seed: 9})
	observe(t, w, 100)
	before := w.Scores()
	o := observe(t, w, 50)
	if after := w.Scores(); after != before {
		t.Errorf("observing the past changed the scores: %+v, then %+v", before, after)
	}
	if !o.Sample.At.Equal(at(100)) {
		t.Errorf("sample at %v, want the world's time %v", o.Sample.At, at(100))
	}
}

func TestObserveHonoursCancellation(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n"), Min: 0, Max: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := w.Observe(ctx, at(1)); err == nil {
		t.Error("Observe on a cancelled context succeeded")
	}
	if _, err := w.Apply(ctx, model.Decision{DesiredWorkers: 1}, model.Fleet{}); err == nil {
		t.Error("Apply on a cancelled context succeeded")
	}
}

// Messages still waiting at the end count with the wait they have had: with
// no workers and one message a second for 100 s, only those of the last 10 s
// are within a 10 s target.
func TestScoresCountMessagesStillWaiting(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,1\n"), Min: 0, Max: 1, Workers: 0,
		LatencyTarget: 10 * time.Second, Seed: 11})
	w.Snapshot(at(100))
	s := w.Scores()
	if s.Messages < 60 || s.Messages > 140 {
		t.Fatalf("messages = %d, want about 100", s.Messages)
	}
	if s.SLOAttainment < 0.02 || s.SLOAttainment > 0.25 {
		t.Errorf("slo attainment = %v, want about 0.1", s.SLOAttainment)
	}
	if s.MaxWait < 90 || s.MaxOldestAge < 90 {
		t.Errorf("max wait %v, max oldest age %v: want about 100", s.MaxWait, s.MaxOldestAge)
	}
}

func TestSameSeedSameRun(t *testing.T) {
	t.Parallel()
	run := func(seed uint64) Scores {
		sc, _ := Builtin("bursty", 10, time.Hour)
		w := mustWorld(t, Config{Scenario: sc, Service: Service{Dist: DistLognormal, Mean: 200 * time.Millisecond, CV: 1.5},
			Min: 1, Max: 40, Workers: 3, StartDelay: time.Minute, LatencyTarget: 10 * time.Second, Seed: seed})
		for s := 0.0; s <= 1800; s += 5 {
			w.Snapshot(at(s))
			if int(s)%300 == 0 {
				w.SetDesired(at(s), 2+int(s)/300%5)
			}
		}
		return w.Scores()
	}
	a, b, c := run(42), run(42), run(43)
	if a != b {
		t.Errorf("same seed, different scores:\n%+v\n%+v", a, b)
	}
	if a == c {
		t.Errorf("different seeds, same scores: %+v", a)
	}
}

// Launches counts every worker started, none of the starting fleet, and a
// worker cancelled before it started still counts (it was launched).
func TestLaunchesCountsStartedWorkers(t *testing.T) {
	t.Parallel()
	steady, _ := Builtin("steady", 1, time.Hour)
	w := mustWorld(t, Config{Scenario: steady, StartDelay: time.Minute, Min: 0, Max: 10, Workers: 1})
	for _, step := range []struct {
		at float64
		n  int
	}{{10, 5}, {100, 2}, {200, 4}, {210, 0}, {400, 3}} {
		w.SetDesired(at(step.at), step.n)
	}
	// 1→5: 4 launched; 5→2: none; 2→4: 2; 4→0: none; 0→3: 3.
	if got := w.Scores().Launches; got != 9 {
		t.Errorf("launches = %d, want 9", got)
	}
}

// The warm-up leaves out the messages that arrived in it, the cost and the
// scaling before it; the same seed gives the same arrivals either way.
func TestWarmUpLeavesTheStartOut(t *testing.T) {
	t.Parallel()
	steady, _ := Builtin("steady", 2, time.Hour)
	cfg := Config{Scenario: steady, Service: Service{Dist: DistConstant, Mean: 100 * time.Millisecond}, Min: 0, Max: 10, Workers: 2, Seed: 3, LatencyTarget: time.Second}
	all := mustWorld(t, cfg)
	cfg.WarmUp = 10 * time.Minute
	warm := mustWorld(t, cfg)
	for _, w := range []*World{all, warm} {
		w.SetDesired(at(60), 3)   // within the warm-up
		w.SetDesired(at(1200), 4) // after it
	}
	mid := mustWorld(t, Config{Scenario: steady, Service: cfg.Service, Min: 0, Max: 10, Workers: 2, Seed: 3, LatencyTarget: time.Second})
	mid.Snapshot(at(600))
	inWarmUp := mid.Scores().Messages
	all.Snapshot(at(1800))
	warm.Snapshot(at(1800))
	a, b := all.Scores(), warm.Scores()
	if b.Messages != a.Messages-inWarmUp || b.Messages == 0 {
		t.Errorf("messages after the warm-up = %d, want %d − %d", b.Messages, a.Messages, inWarmUp)
	}
	// 3 workers from 600 to 1200 s, 4 to 1800 s.
	if want := 3*600.0 + 4*600.0; math.Abs(b.WorkerSeconds-want) > 1e-6 {
		t.Errorf("worker seconds = %v, want %v", b.WorkerSeconds, want)
	}
	if want := 2*60.0 + 3*1140.0 + 4*600.0; math.Abs(a.WorkerSeconds-want) > 1e-6 {
		t.Errorf("worker seconds without warm-up = %v, want %v", a.WorkerSeconds, want)
	}
	if b.ScalingActions != 1 || b.Launches != 1 || a.ScalingActions != 2 || a.Launches != 2 {
		t.Errorf("actions/launches = %d/%d with warm-up, %d/%d without; want 1/1 and 2/2", b.ScalingActions, b.Launches, a.ScalingActions, a.Launches)
	}
}
