package config

import (
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// PolicySettings maps the group to the policy's plain settings. interval is
// the sampling interval, from which target.stale_after defaults (3 ×
// interval) when it is 0.
func (g Group) PolicySettings(interval time.Duration) policy.Settings {
	return policy.Settings{
		Group:  g.Name,
		Policy: g.Target.Policy,

		ServiceTime: g.Workers.ServiceTime,
		Concurrency: g.Workers.Concurrency,
		Throughput:  g.Workers.Throughput,
		Learn:       g.Workers.Learn,
		FIFO:        g.allFIFO(),

		Latency:         g.Target.Latency,
		DrainTime:       g.Target.DrainTime,
		Utilization:     g.Target.Utilization,
		BurstReserve:    g.Target.BurstReserve,
		OverheadReserve: g.Target.OverheadReserve,
		SafetyWorkers:   g.Target.SafetyWorkers,

		Min: g.Fleet.Min,
		Max: g.Fleet.Max,
		Cap: g.Fleet.Cap,

		StartDelay:           g.Fleet.StartDelay,
		ScaleInStabilization: orOff(g.Fleet.ScaleInStabilization),
		Deadband:             orOff(g.Target.Deadband),
		MaxStepOut:           g.Target.MaxStepOut,
		StaleAfter:           g.Target.StaleAfterFor(interval),
		ArrivalSmoothing:     g.Target.ArrivalSmoothing,
		LatencyQuantile:      g.Target.LatencyQuantile,
		MetricStaleAfter:     g.OldestAge.StaleAfter,
		Forecast:             g.Forecast.settings(),

		Paused:     g.Fleet.Paused,
		ScaleInOff: !g.Fleet.ScaleIn,
		Pinned:     g.Fleet.Pin != nil,
		Pin:        pin(g.Fleet.Pin),
		Activation: g.Fleet.Activation,

		// The group's own price; Config.WorkerCostPerHour adds the default
		// of aws.worker_cost_per_hour.
		WorkerCostPerHour: pinFloat(g.Fleet.WorkerCostPerHour),
	}
}

func pinFloat(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func pin(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// orOff maps an explicit 0 of the configuration (defaults are already filled
// in) to the policy's "off", a negative value: the policy reads 0 as "use
// the default".
func orOff[T time.Duration | float64](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

// allFIFO reports whether every queue of the group is a FIFO queue: its
// name, the URL's last element, ends in .fifo (as SQS requires of FIFO
// queues' names).
func (g Group) allFIFO() bool {
	for _, q := range g.Queues {
		name, _, err := sqsurl.Parse(q.URL)
		if err != nil || !strings.HasSuffix(name, ".fifo") {
			return false
		}
	}
	return len(g.Queues) > 0
}
