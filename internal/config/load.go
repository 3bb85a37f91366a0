package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// Load reads, decodes and validates the configuration file at path.
//
// A file that cannot be read, or is not YAML, gives an error naming the file
// (and the line, for YAML syntax). A file that is YAML but not a valid
// configuration gives every problem at once: *FieldErrors joined with
// errors.Join, each starting with its YAML path and carrying its line (see
// Problems).
func Load(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("read config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil && Problems(err) == nil {
		return Config{}, fmt.Errorf("parse config %s: %w", path, err)
	}
	return cfg, err
}

// Parse decodes and validates a configuration document, like Load.
//
// Loading is strict and fills defaults at every depth: first the document is
// parsed into nodes and its shape checked against the types (unknown keys,
// duplicate keys, wrong types, bad durations, all reported at once); then it
// is decoded over Default(), each group over DefaultGroup() and each
// cloudwatch_metrics block over its default namespace, so a key absent from
// the file keeps its default and a key set to false, 0 or "" keeps that
// value; then derived defaults are filled (target.stale_after from the
// interval, each queue's region from its URL or aws.region, and
// fleet.scale_in_stabilization, where the file leaves it out, from the
// forecast: see fillForecastDefaults); last, Validate.
func Parse(data []byte) (Config, error) {
	root, err := parseDocument(data)
	if err != nil {
		return Config{}, err
	}
	cfg := Default()
	if root == nil {
		return cfg, cfg.Validate() // an empty file: only defaults
	}

	sc := newShapeChecker()
	sc.check(root, reflect.TypeFor[Config](), "")
	if len(sc.problems) > 0 {
		return Config{}, sc.problems.err()
	}

	// The shape check has passed, so this strict decode is a second guard
	// at the top level rather than the source of messages.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("decode: %w", err)
	}
	cfg.fillDerived()
	cfg.fillForecastDefaults(sc.lines)

	err = cfg.Validate()
	for _, p := range Problems(err) {
		p.Line = nearestLine(sc.lines, p.Path)
	}
	return cfg, err
}

// parseDocument parses data into its root node: nil for an empty document.
// More than one document is an error: a configuration is one document.
func parseDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxError(data, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(data, err)
	default:
		return nil, fmt.Errorf("line %d: a second YAML document; the configuration is one document", extra.Line)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil
	}
	return doc.Content[0], nil
}

// syntaxError restates a YAML syntax error with the line it is on. The yaml
// package names the line where the enclosing block started, often far above
// the mistake; the first line from which no prefix of the document parses is
// where it is.
func syntaxError(data []byte, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		msg = m[1]
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := len(lines) - 1; n >= 0; n-- {
		if parses(bytes.Join(lines[:n], nil)) {
			return fmt.Errorf("line %d: %s", n+1, msg)
		}
	}
	return errors.New(msg)
}

var yamlLineRE = regexp.MustCompile(`^line \d+: (.*)$`)

// parses reports whether every document in data is well-formed YAML.
func parses(data []byte) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// nearestLine returns the line of path in the file, or of its nearest
// enclosing key or list item that is there; 0 when none is.
func nearestLine(lines map[string]int, path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := lines[p]; ok {
			return l
		}
	}
	return 0
}

// fillDerived fills the defaults that depend on other keys:
// coordination.lease_duration (3 × interval when 0), each group's
// target.stale_after (3 × interval when 0) and each queue's region (from its
// URL, else aws.region, when empty). A region that stays empty, or a URL
// that does not parse, is left for Validate to report.
func (c *Config) fillDerived() {
	if c.Coordination != nil {
		c.Coordination.LeaseDuration = c.Coordination.LeaseDurationFor(c.Interval)
	}
	for i := range c.Groups {
		g := &c.Groups[i]
		g.Target.StaleAfter = g.Target.StaleAfterFor(c.Interval)
		for j := range g.Queues {
			q := &g.Queues[j]
			if q.Region != "" {
				continue
			}
			if _, region, err := sqsurl.Parse(q.URL); err == nil && region != "" {
				q.Region = region
			} else if err == nil {
				q.Region = c.AWS.Region
			}
		}
	}
}

// UnmarshalYAML decodes a group over DefaultGroup(), so that keys absent
// from the document keep their defaults. It does not reject unknown keys:
// the yaml package's KnownFields does not reach this far, which is why Parse
// checks the whole document's keys before decoding. Use Load or Parse.
func (g *Group) UnmarshalYAML(n *yaml.Node) error {
	type plain Group // without this method
	v := plain(DefaultGroup())
	if err := n.Decode(&v); err != nil {
		return err
	}
	*g = Group(v)
	return nil
}

// UnmarshalYAML decodes a cloudwatch_metrics block over its defaults: the
// namespace is QueueChecker unless the block names one.
func (m *CloudWatchMetrics) UnmarshalYAML(n *yaml.Node) error {
	type plain CloudWatchMetrics // without this method
	v := plain(defaultCloudWatchMetrics())
	if err := n.Decode(&v); err != nil {
		return err
	}
	*m = CloudWatchMetrics(v)
	return nil
}
