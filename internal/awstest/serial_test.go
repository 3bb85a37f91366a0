package awstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
)

// TestConditionalWritesHaveOneWinner races writers on each item with the
// same condition, as checkers taking a lease do: DynamoDB lets exactly one
// of them through, and so must the emulator as the tests reach it.
func TestConditionalWritesHaveOneWinner(t *testing.T) {
	const region, items, writers = "us-east-1", 40, 6
	m := Shared(t)
	c := awsclienttest.Factory(t, m.URL, awsclienttest.Region(region)).DynamoDB(region)
	table := UniqueName(t, "leases")
	CreateLeaseTable(t, c, table)
	ctx := context.Background()

	wins := make([]int, items)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, items*writers)
	for i := range items {
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{
					TableName:                 aws.String(table),
					Key:                       map[string]ddbtypes.AttributeValue{"key": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("group/g%02d", i)}},
					UpdateExpression:          aws.String("SET #o = :o ADD #c :one"),
					ConditionExpression:       aws.String("attribute_not_exists(#k)"),
					ExpressionAttributeNames:  map[string]string{"#o": "owner", "#c": "counter", "#k": "key"},
					ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":o": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprint(w)}, ":one": &ddbtypes.AttributeValueMemberN{Value: "1"}},
				})
				var ccf *ddbtypes.ConditionalCheckFailedException
				switch {
				case err == nil:
					mu.Lock()
					wins[i]++
					mu.Unlock()
				case !errors.As(err, &ccf):
					errs <- err
				}
			})
		}
		close(start)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("write failed otherwise than on its condition: %v", err)
	}
	for i, n := range wins {
		if n != 1 {
			t.Errorf("item g%02d: %d of %d writers passed the same condition, want exactly 1", i, n, writers)
		}
	}
	out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range out.Items {
		if n := it["counter"].(*ddbtypes.AttributeValueMemberN).Value; n != "1" {
			t.Errorf("item %v: counter %s, want 1 (one write applied)", it["key"], n)
		}
	}
}
