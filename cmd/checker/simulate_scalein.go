package main

import (
	"flag"

	"github.com/queuechecker/queue-checker/internal/sim"
	"github.com/queuechecker/queue-checker/internal/simulate"
)

// scaleInFlags adds the flags of the scale-in mode to `checker simulate`.
func scaleInFlags(fs *flag.FlagSet, f *simulate.Options) {
	fs.StringVar(&f.ScaleIn, "scale-in", sim.ScaleInGraceful,
		"what a busy worker removed on scale-in does: graceful (finishes its messages; a lifecycle hook or SIGTERM drain) or kill (gone at once; its messages come back after the visibility timeout)")
	fs.DurationVar(&f.Visibility, "visibility-timeout", sim.DefaultVisibilityTimeout,
		"the queue's visibility timeout: how long a killed worker's messages stay invisible after they were received")
}
