package config

import (
	"strings"

	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// AllFIFO reports whether every queue of the group is a FIFO queue: its
// name, the URL's last element, ends in .fifo (as SQS requires of FIFO
// queues' names).
func (g Group) AllFIFO() bool {
	for _, q := range g.Queues {
		name, _, err := sqsurl.Parse(q.URL)
		if err != nil || !strings.HasSuffix(name, ".fifo") {
			return false
		}
	}
	return len(g.Queues) > 0
}
