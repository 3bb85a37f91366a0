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
	c.mu.RLock()
	groups := c.groups
	states := make([]*groupState, len(groups))
	for i, g := range groups {
		states[i] = c.states[g.Group]
	}
	c.mu.RUnlock()

	loaded := make(map[string]int, len(h))
	for i, g := range groups {
		hist, ok := h[g.Group]
		st := states[i]
		log := c.log.With(zap.String("group", g.Group))
		switch {
		case st == nil:
			continue
		case g.Forecast.Off || (g.Policy != "" && g.Policy != policy.PolicyModel):
			log.Debug("no forecast: arrival history not loaded")
			continue
		case !ok:
			log.Info("no arrival history for the group: the forecast learns online")
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
		log.Info("arrival history loaded into the forecast", fields...)
	}
	return loaded
}
