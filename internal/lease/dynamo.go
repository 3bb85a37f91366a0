package lease

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// dynamoStore keeps the leases as items of a DynamoDB table (see the
// package's comment), with conditional writes on the counter.
type dynamoStore struct {
	api   dynamoAPI
	table string
	units *units // the request units the calls consume
}

func (d *dynamoStore) String() string { return "lease table " + d.table }

// endHeartbeat ends the heartbeat on condition of the session.
func (d *dynamoStore) endHeartbeat(ctx context.Context, id, session string, now time.Time) error {
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      keyOf(checkerPrefix + id),
		UpdateExpression:         aws.String("SET #e = :e"),
		ConditionExpression:      aws.String("#s = :s"),
		ExpressionAttributeNames: map[string]string{"#e": attrExpires, "#s": attrSession},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":e": millis(now), ":s": str(session),
		},
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return err
	}
	return nil
}

// scan reads every item of the table with strongly consistent reads.
func (d *dynamoStore) scan(ctx context.Context) (map[string]item, error) {
	items := map[string]item{}
	var start map[string]types.AttributeValue
	for {
		out, err := d.api.Scan(ctx, &dynamodb.ScanInput{
			TableName: aws.String(d.table), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		})
		if err != nil {
			return nil, fmt.Errorf("scan lease table %s: %w", d.table, err)
		}
		d.units.scanned(out.ConsumedCapacity, out.Items)
		for _, av := range out.Items {
			if k, it, ok := parseItem(av); ok {
				items[k] = it
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		start = out.LastEvaluatedKey
	}
}

// heartbeat writes the heartbeat item.
func (d *dynamoStore) heartbeat(ctx context.Context, id, session string, exp time.Time) error {
	out, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:              aws.String(d.table),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		Key:                    keyOf(checkerPrefix + id),
		// The counter is set, not added to: a heartbeat is written by its
		// checker alone, on no condition, and a counter left there by
		// hand (a string, 64 bits' end) must not make ADD fail.
		UpdateExpression: aws.String("SET #o = :o, #s = :s, #e = :e, #t = :t, #c = :c"),
		ExpressionAttributeNames: map[string]string{
			"#o": attrOwner, "#s": attrSession, "#e": attrExpires, "#t": attrTTL, "#c": attrCounter,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":o": str(id), ":s": str(session), ":e": millis(exp), ":t": seconds(exp.Add(ttlAfterExpiry)), ":c": millis(exp),
		},
	})
	d.units.updated(consumed(out), err)
	if err != nil {
		return fmt.Errorf("write the heartbeat of %s: %w", id, err)
	}
	return nil
}

// write sets a lease's owner, session and expiry and increments its
// counter, on condition that the item is as seen (counter seen, or absent
// when seen is -1, or a malformed counter still stored as raw). It returns
// the new counter, and whether the condition failed.
func (d *dynamoStore) write(ctx context.Context, group, owner, session string, seen int64, raw types.AttributeValue, exp time.Time) (int64, bool, error) {
	cond := "#c = :seen"
	values := map[string]types.AttributeValue{
		":o": str(owner), ":s": str(session), ":e": millis(exp), ":t": seconds(exp.Add(ttlAfterExpiry)),
		":one": number(1),
	}
	names := map[string]string{
		"#o": attrOwner, "#s": attrSession, "#e": attrExpires, "#t": attrTTL, "#c": attrCounter,
	}
	update := "SET #o = :o, #s = :s, #e = :e, #t = :t ADD #c :one"
	switch {
	case seen == counterMalformed && raw == nil:
		// An item with no counter: taken on condition it still has none,
		// and given one.
		cond = "attribute_exists(#k) AND attribute_not_exists(#c)"
		names["#k"] = attrKey
		update = "SET #o = :o, #s = :s, #e = :e, #t = :t, #c = :one"
	case seen == counterMalformed:
		// A counter no checker wrote (a string, -1, 1.5, beyond 64 bits):
		// taken on condition it is still exactly the value seen, and
		// replaced by one.
		cond = "#c = :raw"
		values[":raw"] = raw
		update = "SET #o = :o, #s = :s, #e = :e, #t = :t, #c = :one"
	case seen < 0:
		cond = "attribute_not_exists(#k)"
		names["#k"] = attrKey
	case seen == math.MaxInt64:
		// ADD would carry the counter past 64 bits, where no checker reads
		// it: it starts over at 0 instead, on the same condition.
		values[":seen"] = number(seen)
		values[":zero"] = number(0)
		delete(values, ":one")
		update = "SET #o = :o, #s = :s, #e = :e, #t = :t, #c = :zero"
	default:
		values[":seen"] = number(seen)
	}
	out, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       keyOf(groupPrefix + group),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueUpdatedNew,
		ReturnConsumedCapacity:    types.ReturnConsumedCapacityTotal,
	})
	d.units.updated(consumed(out), err)
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if errors.As(err, &ccf) {
			return 0, true, nil
		}
		return 0, false, err
	}
	n, err := writtenCounter(out.Attributes[attrCounter])
	if err != nil {
		// The write went through, but the counter it left is not one the
		// next conditional write can name: the caller treats the lease as
		// not renewed, and the next scan shows it.
		return 0, false, fmt.Errorf("lease of %s written, but %w", group, err)
	}
	return n, false, nil
}

// writtenCounter is the counter a write returned, or why it is not a whole
// number >= 0: never a silent 0, which the next renewal would condition on
// and fail.
func writtenCounter(av types.AttributeValue) (int64, error) {
	v, ok := av.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("the table returned %s", counterText(av))
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("the table returned %s", counterText(av))
	}
	return n, nil
}
