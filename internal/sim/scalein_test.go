package sim

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
)

// Two workers each hold one of about ten messages (constant 10 s service)
// when the fleet goes from 2 to 1 at 5 s. The survivor then takes the
// messages one by one, every 10 s.
func scaleInWorld(t *testing.T, mode string) *World {
	t.Helper()
	return mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n1,10000\n1.001,0\n"),
		Service: Service{Dist: DistConstant, Mean: 10 * time.Second}, Min: 0, Max: 5, Workers: 2, Seed: 1,
		LatencyTarget: 25 * time.Second, ScaleIn: mode, VisibilityTimeout: 30 * time.Second})
}

// In kill mode the removed worker's message stays in flight until its
// visibility timeout (30 s after it was received), comes back to the front
// of the queue and is delivered a second time. Every message is still
// processed, its wait counted once, from arrival to its last pick-up.
func TestScaleInKillRedeliversAfterVisibilityTimeout(t *testing.T) {
	t.Parallel()
	w := scaleInWorld(t, ScaleInKill)
	o := observe(t, w, 5)
	n := w.Scores().Messages
	if n < 6 || o.Sample.InFlight != 2 {
		t.Fatalf("%d messages, %d in flight; want >= 6 and 2", n, o.Sample.InFlight)
	}
	w.SetDesired(at(5), 1)
	o = observe(t, w, 6)
	if o.Fleet.InService != 1 || o.Fleet.Draining != 0 || o.Sample.InFlight != 2 || o.Sample.Visible != n-2 {
		t.Errorf("after the kill: in service %d, draining %d, in flight %d, visible %d; want 1, 0, 2 (one invisible), %d",
			o.Fleet.InService, o.Fleet.Draining, o.Sample.InFlight, o.Sample.Visible, n-2)
	}
	if p := w.Snapshot(at(6)); p.Workers != 1 {
		t.Errorf("workers paid for after the kill: %d, want 1", p.Workers)
	}
	if s := w.Scores(); s.Duplicates != 0 {
		t.Errorf("duplicates before the visibility timeout: %d", s.Duplicates)
	}
	end := 20 + 10*float64(n)
	p := w.Snapshot(at(end))
	s := w.Scores()
	if s.Duplicates != 1 || p.Backlog != 0 {
		t.Fatalf("at %v s: duplicates %d, backlog %d; want 1 and 0", end, s.Duplicates, p.Backlog)
	}
	// The survivor picks up at about 1, 11, 21, ... s: the k-th pick waits
	// about 10k s. The killed message, back at 31 s, is the fourth pick.
	// So the waits are 0, 10, ..., 10(n−1), one per message; three are
	// within 25 s.
	if want := 3 / float64(n); math.Abs(s.SLOAttainment-want) > 1e-9 {
		t.Errorf("SLO attainment %v, want %v (3 of %d)", s.SLOAttainment, want, n)
	}
	if want := 5 * float64(n-1); math.Abs(s.MeanWait-want) > 0.01 {
		t.Errorf("mean wait %v, want %v", s.MeanWait, want)
	}
	if want := 10 * float64(n-1); math.Abs(s.MaxWait-want) > 0.01 {
		t.Errorf("max wait %v, want %v", s.MaxWait, want)
	}
	// The killed worker is paid until 5 s, the survivor throughout.
	if want := 5 + end; math.Abs(s.WorkerSeconds-want) > 1e-6 {
		t.Errorf("worker seconds %v, want %v", s.WorkerSeconds, want)
	}
}

// In graceful mode the removed worker finishes its message, counted as
// draining meanwhile, and nothing is delivered twice.
func TestScaleInGracefulDrains(t *testing.T) {
	t.Parallel()
	w := scaleInWorld(t, ScaleInGraceful)
	observe(t, w, 5)
	n := w.Scores().Messages
	w.SetDesired(at(5), 1)
	o := observe(t, w, 6)
	if o.Fleet.InService != 1 || o.Fleet.Draining != 1 || o.Sample.InFlight != 2 {
		t.Errorf("draining: in service %d, draining %d, in flight %d; want 1, 1, 2", o.Fleet.InService, o.Fleet.Draining, o.Sample.InFlight)
	}
	if o = observe(t, w, 12); o.Fleet.Draining != 0 {
		t.Errorf("draining %d after its message is done, want 0", o.Fleet.Draining)
	}
	w.Snapshot(at(20 + 10*float64(n)))
	s := w.Scores()
	// Picks at about 1 (two), 11, 21, ...: waits 0, 0, 10, 20, ...
	if s.Duplicates != 0 || math.Abs(s.MaxWait-10*float64(n-2)) > 0.01 {
		t.Errorf("duplicates %d, max wait %v; want 0 and %v", s.Duplicates, s.MaxWait, 10*float64(n-2))
	}
}

func TestScaleInConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"unknown mode", func(c *Config) { c.ScaleIn = "drop" }, `scale-in mode "drop"`},
		{"negative visibility timeout", func(c *Config) { c.VisibilityTimeout = -time.Second }, "visibility timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := Config{Start: t0, Scenario: csvScenario(t, "0,1\n"), Service: Service{Dist: DistConstant, Mean: time.Second}, Max: 1}
			tc.mod(&cfg)
			if _, err := NewWorld(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewWorld = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}

// insertByArrival keeps the ring in order of arrival across its wrap.
func TestInsertByArrival(t *testing.T) {
	t.Parallel()
	var q fifo
	for i := range 12 {
		q.push(message{arrived: float64(i)})
	}
	for range 10 {
		q.pop() // head moves near the end of the 16-slot ring
	}
	for i := 12; i < 20; i++ {
		q.push(message{arrived: float64(i)}) // wraps
	}
	for _, a := range []float64{3, 15.5, 25, 0} {
		q.insertByArrival(message{arrived: a})
	}
	want := []float64{0, 3, 10, 11, 12, 13, 14, 15, 15.5, 16, 17, 18, 19, 25}
	if q.n != len(want) {
		t.Fatalf("%d queued, want %d", q.n, len(want))
	}
	for i, a := range want {
		if got := q.at(i).arrived; got != a {
			t.Errorf("position %d: arrived %v, want %v", i, got, a)
		}
	}
}

// BenchmarkScaleInHour is one simulated hour of bursty traffic at 100 msg/s
// driven by the KEDA peer (the peer that scales in most often), in each
// scale-in mode: what tracking held messages costs in kill mode.
func BenchmarkScaleInHour(b *testing.B) {
	sc, err := Builtin(ScenarioBursty, 100, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range ScaleInModes {
		b.Run(mode, func(b *testing.B) {
			rc := RunConfig{World: Config{Start: t0, Scenario: sc, Service: Service{Mean: 200 * time.Millisecond},
				StartDelay: time.Minute, Min: 1, Max: 200, Workers: 25, LatencyTarget: 10 * time.Second, Seed: 1,
				ScaleIn: mode},
				Duration: time.Hour, Interval: 5 * time.Second}
			b.ReportAllocs()
			var dups int64
			for b.Loop() {
				res, err := RunPolicy(context.Background(), rc, PolicyKEDA)
				if err != nil {
					b.Fatal(err)
				}
				dups = res.Duplicates
			}
			b.ReportMetric(float64(dups), "duplicates")
		})
	}
}

// A killed worker's message that arrived during the warm-up comes back
// without touching the scores: its wait was never counted, so none is
// taken back (which once emptied the wait histogram and panicked).
func TestScaleInKillDuringWarmUpLeavesTheScores(t *testing.T) {
	t.Parallel()
	w := mustWorld(t, Config{Scenario: csvScenario(t, "0,0\n1,10000\n1.001,0\n"),
		Service: Service{Dist: DistConstant, Mean: 10 * time.Second}, Min: 0, Max: 5, Workers: 2, Seed: 1,
		LatencyTarget: 25 * time.Second, ScaleIn: ScaleInKill, VisibilityTimeout: 30 * time.Second,
		WarmUp: 2 * time.Second})
	observe(t, w, 5)
	w.SetDesired(at(5), 1)
	p := w.Snapshot(at(200))
	s := w.Scores()
	if s.Duplicates != 1 || p.Backlog != 0 {
		t.Fatalf("duplicates %d, backlog %d; want 1 and 0", s.Duplicates, p.Backlog)
	}
	if s.Messages != 0 || s.MeanWait != 0 {
		t.Errorf("scored %d messages (mean wait %v) that arrived in the warm-up; want none", s.Messages, s.MeanWait)
	}
}
