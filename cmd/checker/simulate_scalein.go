package main

import (
	"flag"
	"slices"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/sim"
)

// scaleInFlags adds the flags of the scale-in mode to `checker simulate`.
func (f *simFlags) scaleInFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.scaleIn, "scale-in", sim.ScaleInGraceful,
		"what a busy worker removed on scale-in does: graceful (finishes its messages; a lifecycle hook or SIGTERM drain) or kill (gone at once; its messages come back after the visibility timeout)")
	fs.DurationVar(&f.visibility, "visibility-timeout", sim.DefaultVisibilityTimeout,
		"the queue's visibility timeout: how long a killed worker's messages stay invisible after they were received")
}

func (f *simFlags) checkScaleIn(bad func(flag, format string, a ...any)) {
	if !slices.Contains(sim.ScaleInModes, f.scaleIn) {
		bad("scale-in", "%q: want %s", f.scaleIn, strings.Join(sim.ScaleInModes, " or "))
	}
	if f.visibility <= 0 || f.visibility > 12*time.Hour {
		bad("visibility-timeout", "%v: must be > 0 and at most 12h (SQS's limit)", f.visibility)
	}
}
