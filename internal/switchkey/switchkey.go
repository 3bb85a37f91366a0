// Package switchkey reads the keys of the operator's switches (tags on an
// Auto Scaling group or ECS service, annotations on a Kubernetes
// workload). A key names a switch only exactly: the namespace
// (queue-checker) and the switch's name, compared after folding what
// cannot change their meaning (case, whitespace, '-', '_' and '.'), with
// ':' or '/' between them; so queue-checker:paused, Queue-Checker:Paused,
// queue_checker:paused and queue-checker/paused all name the pause, on a
// tag or an annotation alike. Any other key in the namespace (a word the
// checker does not know, a misspelling, a negation such as no-scale-in or
// unpaused, a misspelt namespace) is intent the checker cannot read: the
// caller holds the group rather than guess what it meant. Nothing that
// could turn a switch into its opposite is folded away.
package switchkey

import (
	"strings"
	"unicode"
)

// Switch is a switch's name after the prefix (queue-checker:<name>).
type Switch string

// The switches.
const (
	Paused   Switch = "paused"
	ScaleIn  Switch = "scale-in"
	PausedBy Switch = "paused-by"
	PausedAt Switch = "paused-at"
	Pin      Switch = "pin"
)

// All are the switches.
var All = []Switch{Paused, ScaleIn, PausedBy, PausedAt, Pin}

// Verdict is what a key is to the checker.
type Verdict int

// The verdicts of Read.
const (
	// NotOurs: the key is not in the checker's namespace (team, Name,
	// aws:autoscaling:groupName).
	NotOurs Verdict = iota
	// Known: the key names a switch exactly.
	Known
	// Unknown: the key is in the checker's namespace, or a misspelling of
	// it, and names no switch exactly.
	Unknown
)

// MaxEdits is how many single-letter edits (insertion, deletion,
// substitution, swap of neighbours) a key's namespace may be from
// queue-checker and still count as the checker's (misspelt, so Unknown).
const MaxEdits = 2

// maxKeyLen bounds the keys read: a longer key in the namespace is Unknown.
const maxKeyLen = 128

// stem is the namespace folded.
const stem = "queuechecker"

// Read says what key is: NotOurs, Known (sw is the switch it names), or
// Unknown.
func Read(key string) (v Verdict, sw Switch) {
	ns, name, split := strings.Cut(strings.Map(sepMap, key), "\x00")
	fns := fold(ns)
	switch {
	case split && fns == stem:
		// The namespace, spelt as it is: the name must be a switch's.
	case split && fns != "" && distance(fns, stem) <= MaxEdits:
		return Unknown, ""
	case strings.HasPrefix(Fold(key), stem):
		// queue-checker-paused, queuechecker.paused: the namespace without
		// its separator, or with another one.
		return Unknown, ""
	default:
		for _, s := range All {
			if distance(Fold(key), stem+Fold(string(s))) <= MaxEdits {
				return Unknown, "" // queuechekerpaused
			}
		}
		return NotOurs, ""
	}
	if len(key) > maxKeyLen {
		return Unknown, ""
	}
	fn := fold(name)
	for _, s := range All {
		if fn == fold(string(s)) {
			return Known, s
		}
	}
	return Unknown, ""
}

// Candidate reports whether a key is the checker's to read (Known or
// Unknown), to keep the tags or annotations worth parsing out of many.
func Candidate(key string) bool {
	v, _ := Read(key)
	return v != NotOurs
}

// sepMap marks the first separator between the namespace and the name
// (':' or '/') with NUL, for strings.Cut; a NUL already in the key
// becomes a character fold keeps, so that it cannot split.
func sepMap(r rune) rune {
	switch r {
	case ':', '/':
		return 0
	case 0:
		return unicode.ReplacementChar
	}
	return r
}

// fold lowers the case of a key's part and drops whitespace, '-', '_' and
// '.', which never change what a key means; it keeps every other
// character (a NUL from sepMap past the first separator included), so
// that queue-checker:paused/x or queue-checker:paused! names nothing.
func fold(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsSpace(r) || r == '-' || r == '_' || r == '.' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Fold lowers the case of a key and drops everything but letters and
// digits: the key as a near miss of the namespace is judged.
func Fold(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// NearMisses generates keys, for tests, in the namespace that name no switch: every
// single-letter deletion, insertion, substitution and swap of each
// switch's name, and each name with a negating word before or after it.
// The exact names and their folds (case, '-', '_', '.', whitespace) are
// left out: those are the switches.
func NearMisses() []string {
	exact := map[string]bool{}
	for _, s := range All {
		exact[fold(string(s))] = true
	}
	seen := map[string]bool{}
	var out []string
	add := func(name string) {
		if exact[fold(name)] || seen[name] {
			return
		}
		seen[name] = true
		out = append(out, "queue-checker:"+name)
	}
	const letters = "abcdefghijklmnopqrstuvwxyz-"
	for _, s := range All {
		n := string(s)
		for i := range len(n) + 1 {
			if i < len(n) {
				add(n[:i] + n[i+1:])
			}
			for _, c := range letters {
				add(n[:i] + string(c) + n[i:])
				if i < len(n) {
					add(n[:i] + string(c) + n[i+1:])
				}
			}
			if i+1 < len(n) {
				add(n[:i] + n[i+1:i+2] + n[i:i+1] + n[i+2:])
			}
		}
		for _, neg := range []string{"no-", "un", "non-", "not-", "disable-", "disabled-", "dont-", "never-", "anti-"} {
			add(neg + n)
		}
		for _, neg := range []string{"-disabled", "-off", "-false", "-no", "=false", "-enabled", "-only"} {
			add(n + neg)
		}
	}
	return out
}

// distance is the optimal string alignment distance of a and b: the
// fewest insertions, deletions, substitutions and swaps of neighbouring
// letters that turn one into the other. Strings longer than maxKeyLen
// count as far from everything.
func distance(a, b string) int {
	if a == b {
		return 0
	}
	n, m := len(a), len(b)
	if n > maxKeyLen || m > maxKeyLen {
		return maxKeyLen
	}
	// Three rows: two back for the swap.
	prev2 := make([]int, m+1)
	prev := make([]int, m+1)
	cur := make([]int, m+1)
	for j := range m + 1 {
		prev[j] = j
	}
	for i := 1; i <= n; i++ {
		cur[0] = i
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[m]
}
