package lease

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TableDescriber is the one call CheckTable makes.
type TableDescriber interface {
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// CheckTable says whether a table can hold the leases: it exists, is
// active (or being updated), and its only key is the string partition key
// "key". A checker pointed at anything else would act on no group.
func CheckTable(ctx context.Context, api TableDescriber, table string) error {
	out, err := api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		var nf *types.ResourceNotFoundException
		if errors.As(err, &nf) {
			return fmt.Errorf("lease table %s does not exist (create it as docs/coordination.md says)", table)
		}
		return fmt.Errorf("lease table %s: %w", table, err)
	}
	t := out.Table
	if t == nil {
		return fmt.Errorf("lease table %s: DescribeTable answered no table", table)
	}
	if s := t.TableStatus; s != types.TableStatusActive && s != types.TableStatusUpdating {
		return fmt.Errorf("lease table %s is %s, not ACTIVE", table, s)
	}
	attrTypes := map[string]types.ScalarAttributeType{}
	for _, d := range t.AttributeDefinitions {
		attrTypes[aws.ToString(d.AttributeName)] = d.AttributeType
	}
	if len(t.KeySchema) != 1 || aws.ToString(t.KeySchema[0].AttributeName) != attrKey ||
		t.KeySchema[0].KeyType != types.KeyTypeHash || attrTypes[attrKey] != types.ScalarAttributeTypeS {
		return fmt.Errorf("lease table %s: its key must be the string partition key %q alone, and no sort key", table, attrKey)
	}
	return nil
}

// TableScanner is the one call Reachable makes.
type TableScanner interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// ErrNoTable is the error Reachable wraps when the table does not exist.
var ErrNoTable = errors.New("the lease table does not exist")

// Reachable reads one item of the table, with the permission the manager
// needs anyway (dynamodb:Scan): a checker started on a table that does not
// exist would share nothing and act on no group. It wraps ErrNoTable when
// the table does not exist; any other error is the call's.
func Reachable(ctx context.Context, api TableScanner, table string) error {
	_, err := api.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(1)})
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return fmt.Errorf("%w: %s (create it as docs/coordination.md says, or name the right table and region)", ErrNoTable, table)
	case err != nil:
		return fmt.Errorf("read lease table %s: %w", table, err)
	}
	return nil
}
