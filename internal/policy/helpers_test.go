package policy

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// base is a group of one-message-at-a-time workers taking 1 s per message,
// promising 30 s.
func base() Settings {
	return Settings{
		Group:       "g",
		ServiceTime: time.Second,
		Concurrency: 1,
		Latency:     30 * time.Second,
		Min:         1,
		Max:         500,
		StaleAfter:  15 * time.Second,
	}
}

// q is a complete sample of one queue; Backlog counts visible and in-flight.
func q(visible, inFlight int64) model.GroupSample {
	return model.GroupSample{Group: "g", Visible: visible, InFlight: inFlight, Backlog: visible + inFlight, Queues: 1, Answered: 1}
}

// asg is an Auto Scaling group read with these counts, its MaxSize far
// above them (a MaxSize of 0 would hold it at zero).
func asg(desired, inService, pending int) model.Fleet {
	return model.Fleet{Kind: "autoscaling", Name: "w", Known: true, Desired: desired, InService: inService, Pending: pending, Max: asgMaxSize}
}

// asgMaxSize is the MaxSize of the test fleets: no test's count reaches it.
const asgMaxSize = 100_000

// harness drives Decide over a scripted sequence with a fake clock. With
// follow set, the fleet takes each decision's desired count at once, all in
// service.
type harness struct {
	t      *testing.T
	s      Settings
	st     State
	now    time.Time
	fleet  model.Fleet
	follow bool
	log    []model.Decision
}

func newHarness(t *testing.T, s Settings, fleet model.Fleet) *harness {
	return &harness{t: t, s: s, now: t0, fleet: fleet, follow: true}
}

// step advances the clock by dt, stamps the sample with the new time and
// decides.
func (h *harness) step(dt time.Duration, smp model.GroupSample) model.Decision {
	h.t.Helper()
	h.now = h.now.Add(dt)
	smp.At = h.now
	d := Decide(h.s, smp, h.fleet, &h.st, h.now)
	checkDecision(h.t, h.s, h.fleet, d)
	if h.follow && h.fleet.Known {
		h.fleet.Desired, h.fleet.InService, h.fleet.Pending = d.DesiredWorkers, d.DesiredWorkers, 0
	}
	h.log = append(h.log, d)
	return d
}

// checkDecision asserts what holds for every decision: the bounds, finite
// numbers, a JSON form with every key of the contract.
func checkDecision(t *testing.T, s Settings, f model.Fleet, d model.Decision) {
	t.Helper()
	// The ceilings are never exceeded (max, cap, the group's own max: an
	// Auto Scaling group's MaxSize, 0 included; another fleet's when it
	// reports one); the floors (min, the group's own min) hold below the
	// lowest ceiling, and a floor above it gives the ceiling.
	ceiling := math.MaxInt
	for _, hi := range []int{s.Max, s.Cap} {
		if hi > 0 {
			ceiling = min(ceiling, hi)
		}
	}
	floor := max(s.Min, 0)
	if f.Known {
		if f.Max > 0 || f.Kind == model.KindAutoScaling {
			ceiling = min(ceiling, max(f.Max, 0))
		}
		floor = max(floor, f.Min)
	}
	if d.DesiredWorkers > ceiling {
		t.Fatalf("desired %d above the ceiling %d (max %d, cap %d, the group's max %d)", d.DesiredWorkers, ceiling, s.Max, s.Cap, f.Max)
	}
	if d.DesiredWorkers < min(floor, ceiling) {
		t.Fatalf("desired %d below the floor %d (min %d, the group's min %d; ceiling %d)", d.DesiredWorkers, min(floor, ceiling), s.Min, f.Min, ceiling)
	}
	if d.RecommendedWorkers < 0 {
		t.Fatalf("recommended %d < 0", d.RecommendedWorkers)
	}
	if d.DrainingWorkers < 0 || !f.Known && d.DrainingWorkers != 0 {
		t.Fatalf("draining %d of a fleet read %t with %d draining", d.DrainingWorkers, f.Known, f.Draining)
	}
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("decision does not encode: %v (%+v)", err, d)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range decisionKeys {
		if _, ok := m[k]; !ok {
			t.Fatalf("key %q missing from %s", k, raw)
		}
	}
	if _, ok := m["reasons"].([]any); !ok {
		t.Fatalf("reasons is not a list: %s", raw)
	}
	if !slices.Contains(model.Diagnoses, d.Diagnosis) {
		t.Fatalf("diagnosis %q is not a known state", d.Diagnosis)
	}
	for _, p := range []*float64{d.ArrivalRate, d.Utilization, d.DrainSeconds, d.OldestAgeSeconds} {
		if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0) || *p < 0) {
			t.Fatalf("non-finite or negative value in %s", raw)
		}
	}
	if d.Held && d.HoldReason == "" {
		t.Fatalf("held without a reason: %s", raw)
	}
}

// decisionKeys are the JSON keys of issue 4's contract.
var decisionKeys = []string{"group", "at", "visible", "in_flight", "delayed", "backlog",
	"current_workers", "in_service_workers", "pending_workers", "arrival_rate",
	"backlog_per_worker", "target_backlog_per_worker", "floors", "recommended_workers",
	"desired_workers", "capped", "held", "hold_reason", "partial", "diagnosis", "reasons",
	"utilization", "drain_seconds", "oldest_age_seconds", "oldest_age_at", "measured"}

// hasReason reports whether some reason contains every fragment.
func hasReason(d model.Decision, fragments ...string) bool {
	for _, r := range d.Reasons {
		all := true
		for _, f := range fragments {
			if !strings.Contains(r, f) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// ewma is the documented smoothing step: α = 1 − exp(−Δt/τ).
func ewma(prev, obs, dt, tau float64) float64 {
	return prev + (1-math.Exp(-dt/tau))*(obs-prev)
}

// dumpBound is the documented bound an observation may enter the EWMA at:
// the reference (the larger of the last observation and the estimate) plus
// three standard deviations of counting noise, √((reference + completions)/Δt).
// uncertain is the most Little's law over the interval can be wrong by: half
// the change of the busy slots times the per-slot rate.
func dumpBound(ref, completions, dt, uncertain float64) float64 {
	return ref + 3*math.Sqrt((ref+completions)/dt) + uncertain
}

func reading(v float64, at time.Time) *model.Reading { return &model.Reading{Value: v, At: at} }

func intp(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// settle steps smp every tick until the arrival estimate's observations
// cover the arrival smoothing time. From then on the estimate is the EWMA
// the tests' ewma computes; until then it is the observations' mean.
func (h *harness) settle(smp model.GroupSample) model.Decision {
	h.t.Helper()
	tau := h.s.ArrivalSmoothing
	if tau <= 0 {
		tau = model.DefaultArrivalSmoothing
	}
	var d model.Decision
	for covered := time.Duration(0); covered < tau; covered += tick {
		d = h.step(tick, smp)
	}
	return d
}
