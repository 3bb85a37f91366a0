// The table's items: their attribute names, and how an item is read from
// and written to its attribute values.

package lease

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Item attribute names and key prefixes of the table.
const (
	attrKey     = "key"
	attrOwner   = "owner"
	attrSession = "session"
	attrCounter = "counter"
	attrExpires = "expires"
	attrTTL     = "ttl"

	groupPrefix   = "group/"
	checkerPrefix = "checker/"

	// ttlAfterExpiry is how long an item outlives its lease before
	// DynamoDB's time to live may delete it.
	ttlAfterExpiry = time.Hour
)

// item is one item of the table as scanned.
type item struct {
	owner, session string
	// counter is counterMalformed when the item's counter is not a whole
	// number >= 0 as a checker writes it: missing, of another type,
	// negative, fractional or beyond 64 bits.
	counter int64
	// rawCounter is the counter attribute exactly as stored; nil when the
	// item has none. A malformed counter is taken over on condition that
	// the item still holds this very value (see write).
	rawCounter types.AttributeValue
	expires    time.Time
}

// counterMalformed is the counter of an item whose counter no checker
// wrote (an item written by hand, or by something else).
const counterMalformed = -2

// maxClockSkew bounds how far ahead of this checker's clock a peer's clock
// may be: an expiry beyond the lease duration and this is no lease a live
// checker holds (a checker with a clock years ahead, or a hand-written
// item) and counts as expired.
const maxClockSkew = 5 * time.Minute

func parseItem(av map[string]types.AttributeValue) (string, item, bool) {
	str := func(name string) string {
		if v, ok := av[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	num := func(name string) int64 {
		if v, ok := av[name].(*types.AttributeValueMemberN); ok {
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err == nil {
				return n
			}
		}
		return 0
	}
	k := str(attrKey)
	if k == "" {
		return "", item{}, false
	}
	it := item{owner: str(attrOwner), session: str(attrSession), counter: counterMalformed,
		rawCounter: av[attrCounter], expires: time.UnixMilli(num(attrExpires))}
	if v, ok := av[attrCounter].(*types.AttributeValueMemberN); ok {
		if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil && n >= 0 {
			it.counter = n
		}
	}
	return k, it, true
}

// nextCounter is the counter a write after seen leaves: seen + 1, or 0
// past the largest 64-bit number, where a checker could not read it.
func nextCounter(seen int64) int64 {
	if seen == math.MaxInt64 {
		return 0
	}
	return seen + 1
}

// counterText describes a malformed counter for a warning: its stored
// value, shortened.
func counterText(av types.AttributeValue) string {
	switch v := av.(type) {
	case nil:
		return "no counter"
	case *types.AttributeValueMemberN:
		return fmt.Sprintf("counter %s is not a whole number >= 0", clip(v.Value))
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("counter is the string %q, not a number", clip(v.Value))
	default:
		return fmt.Sprintf("counter is a %T, not a number", av)
	}
}

// clip shortens a stored value for a log line.
func clip(s string) string {
	const most = 40
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}

func millis(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}

func seconds(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.Unix(), 10)}
}

func number(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func keyOf(k string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrKey: str(k)}
}
