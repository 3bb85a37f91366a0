package forecast

import (
	"fmt"
	"time"
)

// An occurrence's accessors, for the policy and the reasons.

// String names the kind: "every", "daily".
func (k Kind) String() string {
	switch k {
	case KindEvery:
		return "every"
	case KindDaily:
		return "daily"
	case KindWeekly:
		return "weekly"
	}
	return "unknown"
}

// At is when the occurrence is expected to start.
func (o *Occurrence) At() time.Time { return time.Unix(o.at*60, 0).UTC() }

// Kind is the pattern the occurrence follows.
func (o *Occurrence) Kind() Kind { return o.kind }

// Confidence is the share of the pattern's recent occurrences that came as
// expected, 0..1.
func (o *Occurrence) Confidence() float64 { return float64(o.hits) / float64(max(o.lags, 1)) }

// Chance is how likely the occurrence comes, 0..1, from how many times and
// how regularly its pattern came and how many times it failed to (see
// occurrenceChance).
func (o *Occurrence) Chance() float64 { return o.chance }

// Hits and Lags are the pattern's record: of its last lags expected times,
// hits had an onset.
func (o *Occurrence) Hits() int { return o.hits }

// Lags is the count of the pattern's recent periods without an
// occurrence (see Hits).
func (o *Occurrence) Lags() int { return o.lags }

// Length is how long the occurrence is expected to last: its longest
// matched run.
func (o *Occurrence) Length() time.Duration { return time.Duration(max(o.length, 1)) * time.Minute }

// Period is the pattern's period.
func (o *Occurrence) Period() time.Duration { return time.Duration(o.period) * time.Minute }

// Overdue is how long after At an occurrence that has not come stops being
// expected, and Early how long before At it may come.
func (o *Occurrence) Overdue() time.Duration { return time.Duration(o.jitter+1) * time.Minute }

// Early is how long before At the occurrence may come (see Overdue).
func (o *Occurrence) Early() time.Duration { return time.Duration(o.spread) * time.Minute }

// Describe says where an occurrence's forecast comes from, for the reasons.
func (o *Occurrence) Describe(loc *time.Location) string {
	if o.kind == KindEvery {
		var b []byte
		b = fmt.Appendf(b, "every %s, seen at", time.Duration(o.period)*time.Minute)
		first := true
		for k := len(o.seen) - 1; k >= 0; k-- {
			if o.seen[k] == 0 {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = fmt.Appendf(b, " :%02d", time.Unix(o.seen[k]*60, 0).In(loc).Minute())
		}
		b = fmt.Appendf(b, ", %d of the last %d times", o.hits, o.lags)
		return string(b)
	}
	at := time.Unix(o.at*60, 0).In(loc)
	if o.kind == KindWeekly {
		return fmt.Sprintf("weekly at %s %s, %d of the last %d weeks", at.Weekday(), at.Format("15:04"), o.hits, o.lags)
	}
	if o.weekLags > 0 {
		return fmt.Sprintf("daily at %s, %d of the last %d days, %d of the last %d %ss", at.Format("15:04"),
			o.hits, o.lags, o.weekHits, o.weekLags, at.Weekday())
	}
	return fmt.Sprintf("daily at %s, %d of the last %d days", at.Format("15:04"), o.hits, o.lags)
}

// Pattern names an occurrence's pattern for the decision's JSON: "every
// 20m0s", "daily".
func (o *Occurrence) Pattern() string {
	if o.kind == KindEvery {
		return "every " + (time.Duration(o.period) * time.Minute).String()
	}
	return o.kind.String()
}
