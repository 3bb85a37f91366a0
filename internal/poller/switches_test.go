package poller

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/autoscaling"
	asgtypes "github.com/aws/aws-sdk-go-v2/service/autoscaling/types"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/queuechecker/queue-checker/internal/awstest"
	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/switchkey"
)

// issueSpellings are keys an operator typed that name no switch: other
// words, misspellings three edits away, negations that folding would have
// turned into their opposite.
var issueSpellings = []struct{ key, value string }{
	{"queue-checker:paws", "true"}, {"queue-checker:pausing", "true"}, {"queue-checker:hold", "true"},
	{"queue-checker:scale-in-enabled", "false"}, {"queue-checker:scale-out-only", "true"}, {"queue-checker:pinned", "5"},
	{"queue-checker:no-scale-in", "true"}, {"queue-checker:unpaused", "true"}, {"queue-checker:pause", "true"},
	{"queue-checker:scalin", "false"}, {"queue-cheker:paused", "true"}, {"queue-checker-paused", "true"},
}

// Keys in the checker's namespace that name no switch exactly hold the
// fleet, each with one problem naming the key: the spellings above, and
// every generated near miss of a switch (switchkey.NearMisses), on a tag
// and on an annotation. Nothing is read from them: no pause, pin or
// scale-in setting.
func TestSwitchKeysNotUnderstoodHold(t *testing.T) {
	t.Parallel()
	keys := map[string]string{}
	for _, sp := range issueSpellings {
		keys[sp.key] = sp.value
	}
	for _, k := range switchkey.NearMisses() {
		keys[k] = "true"
		keys[strings.Replace(k, "queue-checker:", "queue-checker/", 1)] = "false"
	}
	for k, v := range keys {
		for _, read := range []func(map[string]string) model.Switches{
			parseSwitches,
			func(tags map[string]string) model.Switches {
				return parseSwitchKeys(tags, "queue-checker/", "annotation")
			},
		} {
			got := read(map[string]string{k: v, "team": "media"})
			if len(got.NotUnderstood) != 1 || !strings.Contains(got.NotUnderstood[0], fmt.Sprintf("%q is not a switch this checker reads", k)) ||
				!strings.HasSuffix(got.NotUnderstood[0], "the group is held, neither scaled in nor out") {
				t.Fatalf("key %q=%s: switches %+v, want one problem naming the key", k, v, got)
			}
			if got.Paused || got.Pinned || got.ScaleInOff || len(got.Warnings) != 0 {
				t.Fatalf("key %q=%s: switches %+v, want nothing read from it", k, v, got)
			}
		}
	}
	t.Logf("%d keys, each held with one problem", len(keys))
}

// The switches in the spellings that fold to theirs (case, whitespace,
// '-', '_', '.', ':' or '/') are read, with one warning naming the key and
// what it was read as.
func TestSwitchKeysInOtherSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, value string
		want       model.Switches
		as         string
	}{
		{"queue-checker:Paused", "true", model.Switches{Paused: true}, TagPaused},
		{"queue-checker:paused ", "true", model.Switches{Paused: true}, TagPaused},
		{"Queue-Checker:Paused", "true", model.Switches{Paused: true}, TagPaused},
		{"queue_checker:paused", "true", model.Switches{Paused: true}, TagPaused},
		{"queue-checker/paused", "true", model.Switches{Paused: true}, TagPaused},
		{"queue-checker:scalein", "false", model.Switches{ScaleInOff: true}, TagScaleIn},
		{"queue-checker/scale-in", "false", model.Switches{ScaleInOff: true}, TagScaleIn},
		{"queue-checker:Scale_In", "TRUE", model.Switches{}, TagScaleIn},
		{"Queue-Checker:Pin", "3", model.Switches{Pinned: true, Pin: 3}, TagPin},
	} {
		got := parseSwitches(map[string]string{tc.key: tc.value, "team": "media"})
		warnings := got.Warnings
		got.Warnings = nil
		if !reflect.DeepEqual(got, tc.want) || len(warnings) != 1 || !strings.Contains(warnings[0], fmt.Sprintf("%q read as %s", tc.key, tc.as)) {
			t.Errorf("tag %q=%s: switches %+v, warnings %q; want %+v with one warning naming the key", tc.key, tc.value, got, warnings, tc.want)
		}
	}
}

func TestParseSwitches(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		tags map[string]string
		want model.Switches
		warn []string // fragments, one per warning
		hold []string // fragments, one per switch not understood
	}{
		{name: "none", tags: nil, want: model.Switches{}},
		{name: "other tags only", tags: map[string]string{"team": "media", "Name": "w"}, want: model.Switches{}},
		{name: "paused with who and when", tags: map[string]string{TagPaused: "true", TagPausedBy: "alice", TagPausedAt: "2025-03-01T12:00:00Z"},
			want: model.Switches{Paused: true, PausedBy: "alice", PausedSince: at}},
		{name: "paused=false drops who and when", tags: map[string]string{TagPaused: "false", TagPausedBy: "alice", TagPausedAt: "2025-03-01T12:00:00Z"},
			want: model.Switches{}},
		{name: "scale-in false", tags: map[string]string{TagScaleIn: "false"}, want: model.Switches{ScaleInOff: true}},
		{name: "scale-in true", tags: map[string]string{TagScaleIn: "TRUE"}, want: model.Switches{}},
		{name: "pin 0", tags: map[string]string{TagPin: "0"}, want: model.Switches{Pinned: true}},
		{name: "pin 12 with spaces", tags: map[string]string{TagPin: " 12 "}, want: model.Switches{Pinned: true, Pin: 12}},
		{name: "values not understood hold the group", tags: map[string]string{
			TagPaused: "yes please", TagScaleIn: "off", TagPin: "-1", TagPausedAt: "yesterday",
		}, hold: []string{`queue-checker:paused="yes please" not understood`, `queue-checker:pin="-1" not understood`,
			`queue-checker:scale-in="off" not understood`},
			warn: []string{`queue-checker:paused-at="yesterday" ignored`}},
		{name: "paused=maybe holds", tags: map[string]string{TagPaused: "maybe"}, hold: []string{`queue-checker:paused="maybe" not understood: want true or false`}},
		{name: "an empty paused tag holds", tags: map[string]string{TagPaused: ""}, hold: []string{`queue-checker:paused="" not understood`}},
		{name: "scale-in=no holds", tags: map[string]string{TagScaleIn: "no"}, hold: []string{`queue-checker:scale-in="no" not understood`}},
		{name: "an empty scale-in tag holds", tags: map[string]string{TagScaleIn: ""}, hold: []string{`queue-checker:scale-in="" not understood`}},
		{name: "pin 3.0 holds", tags: map[string]string{TagPin: "3.0"}, hold: []string{`queue-checker:pin="3.0" not understood: want a whole number of workers >= 0`}},
		{name: "pin 2.5 holds", tags: map[string]string{TagPin: "2.5"}, hold: []string{`queue-checker:pin="2.5" not understood`}},
		{name: "pin 1e3 holds", tags: map[string]string{TagPin: "1e3"}, hold: []string{`queue-checker:pin="1e3" not understood`}},
		{name: "a pin beyond int holds", tags: map[string]string{TagPin: "99999999999999999999"}, hold: []string{`not understood`}},
		{name: "pin 99999 is read (the policy holds it above max)", tags: map[string]string{TagPin: "99999"}, want: model.Switches{Pinned: true, Pin: 99999}},
		{name: "unknown key under the prefix holds", tags: map[string]string{"queue-checker:resume": "true"},
			hold: []string{`tag "queue-checker:resume" is not a switch this checker reads (queue-checker:paused, queue-checker:scale-in, queue-checker:paused-by, queue-checker:paused-at, queue-checker:pin)`}},
		{name: "a misspelt pin holds", tags: map[string]string{"queue-checker:pn": "1"}, hold: []string{`tag "queue-checker:pn" is not a switch`}},
		{name: "a pin in another case is a pin", tags: map[string]string{"Queue-Checker:Pin": "3"},
			want: model.Switches{Pinned: true, Pin: 3}, warn: []string{`tag "Queue-Checker:Pin" read as queue-checker:pin`}},
		{name: "two keys for one switch at odds hold", tags: map[string]string{TagPaused: "false", "queue-checker:Paused": "true"},
			want: model.Switches{Paused: true}, hold: []string{`tags "queue-checker:Paused"="true" and "queue-checker:paused"="false" both name queue-checker:paused, with different values`},
			warn: []string{`"queue-checker:Paused" read as queue-checker:paused`}},
		{name: "two keys for one switch that agree are read", tags: map[string]string{TagScaleIn: "false", "queue-checker:scalein": "FALSE"},
			want: model.Switches{ScaleInOff: true}},
		{name: "another namespace is not read", tags: map[string]string{"aws:autoscaling:groupName": "x", "team:paused": "true"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := parseSwitches(tt.tags)
			warnings, holds := got.Warnings, got.NotUnderstood
			got.Warnings, got.NotUnderstood = nil, nil
			if len(holds) != len(tt.hold) {
				t.Fatalf("not understood %q, want %d like %q", holds, len(tt.hold), tt.hold)
			}
			for i, h := range tt.hold {
				if !strings.Contains(holds[i], h) {
					t.Errorf("not understood %d = %q, want it to contain %q", i, holds[i], h)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("switches = %+v, want %+v", got, tt.want)
			}
			if len(warnings) != len(tt.warn) {
				t.Fatalf("warnings %q, want %d like %q", warnings, len(tt.warn), tt.warn)
			}
			for i, w := range tt.warn {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, warnings[i], w)
				}
			}
		})
	}
}

// TestObserveReadsSwitchTags tags an Auto Scaling group (CreateOrUpdateTags)
// and an ECS service (TagResource) in moto and reads the switches with the
// fleets, in the same calls as the counts; a pause without paused-at dates
// from the first time it was seen; a bad value is warned about once.
func TestObserveReadsSwitchTags(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	ctx := context.Background()
	q := makeQueue(t, d, queueSpec{region: east, visible: 1})
	asg := awstest.UniqueName(t, "asg")
	awstest.CreateAutoScalingGroup(t, d.AutoScaling(east), east, asg, 0, 10, 2)
	cluster, svc := awstest.UniqueName(t, "cluster"), awstest.UniqueName(t, "svc")
	arn := awstest.CreateECSService(t, d.ECS(west), cluster, svc, 1)

	tagASG := func(kv ...string) {
		t.Helper()
		var tags []asgtypes.Tag
		for i := 0; i < len(kv); i += 2 {
			tags = append(tags, asgtypes.Tag{Key: aws.String(kv[i]), Value: aws.String(kv[i+1]),
				ResourceId: aws.String(asg), ResourceType: aws.String("auto-scaling-group"), PropagateAtLaunch: aws.Bool(false)})
		}
		if _, err := d.AutoScaling(east).CreateOrUpdateTags(ctx, &autoscaling.CreateOrUpdateTagsInput{Tags: tags}); err != nil {
			t.Fatalf("CreateOrUpdateTags: %v", err)
		}
	}
	tagASG(TagPaused, "true", TagPausedBy, "alice", "team", "media")
	if _, err := d.ECS(west).TagResource(ctx, &ecs.TagResourceInput{ResourceArn: aws.String(arn), Tags: []ecstypes.Tag{
		{Key: aws.String(TagScaleIn), Value: aws.String("false")},
		{Key: aws.String(TagPin), Value: aws.String("lots")},
	}}); err != nil {
		t.Fatalf("TagResource: %v", err)
	}

	fixed := config.Fleet{FixedWorkers: 7}
	groups := []config.Group{
		{Name: "asg", Queues: []config.Queue{q}, Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: asg}}},
		{Name: "ecs", Queues: []config.Queue{q}, Fleet: config.Fleet{ECSService: &config.ECSService{Cluster: cluster, Service: svc, Region: west}}},
		{Name: "fixed", Queues: []config.Queue{q}, Fleet: fixed},
	}
	proxy := awstest.NewProxy(t, moto.URL)
	reg := prometheus.NewRegistry()
	core, logs := observer.New(zapcore.WarnLevel)
	p, err := New(baseConfig(groups...), factory(t, proxy.URL, reg), reg, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	first := time.Now()
	obs, err := p.Observe(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if got := obs[0].Fleet.Switches; !got.Paused || got.PausedBy != "alice" || !got.PausedSince.Equal(first) || len(got.Warnings) != 0 {
		t.Errorf("auto scaling switches = %+v, want paused by alice since the first read", got)
	}
	got := obs[1].Fleet.Switches
	if got.Paused || !got.ScaleInOff || got.Pinned || len(got.NotUnderstood) != 1 || !strings.Contains(got.NotUnderstood[0], `queue-checker:pin="lots" not understood`) {
		t.Errorf("ECS switches = %+v, want scale-in off and the pin not understood", got)
	}
	if f := obs[2].Fleet; f.Kind != KindFixed || !f.Known || f.Desired != 7 || f.InService != 7 {
		t.Errorf("fixed fleet = %+v, want known, 7 in service", f)
	}

	// A later read keeps the first-seen time; a paused-at tag replaces it.
	obs, err = p.Observe(ctx, first.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := obs[0].Fleet.Switches; !got.PausedSince.Equal(first) {
		t.Errorf("paused since %v on the second read, want the first sighting %v", got.PausedSince, first)
	}
	tagASG(TagPausedAt, "2025-03-01T12:00:00Z")
	obs, err = p.Observe(ctx, first.Add(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if got := obs[0].Fleet.Switches; !got.PausedSince.Equal(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("paused since %v, want the paused-at tag's time", got.PausedSince)
	}
	if n := logs.Len(); n != 0 {
		t.Errorf("%d warnings logged over three reads, want none: the pin not understood is the decision's to report", n)
	}
	if n := proxy.Calls("DescribeAutoScalingGroups"); n != 3 {
		t.Errorf("DescribeAutoScalingGroups calls = %d, want 3 (tags come with the group)", n)
	}
	if n := proxy.Calls("DescribeServices"); n != 3 {
		t.Errorf("DescribeServices calls = %d, want 3 (tags come with the service)", n)
	}
}

// TestSwitchTagsNotUnderstoodReadFromMoto tags Auto Scaling groups in moto
// with the spellings that name no switch, and with one that folds to a
// switch's, and reads them with the fleets: each of the first holds its
// fleet with one problem naming the key; the last is read.
func TestSwitchTagsNotUnderstoodReadFromMoto(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	ctx := context.Background()
	q := makeQueue(t, d, queueSpec{region: east})
	spellings := append(slices.Clone(issueSpellings), struct{ key, value string }{"Queue_Checker/Scale In", "false"})
	var groups []config.Group
	for i, sp := range spellings {
		asg := awstest.UniqueName(t, fmt.Sprintf("asg%d", i))
		awstest.CreateAutoScalingGroup(t, d.AutoScaling(east), east, asg, 0, 10, 5)
		if _, err := d.AutoScaling(east).CreateOrUpdateTags(ctx, &autoscaling.CreateOrUpdateTagsInput{Tags: []asgtypes.Tag{{
			Key: aws.String(sp.key), Value: aws.String(sp.value), ResourceId: aws.String(asg),
			ResourceType: aws.String("auto-scaling-group"), PropagateAtLaunch: aws.Bool(false)}}}); err != nil {
			t.Fatalf("CreateOrUpdateTags %q: %v", sp.key, err)
		}
		groups = append(groups, config.Group{Name: fmt.Sprintf("g%d", i), Queues: []config.Queue{q},
			Fleet: config.Fleet{AutoScalingGroup: &config.AutoScalingGroup{Name: asg}}})
	}
	reg := prometheus.NewRegistry()
	p, err := New(baseConfig(groups...), factory(t, moto.URL, reg), reg, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	obs, err := p.Observe(ctx, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range spellings[:len(spellings)-1] {
		sw := obs[i].Fleet.Switches
		if len(sw.NotUnderstood) != 1 || !strings.Contains(sw.NotUnderstood[0], fmt.Sprintf("%q is not a switch", sp.key)) || sw.Paused || sw.Pinned || sw.ScaleInOff {
			t.Errorf("tag %q=%s read from moto: switches %+v, want one problem naming the key, nothing read", sp.key, sp.value, sw)
		}
	}
	if sw := obs[len(spellings)-1].Fleet.Switches; !sw.ScaleInOff || len(sw.NotUnderstood) != 0 {
		t.Errorf("tag Queue_Checker/Scale In=false read from moto: switches %+v, want scale-in off", sw)
	}
}
