// The age of what the page shows: a figure is shown with how old it is
// when it is not of the last few seconds, and a time already past is never
// shown as one to come.

package web

import (
	"math"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
)

// agesDoc says how old each figure of a group's panel is at the time the
// document was made, in seconds; null where the figure is unknown.
type agesDoc struct {
	// Sample is the age of the queue counts (backlog, visible, in
	// flight): the decision's sample.
	Sample *float64 `json:"sample_seconds"`
	// OldestAge is the age of the oldest message's age: CloudWatch's
	// minute it comes from, to the end of that minute.
	OldestAge *float64 `json:"oldest_age_seconds"`
	// OldestAgeNote says how old the oldest message's age is, in words;
	// empty when it is fresh (within the minute CloudWatch needs).
	OldestAgeNote string `json:"oldest_age_note"`
}

// staleAfter is how old a CloudWatch figure may be before the page says
// so: CloudWatch closes a minute and publishes it within about a minute.
const staleAfter = 90 * time.Second

// agesOf returns the ages of d's figures at now.
func agesOf(d *model.Decision, now time.Time) agesDoc {
	var a agesDoc
	if d == nil {
		return a
	}
	if !d.At.IsZero() {
		s := math.Max(0, now.Sub(d.At).Seconds())
		a.Sample = &s
	}
	if d.OldestAgeAt != nil && !d.OldestAgeAt.IsZero() {
		// A CloudWatch minute is stamped by its start and describes its
		// end at the latest.
		end := d.OldestAgeAt.Add(time.Minute)
		s := math.Max(0, now.Sub(end).Seconds())
		a.OldestAge = &s
		if now.Sub(end) > staleAfter {
			a.OldestAgeNote = "as of " + formatSeconds(math.Round(s)) + " ago (CloudWatch's minute to " + formatClock(end) + "): not now"
		}
	}
	return a
}

// forecastNoteAt is forecastNote as of now: a load whose time has come is
// said to be due since then, not expected at it.
func forecastNoteAt(s policy.Settings, d *model.Decision, now time.Time) string {
	note := forecastNote(s, d)
	if note == "" || d.Forecast == nil || d.Forecast.At.After(now) || d.Forecast.At.IsZero() {
		return note
	}
	clock := formatClock(d.Forecast.At)
	note = strings.ReplaceAll(note, "expected at "+clock, "due since "+clock)
	return strings.ReplaceAll(note, " from "+clock, ", due since "+clock)
}
