package policy

import "github.com/queuechecker/queue-checker/internal/model"

// PreloadFleet warms the group's fleet measurement with its recent
// per-minute completions and in-flight count (for example CloudWatch's
// NumberOfMessagesDeleted and ApproximateNumberOfMessagesNotVisible read
// at start), so that the first decisions size with the service time the
// fleet has had rather than the configured one, as far as the minutes are
// trusted (see internal/measure, Preload: the workers in service are not in
// the history, and minutes the group has measured itself are kept). The
// measurement is the one Decide's learning makes for s, so the next decision
// goes on from it.
//
// It only feeds the measurement: it makes no decision and changes no count,
// so it never scales in on its own. A group that does not measure (learn:
// off) takes nothing. It returns the good minutes the measurement took.
func (st *State) PreloadFleet(s Settings, h model.FleetHistory) int {
	s = s.WithDefaults()
	if s.Learn == LearnOff {
		return 0
	}
	return st.measurer(s).Preload(h.Start, h.Deleted, h.InFlight)
}
