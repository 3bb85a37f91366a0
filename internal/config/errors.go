package config

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is one problem with a configuration, at a YAML path.
type FieldError struct {
	// Path is the YAML path of the key, such as groups[1].fleet.max; it is
	// empty for the document as a whole.
	Path string
	// Msg is one line, starting lower-case, saying what is expected.
	Msg string
	// Line is the line of the key in the file, or of its nearest enclosing
	// key when the key itself is absent; 0 when unknown (a Config built in
	// code, a key absent up to the top level).
	Line int
}

// Error is "PATH: MESSAGE", with " (line N)" when the line is known.
func (e *FieldError) Error() string {
	path := e.Path
	if path == "" {
		path = "(document)"
	}
	if e.Line > 0 {
		return fmt.Sprintf("%s: %s (line %d)", path, e.Msg, e.Line)
	}
	return path + ": " + e.Msg
}

// Problems returns the FieldErrors inside err (a single one, or several
// joined by Validate, Parse or Load), in order; nil when there are none.
func Problems(err error) []*FieldError {
	var out []*FieldError
	var walk func(error)
	walk = func(err error) {
		// A hand-made walk over the tree of wrapped errors: errors.As would
		// stop at the first FieldError.
		switch e := err.(type) { //nolint:errorlint // see above
		case *FieldError:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				walk(inner)
			}
		case interface{ Unwrap() error }:
			walk(e.Unwrap())
		}
	}
	walk(err)
	return out
}

// problems collects FieldErrors.
type problems []error

func (p *problems) add(path, format string, a ...any) {
	*p = append(*p, &FieldError{Path: path, Msg: fmt.Sprintf(format, a...)})
}

func (p *problems) addLine(path string, line int, format string, a ...any) {
	*p = append(*p, &FieldError{Path: path, Line: line, Msg: fmt.Sprintf(format, a...)})
}

func (p problems) err() error { return errors.Join(p...) }

// joinPath appends a mapping key to a YAML path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexPath appends a list index to a YAML path.
func indexPath(path string, i int) string {
	return fmt.Sprintf("%s[%d]", path, i)
}

// parentPath strips the last key or index from a YAML path; the parent of a
// top-level key is "".
func parentPath(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}
