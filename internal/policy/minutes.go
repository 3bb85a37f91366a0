package policy

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/measure"
)

// FleetMinutes appends the good minutes of the group's fleet measurement
// that carry a worker count to dst, oldest first, and returns it: at most
// the 24 recent minutes the measurement keeps (see docs/measuring.md). The
// minutes of a warm start, and those of a group without a fleet to read,
// have no worker count and are left out. None before the group has
// measured (Learn off from the start, or no decision yet). Each call walks
// the kept minutes with After, quadratic in at most 24: cheap enough for a
// view, and it leaves the measurement's API as it is.
func (st *State) FleetMinutes(dst []measure.GoodMinute) []measure.GoodMinute {
	if st.meas == nil {
		return dst
	}
	var after time.Time
	for g, ok := st.meas.After(after); ok; g, ok = st.meas.After(after) {
		after = g.Start
		if g.Workers > 0 {
			dst = append(dst, g)
		}
	}
	return dst
}
