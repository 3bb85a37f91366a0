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
			if got := g.AllFIFO(); got != tt.want {
				t.Errorf("FIFO %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPerQueueAuto(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     PerQueue
		queues int
		want   PerQueue
	}{
		{PerQueueAuto, 1, PerQueueAll},
		{PerQueueAuto, PerQueueAutoLimit, PerQueueAll},
		{PerQueueAuto, PerQueueAutoLimit + 1, PerQueueFailedOnly},
		{PerQueueAuto, 10000, PerQueueFailedOnly},
		{PerQueueAll, 10000, PerQueueAll},
		{PerQueueOff, 1, PerQueueOff},
	}
	for _, tt := range tests {
		if got := tt.in.Resolve(tt.queues); got != tt.want {
			t.Errorf("%s at %d queues: %s, want %s", tt.in, tt.queues, got, tt.want)
		}
	}
}
