package poller

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/queuechecker/queue-checker/internal/config"
)

// planGroup is a group of the plan's tests: its queues' URLs and its fleet.
func planGroup(name string, cloudWatch bool, fleet config.Fleet, urls ...string) config.Group {
	g := config.Group{Name: name, Fleet: fleet, OldestAge: config.OldestAge{CloudWatch: cloudWatch}}
	for _, u := range urls {
		g.Queues = append(g.Queues, config.Queue{URL: u})
	}
	return g
}

func asgFleet(name, region string) config.Fleet {
	return config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: name, Region: region}}
}

func ecsFleet(cluster, service string) config.Fleet {
	return config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: service}}
}

const (
	urlEast = "https://sqs.us-east-1.amazonaws.com/123456789012/"
	urlWest = "https://sqs.eu-west-1.amazonaws.com/123456789012/"
)

func TestPlanPolling(t *testing.T) {
	t.Parallel()
	// 51 Auto Scaling groups of one region: two calls, 50 names and 1.
	var many []config.Group
	var manyNames []string
	for i := range 51 {
		name := fmt.Sprintf("asg-%02d", 50-i) // configured in reverse; read sorted
		many = append(many, planGroup(fmt.Sprintf("g%d", i), false, asgFleet(name, ""), urlEast+name))
		manyNames = append(manyNames, fmt.Sprintf("asg-%02d", i))
	}
	// 11 services of one cluster: two calls, 10 and 1.
	var services []config.Group
	for i := range 11 {
		services = append(services, planGroup(fmt.Sprintf("s%d", i), false, ecsFleet("jobs", fmt.Sprintf("svc-%02d", i)), urlEast+"s"))
	}
	tests := []struct {
		name    string
		groups  []config.Group
		check   func(t *testing.T, p pollPlan)
		wantErr string
	}{
		{
			name: "regions from the URLs, CloudWatch names once per region",
			groups: []config.Group{
				planGroup("a", true, config.Fleet{}, urlEast+"orders", urlWest+"orders"),
				planGroup("b", true, config.Fleet{}, urlEast+"orders", urlEast+"refunds"),
				planGroup("c", false, config.Fleet{}, urlWest+"quiet"),
			},
			check: func(t *testing.T, p pollPlan) {
				if want := []string{"eu-west-1", "us-east-1"}; !reflect.DeepEqual(p.regions, want) {
					t.Errorf("regions %v, want %v", p.regions, want)
				}
				want := map[string][]string{"us-east-1": {"orders", "refunds"}, "eu-west-1": {"orders"}}
				if !reflect.DeepEqual(p.cwNames, want) {
					t.Errorf("CloudWatch names %v, want %v", p.cwNames, want)
				}
				if q := p.groups[0].queues[1]; q != (queuePlan{name: "orders", url: urlWest + "orders", region: "eu-west-1"}) {
					t.Errorf("a's second queue %+v", q)
				}
				for _, g := range p.groups {
					if g.fleet != -1 {
						t.Errorf("%s reads fleet %d; it names none", g.config.Name, g.fleet)
					}
				}
			},
		},
		{
			name:   "a queue's region set overrides its URL's",
			groups: []config.Group{{Name: "a", Queues: []config.Queue{{URL: "http://127.0.0.1:4566/000000000000/q", Region: "ap-south-1"}}}},
			check: func(t *testing.T, p pollPlan) {
				if got := p.groups[0].queues[0].region; got != "ap-south-1" {
					t.Errorf("region %q, want ap-south-1", got)
				}
			},
		},
		{
			name: "two groups of one Auto Scaling group share its reader; a fleet's region defaults",
			groups: []config.Group{
				planGroup("a", false, asgFleet("workers", ""), urlEast+"a"),
				planGroup("b", false, asgFleet("workers", "us-west-2"), urlEast+"b"),
				planGroup("c", false, asgFleet("workers", "eu-central-1"), urlEast+"c"),
			},
			check: func(t *testing.T, p pollPlan) {
				if p.groups[0].fleet != p.groups[1].fleet || p.groups[0].fleet == p.groups[2].fleet {
					t.Errorf("fleets %d %d %d: a and b share, c is another", p.groups[0].fleet, p.groups[1].fleet, p.groups[2].fleet)
				}
				want := []asgRead{{region: "eu-central-1", names: []string{"workers"}}, {region: "us-west-2", names: []string{"workers"}}}
				if !reflect.DeepEqual(p.asgReads, want) {
					t.Errorf("reads %+v, want %+v", p.asgReads, want)
				}
			},
		},
		{
			name:   "Auto Scaling groups 50 to a call, by name",
			groups: many,
			check: func(t *testing.T, p pollPlan) {
				if len(p.asgReads) != 2 || !reflect.DeepEqual(p.asgReads[0].names, manyNames[:50]) || !reflect.DeepEqual(p.asgReads[1].names, manyNames[50:]) {
					t.Fatalf("reads %+v, want the 51 names sorted, 50 and 1", p.asgReads)
				}
				for i, g := range p.groups {
					if f := p.fleets[g.fleet]; f.name != g.config.Fleet.AutoScalingGroup.Name || f.region != "us-west-2" {
						t.Errorf("group %d reads %+v, want %s in the default region", i, f, g.config.Fleet.AutoScalingGroup.Name)
					}
				}
			},
		},
		{
			name:   "ECS services 10 to a call",
			groups: services,
			check: func(t *testing.T, p pollPlan) {
				if len(p.ecsReads) != 2 || len(p.ecsReads[0].services) != 10 || p.ecsReads[1].services[0] != "svc-10" ||
					p.ecsReads[0].cluster != "jobs" || p.ecsReads[0].region != "us-west-2" {
					t.Errorf("reads %+v, want svc-00..09 and svc-10 of jobs in us-west-2", p.ecsReads)
				}
			},
		},
		{
			name: "workloads first among the fleets, then Auto Scaling, then ECS",
			groups: []config.Group{
				planGroup("e", false, ecsFleet("c", "s"), urlEast+"e"),
				planGroup("a", false, asgFleet("w", ""), urlEast+"a"),
				planGroup("k", false, config.Fleet{Kubernetes: &config.Kubernetes{Namespace: "jobs", Deployment: "worker"}}, urlEast+"k"),
			},
			check: func(t *testing.T, p pollPlan) {
				var kinds []string
				for _, f := range p.fleets {
					kinds = append(kinds, f.kind)
				}
				if want := []string{KindKubernetes, KindAutoScaling, KindECS}; !reflect.DeepEqual(kinds, want) {
					t.Errorf("fleets %v, want %v", kinds, want)
				}
				for _, g := range p.groups {
					if f := p.fleets[g.fleet]; !strings.Contains(f.name, map[string]string{"e": "s", "a": "w", "k": "worker"}[g.config.Name]) {
						t.Errorf("%s reads %+v", g.config.Name, f)
					}
				}
			},
		},
		{
			name:    "a queue with no region",
			groups:  []config.Group{planGroup("a", false, config.Fleet{}, urlEast+"a", "http://127.0.0.1:4566/000000000000/local")},
			wantErr: `groups[0].queues[1]: the URL "http://127.0.0.1:4566/000000000000/local" names no region and no region is set`,
		},
		{
			name:    "a bad queue URL",
			groups:  []config.Group{planGroup("a", false, config.Fleet{}), planGroup("b", false, config.Fleet{}, "https://sqs.us-east-1.amazonaws.com/q")},
			wantErr: "groups[1].queues[0]: queue URL",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := planPolling(config.Config{Groups: tt.groups}, "us-west-2")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.groups) != len(tt.groups) {
				t.Fatalf("%d groups planned, want %d", len(p.groups), len(tt.groups))
			}
			tt.check(t, p)
		})
	}
}

func TestPlanPollingFleetWithoutRegion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		fleet config.Fleet
		want  string
	}{
		{asgFleet("w", ""), "groups[0].fleet.autoscaling_group: no region set and no default region"},
		{ecsFleet("c", "s"), "groups[0].fleet.ecs_service: no region set and no default region"},
	} {
		_, err := planPolling(config.Config{Groups: []config.Group{planGroup("a", false, tc.fleet, urlEast+"a")}}, "")
		if err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
