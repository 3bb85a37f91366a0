package switchkey

import (
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key  string
		want Verdict
		sw   Switch
	}{
		{"queue-checker:paused", Known, Paused},
		{"queue-checker:Paused", Known, Paused},
		{"queue-checker:paused ", Known, Paused},
		{"Queue-Checker:Paused", Known, Paused},
		{"queue_checker:paused", Known, Paused},
		{"queue-checker/paused", Known, Paused},
		{"QUEUE-CHECKER/PAUSED", Known, Paused},
		{"queue-checker:scalein", Known, ScaleIn},
		{"queue-checker/scale-in", Known, ScaleIn},
		{"queue-checker:scale_in", Known, ScaleIn},
		{"queue-checker:Scale In", Known, ScaleIn},
		{"queue-checker:paused-by", Known, PausedBy},
		{"queue-checker:pausedby", Known, PausedBy},
		{"queue-checker:paused-at", Known, PausedAt},
		{"queue-checker:pin", Known, Pin},
		{"queue-checker:PIN", Known, Pin},
		// Misspellings, other words and negations: the checker's, not read.
		{"queue-checker:pause", Unknown, ""},
		{"queue-checker:puased", Unknown, ""},
		{"queue-checker:paws", Unknown, ""},
		{"queue-checker:pausing", Unknown, ""},
		{"queue-checker:hold", Unknown, ""},
		{"queue-checker:scale-in-enabled", Unknown, ""},
		{"queue-checker:scale-out-only", Unknown, ""},
		{"queue-checker:scale-out", Unknown, ""},
		{"queue-checker:pinned", Unknown, ""},
		{"queue-checker:no-scale-in", Unknown, ""},
		{"queue-checker:unpaused", Unknown, ""},
		{"queue-checker:not-paused", Unknown, ""},
		{"queue-checker:non-paused", Unknown, ""},
		{"queue-checker:disable-scale-in", Unknown, ""},
		{"queue-checker:scale-in-disabled", Unknown, ""},
		{"queue-checker:paused!", Unknown, ""},
		{"queue-checker:paused/x", Unknown, ""},
		{"queue-checker:paused:x", Unknown, ""},
		{"queue-checker:", Unknown, ""},
		{"queue-checker:pause\x00d", Unknown, ""},
		{"queue-cheker:paused", Unknown, ""},
		{"queuechecker:paused", Known, Paused},
		{"queue-checker-paused", Unknown, ""},
		{"queue-checker.paused", Unknown, ""},
		{"queuechekerpaused", Unknown, ""},
		{"queue:checker:paused", Unknown, ""},
		{"queue-checker:" + strings.Repeat("x", 200), Unknown, ""},
		// Not the checker's.
		{"team", NotOurs, ""},
		{"Name", NotOurs, ""},
		{"aws:autoscaling:groupName", NotOurs, ""},
		{"kubectl.kubernetes.io/last-applied-configuration", NotOurs, ""},
		{"deployment.kubernetes.io/revision", NotOurs, ""},
		{"paused", NotOurs, ""},
		{"", NotOurs, ""},
	}
	for _, tt := range tests {
		v, sw := Read(tt.key)
		if v != tt.want || sw != tt.sw {
			t.Errorf("Read(%q) = %d, %q; want %d, %q", tt.key, v, sw, tt.want, tt.sw)
		}
		if Candidate(tt.key) != (tt.want != NotOurs) {
			t.Errorf("Candidate(%q) = %t", tt.key, tt.want == NotOurs)
		}
	}
}

// Every generated near miss of a switch's key is the checker's and names
// nothing: Unknown.
func TestNearMissesAreUnknown(t *testing.T) {
	t.Parallel()
	keys := NearMisses()
	if len(keys) < 1000 {
		t.Fatalf("%d near misses generated, want the thousands the rules make", len(keys))
	}
	for _, k := range keys {
		if v, sw := Read(k); v != Unknown {
			t.Errorf("Read(%q) = %d, %q; want Unknown", k, v, sw)
		}
	}
	t.Logf("%d near misses, all Unknown", len(keys))
}

func TestDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"paused", "puased", 1}, {"scalein", "scaleout", 3}, {"pin", "paused", 5},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := distance(tt.b, tt.a); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}

// A key Read calls Known names its switch after folding only case,
// whitespace, '-', '_' and '.' in its two parts, with ':' or '/' between.
func FuzzRead(f *testing.F) {
	f.Add("queue-checker:paused")
	f.Add("Queue_Checker/Scale In")
	f.Add("queue-checker:no-scale-in")
	f.Fuzz(func(t *testing.T, key string) {
		v, sw := Read(key)
		if (v == Known) != (sw != "") {
			t.Fatalf("Read(%q) = %d, %q", key, v, sw)
		}
		if v != Known {
			return
		}
		i := strings.IndexAny(key, ":/")
		if i < 0 || fold(key[:i]) != stem || fold(key[i+1:]) != fold(string(sw)) {
			t.Fatalf("Read(%q) = Known %q, but its parts fold to %q, %q", key, sw, fold(key[:max(i, 0)]), fold(key[i+1:]))
		}
	})
}
