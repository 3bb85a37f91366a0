package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/decisionreport"
	"github.com/queuechecker/queue-checker/internal/model"
)

// TestE2EMeasuredServiceTime measures a fleet against moto, through the
// daemon's own wiring (a configuration file read by loadConfig, assemble,
// controller.New, RunOnce), with a simulated clock in the past.
//
// Each group drains its own queue holding 12 messages in flight (received,
// not deleted, hidden for an hour) and nothing visible, read by an Auto
// Scaling group of 20 InService instances that the checker reads and never
// scales. Into AWS/SQS the test plants, for each simulated minute, the
// NumberOfMessagesDeleted Sum of a fleet whose service time is S = 400 ms:
// by Little's law 12 in flight ÷ 0.4 s = 30 msg/s, Sum 1800 a minute,
// stamped with the minute's start and put a minute after the minute ends,
// as late as CloudWatch is. Every 5 simulated seconds over 8 minutes the
// checker decides; the decisions are read as `once --output json` prints
// them.
//
// The expectations come from the planted values: the measured service time
// is within 5 % of S and the per-worker throughput within 5 % of 1 ÷ S
// (concurrency 1, the fleet never saturated) from the first minute the
// poller has read on; nothing is measured before; the measurement sizes the
// fleet ("measured") once three planted minutes have been read, the
// confidence the policy trusts (MeasuredConfidence, "about three good
// minutes that agree"); and the reason names the measured time, the minutes
// behind it and the configured one. Two controls run beside it in the same
// daemon, on identical queues and fleets: a group configured with S itself
// sizes with the measurement and says that it agrees, and a group with
// workers.learn: off measures nothing (every measured value null, sizing
// with the configured time). All three end at the same size, the 80 %
// utilisation floor of 12 in flight: the offered load λ·S is the in-flight
// count whatever the per-worker rate. The test logs slow-prior's sizing for
// two minutes from the switch, where it is not.
func TestE2EMeasuredServiceTime(t *testing.T) {
	f := direct(t)
	moto := awstest.Shared(t)
	ctx := context.Background()
	const (
		inFlight    = 12
		instances   = 20 // more than in flight: no message waits for a slot
		serviceTime = 400 * time.Millisecond
		interval    = 5 * time.Second
		simulated   = 8 * time.Minute
		// publishLag is how long after its minute ends a datapoint is put.
		publishLag = time.Minute
		tolerance  = 0.05
		// trustedMinutes is how many good minutes reach MeasuredConfidence.
		trustedMinutes = 3
	)
	s := serviceTime.Seconds()
	deletedSum := inFlight / s * 60 // messages deleted a minute: 1800

	type group struct {
		name       string
		configured time.Duration
		learn      string // "" leaves the default (act, for the model policy)
		queue      testQueue
		queueName  string
		asg        string
	}
	groups := []*group{
		{name: "slow-prior", configured: time.Second},
		{name: "right-prior", configured: serviceTime},
		{name: "learn-off", configured: time.Second, learn: "off"},
	}
	var doc strings.Builder
	doc.WriteString(motoConfigHead(interval, moto.URL))
	for _, g := range groups {
		g.queue = makeQueue(t, f, queueSpec{region: east, inFlight: inFlight})
		g.queueName = g.queue.name()
		g.asg = makeASG(t, f, 0, 100, instances)
		if n := asgInService(t, f, g.asg); n != instances {
			t.Fatalf("%s: %d instances in service, want %d", g.asg, n, instances)
		}
		learn := ""
		if g.learn != "" {
			learn = ", learn: " + g.learn
		}
		fmt.Fprintf(&doc, "  - name: %s\n", g.name)
		fmt.Fprintf(&doc, "    queues: [{url: %q, region: %s}]\n", g.queue.url, east)
		fmt.Fprintf(&doc, "    oldest_age: {cloudwatch: true}\n")
		fmt.Fprintf(&doc, "    workers: {service_time: %s%s}\n", g.configured, learn)
		fmt.Fprintf(&doc, "    target: {latency: 10s}\n")
		fmt.Fprintf(&doc, "    fleet: {autoscaling_group: {name: %s, region: %s}, min: 1, max: 100}\n", g.asg, east)
		fmt.Fprintf(&doc, "    actions: {set_desired_capacity: false}\n")
	}
	path := filepath.Join(t.TempDir(), "checker.yaml")
	writeFile(t, path, doc.String())

	// The wiring of `checker run` and `checker once`.
	ctrl := wireDaemon(ctx, t, path, zaptest.NewLogger(t)).ctrl

	// The simulated clock (pastClock) runs 2.5 s into a minute.
	t0 := pastClock(interval)
	m0 := t0.Truncate(time.Minute)
	var (
		planted  int // minutes m0, m0+1, … put so far
		seen     int // of them, those the poller had read: it reads at t0 and once a minute after
		switched time.Time
		last     map[string]model.Decision
		lastRaw  map[string]map[string]any
		trace    []string // slow-prior's sizing for two minutes from the switch
	)
	for now := t0; now.Before(t0.Add(simulated)); now = now.Add(interval) {
		for {
			m := m0.Add(time.Duration(planted) * time.Minute)
			if m.Add(time.Minute + publishLag).After(now) {
				break
			}
			for _, g := range groups {
				putSQSMetric(t, f, g.queueName, "NumberOfMessagesDeleted", m, deletedSum)
			}
			planted++
		}
		if now.Sub(t0)%time.Minute == 0 {
			seen = planted
		}
		ds, err := ctrl.RunOnce(ctx, now)
		if err != nil {
			t.Fatalf("%s: RunOnce: %v", now.Sub(t0), err)
		}
		last, lastRaw = printedDecisions(t, ds)
		at := fmt.Sprintf("%s (%d minutes read)", now.Sub(t0), seen)
		for _, g := range groups {
			d, ok := last[g.name]
			if !ok {
				t.Fatalf("%s: no decision for %s", at, g.name)
			}
			raw := lastRaw[g.name]["measured"].(map[string]any)
			if d.InFlight != inFlight || d.Visible != 0 || d.InServiceWorkers != instances {
				t.Fatalf("%s: %s saw %d in flight, %d visible, %d in service; planted %d, 0, %d",
					at, g.name, d.InFlight, d.Visible, d.InServiceWorkers, inFlight, instances)
			}
			m := d.Measured
			if math.Abs(m.ConfiguredServiceTimeSeconds-g.configured.Seconds()) > 1e-9 {
				t.Errorf("%s: %s configured_service_time_seconds = %v, want %v", at, g.name, m.ConfiguredServiceTimeSeconds, g.configured.Seconds())
			}
			if g.learn == "off" || seen == 0 {
				for _, k := range []string{"service_time_seconds", "per_worker_throughput", "confidence"} {
					if v := raw[k]; v != nil {
						t.Errorf("%s: %s measured.%s = %v, want null (learn %q, %d minutes read)", at, g.name, k, v, g.learn, seen)
					}
				}
				if m.SizingWith != "configured" {
					t.Errorf("%s: %s sizing_with %q, want configured", at, g.name, m.SizingWith)
				}
				if g.learn == "off" {
					if r := reasonWith(d, "measured"); r != "" {
						t.Errorf("%s: %s (learn: off) gives the reason %q", at, g.name, r)
					}
				}
				continue
			}
			if m.ServiceTimeSeconds == nil || m.PerWorkerThroughput == nil || m.Confidence == nil {
				t.Fatalf("%s: %s measured nothing after %d planted minutes were read: %s", at, g.name, seen, mustJSON(raw))
			}
			if got := *m.ServiceTimeSeconds; math.Abs(got/s-1) > tolerance {
				t.Errorf("%s: %s measured service time %v s, planted %v s (more than %v off)", at, g.name, got, s, tolerance)
			}
			if got := *m.PerWorkerThroughput; math.Abs(got*s-1) > tolerance {
				t.Errorf("%s: %s measured %v msg/s per worker, planted 1 ÷ %v s = %v", at, g.name, got, s, 1/s)
			}
			wantWith := "configured"
			if seen >= trustedMinutes {
				wantWith = "measured"
			}
			if m.SizingWith != wantWith {
				t.Errorf("%s: %s sizing_with %q at confidence %v, want %q", at, g.name, m.SizingWith, *m.Confidence, wantWith)
			}
			if g.name == "slow-prior" && m.SizingWith == "measured" && switched.IsZero() {
				switched = now
			}
			if g.name == "slow-prior" && !switched.IsZero() && now.Sub(switched) <= 2*time.Minute {
				trace = append(trace, fmt.Sprintf("%s %d %d %.1f", now.Sub(t0), d.RecommendedWorkers, d.DesiredWorkers, *d.ArrivalRate))
				// The switch to the measured rate moves the arrival
				// estimate's completions to it at once: the fleet is
				// never asked to go below the messages it holds.
				if d.DesiredWorkers < int(inFlight) {
					t.Errorf("%s: slow-prior desired %d at the switch to the measured rate, below the %d messages in flight", at, d.DesiredWorkers, int(inFlight))
				}
			}
		}
	}
	if seen < trustedMinutes+2 {
		t.Fatalf("only %d planted minutes read by the end: the run is too short", seen)
	}
	t.Logf("planted %d minutes, %d read by the poller; sizing with the measurement from %s on", planted, seen, switched.Sub(t0))

	// The last decisions: the measurement, its reasons, and what it did to
	// the sizing.
	slow, right, off := last["slow-prior"], last["right-prior"], last["learn-off"]
	for _, d := range []model.Decision{slow, right} {
		if c := *d.Measured.Confidence; c < 0.5 {
			t.Errorf("%s: confidence %v, want >= 0.5", d.Group, c)
		}
		if d.Measured.Stuck {
			t.Errorf("%s: stuck, with 30 msg/s deleted", d.Group)
		}
	}
	// seconds formats a time below a second in ms with 4 digits at most.
	re := regexp.MustCompile(`^service time measured ([0-9.]+) ms over the last ([0-9]+) minutes, configured 1 s: sizing with ([0-9.]+) msg/s per worker, measured$`)
	r := reasonWith(slow, "service time measured")
	sub := re.FindStringSubmatch(r)
	if sub == nil {
		t.Errorf("slow-prior: no reason %v among %q", re, slow.Reasons)
	} else {
		ms, _ := strconv.ParseFloat(sub[1], 64)
		n, _ := strconv.Atoi(sub[2])
		pw, _ := strconv.ParseFloat(sub[3], 64)
		if math.Abs(ms/1000/s-1) > tolerance || n != seen || math.Abs(pw*s-1) > tolerance {
			t.Errorf("slow-prior: reason %q; want about %v ms over the last %d minutes (those read), about %v msg/s per worker",
				r, s*1000, seen, 1/s)
		}
	}
	re = regexp.MustCompile(`^service time measured ([0-9.]+) ms over the last ([0-9]+) minutes agrees with the configured 400 ms$`)
	r = reasonWith(right, "service time measured")
	if sub := re.FindStringSubmatch(r); sub == nil {
		t.Errorf("right-prior: no reason %v among %q", re, right.Reasons)
	} else if ms, _ := strconv.ParseFloat(sub[1], 64); math.Abs(ms/1000/s-1) > tolerance {
		t.Errorf("right-prior: reason %q; want about %v ms", r, s*1000)
	}
	// The sizing: the offered load λ·S is the in-flight count whatever the
	// per-worker rate (the arrival estimate is completions by Little's law
	// at the same rate), so all three groups settle at the 80 % utilisation
	// floor of 12 in flight: ceil(12 ÷ 0.8) = 15.
	want := int(math.Ceil(inFlight / model.DefaultUtilization))
	for _, d := range []model.Decision{slow, right, off} {
		if d.RecommendedWorkers != want {
			t.Errorf("%s: recommended %d workers, want ceil(%d in flight ÷ %v) = %d; reasons %q",
				d.Group, d.RecommendedWorkers, inFlight, model.DefaultUtilization, want, d.Reasons)
		}
	}
	t.Logf("slow-prior around the switch (at, recommended, desired, arrival msg/s): %s", strings.Join(trace, "; "))
}

// printedDecisions prints ds as `checker once --output json` does and reads
// the output back, typed and raw, by group.
func printedDecisions(t testing.TB, ds []model.Decision) (map[string]model.Decision, map[string]map[string]any) {
	t.Helper()
	var out strings.Builder
	if err := decisionreport.Write(&out, "json", ds); err != nil {
		t.Fatal(err)
	}
	var typed struct {
		Decisions []model.Decision `json:"decisions"`
	}
	var raw struct {
		Decisions []map[string]any `json:"decisions"`
	}
	if err := json.Unmarshal([]byte(out.String()), &typed); err != nil {
		t.Fatalf("decisions are not JSON: %v\n%s", err, out.String())
	}
	if err := json.Unmarshal([]byte(out.String()), &raw); err != nil {
		t.Fatalf("decisions are not JSON: %v\n%s", err, out.String())
	}
	rawBy := make(map[string]map[string]any, len(raw.Decisions))
	for _, d := range raw.Decisions {
		name, _ := d["group"].(string)
		rawBy[name] = d
	}
	return byGroup(typed.Decisions), rawBy
}

// reasonWith returns the first of d's reasons containing s, or "".
func reasonWith(d model.Decision, s string) string {
	for _, r := range d.Reasons {
		if strings.Contains(r, s) {
			return r
		}
	}
	return ""
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
