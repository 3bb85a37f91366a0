package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// shapeChecker walks a YAML node tree alongside the Go type it is about to be
// decoded into, before any decoding: every unknown key (at any depth, list
// elements included), duplicate key, mapping where a list belongs, and value
// that does not parse as its key's type becomes a FieldError naming the YAML
// path and the line. It also records the line of every key present, so that
// later validation problems can point into the file.
//
// This is what keeps loading strict: the yaml decoder's KnownFields does not
// reach into types that decode themselves (Group, CloudWatchMetrics), which
// is how list elements get their defaults.
type shapeChecker struct {
	problems problems
	lines    map[string]int        // YAML path -> line of the key or list item
	active   map[*yaml.Node]bool   // aliases being expanded, against cycles
	fields   map[reflect.Type]keys // yaml keys of each struct type, cached
	visits   int                   // nodes checked inside alias expansions, against alias and merge bombs
	// expanding counts the aliases being expanded around the node checked:
	// only nodes reached through an alias count towards maxVisits, so a
	// large file written out is never refused, however many groups it has.
	expanding int
}

// maxVisits bounds the nodes checked through aliases and merges: sharing
// a block between groups expands it once per use, a few dozen values each.
const maxVisits = 100_000

// keys are the yaml keys of a struct type, with their field types.
type keys struct {
	types map[string]reflect.Type
	names []string // sorted, for messages
}

var (
	durationType     = reflect.TypeFor[time.Duration]()
	longDurationType = reflect.TypeFor[Duration]()
)

func newShapeChecker() *shapeChecker {
	return &shapeChecker{
		lines:  map[string]int{},
		active: map[*yaml.Node]bool{},
		fields: map[reflect.Type]keys{},
	}
}

// check walks n, to be decoded into a value of type t, at path.
func (c *shapeChecker) check(n *yaml.Node, t reflect.Type, path string) {
	if !c.visit(n) {
		return
	}
	if n.Kind == yaml.AliasNode {
		c.expanding++
		defer func() { c.expanding-- }()
	}
	n, ok := c.enter(n, path)
	if !ok {
		return
	}
	defer c.leave(n)
	if isNull(n) {
		return // absent: the default stays
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct:
		if n.Kind != yaml.MappingNode {
			c.problems.addLine(path, n.Line, "expected a mapping of keys, got %s", describe(n))
			return
		}
		c.mapping(n, t, path, true)
	case t.Kind() == reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			c.problems.addLine(path, n.Line, "expected a list, got %s", describe(n))
			return
		}
		for i, item := range n.Content {
			p := indexPath(path, i)
			c.lines[p] = item.Line
			if r := resolve(item); r != nil && isNull(r) {
				c.problems.addLine(p, item.Line, "empty list item: expected %s", want(t.Elem()))
				continue
			}
			c.check(item, t.Elem(), p)
		}
	default:
		if n.Kind != yaml.ScalarNode {
			c.problems.addLine(path, n.Line, "expected %s, got %s", want(t), describe(n))
			return
		}
		// The yaml package truncates 1.5 to 1 for an integer; refuse it.
		fraction := isInteger(t) && n.ShortTag() != "!!int"
		if err := n.Decode(reflect.New(t).Interface()); err != nil || fraction {
			c.problems.addLine(path, n.Line, "expected %s, got %s", want(t), describe(n))
		}
	}
}

// mapping checks the keys of a mapping node against struct type t. explicit
// is false for mappings merged in with "<<", whose keys may repeat the
// including mapping's and whose lines do not replace its lines.
func (c *shapeChecker) mapping(n *yaml.Node, t reflect.Type, path string, explicit bool) {
	ks := c.keysOf(t)
	seen := map[string]int{}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			c.problems.addLine(p, k.Line, "duplicate key, first set at line %d", first)
			continue
		}
		seen[k.Value] = k.Line
		ft, known := ks.types[k.Value]
		if msg, gone := removedKey(t, k.Value, path); gone && k.Kind == yaml.ScalarNode {
			c.problems.addLine(p, k.Line, "%s", msg)
			continue
		}
		if k.Kind != yaml.ScalarNode || !known {
			c.problems.addLine(p, k.Line, "%s", unknownKey(k.Value, ks.names))
			continue
		}
		if _, set := c.lines[p]; explicit || !set {
			c.lines[p] = k.Line
		}
		c.check(v, ft, p)
	}
	for _, m := range merges {
		c.merge(m, t, path)
	}
}

// merge checks the value of a "<<" key: a mapping, or a list of mappings,
// each possibly an alias.
func (c *shapeChecker) merge(v *yaml.Node, t reflect.Type, path string) {
	items := []*yaml.Node{v}
	if r := resolve(v); r.Kind == yaml.SequenceNode {
		items = r.Content
	}
	for _, item := range items {
		if !c.visit(item) {
			return
		}
		m, ok := c.enter(item, path)
		if !ok {
			continue
		}
		alias := item.Kind == yaml.AliasNode
		if alias {
			c.expanding++
		}
		if m.Kind == yaml.MappingNode {
			c.mapping(m, t, path, false)
		} else {
			c.problems.addLine(path, item.Line, "<< merges a mapping or a list of mappings, got %s", describe(m))
		}
		if alias {
			c.expanding--
		}
		c.leave(m)
	}
}

// visit counts a node checked through an alias; false, with one problem
// recorded, once aliases have expanded to more than maxVisits nodes.
func (c *shapeChecker) visit(n *yaml.Node) bool {
	if c.expanding == 0 {
		return true
	}
	c.visits++
	if c.visits == maxVisits+1 {
		c.problems.addLine("", n.Line, "expands to more than %d values through aliases and merges; write it out", maxVisits)
	}
	return c.visits <= maxVisits
}

// enter resolves n when it is an alias and marks it as being expanded; false
// (with a problem recorded) when the alias refers to a node that contains it.
func (c *shapeChecker) enter(n *yaml.Node, path string) (*yaml.Node, bool) {
	r := resolve(n)
	if r == nil {
		c.problems.addLine(path, n.Line, "alias *%s refers to nothing", n.Value)
		return nil, false
	}
	if c.active[r] {
		c.problems.addLine(path, n.Line, "alias *%s refers to a value that contains it", n.Value)
		return nil, false
	}
	c.active[r] = true
	return r, true
}

func (c *shapeChecker) leave(n *yaml.Node) { delete(c.active, n) }

// keysOf returns the yaml keys of struct type t.
func (c *shapeChecker) keysOf(t reflect.Type) keys {
	if ks, ok := c.fields[t]; ok {
		return ks
	}
	ks := keys{types: map[string]reflect.Type{}}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name) // the yaml package's own rule
		}
		ks.types[name] = f.Type
		ks.names = append(ks.names, name)
	}
	sort.Strings(ks.names)
	c.fields[t] = ks
	return ks
}

func isInteger(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return t != durationType && t != longDurationType
	}
	return false
}

// resolve follows aliases; nil for an alias to nothing.
func resolve(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode; depth++ {
		if depth > 100 {
			return nil
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node holds, for "got ..." in messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	default:
		return "nothing"
	}
}

// want says what a value of type t looks like in YAML.
func want(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case durationType:
		return "a duration such as 30s, 5m or 1h30m"
	case longDurationType:
		return "a duration such as 36h, 8d or 1d12h"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Struct:
		return "a mapping of keys"
	case reflect.Slice:
		return "a list"
	default:
		return t.String()
	}
}

// unknownKey is the message for an unknown key: the likely intended key when
// one is close, every known key otherwise.
func unknownKey(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf("unknown key (did you mean %s?)", best)
	}
	return "unknown key; expected one of " + strings.Join(known, ", ")
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
