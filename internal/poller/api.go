package poller

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/queuechecker/queue-checker/internal/awsclient"
)

// The SDK methods the poller calls, and nothing else.
type (
	sqsAPI interface {
		GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	}
	cloudWatchAPI interface {
		GetMetricData(context.Context, *cloudwatch.GetMetricDataInput, ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
	}
	autoScalingAPI interface {
		DescribeAutoScalingGroups(context.Context, *autoscaling.DescribeAutoScalingGroupsInput, ...func(*autoscaling.Options)) (*autoscaling.DescribeAutoScalingGroupsOutput, error)
	}
	ecsAPI interface {
		DescribeServices(context.Context, *ecs.DescribeServicesInput, ...func(*ecs.Options)) (*ecs.DescribeServicesOutput, error)
		ListTasks(context.Context, *ecs.ListTasksInput, ...func(*ecs.Options)) (*ecs.ListTasksOutput, error)
		DescribeTasks(context.Context, *ecs.DescribeTasksInput, ...func(*ecs.Options)) (*ecs.DescribeTasksOutput, error)
	}
)

var (
	_ sqsAPI         = (*sqs.Client)(nil)
	_ sqsAPI         = (*awsclient.QueueAttributes)(nil)
	_ cloudWatchAPI  = (*cloudwatch.Client)(nil)
	_ autoScalingAPI = (*autoscaling.Client)(nil)
	_ ecsAPI         = (*ecs.Client)(nil)
)

// clientSource hands out one client per service and region.
type clientSource interface {
	sqs(region string) sqsAPI
	cloudWatch(region string) cloudWatchAPI
	autoScaling(region string) autoScalingAPI
	ecs(region string) ecsAPI
	defaultRegion() string
}

// factoryClients is the clientSource of the real SDK clients.
type factoryClients struct{ f *awsclient.Factory }

func (c factoryClients) sqs(region string) sqsAPI                 { return c.f.QueueAttributesClient(region) }
func (c factoryClients) cloudWatch(region string) cloudWatchAPI   { return c.f.CloudWatch(region) }
func (c factoryClients) autoScaling(region string) autoScalingAPI { return c.f.AutoScaling(region) }
func (c factoryClients) ecs(region string) ecsAPI                 { return c.f.ECS(region) }
func (c factoryClients) defaultRegion() string                    { return c.f.DefaultRegion() }
