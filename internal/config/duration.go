package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a duration that may also be written in whole days, for keys
// that reach over days: "8d", "1d12h", as well as every Go duration ("192h",
// "90m"). A day is 24 hours.
type Duration time.Duration

// D is d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String writes d in days when it is a whole number of days, in hours when
// it is a whole number of hours (1h, 36h), else as a Go duration.
func (d Duration) String() string {
	t := time.Duration(d)
	switch {
	case t > 0 && t%(24*time.Hour) == 0:
		return strconv.FormatInt(int64(t/(24*time.Hour)), 10) + "d"
	case t > 0 && t%time.Hour == 0:
		return strconv.FormatInt(int64(t/time.Hour), 10) + "h"
	}
	return t.String()
}

// ParseDuration parses a Go duration, optionally led by a whole number of
// days: "8d", "1d12h", "36h".
func ParseDuration(s string) (Duration, error) {
	days, rest, hasDays := int64(0), s, false
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n < 0 || n > maxDays {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		days, rest, hasDays = n, s[i+1:], true
	}
	var t time.Duration
	if rest != "" || !hasDays {
		var err error
		if t, err = time.ParseDuration(rest); err != nil || (hasDays && strings.HasPrefix(rest, "-")) {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
	}
	return Duration(time.Duration(days)*24*time.Hour + t), nil
}

// maxDays bounds the days of a Duration, far below time.Duration's limit of
// about 106,751 days.
const maxDays = 10_000

// UnmarshalYAML reads a Duration from a scalar.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("expected a duration")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalYAML writes a Duration as String does.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
