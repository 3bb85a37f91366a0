package sim

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// A checker restarted 20 minutes into a steady queue (20 msg/s, 200 ms,
// CloudWatch's metrics a minute late) warm-starts from the world's
// history as the daemon does: the model's forecast takes the 19 minutes
// published by then, and the fleet's measurement the fleet's minutes, so
// its first decision already sizes with the measured service time, where
// the settings assume 100 ms; restarted cold, without the history, it
// sizes with the configured one. The backlog rule has no forecast and
// measures (learn: report); a checker with learn off or no CloudWatch
// deleted count reads no fleet. Every run completes with the messages of
// the run that never restarts, its share within the promise less a point
// at most, and its cost within 10 %. A restart between two steps comes at
// the next one.
func TestRestartWarmStartsFromTheWorldsHistory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		policy    string
		restartAt time.Duration
		cold      bool
		change    func(*RunConfig)
		minutes   int  // arrival minutes preloaded
		fleet     bool // fleet minutes preloaded
		sizing    string
	}{
		{"model", PolicyModel, 20 * time.Minute, false, nil, 19, true, "measured"},
		{"model between two steps", PolicyModel, 20*time.Minute + 2*time.Second, false, nil, 19, true, "measured"},
		{"model restarted cold", PolicyModel, 20 * time.Minute, true, nil, -1, false, "configured"},
		{"backlog", PolicyBacklog, 20 * time.Minute, false, nil, 0, true, "configured"},
		{"model, learn off", PolicyModel, 20 * time.Minute, false, func(rc *RunConfig) { rc.Learn = policy.LearnOff }, 19, false, "configured"},
		{"model, no deleted count", PolicyModel, 20 * time.Minute, false, func(rc *RunConfig) { rc.World.NoDeleted = true }, 19, false, "configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rc := runConfig(t, ScenarioSteady, 20, 40*time.Minute)
			rc.World.MetricDelay = time.Minute
			rc.World.AssumedServiceTime = 100 * time.Millisecond
			if tt.change != nil {
				tt.change(&rc)
			}
			never := mustRun(t, rc, tt.policy)

			minutes, fleetMinutes := -1, -1
			var first model.Decision
			var firstAt time.Time
			rc.RestartAt = tt.restartAt
			rc.probe = &restartProbe{
				cold:   tt.cold,
				warmed: func(m, f int) { minutes, fleetMinutes = m, f },
				decided: func(now time.Time, ds []model.Decision) {
					if firstAt.IsZero() && len(ds) == 1 {
						first, firstAt = ds[0], now
					}
				},
			}
			r := mustRun(t, rc, tt.policy)

			wantAt := t0.Add((tt.restartAt + rc.Interval - 1).Truncate(rc.Interval))
			if !firstAt.Equal(wantAt) {
				t.Fatalf("the restarted checker first decided at %v, want %v", firstAt.Sub(t0), wantAt.Sub(t0))
			}
			if tt.minutes >= 0 && minutes != tt.minutes {
				t.Errorf("the forecast took %d minutes of arrivals, want %d", minutes, tt.minutes)
			}
			if tt.fleet && fleetMinutes < 15 {
				t.Errorf("the fleet's measurement took %d minutes, want at least 15 of the 19 published", fleetMinutes)
			}
			if !tt.fleet && fleetMinutes > 0 {
				t.Errorf("the fleet's measurement took %d minutes, want none", fleetMinutes)
			}
			if tt.cold && (minutes >= 0 || fleetMinutes >= 0) {
				t.Errorf("a cold restart preloaded %d and %d minutes", minutes, fleetMinutes)
			}
			m := first.Measured
			if m.SizingWith != tt.sizing {
				t.Errorf("the first decision sizes with the %s service time, want the %s one", m.SizingWith, tt.sizing)
			}
			switch measured := m.ServiceTimeSeconds; {
			case tt.fleet && (measured == nil || math.Abs(*measured/0.2-1) > 0.1):
				t.Errorf("the first decision's measured service time is %v, want 200 ms within 10 %%", fmtPtr(measured))
			case !tt.fleet && measured != nil:
				t.Errorf("the first decision measured a service time of %v s from no fleet history", *measured)
			}

			if r.Messages != never.Messages || r.SLOAttainment < never.SLOAttainment-0.01 || math.Abs(r.WorkerSeconds/never.WorkerSeconds-1) > 0.1 {
				t.Errorf("restarted: %d messages, %.2f %% within the promise, %.0f worker-seconds; never restarted: %d, %.2f %%, %.0f",
					r.Messages, 100*r.SLOAttainment, r.WorkerSeconds, never.Messages, 100*never.SLOAttainment, never.WorkerSeconds)
			}
		})
	}
}

func fmtPtr(p *float64) any {
	if p == nil {
		return "none"
	}
	return *p
}

// The policies other than the checker's own have no process to restart:
// a run that asks for a restart is the run that does not.
func TestRestartLeavesThePeersAlone(t *testing.T) {
	t.Parallel()
	for _, name := range []string{PolicyFixed, PolicyKEDA, PolicyTargetTracking, PolicyStep, PolicyOracle} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rc := runConfig(t, ScenarioBursty, 20, 40*time.Minute)
			rc.World.MetricDelay = time.Minute
			without := mustRun(t, rc, name)
			rc.RestartAt = 20 * time.Minute
			with := mustRun(t, rc, name)
			if !reflect.DeepEqual(with, without) {
				t.Errorf("restarted at 20m: %+v, want the run without a restart: %+v", with.Scores, without.Scores)
			}
		})
	}
}
