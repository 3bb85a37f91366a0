package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"

	"github.com/queuechecker/queue-checker/internal/awsclient"
	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/switchkey"
)

// heldSwitches are switch tags the checker cannot read or follow: the
// spellings operators typed (other words, misspellings three edits away,
// negations that folding once turned into their opposite), values not
// understood, a pin that is not a whole number and one above max, and a
// spread of the generated near misses of every switch's key.
func heldSwitches() [][2]string {
	out := [][2]string{
		{"queue-checker:paws", "true"}, {"queue-checker:pausing", "true"}, {"queue-checker:hold", "true"},
		{"queue-checker:scale-in-enabled", "false"}, {"queue-checker:scale-out-only", "true"}, {"queue-checker:pinned", "5"},
		{"queue-checker:no-scale-in", "true"}, {"queue-checker:unpaused", "true"},
		{"queue-checker:pin", "3.0"}, {"queue-checker:pin", "99999"}, {"queue-checker:paused", "yes"},
		{"queue-checker:scale-in", "no"}, {"queue-cheker:paused", "true"},
	}
	near := switchkey.NearMisses()
	const spread = 12
	for i := range spread {
		out = append(out, [2]string{near[i*len(near)/spread], "true"})
	}
	return out
}

// tagASG sets one tag on an Auto Scaling group in east.
func tagASG(t *testing.T, f *awsclient.Factory, asg, key, value string) {
	t.Helper()
	if _, err := f.AutoScaling(east).CreateOrUpdateTags(context.Background(), &autoscaling.CreateOrUpdateTagsInput{Tags: []asgtypes.Tag{{
		Key: aws.String(key), Value: aws.String(value), ResourceId: aws.String(asg),
		ResourceType: aws.String("auto-scaling-group"), PropagateAtLaunch: aws.Bool(false)}}}); err != nil {
		t.Fatalf("tag %s with %q=%q: %v", asg, key, value, err)
	}
}

// TestE2ESwitchTagsNotUnderstoodHold runs the daemon against moto with one
// Auto Scaling group per switch tag it cannot read or follow (heldSwitches),
// each at 5 of max 8 over an empty queue, and one untagged group beside
// them. The untagged group scales in to its min; every tagged one is held:
// no SetDesiredCapacity call reaches moto for it (0 scale-ins, 0
// scale-outs), its desired capacity stays 5, and it says why on the status
// page, in /api/v1/groups (switch_problems, hold_reason), in
// checker_group_switch_problems and in the log, one warning for each.
func TestE2ESwitchTagsNotUnderstoodHold(t *testing.T) {
	t.Parallel()
	f := direct(t)
	moto := awstest.Shared(t)
	proxy := awstest.NewProxy(t, moto.URL)
	scalings := watchScaling(proxy)
	q := makeQueue(t, f, queueSpec{region: east})
	tags := heldSwitches()
	group := func(name, asg string) e2eGroup {
		return e2eGroup{name: name, queues: []testQueue{q}, serviceTime: time.Second, latency: 5 * time.Second, drainTime: time.Minute,
			forecastOff: true, arrivalSmoothing: time.Second, asg: asg, min: 1, max: 8, scaleInStabilization: 2 * time.Second}
	}
	control := makeASG(t, f, 1, 8, 5)
	groups := []e2eGroup{group("control", control)}
	asgs := map[string]string{} // group -> ASG
	for i, kv := range tags {
		asg := makeASG(t, f, 1, 8, 5)
		tagASG(t, f, asg, kv[0], kv[1])
		name := fmt.Sprintf("held-%02d", i)
		asgs[name] = asg
		groups = append(groups, group(name, asg))
	}
	start := time.Now()
	d := startDaemon(t, writeConfig(t, e2eConfig{endpoint: proxy.URL, interval: time.Second, groups: groups}))

	eventually(t, 60*time.Second, "the untagged group scales in to its min", func() bool { return asgDesired(t, f, control) == 1 })
	// Several cycles more with every group read and decided.
	time.Sleep(4 * time.Second)

	for _, s := range scalings.since(start) {
		if s.group != control {
			t.Errorf("SetDesiredCapacity(%s, %d) %s after start, want no call for a group held by a switch", s.group, s.desired, s.at.Sub(start).Round(time.Millisecond))
		}
	}
	// The metrics and the API are read together until every held group's
	// last decision is the switch's hold, for up to 20 s: on a loaded
	// machine a cycle whose calls miss their deadline holds the groups for
	// the data it lacks, rightly, and says so instead. The checks below
	// are on the last read.
	var (
		metrics string
		api     struct {
			Groups []struct {
				Name     string `json:"name"`
				Decision *struct {
					DesiredWorkers int      `json:"desired_workers"`
					HoldReason     string   `json:"hold_reason"`
					SwitchProblems []string `json:"switch_problems"`
				} `json:"decision"`
			} `json:"groups"`
		}
	)
	pollUntil(20*time.Second, 250*time.Millisecond, func() bool {
		_, metrics = d.get(t, "/metrics")
		_, body := d.get(t, "/api/v1/groups")
		api.Groups = nil
		if err := json.Unmarshal([]byte(body), &api); err != nil {
			t.Fatalf("/api/v1/groups: %v", err)
		}
		held := 0
		for _, g := range api.Groups {
			if strings.HasPrefix(g.Name, "held-") && g.Decision != nil && g.Decision.HoldReason == "switch not understood" {
				held++
			}
		}
		return held == len(tags)
	})
	decided := map[string]int{}
	for _, g := range api.Groups {
		i := -1
		if _, err := fmt.Sscanf(g.Name, "held-%d", &i); err != nil {
			continue
		}
		kv := tags[i]
		decided[g.Name]++
		if got := asgDesired(t, f, asgs[g.Name]); got != 5 {
			t.Errorf("%s (tag %q=%q): desired capacity %d, want 5 held", g.Name, kv[0], kv[1], got)
		}
		if g.Decision == nil || g.Decision.HoldReason != "switch not understood" || len(g.Decision.SwitchProblems) != 1 ||
			!strings.Contains(g.Decision.SwitchProblems[0], kv[0]) && !strings.Contains(g.Decision.SwitchProblems[0], "pin=99999") {
			t.Errorf("%s (tag %q=%q): API decision %+v, want held for the switch, naming it", g.Name, kv[0], kv[1], g.Decision)
		}
		if v, ok := metricValue(metrics, "checker_group_switch_problems", map[string]string{"group": g.Name}); !ok || v != 1 {
			t.Errorf("%s: checker_group_switch_problems = %v (found %t), want 1", g.Name, v, ok)
		}
		// The page, likewise, within 20 s.
		if !pollUntil(20*time.Second, 250*time.Millisecond, func() bool {
			_, page := d.get(t, "/?group="+g.Name)
			return strings.Contains(page, "Held, switch not understood")
		}) {
			t.Errorf("%s: the status page does not say the group is held for a switch not understood", g.Name)
		}
	}
	if len(decided) != len(tags) {
		t.Errorf("%d held groups in /api/v1/groups, want %d", len(decided), len(tags))
	}
	if v, ok := metricValue(metrics, "checker_group_switch_problems", map[string]string{"group": "control"}); !ok || v != 0 {
		t.Errorf("control: checker_group_switch_problems = %v (found %t), want 0", v, ok)
	}
	if strings.Contains(metrics, "pin=99999") {
		t.Error("a tag value leaked into a metric label")
	}

	// One warning per switch, though every cycle reads it again.
	warned := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(d.logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg   string `json:"msg"`
			Group string `json:"group"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "switch not understood; the group is held" {
			warned[line.Group]++
		}
	}
	for name := range asgs {
		if warned[name] != 1 {
			t.Errorf("%s: %d warnings logged, want 1", name, warned[name])
		}
	}
	if warned["control"] != 0 {
		t.Errorf("control: %d switch warnings logged, want none", warned["control"])
	}
}
