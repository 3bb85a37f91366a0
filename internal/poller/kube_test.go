package poller

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/queuechecker/queue-checker/internal/kube"
	"github.com/queuechecker/queue-checker/internal/model"
)

// TestParseAnnotationSwitches: a workload's queue-checker/ annotations are
// the same switches as the tags, read the same way (the tag spelling
// included; a key or value not understood holds), and the messages name
// annotations.
func TestParseAnnotationSwitches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   map[string]string
		want model.Switches
		warn string
	}{
		{"paused", map[string]string{"queue-checker/paused": "true", "queue-checker/paused-by": "alice"}, model.Switches{Paused: true, PausedBy: "alice"}, ""},
		{"pin", map[string]string{"queue-checker/pin": "7"}, model.Switches{Pinned: true, Pin: 7}, ""},
		{"paused=maybe holds", map[string]string{"queue-checker/paused": "maybe"}, model.Switches{}, `annotation queue-checker/paused="maybe" not understood: want true or false`},
		{"scale-in=no holds", map[string]string{"queue-checker/scale-in": "no"}, model.Switches{}, `annotation queue-checker/scale-in="no" not understood`},
		{"a tag's spelling pauses, with a warning", map[string]string{"queue-checker:paused": "true"}, model.Switches{Paused: true}, `annotation "queue-checker:paused" read as queue-checker/paused`},
		{"a tag's scale-in holds scale-in", map[string]string{"queue-checker:scale-in": "false"}, model.Switches{ScaleInOff: true}, `annotation "queue-checker:scale-in" read as queue-checker/scale-in`},
		{"a misspelt pause holds", map[string]string{"queue-checker/pause": "true"}, model.Switches{}, `annotation "queue-checker/pause" is not a switch this checker reads`},
		{"a negation holds", map[string]string{"queue-checker/no-scale-in": "true"}, model.Switches{}, `annotation "queue-checker/no-scale-in" is not a switch this checker reads`},
		{"unknown", map[string]string{"queue-checker/resume": "true"}, model.Switches{}, `annotation "queue-checker/resume" is not a switch this checker reads (queue-checker/paused, `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := parseSwitchKeys(tc.in, kube.AnnotationPrefix, "annotation")
			w := strings.Join(append(got.Warnings, got.NotUnderstood...), "; ")
			got.Warnings, got.NotUnderstood = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

// fakeKube answers Read from a list of workloads, one per call.
type fakeKube struct {
	answers []kube.Workload
	err     error
}

func (f *fakeKube) Read(context.Context, kube.Ref) (kube.Workload, error) {
	if f.err != nil {
		return kube.Workload{}, f.err
	}
	w := f.answers[0]
	f.answers = f.answers[1:]
	return w, nil
}

// TestKubeFleet: ready pods are in service, the rest of the desired count
// pending (each dated from when it was first seen, oldest leaving first),
// pods being deleted draining; a failed read is unknown, never zero.
func TestKubeFleet(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	api := &fakeKube{answers: []kube.Workload{
		{Desired: 3, Replicas: 3, Ready: 3},
		{Desired: 6, Replicas: 4, Ready: 3, Terminating: 1}, // 3 pending from t0+1s
		{Desired: 6, Replicas: 6, Ready: 5},                 // 1 pending left: the newest
		{Desired: 2, Replicas: 2, Ready: 2, Terminating: 4, Annotations: map[string]string{"queue-checker/pin": "2"}},
	}}
	f := &fleetReader{kind: KindKubernetes, name: "workers/deployment/w", log: zap.NewNop()}
	var got []model.Fleet
	for i := range 4 {
		f.reset()
		f.fetchKube(context.Background(), api)
		got = append(got, f.settle(t0.Add(time.Duration(i)*time.Second)))
	}
	type counts struct{ desired, in, pending, draining int }
	want := []counts{{3, 3, 0, 0}, {6, 3, 3, 1}, {6, 5, 1, 0}, {2, 2, 0, 4}}
	for i, fl := range got {
		if c := (counts{fl.Desired, fl.InService, fl.Pending, fl.Draining}); !fl.Known || c != want[i] || fl.Kind != KindKubernetes {
			t.Errorf("read %d: %+v (known %v, kind %q), want %+v", i, c, fl.Known, fl.Kind, want[i])
		}
	}
	if p := got[1].PendingSince; len(p) != 3 || !p[0].Equal(t0.Add(time.Second)) {
		t.Errorf("read 1 pending since %v, want 3 at t0+1s", p)
	}
	if p := got[2].PendingSince; !slices.Equal(p, []time.Time{t0.Add(time.Second)}) {
		t.Errorf("read 2 pending since %v, want the one left at t0+1s", p)
	}
	if s := got[3].Switches; !s.Pinned || s.Pin != 2 {
		t.Errorf("read 3 switches %+v, want pinned at 2", s)
	}

	api.err = errors.New("forbidden")
	f.reset()
	f.fetchKube(context.Background(), api)
	if fl := f.settle(t0.Add(5 * time.Second)); fl.Known || fl.Err == nil || fl.InService != 0 {
		t.Errorf("failed read: %+v, want unknown with the error", fl)
	}
}
