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
