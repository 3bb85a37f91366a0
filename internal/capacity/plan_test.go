package capacity

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// plannerDefault is the planner example's default queue.
func plannerDefault() PlanInput {
	return PlanInput{
		Queue: "default", ArrivalRate: 12, Workers: 8, PerWorker: 2.4,
		Backlog: 18_000, DrainTarget: 1800, Utilization: 0.8,
	}
}

func mustPlan(t testing.TB, in PlanInput) Plan {
	t.Helper()
	p, err := NewPlan(in)
	if err != nil {
		t.Fatalf("NewPlan(%+v): %v", in, err)
	}
	checkPlan(t, in, p)
	return p
}

func derefOr(x *float64, or float64) float64 {
	if x == nil {
		return or
	}
	return *x
}

func point(t testing.TB, p Plan, name string) PlanPoint {
	t.Helper()
	for _, pt := range p.PlanPoints {
		if pt.Point == name {
			return pt
		}
	}
	t.Fatalf("no plan point %q in %+v", name, p.PlanPoints)
	return PlanPoint{}
}

func backlogAtT(t testing.TB, p Plan, at float64) float64 {
	t.Helper()
	for _, b := range p.BurnDown {
		if b.T == at {
			return b.Backlog
		}
	}
	t.Fatalf("no burn-down sample at t = %v", at)
	return 0
}

// TestPlanWorkedExamples runs the three worked examples of planner example through the
// whole plan.
func TestPlanWorkedExamples(t *testing.T) {
	t.Parallel()
	t.Run("default queue needs extra catch-up workers", func(t *testing.T) {
		t.Parallel()
		p := mustPlan(t, plannerDefault())
		// 8 × 2.4 = 19.2 msg/s; net 7.2; 18000/7.2 = 2500 s = 41 min 40 s.
		c := p.Current
		if c.Workers != 8 || c.ServiceRate != 19.2 || c.NetDrain != 7.2 || derefOr(c.DrainSeconds, -1) != 2500 ||
			derefOr(c.Utilization, -1) != 0.625 {
			t.Errorf("current = %+v, want 8 workers, 19.2, 7.2, 2500 s, 0.625", c)
		}
		// 12 + 18000/1800 = 22 msg/s needed, /2.4 = 9.17: 10.
		if p.DrainFloor != 10 || p.UtilizationFloor != 7 || p.WaitFloor != nil ||
			p.RecommendedWorkers != 10 || p.PlannedWorkers != 10 || p.Capped {
			t.Errorf("floors %d/%d/%v, recommended %d, planned %d, capped %v; want 10/7/nil, 10, 10, false",
				p.DrainFloor, p.UtilizationFloor, p.WaitFloor, p.RecommendedWorkers, p.PlannedWorkers, p.Capped)
		}
		// 10 workers: net 24 − 12 = 12, 18000/12 = 1500 s.
		if tg := point(t, p, PointTarget); tg.Workers != 10 || tg.NetDrain != 12 || derefOr(tg.DrainSeconds, -1) != 1500 {
			t.Errorf("target point = %+v, want 10 workers, net 12, 1500 s", tg)
		}
		if got := point(t, p, PointCurrent).Note; !strings.Contains(got, "41m40s") {
			t.Errorf("current note %q does not give 41m40s", got)
		}
		// Default horizon 2 × 30 min; the planned pool empties the queue at 1500 s.
		if p.Inputs.Horizon != 3600 || backlogAtT(t, p, 900) != 7200 || backlogAtT(t, p, 1500) != 0 ||
			backlogAtT(t, p, 0) != 18_000 || backlogAtT(t, p, 3600) != 0 {
			t.Errorf("burn-down %+v", p.BurnDown)
		}
	})
	t.Run("burst and overhead reserves expose a cap problem", func(t *testing.T) {
		t.Parallel()
		p := mustPlan(t, PlanInput{
			ArrivalRate: 20, BurstPercent: 25, PerWorker: 2, OverheadPercent: 10,
			Backlog: 30_000, DrainTarget: 1200, Utilization: 0.8, Cap: 14,
		})
		// 25 msg/s modeled, 1.8 per worker; (25 + 25)/1.8 = 27.8: 28; 25/1.44 = 17.4: 18.
		if p.ModeledArrivalRate != 25 || p.EffectivePerWorker != 1.8 || p.DrainFloor != 28 ||
			p.UtilizationFloor != 18 || p.RecommendedWorkers != 28 {
			t.Errorf("λ_eff %v, μ_eff %v, floors %d/%d, recommended %d; want 25, 1.8, 28/18, 28",
				p.ModeledArrivalRate, p.EffectivePerWorker, p.DrainFloor, p.UtilizationFloor, p.RecommendedWorkers)
		}
		if !p.Capped || p.PlannedWorkers != 14 {
			t.Errorf("capped %v, planned %d; want the 14-worker cap to bind", p.Capped, p.PlannedWorkers)
		}
		// 14 × 1.8 = 25.2 against 25: net 0.2, 30000/0.2 = 150,000 s.
		capped := point(t, p, PointCapped)
		if capped.Workers != 14 || capped.NetDrain != 0.2 || derefOr(capped.DrainSeconds, -1) != 150_000 {
			t.Errorf("capped point = %+v, want 14 workers, net 0.2, 150000 s", capped)
		}
		if !strings.Contains(strings.Join(p.Warnings, "\n"), "above the cap of 14") {
			t.Errorf("warnings %q do not flag the cap", p.Warnings)
		}
		// No current workers: the backlog has no finite drain time.
		if p.Current.DrainSeconds != nil || p.Current.Utilization != nil {
			t.Errorf("current = %+v, want null drain time and utilisation", p.Current)
		}
	})
	t.Run("zero backlog still needs a steady-state check", func(t *testing.T) {
		t.Parallel()
		p := mustPlan(t, PlanInput{ArrivalRate: 40, PerWorker: 5, Utilization: 0.8, DrainTarget: 1800})
		// 40/(5 × 0.8) = 10, read exactly.
		if p.UtilizationFloor != 10 || p.DrainFloor != 8 || p.RecommendedWorkers != 10 {
			t.Errorf("floors %d/%d, recommended %d; want util 10, drain 8, 10", p.UtilizationFloor, p.DrainFloor, p.RecommendedWorkers)
		}
		for _, b := range p.BurnDown {
			if b.Backlog != 0 {
				t.Fatalf("burn-down leaves zero at t = %v: %v", b.T, b.Backlog)
			}
		}
	})
}

// TestPlanByHand checks plans computed independently, by hand, in comments.
func TestPlanByHand(t *testing.T) {
	t.Parallel()
	t.Run("start delay and safety workers", func(t *testing.T) {
		t.Parallel()
		in := plannerDefault()
		in.StartDelay, in.SafetyWorkers = 300, 2
		p := mustPlan(t, in)
		// Q_start = 18000 − 7.2 × 300 = 15840; (12 + 8.8)/2.4 = 8.67: 9; + 2 = 11.
		if p.BacklogAtStart != 15_840 || p.DrainFloor != 9 || p.RecommendedWorkers != 11 || p.SteadyStateWorkers != 9 {
			t.Errorf("Q_start %v, drain %d, recommended %d, steady %d; want 15840, 9, 11, 9",
				p.BacklogAtStart, p.DrainFloor, p.RecommendedWorkers, p.SteadyStateWorkers)
		}
		// Burn-down: 11 workers net 26.4 − 12 = 14.4 from t = 300: zero at
		// 300 + 15840/14.4 = 1400 s; at 1320 s, 15840 − 14.4 × 1020 = 1152.
		if backlogAtT(t, p, 300) != 15_840 || backlogAtT(t, p, 1400) != 0 || backlogAtT(t, p, 1320) != 1152 ||
			backlogAtT(t, p, 120) != 18_000-7.2*120 {
			t.Errorf("burn-down %+v", p.BurnDown)
		}
		// Horizon d + 2T = 3900 s.
		if last := p.BurnDown[len(p.BurnDown)-1]; last.T != 3900 {
			t.Errorf("burn-down ends at %v, want 3900", last.T)
		}
	})
	t.Run("a worker of two servers", func(t *testing.T) {
		t.Parallel()
		// S = 1 s, k = 2: a worker is two servers of 1 msg/s. λ = 1: one
		// worker is M/M/2 with ρ = 0.5, C = 1/3, Wq = 1/3 s, which meets a
		// 0.5 s target; util floor 1/(2 × 0.8) = 0.625: 1.
		// P(Wq > 0.5) = C·e^−(2 − 1)·0.5 = 0.202, within a 75 % promise.
		p := mustPlan(t, PlanInput{ArrivalRate: 1, ServiceTime: 1, Concurrency: 2, DrainTarget: 60,
			Utilization: 0.8, LatencyTarget: 0.5, LatencyQuantile: 0.75})
		if p.WaitFloor == nil || *p.WaitFloor != 1 || p.RecommendedWorkers != 1 || p.ServersPerWorker != 2 ||
			p.MeanWaitFloor == nil || *p.MeanWaitFloor != 1 {
			t.Fatalf("wait floor %v (mean %v), recommended %d, k %d; want 1 (1), 1, 2", p.WaitFloor, p.MeanWaitFloor, p.RecommendedWorkers, p.ServersPerWorker)
		}
		q := p.Queueing
		if q.Servers != 2 || !q.Stable || !near(derefOr(q.WaitProbability, -1), 1.0/3, 1e-11) ||
			!near(derefOr(q.MeanWaitSeconds, -1), 1.0/3, 1e-11) {
			t.Errorf("queueing = %+v, want 2 servers, C = Wq = 1/3", q)
		}
		if p.ServiceTime != 1 || p.EffectivePerWorker != 2 {
			t.Errorf("service time %v, per worker %v; want 1, 2", p.ServiceTime, p.EffectivePerWorker)
		}
	})
	t.Run("concurrency rounds servers up to whole workers", func(t *testing.T) {
		t.Parallel()
		// 50 msg/s at 200 ms, four at a time: 20 msg/s a worker. The server
		// counts for 99 % within 1 ms and for a 1 ms mean wait come from
		// independent scans; the workers are each count over four, rounded up.
		servers := referenceQuantileFloor(50, 5, 0.001, 0.01)
		mean := referenceWaitFloor(50, 5, 0.001)
		p := mustPlan(t, PlanInput{ArrivalRate: 50, ServiceTime: 0.2, Concurrency: 4, DrainTarget: 60,
			Utilization: 0.8, LatencyTarget: 0.001})
		if want := (servers + 3) / 4; p.WaitFloor == nil || *p.WaitFloor != want {
			t.Errorf("wait floor %v, want ceil(%d/4) = %d", p.WaitFloor, servers, want)
		}
		if want := (mean + 3) / 4; p.MeanWaitFloor == nil || *p.MeanWaitFloor != want {
			t.Errorf("mean wait floor %v, want ceil(%d/4) = %d", p.MeanWaitFloor, mean, want)
		}
	})
	t.Run("overhead lowers a service time's throughput", func(t *testing.T) {
		t.Parallel()
		// S = 0.5 s, 20 % overhead: 2 × 0.8 = 1.6 msg/s a worker; effective
		// service time 0.625 s. λ = 8: util floor 8/(1.6 × 0.8) = 6.25: 7.
		p := mustPlan(t, PlanInput{ArrivalRate: 8, ServiceTime: 0.5, OverheadPercent: 20, DrainTarget: 60, Utilization: 0.8})
		if p.EffectivePerWorker != 1.6 || p.ServiceTime != 0.625 || p.UtilizationFloor != 7 || p.OfferedLoad != 5 {
			t.Errorf("μ_eff %v, S_eff %v, util floor %d, load %v; want 1.6, 0.625, 7, 5",
				p.EffectivePerWorker, p.ServiceTime, p.UtilizationFloor, p.OfferedLoad)
		}
	})
	t.Run("idle queue needs nobody", func(t *testing.T) {
		t.Parallel()
		p := mustPlan(t, PlanInput{PerWorker: 1, DrainTarget: 60, Utilization: 0.8, LatencyTarget: 1})
		if p.RecommendedWorkers != 0 || p.WaitFloor == nil || *p.WaitFloor != 0 || !p.Queueing.Stable {
			t.Errorf("recommended %d, wait floor %v, queueing %+v; want 0, 0, stable", p.RecommendedWorkers, p.WaitFloor, p.Queueing)
		}
	})
}

// TestPlanLatencyTarget sizes the Erlang C example's queue with a latency target and checks
// its Erlang C table to the printed digit.
func TestPlanLatencyTarget(t *testing.T) {
	t.Parallel()
	want := map[int][4]string{
		11: {"90.9%", "68.2%", "136.4", "336.4"},
		12: {"83.3%", "44.9%", "44.9", "244.9"},
		13: {"76.9%", "28.5%", "19.0", "219.0"},
		14: {"71.4%", "17.4%", "8.7", "208.7"},
		16: {"62.5%", "5.7%", "1.9", "201.9"},
	}
	tests := []struct {
		name     string
		in       PlanInput
		wantMean int // the mean wait's floor, from the Erlang C table below
	}{
		{"service time, 100 ms target", PlanInput{ArrivalRate: 50, ServiceTime: 0.2, Workers: 10, DrainTarget: 900,
			Utilization: 0.8, LatencyTarget: 0.1}, 12},
		{"service time, 10 ms target", PlanInput{ArrivalRate: 50, ServiceTime: 0.2, Workers: 10, DrainTarget: 900,
			Utilization: 0.8, LatencyTarget: 0.01}, 14},
		// 5 msg/s a worker is the same queue: service time 1/μ = 0.2 s.
		{"per-worker throughput, 10 ms target", PlanInput{ArrivalRate: 50, PerWorker: 5, Workers: 10, DrainTarget: 900,
			Utilization: 0.8, LatencyTarget: 0.01}, 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := mustPlan(t, tt.in)
			if p.MeanWaitFloor == nil || *p.MeanWaitFloor != tt.wantMean {
				t.Errorf("mean wait floor %v, want %d", p.MeanWaitFloor, tt.wantMean)
			}
			// The wait floor is the daemon's: 99 % of messages start
			// within the target.
			tt0 := tt.in
			tt := struct{ wantWait int }{referenceQuantileFloor(50, 5, tt.in.LatencyTarget, 0.01)}
			// 50 × 0.2 = 10 offered; c_util = 10/0.8 = 12.5: 13.
			if p.OfferedLoad != 10 || p.UtilizationFloor != 13 || p.WaitFloor == nil || *p.WaitFloor != tt.wantWait ||
				p.RecommendedWorkers != max(13, tt.wantWait) {
				t.Fatalf("load %v, util floor %d, wait floor %v, recommended %d; want 10, 13, %d, %d",
					p.OfferedLoad, p.UtilizationFloor, p.WaitFloor, p.RecommendedWorkers, tt.wantWait, max(13, tt.wantWait))
			}
			// The table around a pool of 13 (the cap): rows from the
			// smallest stable pool, 11, eight in all.
			capped := tt0
			capped.Cap = 13
			p = mustPlan(t, capped)
			if first, last := p.ErlangTable[0].Workers, p.ErlangTable[len(p.ErlangTable)-1].Workers; first != 11 || last != 18 {
				t.Errorf("Erlang table spans %d..%d, want 11..18", first, last)
			}
			seen := 0
			for _, r := range p.ErlangTable {
				w, ok := want[r.Workers]
				if !ok {
					continue
				}
				seen++
				got := [4]string{pct(r.Utilization), pct(r.WaitProbability), ms(r.MeanWaitSeconds), ms(r.TotalLatencySeconds)}
				if got != w {
					t.Errorf("%d workers: %v, want %v", r.Workers, got, w)
				}
			}
			if seen != len(want) {
				t.Errorf("Erlang table has %d of the Erlang C example's %d rows", seen, len(want))
			}
		})
	}
}

// With a service time cv of 2 the Erlang C example's waits stretch by
// (1 + 2²) ÷ 2 = 2.5 (Allen–Cunneen): the 99 % floor for 100 ms is the
// exponential one for 40 ms, the mean wait's floor the smallest pool whose
// Erlang C mean wait is within 40 ms (13: 19.0 ms; 12: 44.9 ms), and each
// pool's mean wait 2.5 times the example's (16 workers: 1.9 → 4.8 ms).
func TestPlanServiceTimeSpread(t *testing.T) {
	t.Parallel()
	in := PlanInput{ArrivalRate: 50, ServiceTime: 0.2, Workers: 10, DrainTarget: 900, Utilization: 0.8, LatencyTarget: 0.1, Cap: 16}
	exp := mustPlan(t, in)
	in.ServiceTimeCV = 2
	p := mustPlan(t, in)
	if want := referenceQuantileFloor(50, 5, 0.04, 0.01); p.WaitFloor == nil || *p.WaitFloor != want || *p.WaitFloor <= *exp.WaitFloor {
		t.Errorf("wait floor %v, want %d (above the exponential %d)", p.WaitFloor, want, *exp.WaitFloor)
	}
	if got, want := in.WaitModel(), "Erlang C, waits × 2.5 for a service time cv of 2"; got != want {
		t.Errorf("wait model %q, want %q", got, want)
	}
	if got := exp.Inputs.WaitModel(); got != "Erlang C" {
		t.Errorf("wait model without a cv %q, want Erlang C", got)
	}
	if p.MeanWaitFloor == nil || *p.MeanWaitFloor != 13 {
		t.Errorf("mean wait floor %v, want 13", p.MeanWaitFloor)
	}
	// The pools both tables show (each spans the pools around its own plan).
	same := 0
	for _, e := range exp.ErlangTable {
		i := slices.IndexFunc(p.ErlangTable, func(r ErlangRow) bool { return r.Workers == e.Workers })
		if i < 0 {
			continue
		}
		same++
		if r := p.ErlangTable[i]; r.WaitProbability != e.WaitProbability || math.Abs(r.MeanWaitSeconds-2.5*e.MeanWaitSeconds) > 1e-12 {
			t.Errorf("%d workers: P(wait) %v, mean wait %v; want %v, 2.5 × %v", r.Workers, r.WaitProbability, r.MeanWaitSeconds, e.WaitProbability, e.MeanWaitSeconds)
		}
	}
	if same < 4 {
		t.Errorf("the two Erlang tables share %d pools, want at least 4", same)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := plannerDefault()
	tests := []struct {
		name   string
		edit   func(*PlanInput)
		fields []string
	}{
		{"valid", func(*PlanInput) {}, nil},
		{"valid with service time", func(in *PlanInput) { in.PerWorker, in.ServiceTime, in.Concurrency = 0, 0.2, 4 }, nil},
		{"service time cv 2", func(in *PlanInput) { in.ServiceTimeCV = 2 }, nil},
		{"negative service time cv", func(in *PlanInput) { in.ServiceTimeCV = -1 }, []string{FieldServiceTimeCV}},
		{"NaN service time cv", func(in *PlanInput) { in.ServiceTimeCV = math.NaN() }, []string{FieldServiceTimeCV}},
		{"service time cv past the bound", func(in *PlanInput) { in.ServiceTimeCV = MaxServiceTimeCV + 1 }, []string{FieldServiceTimeCV}},
		{"negative arrivals", func(in *PlanInput) { in.ArrivalRate = -1 }, []string{FieldArrivalRate}},
		{"NaN arrivals", func(in *PlanInput) { in.ArrivalRate = math.NaN() }, []string{FieldArrivalRate}},
		{"infinite arrivals", func(in *PlanInput) { in.ArrivalRate = math.Inf(1) }, []string{FieldArrivalRate}},
		{"negative workers", func(in *PlanInput) { in.Workers = -1 }, []string{FieldWorkers}},
		{"zero throughput", func(in *PlanInput) { in.PerWorker = 0 }, []string{FieldPerWorker}},
		{"negative throughput", func(in *PlanInput) { in.PerWorker = -2 }, []string{FieldPerWorker}},
		{"both throughput and service time", func(in *PlanInput) { in.ServiceTime = 0.2 }, []string{FieldPerWorker}},
		{"negative service time", func(in *PlanInput) { in.PerWorker, in.ServiceTime = 0, -1 }, []string{FieldServiceTime}},
		{"concurrency with per-worker", func(in *PlanInput) { in.Concurrency = 4 }, []string{FieldConcurrency}},
		{"negative concurrency", func(in *PlanInput) { in.Concurrency = -1 }, []string{FieldConcurrency}},
		{"negative backlog", func(in *PlanInput) { in.Backlog = -1 }, []string{FieldBacklog}},
		{"no drain target", func(in *PlanInput) { in.DrainTarget = 0 }, []string{FieldDrainTarget}},
		{"utilisation zero", func(in *PlanInput) { in.Utilization = 0 }, []string{FieldUtilization}},
		{"utilisation above one", func(in *PlanInput) { in.Utilization = 1.01 }, []string{FieldUtilization}},
		{"utilisation as a percent", func(in *PlanInput) { in.Utilization = 80 }, []string{FieldUtilization}},
		{"utilisation one is allowed", func(in *PlanInput) { in.Utilization = 1 }, nil},
		{"negative burst", func(in *PlanInput) { in.BurstPercent = -5 }, []string{FieldBurstPercent}},
		{"overhead of 100 %", func(in *PlanInput) { in.OverheadPercent = 100 }, []string{FieldOverheadPercent}},
		{"negative start delay", func(in *PlanInput) { in.StartDelay = -1 }, []string{FieldStartDelay}},
		{"negative safety", func(in *PlanInput) { in.SafetyWorkers = -1 }, []string{FieldSafetyWorkers}},
		{"negative cap", func(in *PlanInput) { in.Cap = -1 }, []string{FieldCap}},
		{"negative latency target", func(in *PlanInput) { in.LatencyTarget = -1 }, []string{FieldLatencyTarget}},
		{"tiny horizon", func(in *PlanInput) { in.Horizon = 0.5 }, []string{FieldHorizon}},
		{"every problem at once", func(in *PlanInput) {
			in.ArrivalRate, in.PerWorker, in.Utilization, in.Cap = -1, 0, 2, -3
		}, []string{FieldArrivalRate, FieldPerWorker, FieldUtilization, FieldCap}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := ok
			tt.edit(&in)
			err := in.Validate()
			var got []string
			for _, fe := range FieldErrors(err) {
				got = append(got, fe.Field)
				if !strings.HasPrefix(fe.Error(), fe.Field+": ") || fe.Message == "" {
					t.Errorf("error %q does not lead with its field", fe.Error())
				}
			}
			if !slices.Equal(got, tt.fields) {
				t.Errorf("fields %v, want %v (error: %v)", got, tt.fields, err)
			}
			if (err == nil) != (tt.fields == nil) {
				t.Errorf("Validate() = %v", err)
			}
			_, planErr := NewPlan(in)
			if (planErr == nil) != (err == nil) || len(FieldErrors(planErr)) != len(tt.fields) {
				t.Errorf("NewPlan error %v, want the Validate errors %v", planErr, err)
			}
			var fe *FieldError
			if err != nil && !errors.As(planErr, &fe) {
				t.Errorf("errors.As(NewPlan error, *FieldError) fails: %v", planErr)
			}
		})
	}
}

// checkPlan asserts what every plan must satisfy, whatever its input.
func checkPlan(t testing.TB, in PlanInput, p Plan) {
	t.Helper()
	if _, err := json.Marshal(p); err != nil {
		t.Fatalf("plan does not encode as JSON: %v", err)
	}
	if path, ok := allFinite(reflect.ValueOf(p), "plan"); !ok {
		t.Fatalf("%s is not finite", path)
	}
	want := max(p.DrainFloor, p.UtilizationFloor)
	if p.WaitFloor != nil {
		want = max(want, *p.WaitFloor)
	}
	if in.LatencyTarget == 0 && p.WaitFloor != nil {
		t.Errorf("wait floor %d without a latency target", *p.WaitFloor)
	}
	if p.RecommendedWorkers != want+in.SafetyWorkers {
		t.Errorf("recommended %d, want max of floors %d + %d safety", p.RecommendedWorkers, want, in.SafetyWorkers)
	}
	switch {
	case in.Cap > 0 && p.PlannedWorkers > in.Cap:
		t.Errorf("planned %d exceeds the cap %d", p.PlannedWorkers, in.Cap)
	case p.Capped != (in.Cap > 0 && p.RecommendedWorkers > in.Cap):
		t.Errorf("capped %v with recommended %d and cap %d", p.Capped, p.RecommendedWorkers, in.Cap)
	case p.PlannedWorkers != p.RecommendedWorkers && !p.Capped:
		t.Errorf("planned %d differs from recommended %d without a cap", p.PlannedWorkers, p.RecommendedWorkers)
	}
	if p.Queueing.Workers != p.PlannedWorkers {
		t.Errorf("queueing at %d workers, planned %d", p.Queueing.Workers, p.PlannedWorkers)
	}

	// The floors are the smallest counts meeting their rules.
	lam, mu, q, T := p.ModeledArrivalRate, p.EffectivePerWorker, p.BacklogAtStart, p.Inputs.DrainTarget
	const tol = 1e-9
	if f := p.DrainFloor; f < math.MaxInt32 && mu > 0 {
		need := lam + q/T
		if float64(f)*mu < need*(1-tol) || (f > 0 && float64(f-1)*mu >= need*(1+tol)) {
			t.Errorf("drain floor %d is not the least c with c·%v ≥ %v", f, mu, need)
		}
	}
	if f, u := p.UtilizationFloor, p.Inputs.Utilization; f < math.MaxInt32 && mu > 0 {
		if float64(f)*mu*u < lam*(1-tol) || (f > 0 && float64(f-1)*mu*u >= lam*(1+tol)) {
			t.Errorf("utilisation floor %d is not the least c with c·%v·%v ≥ %v", f, mu, u, lam)
		}
	}

	// More workers never drain slower.
	prev := math.Inf(1)
	for _, r := range p.Sensitivity {
		d := derefOr(r.DrainSeconds, math.Inf(1))
		if d > prev {
			t.Errorf("sensitivity: %d workers drain in %v, longer than one fewer (%v)", r.Workers, d, prev)
		}
		prev = d
	}
	if len(p.Sensitivity) != sensitivityBelow+sensitivityAbove+1 {
		t.Errorf("sensitivity has %d rows", len(p.Sensitivity))
	}

	// The burn-down spans the horizon, in order, never below zero.
	bd := p.BurnDown
	if len(bd) < 2 || bd[0].T != 0 || bd[len(bd)-1].T != sig12(p.Inputs.Horizon) {
		t.Fatalf("burn-down does not span [0, %v]: %v", p.Inputs.Horizon, bd)
	}
	if bd[0].Backlog != sig12(in.Backlog) {
		t.Errorf("burn-down starts at %v, want the backlog %v", bd[0].Backlog, in.Backlog)
	}
	for i, b := range bd {
		if b.Backlog < 0 || (i > 0 && !(b.T > bd[i-1].T)) {
			t.Fatalf("burn-down sample %d: %+v after %+v", i, b, bd[max(0, i-1)])
		}
	}
	if len(bd) > burnDownSteps+5 {
		t.Errorf("burn-down has %d samples", len(bd))
	}
	for _, r := range p.ErlangTable {
		if !(r.Utilization < 1) || r.WaitProbability < 0 || r.WaitProbability > 1 {
			t.Errorf("Erlang row %+v", r)
		}
	}
	if p.PlanPoints[0].Point != PointCurrent || len(p.Checkpoints) == 0 || p.Warnings == nil {
		t.Errorf("plan points %v, %d checkpoints, warnings %v", p.PlanPoints, len(p.Checkpoints), p.Warnings)
	}
}

// allFinite walks a value and reports the first NaN or Inf it holds.
func allFinite(v reflect.Value, path string) (string, bool) {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		return path, !math.IsNaN(f) && !math.IsInf(f, 0)
	case reflect.Pointer:
		if v.IsNil() {
			return "", true
		}
		return allFinite(v.Elem(), path)
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if p, ok := allFinite(v.Field(i), path+"."+v.Type().Field(i).Name); !ok {
				return p, false
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			if p, ok := allFinite(v.Index(i), fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
	}
	return "", true
}

// randomInput draws a valid input over wide but realistic ranges.
func randomInput(r *rand.Rand) PlanInput {
	in := PlanInput{
		ArrivalRate:     math.Round(r.Float64()*2000*100) / 100,
		Workers:         r.IntN(300),
		Backlog:         math.Floor(r.Float64() * 1e6),
		DrainTarget:     float64(1 + r.IntN(7200)),
		Utilization:     0.05 + 0.95*r.Float64(),
		BurstPercent:    float64(r.IntN(5)) * 25,
		OverheadPercent: float64(r.IntN(4)) * 10,
		StartDelay:      float64(r.IntN(4)) * 60,
		SafetyWorkers:   r.IntN(3),
	}
	if r.IntN(2) == 0 {
		in.PerWorker = 0.1 + r.Float64()*50
	} else {
		in.ServiceTime = 0.005 + r.Float64()*5
		in.Concurrency = 1 + r.IntN(8)
	}
	if r.IntN(2) == 0 {
		in.Cap = 1 + r.IntN(500)
	}
	if r.IntN(2) == 0 {
		in.LatencyTarget = 0.001 + r.Float64()*10
	}
	return in
}

func TestPlanProperties(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 0xc0ffee))
	for i := range 300 {
		in := randomInput(r)
		t.Run(fmt.Sprintf("case %d", i), func(t *testing.T) {
			p := mustPlan(t, in)

			more := in
			more.ArrivalRate = in.ArrivalRate*(1+r.Float64()) + r.Float64()
			if pm := mustPlan(t, more); pm.RecommendedWorkers < p.RecommendedWorkers {
				t.Errorf("arrivals %v → %v lowered the recommendation %d → %d",
					in.ArrivalRate, more.ArrivalRate, p.RecommendedWorkers, pm.RecommendedWorkers)
			}

			bigger := in
			bigger.Workers = in.Workers + 1 + r.IntN(50)
			pb := mustPlan(t, bigger)
			if d0, d1 := derefOr(p.Current.DrainSeconds, math.Inf(1)), derefOr(pb.Current.DrainSeconds, math.Inf(1)); d1 > d0 {
				t.Errorf("workers %d → %d lengthened the current drain %v → %v", in.Workers, bigger.Workers, d0, d1)
			}
			if pb.RecommendedWorkers > p.RecommendedWorkers {
				t.Errorf("more current workers raised the recommendation %d → %d", p.RecommendedWorkers, pb.RecommendedWorkers)
			}
		})
	}
}

// TestPlanExtremes plans inputs at the edges of what Validate accepts.
func TestPlanExtremes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   PlanInput
	}{
		{"largest load on the slowest worker", PlanInput{ArrivalRate: MaxRate, PerWorker: MinPerWorker,
			OverheadPercent: 99.999, Backlog: MaxBacklog, DrainTarget: MinDrainTarget, Utilization: 1e-9,
			Workers: MaxWorkers, SafetyWorkers: MaxWorkers, Cap: MaxWorkers, LatencyTarget: 1e-300}},
		{"fastest service, widest concurrency", PlanInput{ArrivalRate: MaxRate, ServiceTime: MinServiceTime,
			Concurrency: MaxConcurrency, Workers: MaxWorkers, DrainTarget: MaxSeconds, Utilization: 1,
			StartDelay: MaxSeconds, Horizon: MaxSeconds, LatencyTarget: MaxSeconds}},
		{"slowest service", PlanInput{ArrivalRate: 1e-300, ServiceTime: MaxServiceTime, Backlog: 1,
			DrainTarget: MinDrainTarget, Utilization: 1, Cap: 1}},
		{"a pool near the Erlang limit", PlanInput{ArrivalRate: 9e6, PerWorker: 1, DrainTarget: 60,
			Utilization: 1, LatencyTarget: 0.001}},
		{"utilisation at one with exact load", PlanInput{ArrivalRate: 10, PerWorker: 1, DrainTarget: 60, Utilization: 1}},
		{"minimum horizon", PlanInput{ArrivalRate: 10, PerWorker: 1, Backlog: 1e6, DrainTarget: 1, Utilization: 0.5,
			Horizon: MinHorizon, StartDelay: 1e9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mustPlan(t, tt.in)
		})
	}
}

func FuzzNewPlan(f *testing.F) {
	// The planner's worked examples, the Erlang C example's queue, and an invalid input.
	f.Add(12.0, 8, 2.4, 0.0, 0, 18000.0, 1800.0, 0.8, 0.0, 0.0, 0.0, 0, 0, 0.0, 0.0)
	f.Add(20.0, 0, 2.0, 0.0, 0, 30000.0, 1200.0, 0.8, 25.0, 10.0, 0.0, 0, 14, 0.0, 0.0)
	f.Add(40.0, 0, 5.0, 0.0, 0, 0.0, 1800.0, 0.8, 0.0, 0.0, 0.0, 0, 0, 0.0, 0.0)
	f.Add(50.0, 10, 0.0, 0.2, 4, 500.0, 900.0, 0.8, 10.0, 5.0, 90.0, 1, 30, 0.01, 7200.0)
	f.Add(-1.0, -1, 0.0, 0.0, -1, -1.0, 0.0, 2.0, -1.0, 100.0, -1.0, -1, -1, -1.0, -1.0)
	f.Fuzz(func(t *testing.T, arrival float64, workers int, perWorker, service float64, concurrency int,
		backlog, drain, util, burst, overhead, delay float64, safety, limit int, latency, horizon float64) {
		in := PlanInput{
			ArrivalRate: arrival, Workers: workers, PerWorker: perWorker, ServiceTime: service,
			Concurrency: concurrency, Backlog: backlog, DrainTarget: drain, Utilization: util,
			BurstPercent: burst, OverheadPercent: overhead, StartDelay: delay, SafetyWorkers: safety,
			Cap: limit, LatencyTarget: latency, Horizon: horizon,
		}
		p, err := NewPlan(in)
		if verr := in.Validate(); (err == nil) != (verr == nil) {
			t.Fatalf("NewPlan error %v, Validate error %v", err, verr)
		}
		if err != nil {
			if len(FieldErrors(err)) == 0 {
				t.Fatalf("error without field errors: %v", err)
			}
			return
		}
		checkPlan(t, in, p)
	})
}

func BenchmarkNewPlan(b *testing.B) {
	tests := []struct {
		name string
		in   PlanInput
	}{
		{"planner example default", plannerDefault()},
		{"latency target, 100 workers", PlanInput{ArrivalRate: 400, ServiceTime: 0.2, Workers: 80, Backlog: 5000,
			DrainTarget: 900, Utilization: 0.8, LatencyTarget: 0.005}},
		{"latency target, 100,000 servers", PlanInput{ArrivalRate: 90_000, PerWorker: 1, Workers: 80_000,
			Backlog: 1e6, DrainTarget: 900, Utilization: 0.95, LatencyTarget: 0.001}},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := NewPlan(tt.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
