package web

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/queuechecker/queue-checker/internal/controller"
	"github.com/queuechecker/queue-checker/internal/controller/controllertest"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The groups of the tests: one that is short of workers, and one whose name
// needs escaping and whose queue does not answer.
const (
	groupBusy = "thumbnails"
	groupOdd  = `<b>"odd" & 'co'</b>`
)

var testStart = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func testGroups() []policy.Settings {
	return []policy.Settings{
		{Group: groupBusy, ServiceTime: 400 * time.Millisecond, Concurrency: 1, Latency: 30 * time.Second,
			DrainTime: 15 * time.Minute, Utilization: 0.8, Min: 2, Max: 40, Cap: 30, StartDelay: 90 * time.Second,
			StaleAfter: time.Minute},
		{Group: groupOdd, Throughput: 5, Latency: 2 * time.Minute, Min: 1, Max: 10, StaleAfter: time.Minute},
	}
}

// world is a small scripted queue for the fake observer: the busy group's
// backlog grows by step messages each cycle and its fleet follows the
// desired count one cycle late; the odd group's only queue fails.
type world struct {
	mu      sync.Mutex
	backlog int64
	step    int64
	desired int
}

func (w *world) observe(_ context.Context, now time.Time) ([]model.Observation, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.backlog += w.step
	age := 12.5 + float64(w.backlog)/100
	busy := model.Observation{
		Sample: model.GroupSample{Group: groupBusy, At: now, Visible: w.backlog, InFlight: int64(w.desired),
			Backlog: w.backlog + int64(w.desired), Queues: 1, Answered: 1,
			OldestAge: &model.Reading{Value: age, At: now},
			Polling:   model.Polling{Asked: 1, RequestsPerMinute: 12, MonthlyCost: 12 * 43800 * 0.4e-6}},
		Fleet: model.Fleet{Kind: "autoscaling", Name: "thumbnails-workers", At: now, Known: true,
			Desired: w.desired, Min: 2, Max: 40, InService: w.desired, Draining: 3},
	}
	odd := model.Observation{
		Sample: model.GroupSample{Group: groupOdd, At: now, Queues: 1, Answered: 0,
			Polling: model.Polling{Notices: []string{"region eu-west-1: 1 of 1 queues got no answer <in time>"}},
			Failures: []model.QueueFailure{{Queue: "odd<queue>", Region: "eu-west-1", Class: model.ErrClassClient,
				Message: `AccessDenied: <not allowed> & "denied"`}}},
		Fleet: model.Fleet{Kind: "ecs", Name: "odd", At: now, Err: errors.New("describe services: <timeout>")},
	}
	return []model.Observation{busy, odd}, nil
}

// actuator applies the decision to the world's fleet.
type worldActuator struct{ w *world }

func (a worldActuator) Apply(_ context.Context, d model.Decision, f model.Fleet) (model.Action, error) {
	if d.Group != groupBusy {
		return model.Action{}, errors.New("set desired count of <odd>: access denied")
	}
	a.w.mu.Lock()
	defer a.w.mu.Unlock()
	act := model.Action{Group: d.Group, MetricsPublished: 6, From: f.Desired, To: d.DesiredWorkers}
	if !d.Held && d.DesiredWorkers != f.Desired {
		a.w.desired = d.DesiredWorkers
		act.Scaled = true
	}
	return act, nil
}

// newTestController runs cycles of the scripted world, one every interval
// from testStart, and returns the controller and the time of the last cycle.
func newTestController(t *testing.T, cycles int, interval time.Duration) (*controller.Controller, time.Time) {
	t.Helper()
	w := &world{backlog: 2000, step: 150, desired: 4}
	c, err := controller.New(controller.Options{Groups: testGroups(), Observer: controllertest.NewObserver(w.observe),
		Actuator: worldActuator{w: w}})
	if err != nil {
		t.Fatalf("new controller: %v", err)
	}
	now := testStart
	for i := range cycles {
		now = testStart.Add(time.Duration(i) * interval)
		_, _ = c.RunOnce(context.Background(), now)
	}
	return c, now
}

// newTestHandler serves the pages of a controller, with the clock stopped
// at now.
func newTestHandler(c *controller.Controller, now time.Time) http.Handler {
	return Handler(Options{Controller: c, Gatherer: prometheus.NewRegistry(), Interval: 5 * time.Second,
		Now: func() time.Time { return now }})
}

func get(t testing.TB, h http.Handler, target string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec
}
