package config

import (
	"slices"
	"testing"
)

// SameTargets keeps the groups whose fleet and metrics stay, whatever else
// of them changes, and none when dry_run or the endpoint changes.
func TestSameTargets(t *testing.T) {
	t.Parallel()
	group := func(name, asg, region string, max int) Group {
		return Group{Name: name, Fleet: Fleet{AutoScalingGroup: &AutoScalingGroup{Name: asg, Region: region}, Max: max},
			Actions: Actions{SetDesiredCapacity: true, CloudWatchMetrics: &CloudWatchMetrics{Namespace: "QC"}}}
	}
	base := Config{AWS: AWS{Region: "us-east-1"}, Groups: []Group{
		group("same", "a", "", 5), group("settings", "b", "", 5), group("moved", "c", "", 5),
		group("region", "d", "", 5), group("gone", "e", "", 5), group("explicit", "f", "", 5),
	}}
	next := Config{AWS: AWS{Region: "us-east-1"}, Groups: []Group{
		group("same", "a", "", 5), group("settings", "b", "", 9), group("moved", "c2", "", 5),
		group("region", "d", "eu-west-1", 5), group("new", "g", "", 5), group("explicit", "f", "us-east-1", 5),
	}}
	if got, want := base.SameTargets(next), []string{"same", "settings", "explicit"}; !slices.Equal(got, want) {
		t.Errorf("SameTargets = %q, want %q", got, want)
	}
	metrics := next
	metrics.Groups = slices.Clone(next.Groups)
	metrics.Groups[0].Actions.CloudWatchMetrics = &CloudWatchMetrics{Namespace: "Other"}
	if got := base.SameTargets(metrics); slices.Contains(got, "same") {
		t.Errorf("SameTargets = %q: a group whose metrics namespace changed is not the same", got)
	}
	dry := next
	dry.DryRun = true
	if got := base.SameTargets(dry); len(got) != 0 {
		t.Errorf("SameTargets with dry_run changed = %q, want none", got)
	}
	moved := next
	moved.AWS.EndpointURL = "http://127.0.0.1:5000"
	if got := base.SameTargets(moved); len(got) != 0 {
		t.Errorf("SameTargets with the endpoint changed = %q, want none", got)
	}
}
