package sim

import (
	"testing"
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

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
