package web

import (
	"fmt"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// switchNotes says, one line each, which operator switches hold a group
// (a switch not understood, paused, pinned, scale-in off) and what of the
// switch tags was ignored or read in another spelling, from its last
// decision and the bounds b of its fleet (a pin of the configuration
// outside them is held at the bound, as the policy and the publisher hold
// it); an empty list when none.
func switchNotes(d *model.Decision, b model.Bounds) []string {
	notes := []string{}
	if d == nil {
		return notes
	}
	for _, p := range d.SwitchProblems {
		notes = append(notes, "Held, switch not understood: "+p+".")
	}
	if d.Paused {
		who, since := d.PausedBy, "an unknown time"
		if who == "" {
			who = "someone (no paused-by tag)"
		}
		if d.PausedSince != nil {
			since = d.PausedSince.UTC().Format(time.RFC3339)
		}
		notes = append(notes, fmt.Sprintf("Paused by %s since %s: no scaling call; metrics are still published.", who, since))
	}
	if d.Pinned != nil {
		if n := b.Clamp(*d.Pinned); n != *d.Pinned {
			by := b.HiBy
			if n > *d.Pinned {
				by = b.LoBy
			}
			notes = append(notes, fmt.Sprintf("Pinned at %d workers, held at %d by the %s.", *d.Pinned, n, by))
		} else {
			notes = append(notes, fmt.Sprintf("Pinned at %d workers (within the bounds).", *d.Pinned))
		}
	}
	if d.ScaleInOff {
		notes = append(notes, "Scale-in is off: the group only scales out.")
	}
	for _, w := range d.Warnings {
		notes = append(notes, "Note: "+w+".")
	}
	return notes
}
