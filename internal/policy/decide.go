package policy

import (
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// State is what the policy keeps about one group between decisions. The
// caller owns it, one per group; the zero value is ready to use.
type State struct {
	last *model.Decision
}

// Decide returns the decision for one group at now.
func Decide(s Settings, sample model.GroupSample, fleet model.Fleet, st *State, now time.Time) model.Decision {
	d := model.Decision{Group: s.Group, At: now, Held: true, HoldReason: "policy not written yet", Diagnosis: model.DiagUnknown}
	st.last = &d
	return d
}
