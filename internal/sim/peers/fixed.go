package peers

import (
	"context"
	"time"
)

// Fixed never scales: the fleet stays at its starting size.
type Fixed struct{}

// Step does nothing.
func (Fixed) Step(context.Context, time.Time) error { return nil }
