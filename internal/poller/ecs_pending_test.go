package poller

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ecstypes "github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"go.uber.org/zap/zaptest"
)

// dep is an ECS deployment with an ID (none when id is ""), a creation
// time (none when created is zero) and a pending count.
func dep(id string, created time.Time, pending int32) ecstypes.Deployment {
	d := ecstypes.Deployment{PendingCount: pending}
	if id != "" {
		d.Id = aws.String(id)
	}
	if !created.IsZero() {
		d.CreatedAt = aws.Time(created)
	}
	return d
}

// TestPendingTasks follows ECS deployments' pending counts over reads: each
// pending task is dated from when it was first seen pending, the oldest
// leave first, and no task is dated before its deployment.
func TestPendingTasks(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	t1, t2, t3 := t0.Add(10*time.Second), t0.Add(20*time.Second), t0.Add(30*time.Second)
	long := t0.Add(-72 * time.Hour) // a deployment created days before
	type read struct {
		at   time.Time
		deps []ecstypes.Deployment
		want []time.Time // PendingSince, sorted
	}
	tests := []struct {
		name  string
		reads []read
		keys  []string // deployments remembered after the last read
	}{
		{
			name: "rise: a scale-out within a long-lived deployment",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", long, 0)}, nil},
				{t1, []ecstypes.Deployment{dep("a", long, 2)}, []time.Time{t1, t1}},
				{t2, []ecstypes.Deployment{dep("a", long, 3)}, []time.Time{t1, t1, t2}},
				{t3, []ecstypes.Deployment{dep("a", long, 3)}, []time.Time{t1, t1, t2}},
			},
			keys: []string{"a"},
		},
		{
			name: "fall: the oldest leave first",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", long, 2)}, []time.Time{t0, t0}},
				{t1, []ecstypes.Deployment{dep("a", long, 3)}, []time.Time{t0, t0, t1}},
				{t2, []ecstypes.Deployment{dep("a", long, 1)}, []time.Time{t1}},
				{t3, []ecstypes.Deployment{dep("a", long, 0)}, nil},
			},
			keys: []string{"a"},
		},
		{
			name: "none pending, then a new scale-out dated anew",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", long, 1)}, []time.Time{t0}},
				{t1, []ecstypes.Deployment{dep("a", long, 0)}, nil},
				{t2, []ecstypes.Deployment{dep("a", long, 2)}, []time.Time{t2, t2}},
			},
			keys: []string{"a"},
		},
		{
			name: "two deployments kept apart",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("old", long, 2)}, []time.Time{t0, t0}},
				{t1, []ecstypes.Deployment{dep("new", t1, 1), dep("old", long, 2)}, []time.Time{t0, t0, t1}},
				{t2, []ecstypes.Deployment{dep("new", t1, 2), dep("old", long, 1)}, []time.Time{t0, t1, t2}},
				{t3, []ecstypes.Deployment{dep("new", t1, 1), dep("old", long, 1)}, []time.Time{t0, t2}},
			},
			keys: []string{"new", "old"},
		},
		{
			name: "a deployment replaced: the old one's record is dropped",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("old", long, 2)}, []time.Time{t0, t0}},
				{t1, []ecstypes.Deployment{dep("new", t1, 2)}, []time.Time{t1, t1}},
				{t2, []ecstypes.Deployment{dep("new", t1, 2)}, []time.Time{t1, t1}},
			},
			keys: []string{"new"},
		},
		{
			name: "a deployment back after it was gone is dated anew",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", long, 1)}, []time.Time{t0}},
				{t1, nil, nil},
				{t2, []ecstypes.Deployment{dep("a", long, 1)}, []time.Time{t2}},
			},
			keys: []string{"a"},
		},
		{
			name: "created later than first seen (the poller's clock behind)",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", t2, 2)}, []time.Time{t2, t2}},
				{t1, []ecstypes.Deployment{dep("a", t2, 3)}, []time.Time{t2, t2, t2}},
				{t3, []ecstypes.Deployment{dep("a", t2, 4)}, []time.Time{t2, t2, t2, t3}},
			},
			keys: []string{"a"},
		},
		{
			name: "no creation time: first seen alone",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", time.Time{}, 1)}, []time.Time{t0}},
				{t1, []ecstypes.Deployment{dep("a", time.Time{}, 2)}, []time.Time{t0, t1}},
			},
			keys: []string{"a"},
		},
		{
			name: "no IDs: told apart by creation time",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("", long, 1), dep("", t0, 1)}, []time.Time{t0, t0}},
				{t1, []ecstypes.Deployment{dep("", long, 1), dep("", t0, 2)}, []time.Time{t0, t0, t1}},
				{t2, []ecstypes.Deployment{dep("", t0, 1)}, []time.Time{t1}},
			},
			keys: []string{deploymentKey(dep("", t0, 0))},
		},
		{
			name: "a negative count is none",
			reads: []read{
				{t0, []ecstypes.Deployment{dep("a", long, 2)}, []time.Time{t0, t0}},
				{t1, []ecstypes.Deployment{dep("a", long, -1)}, nil},
			},
			keys: []string{"a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := pendingTasks{}
			for i, r := range tc.reads {
				got := p.observe(r.deps, r.at)
				slices.SortFunc(got, time.Time.Compare)
				if !slices.EqualFunc(got, r.want, time.Time.Equal) {
					t.Fatalf("read %d: pending since %v, want %v", i, got, r.want)
				}
			}
			if keys := slices.Sorted(maps.Keys(p)); !slices.Equal(keys, tc.keys) {
				t.Errorf("deployments remembered %q, want %q", keys, tc.keys)
			}
		})
	}
}

// TestECSPendingSinceOverReads reads one ECS service through its
// fleetReader over three intervals: PendingSince is sorted and survives
// between reads, and a failed read leaves the record as it was.
func TestECSPendingSinceOverReads(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	long := t0.Add(-72 * time.Hour)
	f := &fleetReader{kind: KindECS, name: "svc", cluster: "jobs", region: "us-east-1", log: zaptest.NewLogger(t)}
	read := func(at time.Time, running, pending int32, deps ...ecstypes.Deployment) []time.Time {
		t.Helper()
		f.reset()
		f.svc = &ecstypes.Service{DesiredCount: running + pending, RunningCount: running, PendingCount: pending, Deployments: deps}
		fl := f.settle(at)
		if !fl.Known || fl.Pending != int(pending) || fl.InService != int(running) {
			t.Fatalf("at %v: %+v, want %d running, %d pending", at, fl, running, pending)
		}
		return fl.PendingSince
	}
	t1, t2, t3 := t0.Add(10*time.Second), t0.Add(20*time.Second), t0.Add(30*time.Second)
	// A rolling deployment beside a scale-out of the old one.
	read(t0, 4, 2, dep("old", long, 2))
	if got, want := read(t1, 4, 3, dep("new", t1.Add(-time.Second), 1), dep("old", long, 2)),
		[]time.Time{t0, t0, t1}; !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("pending since %v, want %v", got, want)
	}
	f.reset()
	f.err = errFleetNotFound
	if fl := f.settle(t2); fl.Known || len(fl.PendingSince) != 0 {
		t.Fatalf("failed read: %+v, want unknown", fl)
	}
	if got, want := read(t3, 5, 2, dep("new", t1.Add(-time.Second), 1), dep("old", long, 1)),
		[]time.Time{t0, t1}; !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("after a failed read: pending since %v, want %v", got, want)
	}
}
