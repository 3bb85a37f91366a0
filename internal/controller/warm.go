package controller

import (
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// Preload warms each group's forecast with its per-minute arrival history
// (a warm start: NumberOfMessagesSent read from CloudWatch at start or
// reload), so that the rhythm of its load is known from the first
// decisions rather than learnt over days. It returns the minutes each group
// took, and logs them per group.
//
// It may run while the loop runs cycles: a group's policy state is used by
// one of them at a time, so a preload waits for that group's decision in
// progress, and minutes the group has measured itself meanwhile are kept
// (see policy.State.Preload). Groups without a forecast (off, or the
// backlog_per_worker policy) and groups no longer configured are skipped;
// groups with no entry in h keep learning online.
func (c *Controller) Preload(h map[string]model.MinuteHistory) map[string]int {
	groups, states := c.groupStates()

	loaded := make(map[string]int, len(h))
	for i, g := range groups {
		hist, ok := h[g.Group]
		st := states[i]
		log := c.log.With(zap.String("group", g.Group))
		switch {
		case st == nil:
			continue
		case g.ArrivalHistory() == 0:
			log.Debug("not the model policy: arrival history not loaded")
			continue
		case !ok:
			log.Info("no arrival history for the group: the forecast and the burst learner learn online")
			continue
		}
		st.deciding.Lock()
		n := st.policy.Preload(g, hist)
		st.deciding.Unlock()
		loaded[g.Group] = n
		fields := []zap.Field{zap.Int("minutes", n), zap.Int("minutes_offered", len(hist.Counts))}
		if len(hist.Counts) > 0 {
			fields = append(fields, zap.Time("from", hist.Start),
				zap.Time("to", hist.Start.Add(time.Duration(len(hist.Counts))*time.Minute)))
		}
		what := "arrival history loaded into the forecast"
		if g.WithDefaults().Forecast.Off {
			what = "arrival history loaded into the burst learner"
		}
		log.Info(what, fields...)
	}
	return loaded
}

// PreloadFleet warms each group's fleet measurement with its recent
// per-minute completions and in-flight count (a warm start:
// NumberOfMessagesDeleted and ApproximateNumberOfMessagesNotVisible read
// from CloudWatch at start or reload), so that a restarted checker sizes
// with the service time its fleet has had from the first decisions instead
// of the configured one for its first minutes. It returns the good minutes
// each group's measurement took, and logs them per group.
//
// Like Preload it may run while the loop runs cycles, and minutes a group
// has measured itself are kept (see policy.State.PreloadFleet). Groups that
// do not measure (learn: off) and groups no longer configured are skipped;
// groups with no entry in h (the poller reads the history only for groups
// that read CloudWatch) keep learning online. It only feeds the
// measurements: no decision is made and no count changes here.
func (c *Controller) PreloadFleet(h map[string]model.FleetHistory) map[string]int {
	groups, states := c.groupStates()

	loaded := make(map[string]int, len(h))
	for i, g := range groups {
		hist, ok := h[g.Group]
		st := states[i]
		log := c.log.With(zap.String("group", g.Group))
		switch {
		case st == nil:
			continue
		case g.WithDefaults().Learn == policy.LearnOff:
			log.Debug("learn: off: fleet history not loaded")
			continue
		case !ok:
			log.Debug("no fleet history for the group: the measurement learns online")
			continue
		}
		st.deciding.Lock()
		n := st.policy.PreloadFleet(g, hist)
		st.deciding.Unlock()
		loaded[g.Group] = n
		fields := []zap.Field{zap.Int("minutes", n), zap.Int("minutes_offered", min(len(hist.Deleted), len(hist.InFlight)))}
		if len(hist.Deleted) > 0 {
			fields = append(fields, zap.Time("from", hist.Start),
				zap.Time("to", hist.Start.Add(time.Duration(len(hist.Deleted))*time.Minute)))
		}
		log.Info("fleet history loaded into the measurement", fields...)
	}
	return loaded
}

// HistorySpan is the arrival history a warm start of groups reads: the
// longest policy.Settings.ArrivalHistory of the groups (the forecast's
// history, and the burst learner's hour, of the model policy's groups), 0
// when none needs any. Preload skips the other groups.
func HistorySpan(groups []policy.Settings) time.Duration {
	var span time.Duration
	for _, g := range groups {
		span = max(span, g.ArrivalHistory())
	}
	return span
}

// ReadsWeeks reports whether a warm start of groups reads the weeks of
// five-minute arrivals before the minutes: whether one of them keeps a
// forecast (the model policy, its forecast not off), whose weekly rhythms
// they are.
func ReadsWeeks(groups []policy.Settings) bool {
	for _, g := range groups {
		if g = g.WithDefaults(); g.Policy == policy.PolicyModel && !g.Forecast.Off {
			return true
		}
	}
	return false
}

// Measuring names the groups that measure their fleet (learn: act or
// report), whose recent fleet history a warm start reads for
// PreloadFleet.
func Measuring(groups []policy.Settings) []string {
	var names []string
	for _, g := range groups {
		if g.WithDefaults().Learn != policy.LearnOff {
			names = append(names, g.Group)
		}
	}
	return names
}

// groupStates returns the configured groups and their states, in the same
// order, as they are now: a preload then works on them without the lock.
func (c *Controller) groupStates() ([]policy.Settings, []*groupState) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	states := make([]*groupState, len(c.groups))
	for i, g := range c.groups {
		states[i] = c.states[g.Group]
	}
	return c.groups, states
}
