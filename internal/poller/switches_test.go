package poller

import (
	"context"
	"fmt"
	"reflect"
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
)

// Misspelt switch keys fail safe: each spelling an operator may type for
// the pause or the scale-in switch, on an Auto Scaling group (the
// Kubernetes spelling too), holds the fleet, with one warning naming the
// key and what it was taken for.
func TestMisspeltSwitchKeysHold(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, value string
		taken      string
	}{
		{"queue-checker:pause", "true", TagPaused},
		{"queue-checker:Paused", "true", TagPaused},
		{"queue-checker:paused ", "true", TagPaused},
		{"queue-checker:scalein", "false", TagScaleIn},
		{"Queue-Checker:Paused", "true", TagPaused},
		{"queue_checker:paused", "true", TagPaused},
		{"queue-checker/paused", "true", TagPaused},
		{"queue-checker/scale-in", "false", TagScaleIn},
	} {
		got := parseSwitches(map[string]string{tc.key: tc.value, "team": "media"})
		held := got.Paused
		if tc.taken == TagScaleIn {
			held = got.ScaleInOff
		}
		if !held || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], fmt.Sprintf("%q taken for %s", tc.key, tc.taken)) {
			t.Errorf("tag %q=%s: switches %+v, want %s held with one warning naming the key", tc.key, tc.value, got, tc.taken)
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
		{name: "bad values fail safe, with a warning", tags: map[string]string{
			TagPaused: "yes please", TagScaleIn: "off", TagPin: "-1", TagPausedAt: "yesterday",
		}, want: model.Switches{Paused: true, ScaleInOff: true},
			warn: []string{`queue-checker:paused="yes please" not understood: the group is paused`, `queue-checker:paused-at="yesterday" ignored`,
				`queue-checker:pin="-1" ignored`, `queue-checker:scale-in="off" not understood: scale-in is held`}},
		{name: "misspellings an operator types pause", tags: map[string]string{TagPaused: "maybe"},
			want: model.Switches{Paused: true}, warn: []string{`queue-checker:paused="maybe" not understood`}},
		{name: "an empty paused tag pauses", tags: map[string]string{TagPaused: ""},
			want: model.Switches{Paused: true}, warn: []string{`queue-checker:paused="" not understood`}},
		{name: "scale-in=no holds scale-in", tags: map[string]string{TagScaleIn: "no"},
			want: model.Switches{ScaleInOff: true}, warn: []string{`queue-checker:scale-in="no" not understood`}},
		{name: "an empty scale-in tag holds scale-in", tags: map[string]string{TagScaleIn: ""},
			want: model.Switches{ScaleInOff: true}, warn: []string{`queue-checker:scale-in="" not understood`}},
		{name: "pin not a number", tags: map[string]string{TagPin: "2.5"}, warn: []string{`queue-checker:pin="2.5" ignored`}},
		{name: "unknown key under the prefix", tags: map[string]string{"queue-checker:resume": "true"},
			warn: []string{"tag queue-checker:resume ignored: unknown"}},
		{name: "a misspelt pin is no pin", tags: map[string]string{"queue-checker:pn": "1"},
			warn: []string{`tag "queue-checker:pn" ignored: it looks like queue-checker:pin, but a pin is taken only as spelt`}},
		{name: "a pin in another case is a pin", tags: map[string]string{"Queue-Checker:Pin": "3"},
			want: model.Switches{Pinned: true, Pin: 3}, warn: []string{`tag "Queue-Checker:Pin" taken for queue-checker:pin`}},
		{name: "of two keys for one switch, the one that holds wins", tags: map[string]string{TagPaused: "false", "queue-checker:Paused": "true", TagScaleIn: "true", "queue-checker:scalein": "false"},
			want: model.Switches{Paused: true, ScaleInOff: true},
			warn: []string{`"queue-checker:Paused" taken for queue-checker:paused`, `"queue-checker:scalein" taken for queue-checker:scale-in`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := parseSwitches(tt.tags)
			warnings := got.Warnings
			got.Warnings = nil
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
	if got.Paused || !got.ScaleInOff || got.Pinned || len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], `queue-checker:pin="lots" ignored`) {
		t.Errorf("ECS switches = %+v, want scale-in off and the pin ignored with a warning", got)
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
	if n := logs.FilterMessage("switch tags ignored").Len(); n != 1 {
		t.Errorf("%d warnings logged about the ignored tag over three reads, want 1", n)
	}
	if n := proxy.Calls("DescribeAutoScalingGroups"); n != 3 {
		t.Errorf("DescribeAutoScalingGroups calls = %d, want 3 (tags come with the group)", n)
	}
	if n := proxy.Calls("DescribeServices"); n != 3 {
		t.Errorf("DescribeServices calls = %d, want 3 (tags come with the service)", n)
	}
}

// TestMisspeltSwitchTagsReadFromMoto tags Auto Scaling groups in moto with
// the misspelt keys of TestMisspeltSwitchKeysHold and reads them with the
// fleets: each holds its fleet, with its warning.
func TestMisspeltSwitchTagsReadFromMoto(t *testing.T) {
	t.Parallel()
	moto := awstest.Shared(t)
	d := direct(t)
	ctx := context.Background()
	q := makeQueue(t, d, queueSpec{region: east})
	spellings := []struct{ key, value string }{
		{"queue-checker:pause", "true"}, {"queue-checker:Paused", "true"}, {"queue-checker:paused ", "true"},
		{"queue-checker:scalein", "false"}, {"Queue-Checker:Paused", "true"}, {"queue_checker:paused", "true"},
		{"queue-checker/paused", "true"}, {"queue-checker/scale-in", "false"},
	}
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
	for i, sp := range spellings {
		sw := obs[i].Fleet.Switches
		if !sw.Paused && !sw.ScaleInOff || len(sw.Warnings) != 1 || !strings.Contains(sw.Warnings[0], fmt.Sprintf("%q taken for", sp.key)) {
			t.Errorf("tag %q=%s read from moto: switches %+v, want the fleet held with one warning naming the key", sp.key, sp.value, sw)
		}
	}
}
