package awstest

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	"github.com/aws/aws-sdk-go-v2/service/ecs"

	"github.com/queuechecker/queue-checker/internal/awsclient/awsclienttest"
)

func TestUniqueName(t *testing.T) {
	t.Run("a long name, with (odd) characters_", func(t *testing.T) {
		a, b := UniqueName(t, "q"), UniqueName(t, "q")
		if a == b {
			t.Fatalf("two calls gave %q", a)
		}
		for _, n := range []string{a, b} {
			// The last 40 characters of the test's name, made safe.
			const want = "iqueName-a-long-name-with-odd-characters-q-"
			if !strings.HasPrefix(n, want) || unsafeName.MatchString(n) {
				t.Errorf("UniqueName = %q, want %s<n>", n, want)
			}
		}
	})
}

func TestCreateFixtures(t *testing.T) {
	const region = "us-east-1"
	m := Shared(t)
	ctx := context.Background()
	f := awsclienttest.Factory(t, m.URL, awsclienttest.Region(region))

	asg := UniqueName(t, "asg")
	CreateAutoScalingGroup(t, f.AutoScaling(region), region, asg, 1, 5, 2)
	groups, err := f.AutoScaling(region).DescribeAutoScalingGroups(ctx, &autoscaling.DescribeAutoScalingGroupsInput{AutoScalingGroupNames: []string{asg}})
	if err != nil {
		t.Fatal(err)
	}
	if len(groups.AutoScalingGroups) != 1 {
		t.Fatalf("%d groups named %s, want 1", len(groups.AutoScalingGroups), asg)
	}
	g := groups.AutoScalingGroups[0]
	if lo, hi, d, lc := aws.ToInt32(g.MinSize), aws.ToInt32(g.MaxSize), aws.ToInt32(g.DesiredCapacity), aws.ToString(g.LaunchConfigurationName); lo != 1 || hi != 5 || d != 2 || lc != asg+"-lc" {
		t.Errorf("group min %d max %d desired %d launch configuration %q, want 1, 5, 2, %q", lo, hi, d, lc, asg+"-lc")
	}

	cluster, service := UniqueName(t, "cluster"), UniqueName(t, "svc")
	arn := CreateECSService(t, f.ECS(region), cluster, service, 3)
	services, err := f.ECS(region).DescribeServices(ctx, &ecs.DescribeServicesInput{Cluster: aws.String(cluster), Services: []string{service}})
	if err != nil {
		t.Fatal(err)
	}
	if len(services.Services) != 1 {
		t.Fatalf("%d services named %s/%s, want 1", len(services.Services), cluster, service)
	}
	if s := services.Services[0]; aws.ToString(s.ServiceArn) != arn || s.DesiredCount != 3 {
		t.Errorf("service %s desired %d, want %s, 3", aws.ToString(s.ServiceArn), s.DesiredCount, arn)
	}
}
