package lease

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/queuechecker/queue-checker/internal/callrate"
)

// What the table's calls cost is counted in request units, as DynamoDB
// on-demand bills them (docs/cost.md). Every Scan and UpdateItem asks for
// ReturnConsumedCapacity TOTAL, and the units DynamoDB reports are what is
// counted. Where it reports none, the units are estimated as DynamoDB
// reckons them:
//
//   - a Scan page read with strong consistency: 1 read unit per 4 KB of the
//     items it returns, rounded up, at least 1;
//   - an UpdateItem: 1 write unit (the items are well under 1 KB); one whose
//     condition failed is billed 1 write unit too, and its error carries no
//     report;
//   - a call that failed otherwise (throttled, refused, timed out) counts
//     nothing.
//
// The units of each Sync are rated per minute over the last minute of
// Syncs, as every rate of the checker's own bill is.

// readUnitBytes is what one strongly consistent read unit reads.
const readUnitBytes = 4096

// units counts the request units the table's calls consumed.
type units struct {
	mu            sync.Mutex
	reads, writes float64 // counted since the last fold
	readRate      callrate.Window
	writeRate     callrate.Window
	perMinute     [2]float64 // reads, writes
}

// reported is the units a ConsumedCapacity reports, and whether it reports any.
func reported(c *types.ConsumedCapacity) (float64, bool) {
	if c == nil || c.CapacityUnits == nil {
		return 0, false
	}
	v := *c.CapacityUnits
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// scanned counts one Scan page that was answered.
func (u *units) scanned(c *types.ConsumedCapacity, items []map[string]types.AttributeValue) {
	n, ok := reported(c)
	if !ok {
		n = scanReadUnits(items)
	}
	u.mu.Lock()
	u.reads += n
	u.mu.Unlock()
}

// updated counts one UpdateItem that returned err.
func (u *units) updated(c *types.ConsumedCapacity, err error) {
	n, ok := reported(c)
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err != nil && errors.As(err, &ccf):
		n = 1
	case err != nil:
		n = 0
	case !ok:
		n = 1
	}
	u.mu.Lock()
	u.writes += n
	u.mu.Unlock()
}

// fold ends a Sync at now that stands for per, and rates its units.
func (u *units) fold(now time.Time, per time.Duration) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.perMinute[0] = u.readRate.Add(now, u.reads, per)
	u.perMinute[1] = u.writeRate.Add(now, u.writes, per)
	u.reads, u.writes = 0, 0
}

// scanReadUnits estimates a strongly consistent Scan page's read units
// from the size of its items.
func scanReadUnits(items []map[string]types.AttributeValue) float64 {
	size := 0
	for _, it := range items {
		size += itemBytes(it)
	}
	return max(1, math.Ceil(float64(size)/readUnitBytes))
}

// itemBytes is an item's size as DynamoDB counts it, near enough for the
// lease table's items: each attribute's name and value, in bytes; a number
// counted as its text (DynamoDB stores it in at most that).
func itemBytes(it map[string]types.AttributeValue) int {
	n := 0
	for name, v := range it {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		default:
			n++ // BOOL, NULL; the table holds no sets, lists or maps
		}
	}
	return n
}

// RequestUnits is what the lease table's calls consumed per minute over
// the last minute of Syncs: read and write request units.
func (m *Manager) RequestUnits() (readsPerMinute, writesPerMinute float64) {
	m.units.mu.Lock()
	defer m.units.mu.Unlock()
	return m.units.perMinute[0], m.units.perMinute[1]
}
