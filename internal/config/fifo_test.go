package config

import "testing"

func TestGroupIsFIFOWhenEveryQueueIs(t *testing.T) {
	t.Parallel()
	const base = "https://sqs.us-east-1.amazonaws.com/123456789012/"
	tests := []struct {
		name   string
		queues []string
		want   bool
	}{
		{"every queue FIFO", []string{base + "a.fifo", base + "b.fifo"}, true},
		{"one standard queue", []string{base + "a.fifo", base + "b"}, false},
		{"standard", []string{base + "a"}, false},
		{"no queue", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var g Group
			for _, u := range tt.queues {
				g.Queues = append(g.Queues, Queue{URL: u})
			}
			if got := g.PolicySettings(0).FIFO; got != tt.want {
				t.Errorf("FIFO %v, want %v", got, tt.want)
			}
		})
	}
}
