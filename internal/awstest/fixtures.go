package awstest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

var (
	nameSeq    atomic.Int64
	unsafeName = regexp.MustCompile(`[^a-zA-Z0-9-]+`)
)

// UniqueName makes a resource name no other test of the binary uses:
// "<end of the test's name>-<what>-<n>", with the test's name cut to its
// last 40 characters, anything but letters, digits and '-' made '-', and n
// counting up across the binary. It suits every kind of resource the tests
// make (queue, group, cluster, service, metric namespace).
func UniqueName(t testing.TB, what string) string {
	base := strings.Trim(unsafeName.ReplaceAllString(t.Name(), "-"), "-")
	if len(base) > 40 {
		base = base[len(base)-40:]
	}
	return strings.Trim(fmt.Sprintf("%s-%s-%d", strings.Trim(base, "-"), what, nameSeq.Add(1)), "-")
}

// CreateAutoScalingGroup creates a launch configuration named name+"-lc"
// and the Auto Scaling group name using it, in the availability zone
// region+"a" (c must be a client of region), with the given bounds and
// desired capacity. It fails the test on any error.
func CreateAutoScalingGroup(t testing.TB, c *autoscaling.Client, region, name string, minSize, maxSize, desired int32) {
	t.Helper()
	ctx := context.Background()
	lc := name + "-lc"
	if _, err := c.CreateLaunchConfiguration(ctx, &autoscaling.CreateLaunchConfigurationInput{
		LaunchConfigurationName: aws.String(lc), ImageId: aws.String("ami-12c6146b"), InstanceType: aws.String("t3.micro"),
	}); err != nil {
		t.Fatalf("create launch configuration %s: %v", lc, err)
	}
	if _, err := c.CreateAutoScalingGroup(ctx, &autoscaling.CreateAutoScalingGroupInput{
		AutoScalingGroupName: aws.String(name), LaunchConfigurationName: aws.String(lc),
		MinSize: aws.Int32(minSize), MaxSize: aws.Int32(maxSize), DesiredCapacity: aws.Int32(desired),
		AvailabilityZones: []string{region + "a"},
	}); err != nil {
		t.Fatalf("create auto scaling group %s: %v", name, err)
	}
}

// CreateECSService creates the ECS cluster cluster, a task definition of
// the family service (one container, "worker") and the service service
// running it with the desired count, and returns the service's ARN. It
// fails the test on any error.
func CreateECSService(t testing.TB, c *ecs.Client, cluster, service string, desired int32) (serviceArn string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.CreateCluster(ctx, &ecs.CreateClusterInput{ClusterName: aws.String(cluster)}); err != nil {
		t.Fatalf("create cluster %s: %v", cluster, err)
	}
	td, err := c.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{
		Family: aws.String(service),
		ContainerDefinitions: []ecstypes.ContainerDefinition{{
			Name: aws.String("worker"), Image: aws.String("worker:latest"), Memory: aws.Int32(128),
		}},
	})
	if err != nil {
		t.Fatalf("register task definition %s: %v", service, err)
	}
	out, err := c.CreateService(ctx, &ecs.CreateServiceInput{
		Cluster: aws.String(cluster), ServiceName: aws.String(service),
		TaskDefinition: td.TaskDefinition.TaskDefinitionArn, DesiredCount: aws.Int32(desired),
	})
	if err != nil {
		t.Fatalf("create service %s/%s: %v", cluster, service, err)
	}
	return aws.ToString(out.Service.ServiceArn)
}
