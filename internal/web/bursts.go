package web

import (
	"fmt"
	"math"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/model"
)

// burstNote says what the model policy has learned of the group's recent
// bursts and what keeping capacity warm for them costs an hour against
// relaunching it for each; empty before a burst is known.
func burstNote(d *model.Decision) string {
	if d == nil || d.Bursts == nil || d.Bursts.Count == 0 {
		return ""
	}
	b := d.Bursts
	s := fmt.Sprintf("%d in the last hour, the median of %s messages over %s", b.Count, formatNumber(b.Messages), formatSeconds(b.LengthSeconds))
	if b.GapSeconds > 0 {
		s += ", " + formatSeconds(b.GapSeconds) + " apart"
	}
	s += fmt.Sprintf(", %s msg/s between them; %d workers serve them within the promise", formatNumber(b.BaseRate), b.NeedWorkers)
	if b.NeedHours > 1 {
		s += fmt.Sprintf(" (all but the largest %d of the last %d hours' bursts)", b.NeedHours-1, b.NeedHours)
	}
	hold, relaunch := costPerHour(b.HoldWorkerHours, b.HoldDollars), costPerHour(b.RelaunchWorkerHours, b.RelaunchDollars)
	switch {
	case b.WarmWorkers > 0 && b.ForThePromise:
		s += fmt.Sprintf("; %d kept warm for the promise: relaunching them for each burst would leave ~%s messages an hour past it (holding them costs %s, relaunching %s)",
			b.WarmWorkers, formatNumber(b.LateIfRelaunchedPerHour), hold, relaunch)
	case b.WarmWorkers > 0:
		s += fmt.Sprintf("; %d kept warm: holding them costs %s, relaunching them for each burst %s", b.WarmWorkers, hold, relaunch)
	case b.HoldWorkerHours > 0:
		s += fmt.Sprintf("; none kept warm: holding them would cost %s, relaunching them for each burst %s", hold, relaunch)
	}
	if b.NotLaunchedWorkers > 0 {
		s += fmt.Sprintf("; a burst is on: %d more workers would start after most of it and are not launched (they would keep ~%s more messages within the promise, worth less than they cost)",
			b.NotLaunchedWorkers, formatNumber(b.LaunchKeepsMessages))
	}
	return s + "."
}

// costPerHour formats worker-hours an hour, in dollars when priced.
func costPerHour(workerHours float64, dollars *float64) string {
	if dollars != nil {
		return capacity.FormatDollars(*dollars) + " an hour"
	}
	return formatNumber(math.Round(workerHours*10)/10) + " worker-hours an hour"
}
