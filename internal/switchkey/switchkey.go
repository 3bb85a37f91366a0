// Package switchkey recognises the keys of the operator's switches (tags
// on an Auto Scaling group or ECS service, annotations on a Kubernetes
// workload) as people type them: a key is compared with the known ones
// after folding case and dropping separators and whitespace, and within a
// small edit distance, so that queue-checker:pause, Queue-Checker:Paused,
// queue_checker:paused and queue-checker/paused on an Auto Scaling group
// all name the pause. A switch that only holds a fleet (pause, scale-in)
// fails safe when misspelt; the caller decides what a near miss of the
// others counts for.
package switchkey

import "strings"

// Switch is a switch's name after the prefix (queue-checker:<name>).
type Switch string

// The switches, in the order a tie between them is broken: the one that
// holds the fleet hardest first.
const (
	Paused   Switch = "paused"
	ScaleIn  Switch = "scale-in"
	PausedBy Switch = "paused-by"
	PausedAt Switch = "paused-at"
	Pin      Switch = "pin"
)

// All are the switches, in tie-break order.
var All = []Switch{Paused, ScaleIn, PausedBy, PausedAt, Pin}

// MaxEdits is how many single-letter edits (insertion, deletion,
// substitution, swap of neighbours) a key may be from a known one, after
// folding, and still name it.
const MaxEdits = 2

// maxKeyLen bounds the keys compared: a longer key names no switch.
const maxKeyLen = 64

// stem is what every folded switch key starts with.
const stem = "queuechecker"

// Match returns the switch key names and how many edits it is from it
// after folding (0: it differs at most in case, separators and
// whitespace); ok is false when it is further than MaxEdits from every
// switch. The closest switch wins; among equals, the first of All.
func Match(key string) (s Switch, edits int, ok bool) {
	k := Fold(key)
	if k == "" || len(k) > maxKeyLen {
		return "", 0, false
	}
	best := MaxEdits + 1
	for _, sw := range All {
		if d := distance(k, stem+Fold(string(sw))); d < best {
			s, best = sw, d
		}
	}
	if best > MaxEdits {
		return "", 0, false
	}
	return s, best, true
}

// Fold lowers the case of a key and drops everything but letters and
// digits.
func Fold(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Candidate reports cheaply whether a key may name a switch, to keep the
// tags or annotations worth parsing out of many.
func Candidate(key string) bool {
	_, _, ok := Match(key)
	return ok
}

// distance is the optimal string alignment distance of a and b: the
// fewest insertions, deletions, substitutions and swaps of neighbouring
// letters that turn one into the other.
func distance(a, b string) int {
	if a == b {
		return 0
	}
	n, m := len(a), len(b)
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
