package web

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// forecastNote says what the forecast does for the fleet now, for the
// status page, from the decision's typed forecast (never from its reasons):
// the bet on a recurring occurrence not yet come ("Seen 6 of 6 times (every
// 20m), chance 32.6 %: pre-starting 3 of 5 workers for the load expected at
// 14:07:00 UTC ..."), the floor sized for an occurrence under way or for
// recent bursts, or, when the forecast sized nothing (report mode, or
// today's arrivals already at its rate), what the forecast expects. Empty
// when the decision carries no forecast.
func forecastNote(s policy.Settings, d *model.Decision) string {
	if d == nil || d.Forecast == nil {
		return ""
	}
	f := d.Forecast
	var b strings.Builder
	switch {
	case s.Forecast.ReportOnly || f.Floor == "":
		if s.Forecast.ReportOnly {
			b.WriteString("Report only, the count is not changed for it: ")
		}
		b.WriteString("the forecast expects up to ")
		b.WriteString(formatNumber(f.Rate))
		b.WriteString(" msg/s")
		if f.At.After(d.At) {
			b.WriteString(" from ")
			b.WriteString(formatClock(f.At))
			b.WriteString(" UTC")
		} else {
			b.WriteString(" within the next start delay")
		}
		b.WriteString(" (")
		b.WriteString(f.Pattern)
		if c := f.Confidence; c > 0 && !math.IsNaN(c) {
			b.WriteString(", ")
			b.WriteString(formatPercent(c))
			b.WriteString(" of recent occurrences as expected")
		}
		b.WriteString(")")
	case f.Bet != nil:
		bet := f.Bet
		fmt.Fprintf(&b, "seen %d of %d times (%s), chance %s: pre-starting %d of the %d workers %s asks for the %s msg/s expected at %s UTC; missed, about %s messages would wait past the promise",
			f.Seen, f.Of, f.Pattern, formatPercent(bet.Chance), bet.Workers, bet.Need, floorName(f.Floor),
			formatNumber(f.SizedFor), formatClock(f.At), formatNumber(bet.LateIfMissed))
	case f.Of > 0:
		verb := "pre-starting for"
		if !f.At.After(d.At) {
			verb = "keeping workers for"
		}
		fmt.Fprintf(&b, "%s the load expected at %s UTC (%s, %d of the last %d times): %s sizes for %s msg/s",
			verb, formatClock(f.At), f.Pattern, f.Seen, f.Of, floorName(f.Floor), formatNumber(f.SizedFor))
	default:
		fmt.Fprintf(&b, "%s sizes for %s msg/s: bursts that high came often enough lately to be expected within the next start delay",
			floorName(f.Floor), formatNumber(f.SizedFor))
	}
	b.WriteString(".")
	return capitalise(b.String())
}

// floorName names a forecast's floor (model.Forecast.Floor) in a sentence.
func floorName(floor string) string {
	if floor == model.FloorWait {
		return "the wait floor"
	}
	return "the utilisation floor"
}

// forecastMode names what the forecast of settings s (defaults filled) does.
func forecastMode(s policy.Settings) string {
	switch {
	case s.Forecast.Off || s.Policy != policy.PolicyModel:
		return "off"
	case s.Forecast.ReportOnly:
		return "report"
	}
	return "act"
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// trendWindow is how far back the measured trend of the backlog looks.
const trendWindow = time.Minute

// backlogTrend says which way the backlog is going, for the advice of the
// diagnoses whose advice depends on it (capped, under_provisioned,
// draining): the change measured over the last minute of the history when
// there is one, else what the current workers and arrivals make of it (the
// decision's drain time). Empty for the other diagnoses, when nothing
// waits, or when nothing is known.
func backlogTrend(d *model.Decision, history []readmodel.Point) string {
	if d == nil || d.Backlog <= 0 {
		return ""
	}
	switch d.Diagnosis {
	case model.DiagCapped, model.DiagDownstreamLimited, model.DiagUnderProvisioned, model.DiagDraining:
	default:
		return ""
	}
	now := float64(d.Backlog)
	for i := len(history) - 1; i >= 0; i-- {
		p := history[i]
		dt := d.At.Sub(p.At)
		if dt < trendWindow {
			continue
		}
		change := now - float64(p.Backlog)
		span := formatSeconds(math.Round(dt.Seconds()))
		switch {
		case change < 0:
			rate := -change / dt.Seconds()
			return "The backlog is falling: " + messages(-change) + " fewer than " + span +
				" ago; at that pace it clears in about " + formatSeconds(math.Round(now/rate)) + "."
		case change > 0:
			return "The backlog is growing: " + messages(change) + " more than " + span +
				" ago; it will keep growing until the fleet catches up."
		default:
			return "The backlog is steady: as large as " + span + " ago."
		}
	}
	switch {
	case d.DrainSeconds != nil:
		return "At the current arrivals the workers clear the backlog in about " + formatSeconds(math.Round(*d.DrainSeconds)) + "."
	case d.ArrivalRate != nil:
		return "At the current arrivals the workers do not clear the backlog: it will keep growing."
	}
	return ""
}

// messages writes a count of messages.
func messages(n float64) string {
	if n == 1 {
		return "1 message"
	}
	return formatNumber(n) + " messages"
}
