package callrate

import (
	"testing"
	"time"
)

func TestWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	const interval = 10 * time.Second
	var w Window
	// One round: 6 requests in the 10 s it stands for = 36 a minute.
	if got := w.Add(t0, 6, interval); got != 36 {
		t.Fatalf("first round: %v a minute, want 36", got)
	}
	// Ten rounds of 6 at 10 s: the last six (50 s back to now, plus the
	// 10 s the oldest stands for) make a minute of 36 requests.
	var got float64
	for i := 1; i < 10; i++ {
		got = w.Add(t0.Add(time.Duration(i)*interval), 6, interval)
	}
	if got != 36 || w.Len() != 6 {
		t.Fatalf("steady: %v a minute over %d rounds, want 36 over 6", got, w.Len())
	}
	// Requests only every third round (an idle queue asked every 30 s):
	// two of the last six rounds = 2 a minute.
	var w2 Window
	for i := range 12 {
		n := 0.0
		if i%3 == 0 {
			n = 1
		}
		got = w2.Add(t0.Add(time.Duration(i)*interval), n, interval)
	}
	if got != 2 {
		t.Fatalf("every third round: %v a minute, want 2", got)
	}
	// A first round that stands for no time has no rate; the next one,
	// 5 s later, makes 2 + 3 over 5 s = 60 a minute.
	var w3 Window
	if got := w3.Add(t0, 2, 0); got != 0 {
		t.Fatalf("round of no span: %v, want 0", got)
	}
	if got := w3.Add(t0.Add(5*time.Second), 3, 5*time.Second); got != 60 {
		t.Fatalf("second round: %v a minute, want 60", got)
	}
	// A gap of two minutes: only the newest round is kept, over its span.
	if got := w3.Add(t0.Add(125*time.Second), 4, 2*time.Minute); got != 2 || w3.Len() != 1 {
		t.Fatalf("after a gap: %v a minute over %d rounds, want 2 over 1", got, w3.Len())
	}
}
