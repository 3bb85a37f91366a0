package config

import (
	"fmt"

	"github.com/queuechecker/queue-checker/internal/sqsurl"
)

// RegionProblem says why region is not an AWS region, with the nearest
// known one as a hint; "" when it is one (see regionProblem).
func RegionProblem(region string) string { return regionProblem(region) }

// defaultRegionUsers are the paths of the keys that take aws.region, or the
// SDK's own region when it is empty, because they name no region of their
// own.
func (c Config) defaultRegionUsers() []string {
	var out []string
	if c.Coordination != nil && c.Coordination.Kubernetes == nil && c.Coordination.DynamoDB.Region == "" {
		out = append(out, "coordination.dynamodb")
	}
	for i, g := range c.Groups {
		path := indexPath("groups", i)
		for j, q := range g.Queues {
			if _, r, err := sqsurl.Parse(q.URL); err == nil && r == "" && q.Region == "" {
				out = append(out, joinPath(indexPath(joinPath(path, "queues"), j), "region"))
			}
		}
		switch {
		case g.Fleet.AutoScalingGroup != nil && g.Fleet.AutoScalingGroup.Region == "":
			out = append(out, joinPath(path, "fleet.autoscaling_group"))
		case g.Fleet.ECSService != nil && g.Fleet.ECSService.Region == "":
			out = append(out, joinPath(path, "fleet.ecs_service"))
		}
		if m := g.Actions.CloudWatchMetrics; m != nil && m.Region == "" {
			out = append(out, joinPath(path, "actions.cloudwatch_metrics"))
		}
	}
	return out
}

// CheckSDKRegion checks the region the AWS SDK resolves when aws.region is
// empty, for the keys that take it: a typing error there (AWS_REGION,
// AWS_DEFAULT_REGION, a shared config profile) would pass every other
// check and fail every call at run. resolve returns the SDK's region and
// where it comes from; it is called only when aws.region is empty and a
// key takes the default. It returns a FieldError at aws.region, or nil.
func (c Config) CheckSDKRegion(resolve func() (region, from string, err error)) error {
	if c.AWS.Region != "" {
		return nil
	}
	users := c.defaultRegionUsers()
	if len(users) == 0 {
		return nil
	}
	who := users[0]
	if len(users) > 1 {
		who += fmt.Sprintf(" and %d more", len(users)-1)
	}
	region, from, err := resolve()
	if err != nil {
		return &FieldError{Path: "aws.region", Msg: fmt.Sprintf("not set, and the SDK's region (for %s) is not known: %v", who, err)}
	}
	if region == "" {
		return nil // the queues' own check asks for a region where one is needed
	}
	if msg := regionProblem(region); msg != "" {
		return &FieldError{Path: "aws.region", Msg: fmt.Sprintf("not set, so the SDK's region from %s applies (to %s): %s", from, who, msg)}
	}
	return nil
}
