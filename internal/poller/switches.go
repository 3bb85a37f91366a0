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

// parseSwitches reads the switch tags among tags (key -> value). The
// switches fail safe: a paused or scale-in tag whose value is not true or
// false pauses the group or holds its scale-in, with a warning (an
// operator who typed paused=yes during an incident meant to pause, and
// scale-in=no meant no scale-in); only false (paused) and true (scale-in)
// release. So do their keys: a key that folds (case, separators,
// whitespace) to a switch's, or is within a couple of letters of it, in
// either spelling (queue-checker:paused, queue-checker/paused), counts as
// that switch, with one warning naming the key and what it was taken for;
// where two keys name one switch, the one that holds wins. A pin is taken
// from a key that differs only in case and separators, never from a
// misspelt one (a pin may scale in). A pin or paused-at that is not
// understood, or an unknown key under the prefix, is ignored with a
// warning.
func parseSwitches(tags map[string]string) model.Switches {
	return parseSwitchKeys(tags, TagPrefix, "tag")
}

// parseSwitchKeys is parseSwitches for switches spelt with prefix instead
// of TagPrefix (a Kubernetes workload's annotations, queue-checker/paused),
// named what ("annotation") in the warnings.
func parseSwitchKeys(tags map[string]string, prefix, what string) model.Switches {
	var s model.Switches
	warn := func(format string, a ...any) { s.Warnings = append(s.Warnings, fmt.Sprintf(format, a...)) }
	keys := make([]string, 0, len(tags))
	for k := range tags {
		if strings.HasPrefix(k, prefix) || switchkey.Candidate(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := strings.TrimSpace(tags[k])
		sw, edits, ok := switchkey.Match(k)
		name := prefix + string(sw)
		switch {
		case !ok:
			warn(what+" %s ignored: unknown; known are %s, %s, %s, %s and %s", clip(k), prefix+"paused", prefix+"paused-by", prefix+"paused-at", prefix+"scale-in", prefix+"pin")
			continue
		case sw == switchkey.Pin && edits > 0:
			warn(what+" %q ignored: it looks like %s, but a pin is taken only as spelt", clip(k), name)
			continue
		case k != name:
			warn(what+" %q taken for %s", clip(k), name)
		}
		switch sw {
		case switchkey.Paused:
			b, err := strconv.ParseBool(v)
			if err != nil {
				warn(what+" %s=%q not understood: the group is paused (its count held) until it reads true or false", clip(k), clip(v))
				b = true
			}
			s.Paused = s.Paused || b
		case switchkey.PausedBy:
			s.PausedBy = clip(v)
		case switchkey.PausedAt:
			at, err := time.Parse(time.RFC3339, v)
			if err != nil {
				warn(what+" %s=%q ignored: want a time such as 2025-03-01T12:00:00Z", clip(k), clip(v))
				continue
			}
			s.PausedSince = at
		case switchkey.ScaleIn:
			b, err := strconv.ParseBool(v)
			if err != nil {
				warn(what+" %s=%q not understood: scale-in is held (scale out only) until it reads true or false", clip(k), clip(v))
				b = false
			}
			s.ScaleInOff = s.ScaleInOff || !b
		case switchkey.Pin:
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				warn(what+" %s=%q ignored: want a whole number of workers >= 0", clip(k), clip(v))
				continue
			}
			s.Pinned, s.Pin = true, n
		}
	}
	if !s.Paused {
		s.PausedBy, s.PausedSince = "", time.Time{}
	}
	return s
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
	fl.Switches = s
}

func asgTags(g *asgtypes.AutoScalingGroup) map[string]string {
	var m map[string]string
	for _, t := range g.Tags {
		if k := aws.ToString(t.Key); strings.HasPrefix(k, TagPrefix) || switchkey.Candidate(k) {
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
		if k := aws.ToString(t.Key); strings.HasPrefix(k, TagPrefix) || switchkey.Candidate(k) {
			if m == nil {
				m = map[string]string{}
			}
			m[k] = aws.ToString(t.Value)
		}
	}
	return m
}
