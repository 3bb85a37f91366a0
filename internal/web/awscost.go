package web

import (
	"fmt"

	"github.com/queuechecker/queue-checker/internal/awscost"
	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/readmodel"
)

// The checker's own AWS bill (docs/cost.md), for /api/v1/groups and the
// status page: per group under cost.aws, and in total, the lease table
// included, under aws_cost. Dollars a month at the last minute's rate,
// not rounded; the sentences round to the cent.

// groupAWSCostDoc is what the checker's calls for one group cost.
type groupAWSCostDoc struct {
	awscost.Rates
	awscost.Bill
	Summary string `json:"summary"`
}

func groupAWSCostOf(c readmodel.AWSCost) groupAWSCostDoc {
	b := c.Bill
	return groupAWSCostDoc{Rates: c.Rates, Bill: b,
		Summary: fmt.Sprintf("%s a month: SQS %s, CloudWatch reads %s, metrics published %s",
			capacity.FormatDollars(b.Total), capacity.FormatDollars(b.SQS),
			capacity.FormatDollars(b.CloudWatchReads), capacity.FormatDollars(b.MetricsPublished))}
}

// awsCostDoc is the checker's own AWS bill in total: the groups it acts
// on, and its lease table when it shares the groups.
type awsCostDoc struct {
	awscost.Rates
	awscost.Bill
	// LeaseTableDollarsPerMonth is the lease table's part of the DynamoDB
	// figure (all of it); null when the checker runs alone.
	LeaseTableDollarsPerMonth *float64 `json:"lease_table_dollars_per_month"`
	Summary                   string   `json:"summary"`
}

func awsCostOf(c readmodel.CheckerAWSCost) awsCostDoc {
	b := c.Bill
	d := awsCostDoc{Rates: c.Rates, Bill: b}
	d.Summary = fmt.Sprintf("%s a month: SQS %s, CloudWatch reads %s, metrics published %s",
		capacity.FormatDollars(b.Total), capacity.FormatDollars(b.SQS),
		capacity.FormatDollars(b.CloudWatchReads), capacity.FormatDollars(b.MetricsPublished))
	if c.LeaseTable != nil {
		t := c.LeaseTable.Bill.Total
		d.LeaseTableDollarsPerMonth = &t
		d.Summary += ", lease table (DynamoDB) " + capacity.FormatDollars(t)
	}
	return d
}
