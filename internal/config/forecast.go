package config

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Forecast modes.
const (
	// ForecastAct: the forecast sizes the fleet.
	ForecastAct = "act"
	// ForecastReport: the forecast is computed and shown, and changes no
	// count.
	ForecastReport = "report"
)

var forecastModes = []string{ForecastAct, ForecastReport}

// Bounds of forecast.history: the forecast needs an hour to see a job that
// recurs within it, and keeps at most model.MaxForecastHistory (8 days of
// minutes: daily rhythms and the jobs within a day).
const (
	MinForecastHistory = time.Hour
	MaxForecastHistory = model.MaxForecastHistory
)

// MaxLateCost bounds forecast.late_cost: beyond a thousand service times a
// late message, every pattern seen twice gets its whole fleet anyway.
const MaxLateCost = 1000

// On reports whether the group forecasts: enabled (or left to its default)
// under the model policy.
func (f Forecast) On(policyName string) bool {
	return (f.Enabled == nil || *f.Enabled) && policyName == model.PolicyModel
}

// Acts reports whether the forecast sizes the fleet (On, in mode act).
func (f Forecast) Acts(policyName string) bool {
	return f.On(policyName) && f.Mode == ForecastAct
}

// validate checks the forecast block of a group whose target.policy is
// policyName. An explicit enabled: true under backlog_per_worker is a
// problem rather than a silent no-op: that policy sizes on the backlog
// alone and has no forecast, so the key promises what the group will not do.
func (f Forecast) validate(p *problems, path, policyName string) {
	if f.Enabled != nil && *f.Enabled && policyName == model.PolicyBacklogPerWorker {
		p.add(joinPath(path, "enabled"), "the %s policy has no forecast (it sizes on the backlog alone); remove the key, set it to false, or use target.policy %s",
			model.PolicyBacklogPerWorker, model.PolicyModel)
	}
	oneOf(p, joinPath(path, "mode"), f.Mode, forecastModes)
	if h := f.History.D(); h < MinForecastHistory || h > MaxForecastHistory {
		p.add(joinPath(path, "history"), "must be from %s to %s, got %s", Duration(MinForecastHistory), Duration(MaxForecastHistory), f.History)
	}
	if !(f.LateCost >= 0) || f.LateCost > MaxLateCost {
		p.add(joinPath(path, "late_cost"), "must be from 0 (the default, %v) to %v, got %v", model.DefaultLateCost, MaxLateCost, f.LateCost)
	}
}

// fillForecastDefaults sets fleet.scale_in_stabilization, where the file
// leaves it out, to model.DefaultForecastStabilization for groups whose
// forecast acts: the forecast keeps the capacity that load expected within
// the start delay needs, so the window only rides out the noise of single
// samples. present holds the YAML paths of the keys the file sets.
func (c *Config) fillForecastDefaults(present map[string]int) {
	for i := range c.Groups {
		g := &c.Groups[i]
		if _, set := present[joinPath(indexPath("groups", i), "fleet.scale_in_stabilization")]; set {
			continue
		}
		if g.Forecast.Acts(g.Target.Policy) {
			g.Fleet.ScaleInStabilization = model.DefaultForecastStabilization
		}
	}
}
