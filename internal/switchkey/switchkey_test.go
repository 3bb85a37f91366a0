package switchkey

import "testing"

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key   string
		want  Switch
		edits int
		ok    bool
	}{
		{"queue-checker:paused", Paused, 0, true},
		{"queue-checker:pause", Paused, 1, true},
		{"queue-checker:Paused", Paused, 0, true},
		{"queue-checker:paused ", Paused, 0, true},
		{"Queue-Checker:Paused", Paused, 0, true},
		{"queue_checker:paused", Paused, 0, true},
		{"queue-checker/paused", Paused, 0, true},
		{"queue-checker:puased", Paused, 1, true},
		{"queue-checker:scalein", ScaleIn, 0, true},
		{"queue-checker/scale-in", ScaleIn, 0, true},
		{"queue-checker:scale_in", ScaleIn, 0, true},
		{"queue-checker:scalin", ScaleIn, 1, true},
		{"queue-checker:paused-by", PausedBy, 0, true},
		{"queue-checker:pausedby", PausedBy, 0, true},
		{"queue-checker:pauseby", PausedBy, 1, true},
		{"queue-checker:paused-at", PausedAt, 0, true},
		{"queue-checker:pin", Pin, 0, true},
		{"queue-checker:scale-out", "", 0, false},
		{"team", "", 0, false},
		{"Name", "", 0, false},
		{"queue-checker:", "", 0, false},
		{"aws:autoscaling:groupName", "", 0, false},
	}
	for _, tt := range tests {
		s, edits, ok := Match(tt.key)
		if s != tt.want || edits != tt.edits || ok != tt.ok {
			t.Errorf("Match(%q) = %q, %d, %t; want %q, %d, %t", tt.key, s, edits, ok, tt.want, tt.edits, tt.ok)
		}
	}
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

func FuzzMatch(f *testing.F) {
	f.Add("queue-checker:paused")
	f.Add("Queue_Checker/Scale In")
	f.Fuzz(func(t *testing.T, key string) {
		s, edits, ok := Match(key)
		if ok != (s != "") || edits < 0 || edits > MaxEdits {
			t.Fatalf("Match(%q) = %q, %d, %t", key, s, edits, ok)
		}
	})
}
