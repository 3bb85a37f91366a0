package main

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// policySettings maps group g to the policy's plain settings. interval is
// the sampling interval, from which target.stale_after defaults (3 ×
// interval) when it is 0.
func policySettings(g config.Group, interval time.Duration) policy.Settings {
	return policy.Settings{
		Group:  g.Name,
		Policy: g.Target.Policy,

		ServiceTime: g.Workers.ServiceTime,
		Concurrency: g.Workers.Concurrency,
		Throughput:  g.Workers.Throughput,
		WaitSpread:  waitSpread(g.Workers.ServiceTimeCV),
		Learn:       g.Workers.Learn,
		FIFO:        g.AllFIFO(),

		Latency:         g.Target.Latency,
		DrainTime:       g.Target.DrainTime,
		Utilization:     orZero(g.Target.Utilization),
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
		SLOWindow:            g.Target.SLOWindow.D(),
		MetricStaleAfter:     g.OldestAge.StaleAfter,
		CloudWatchCounts:     g.OldestAge.CloudWatch,
		Forecast:             forecastSettings(g.Forecast),

		Paused:     g.Fleet.Paused,
		ScaleInOff: !g.Fleet.ScaleIn,
		Pinned:     g.Fleet.Pin != nil,
		Pin:        orZero(g.Fleet.Pin),
		Activation: g.Fleet.Activation,

		// The group's own price; Config.WorkerCostPerHour adds the default
		// of aws.worker_cost_per_hour.
		WorkerCostPerHour: orZero(g.Fleet.WorkerCostPerHour),
	}
}

// waitSpread is the Allen–Cunneen factor of a configured service-time
// coefficient of variation; 0 (exponential) when none is set.
func waitSpread(cv *float64) float64 {
	if cv == nil {
		return 0
	}
	return capacity.ServiceSpread(*cv)
}

// forecastSettings maps a group's forecast block to the policy's forecast
// settings.
func forecastSettings(f config.Forecast) policy.ForecastSettings {
	return policy.ForecastSettings{
		Off:        f.Enabled != nil && !*f.Enabled,
		ReportOnly: f.Mode == config.ForecastReport,
		History:    f.History.D(),
		LateCost:   f.LateCost,
	}
}

func orZero[T int | float64](p *T) T {
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
