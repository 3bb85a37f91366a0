package poller

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/switchkey"
)

// The switch tags an operator sets on an Auto Scaling group or ECS service
// to steer its group without a redeploy. They are read with the fleet, in
// the same DescribeAutoScalingGroups / DescribeServices call.
const (
	TagPrefix   = "queue-checker:"
	TagPaused   = TagPrefix + "paused"    // true | false
	TagPausedBy = TagPrefix + "paused-by" // who paused, free text
	TagPausedAt = TagPrefix + "paused-at" // when, RFC 3339
	TagScaleIn  = TagPrefix + "scale-in"  // true | false
	TagPin      = TagPrefix + "pin"       // a whole number >= 0
)

// maxTagText bounds the free text of a tag shown on the status page.
const maxTagText = 128

// parseSwitches reads the switch tags among tags (key -> value). A key
// names a switch only exactly, after folding case, whitespace, '-', '_'
// and '.', in either spelling (queue-checker:paused, queue-checker/paused;
// see switchkey); one spelt otherwise than TagPrefix+name is read with a
// warning naming what it was read as. Every other key in the checker's
// namespace (a misspelling, another word, a negation such as no-scale-in
// or unpaused, a misspelt namespace), a paused, scale-in or pin value not
// understood (only true and false, a whole number >= 0 for the pin), and
// two keys naming one switch with different values, is intent the checker
// cannot read: it goes into NotUnderstood, which holds the group, neither
// in nor out, until it is fixed. A paused-at that is not a time is
// ignored with a warning: it tells when, not what to do.
func parseSwitches(tags map[string]string) model.Switches {
	return parseSwitchKeys(tags, TagPrefix, "tag")
}

// parseSwitchKeys is parseSwitches for switches spelt with prefix instead
// of TagPrefix (a Kubernetes workload's annotations, queue-checker/paused),
// named what ("annotation") in the messages.
func parseSwitchKeys(tags map[string]string, prefix, what string) model.Switches {
	var s model.Switches
	warn := func(format string, a ...any) { s.Warnings = append(s.Warnings, fmt.Sprintf(format, a...)) }
	hold := func(format string, a ...any) {
		s.NotUnderstood = append(s.NotUnderstood, fmt.Sprintf(format, a...)+": the group is held, neither scaled in nor out")
	}
	keys := make([]string, 0, len(tags))
	for k := range tags {
		if switchkey.Candidate(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	known := make([]string, len(switchkey.All))
	for i, sw := range switchkey.All {
		known[i] = prefix + string(sw)
	}
	first := map[switchkey.Switch]string{} // the key that set each switch
	for _, k := range keys {
		v := strings.TrimSpace(tags[k])
		verdict, sw := switchkey.Read(k)
		name := prefix + string(sw)
		if verdict != switchkey.Known {
			hold(what+" %q is not a switch this checker reads (%s)", clip(k), strings.Join(known, ", "))
			continue
		}
		if other, dup := first[sw]; dup {
			if !strings.EqualFold(v, strings.TrimSpace(tags[other])) {
				hold(what+"s %q=%q and %q=%q both name %s, with different values", clip(other), clip(strings.TrimSpace(tags[other])), clip(k), clip(v), name)
			}
			continue
		}
		first[sw] = k
		if k != name {
			warn(what+" %q read as %s", clip(k), name)
		}
		if h, w := applySwitch(&s, sw, k, v, what); h != "" {
			hold("%s", h)
		} else if w != "" {
			warn("%s", w)
		}
	}
	if !s.Paused {
		s.PausedBy, s.PausedSince = "", time.Time{}
	}
	return s
}

// applySwitch sets the switch sw on s from the value v of the key k (a
// what: tag or annotation). It returns what holds the group, a value not
// understood, or what only warns, a paused-at that is no time; else both
// are empty.
func applySwitch(s *model.Switches, sw switchkey.Switch, k, v, what string) (hold, warn string) {
	switch sw {
	case switchkey.Paused, switchkey.ScaleIn:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Sprintf(what+" %s=%q not understood: want true or false", clip(k), clip(v)), ""
		}
		if sw == switchkey.Paused {
			s.Paused = b
		} else {
			s.ScaleInOff = !b
		}
	case switchkey.PausedBy:
		s.PausedBy = clip(v)
	case switchkey.PausedAt:
		at, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return "", fmt.Sprintf(what+" %s=%q ignored: want a time such as 2025-03-01T12:00:00Z", clip(k), clip(v))
		}
		s.PausedSince = at
	case switchkey.Pin:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Sprintf(what+" %s=%q not understood: want a whole number of workers >= 0", clip(k), clip(v)), ""
		}
		s.Pinned, s.Pin = true, n
	}
	return "", ""
}

// clip bounds text from a tag for messages.
func clip(s string) string {
	if len(s) <= maxTagText {
		return s
	}
	return s[:maxTagText] + "…"
}

// applySwitches reads the switch tags into fl.Switches: a pause with no
// paused-at tag dates from when the poller first saw it. Warnings are logged
// when they change.
func (f *fleetReader) applySwitches(fl *model.Fleet, tags map[string]string, now time.Time) {
	f.applyParsedSwitches(fl, parseSwitches(tags), now)
}

// applyParsedSwitches is applySwitches for switches already parsed.
func (f *fleetReader) applyParsedSwitches(fl *model.Fleet, s model.Switches, now time.Time) {
	switch {
	case !s.Paused:
		f.pausedSeen = time.Time{}
	case s.PausedSince.IsZero():
		if f.pausedSeen.IsZero() {
			f.pausedSeen = now
		}
		s.PausedSince = f.pausedSeen
	}
	if w := strings.Join(s.Warnings, "; "); w != f.warned {
		f.warned = w
		if w != "" {
			f.log.Warn("switch tags ignored", zap.Strings("warnings", s.Warnings))
		}
	}
	// The switches not understood are the decision's to report
	// (Decision.SwitchProblems), logged once each by the controller.
	fl.Switches = s
}

func asgTags(g *asgtypes.AutoScalingGroup) map[string]string {
	var m map[string]string
	for _, t := range g.Tags {
		if k := aws.ToString(t.Key); switchkey.Candidate(k) {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = aws.ToString(t.Value)
		}
	}
	return m
}

func serviceTags(s *ecstypes.Service) map[string]string {
	var m map[string]string
	for _, t := range s.Tags {
		if k := aws.ToString(t.Key); switchkey.Candidate(k) {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = aws.ToString(t.Value)
		}
	}
	return m
}
