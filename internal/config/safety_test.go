package config

import (
	"strings"
	"testing"
)

func TestParseSafetyKeys(t *testing.T) {
	t.Parallel()
	doc := `
groups:
  - name: a
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/1/a"}]
    workers: {service_time: 1s}
    target: {latency: 1m}
    fleet: {autoscaling_group: {name: w, region: us-east-1}, min: 0, max: 9, paused: true, scale_in: false, pin: 0}
  - name: b
    queues: [{url: "https://sqs.us-east-1.amazonaws.com/1/a", shared: true}]
    workers: {service_time: 1s}
    target: {latency: 1m}
    fleet: {max: 9, fixed_workers: 3}
    actions: {cloudwatch_metrics: {}}
`
	c, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	a, b := c.Groups[0].Fleet, c.Groups[1]
	if !a.Paused || a.ScaleIn || a.Pin == nil || *a.Pin != 0 {
		t.Errorf("fleet = paused %v, scale_in %v, pin %v; want true, false, 0", a.Paused, a.ScaleIn, a.Pin)
	}
	if !b.Queues[0].Shared || b.Fleet.FixedWorkers != 3 || !b.Fleet.ScaleIn || b.Fleet.Pin != nil {
		t.Errorf("group b = %+v, want a shared queue, 3 fixed workers, scale_in by default, no pin", b)
	}

	_, err = Parse([]byte(strings.Replace(doc, "pin: 0", "pin: 2.5", 1)))
	if err == nil || !strings.Contains(err.Error(), "groups[0].fleet.pin: expected a whole number") {
		t.Errorf("pin 2.5: %v, want an error at groups[0].fleet.pin", err)
	}
}
