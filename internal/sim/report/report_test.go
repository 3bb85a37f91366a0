package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/sim"
)

func TestSignedDollars(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    float64
		want string
	}{
		{12.5, "+$12.50"},
		{-3, "-$3.00"},
		{0, "$0.00"},
		{1234.567, "+$1,234.57"},
		{0.001, "< $0.01"}, // no sign before the "less than"
		{-0.001, "> -$0.01"},
	} {
		if got := SignedDollars(c.x); got != c.want {
			t.Errorf("SignedDollars(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}

func TestServiceDesc(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s    sim.Service
		want string
	}{
		{sim.Service{}, "exponential"},
		{sim.Service{Dist: sim.DistConstant}, "constant"},
		{sim.Service{Dist: sim.DistLognormal, CV: 2.5}, "lognormal (cv 2.5)"},
	} {
		if got := serviceDesc(c.s); got != c.want {
			t.Errorf("serviceDesc(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// The table's row of a policy costs its worker-seconds over the oracle's
// and its dollars beyond the oracle's; kill mode adds the duplicates.
func TestTable(t *testing.T) {
	t.Parallel()
	model, oracle := 1.5, 1.0 // dollars: 36,000 and 24,000 worker-seconds at $0.15 an hour
	rc := sim.RunConfig{
		World: sim.Config{Scenario: sim.Scenario{Name: "spike"}, Service: sim.Service{Mean: 200 * time.Millisecond},
			LatencyTarget: 10 * time.Second, Min: 1, Max: 9, Workers: 3, Seed: 7,
			ScaleIn: sim.ScaleInKill, VisibilityTimeout: 30 * time.Second},
		Duration:          time.Hour,
		WorkerCostPerHour: 0.15,
		RestartAt:         20 * time.Minute,
	}
	results := []sim.Result{
		{Policy: sim.PolicyModel, Scores: sim.Scores{WorkerSeconds: 36_000, Messages: 400, Duplicates: 4, SLOAttainment: 0.5}, Dollars: &model},
		{Policy: sim.PolicyOracle, Scores: sim.Scores{WorkerSeconds: 24_000, Messages: 400}, Dollars: &oracle},
		{Policy: sim.PolicyFixedSameCost, Scores: sim.Scores{WorkerSeconds: 36_000, Messages: 400}, Workers: 10},
	}
	var b strings.Builder
	if err := Table(&b, rc, results); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 10 && rows[f[0]] == nil { // the row, not the label below
			rows[f[0]] = f
		}
	}
	// policy slo mean p50 p99 max max-oldest worker-hours × dollars vs ...
	if m := rows[sim.PolicyModel]; m == nil || m[1] != "50.00%" || m[7] != "10.0" || m[8] != "1.50" || m[9] != "$1.50" || m[10] != "+$0.50" {
		t.Errorf("model row %q, want 50.00%%, 10.0 worker-hours, 1.50 × oracle, $1.50, +$0.50\n%s", m, out)
	}
	if o := rows[sim.PolicyOracle]; o == nil || o[8] != "1.00" || o[10] != "$0.00" {
		t.Errorf("oracle row %q, want 1.00 × oracle and $0.00 beyond it\n%s", o, out)
	}
	for _, want := range []string{
		"scenario spike over 1h0m0s:", "service 200ms exponential", "workers 1..9, starting at 3", "seed 7",
		"duplicate deliveries: model 4 (1.00%); oracle 0 (0.00%);",
		"the checker (model, backlog) restarts at 20m0s",
		"10 workers: " + sim.PolicyLabels[sim.PolicyFixedSameCost] + "\n", // a fixed fleet's legend gives its size
		"model            " + sim.PolicyLabels[sim.PolicyModel] + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := JSON(&b, []sim.Result{{Policy: sim.PolicyFixed, Scores: sim.Scores{Messages: 12}}}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []sim.Result `json:"results"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(got.Results) != 1 || got.Results[0].Policy != sim.PolicyFixed || got.Results[0].Messages != 12 {
		t.Errorf("read back %+v", got.Results)
	}
}
