package lease

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// store is where the leases and the heartbeats live: a DynamoDB table
// (dynamoStore) or Kubernetes Leases (kubeStore). Every change of a lease
// is a compare-and-swap on its counter, so that a writer that saw an old
// state of it always fails.
type store interface {
	// scan reads every lease and heartbeat, keyed group/<name> and
	// checker/<id>, as it is now (no cached or stale read).
	scan(ctx context.Context) (map[string]item, error)
	// heartbeat writes checker/<id>: owner id, session and expiry exp.
	heartbeat(ctx context.Context, id, session string, exp time.Time) error
	// write sets group/<group>'s owner, session and expiry and increments
	// its counter, on condition that the lease is as seen: counter seen,
	// absent when seen is -1, or a malformed counter still stored as raw
	// when seen is counterMalformed. It returns the new counter, and
	// whether the condition failed.
	write(ctx context.Context, group, owner, session string, seen int64, raw types.AttributeValue, exp time.Time) (int64, bool, error)
	// endHeartbeat sets checker/<id>'s expiry to now if it is still of
	// session; another session's heartbeat is left alone without error.
	endHeartbeat(ctx context.Context, id, session string, now time.Time) error
	// String names the store in messages: "lease table NAME".
	String() string
}
