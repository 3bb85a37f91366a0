package queueworld

import (
	"math"
	"testing"
)

// The world's counts against what its rules give by hand.
func TestWorld(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		w    *World
		// after 3 minutes of 3 msg/s with 5 workers
		visible, inFlight [2]int // inclusive range
		deleted2, sent2   [2]int // minute 2's counts
		within            bool   // every deletion within the promise
	}{
		// Every message handled in 1 s: 3 in flight, all deleted.
		{"steady", &World{Handle: Steady(1)}, [2]int{0, 0}, [2]int{2, 4}, [2]int{178, 182}, [2]int{180, 180}, true},
		// Nothing deleted from 60 s on: every message since is in the
		// queue, the last 15 s of receipts in flight (5 workers, 1 s each:
		// 75), the rest visible.
		{"outage", &World{Handle: Outage(60, 1)}, [2]int{360 + 2 - 75 - 3, 360 + 2 - 75 + 3}, [2]int{74, 75}, [2]int{0, 0}, [2]int{180, 180}, false},
		// A tenth of the messages from 60 s on never leave: 36 of them,
		// received again every 15 s while workers are free.
		{"poison", &World{Handle: Poison(0.1, 60, 1)}, [2]int{0, 6}, [2]int{36, 42}, [2]int{155, 164}, [2]int{180, 180}, false},
		// Kept in flight for an hour: in flight grows by what fails.
		{"poison kept", &World{Handle: Poison(0.3, 60, 1), Visibility: 3600}, [2]int{0, 0}, [2]int{108, 112}, [2]int{124, 128}, [2]int{180, 180}, true},
		// Batches of up to ten, filled for 2 s: every message deleted.
		{"batches", &World{Handle: Steady(0.3), Batch: 10, Fill: 2}, [2]int{0, 0}, [2]int{3, 30}, [2]int{170, 190}, [2]int{180, 180}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := tt.w
			w.Rate = func(float64) float64 { return 3 }
			w.Run(180, 5)
			v, f := w.Counts()
			sent, del, over := w.Minute(2)
			if v < tt.visible[0] || v > tt.visible[1] || f < tt.inFlight[0] || f > tt.inFlight[1] {
				t.Errorf("visible %d, in flight %d; want %v and %v", v, f, tt.visible, tt.inFlight)
			}
			if !over || sent < tt.sent2[0] || sent > tt.sent2[1] || del < tt.deleted2[0] || del > tt.deleted2[1] {
				t.Errorf("minute 2: sent %d, deleted %d (over %t); want %v and %v", sent, del, over, tt.sent2, tt.deleted2)
			}
			within, late := w.Served()
			if tt.within && late > 0 {
				t.Errorf("%d late of %d", late, within+late)
			}
			// Every message sent is deleted or still in the queue.
			total := 0
			for k := 0; k <= 3; k++ {
				s, d, _ := w.Minute(k)
				total += s - d
			}
			if total != v+f {
				t.Errorf("sent less deleted %d, %d in the queue", total, v+f)
			}
		})
	}
}

// A wall of 2 msg/s serves 2 of 3 msg/s.
func TestWall(t *testing.T) {
	t.Parallel()
	w := &World{Handle: Wall(2, 0, 0.5), Rate: func(float64) float64 { return 3 }}
	w.Run(300, 10)
	_, del, _ := w.Minute(3)
	if math.Abs(float64(del)-120) > 3 {
		t.Errorf("deleted %d in minute 3, want 120", del)
	}
}
