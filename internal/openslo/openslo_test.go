package openslo

import (
	"strings"
	"testing"
	"time"
)

func TestNamesAndDurations(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	names := []struct{ group, want string }{
		{"thumbnails", "queue-checker-thumbnails"},
		{"Video_Transcode.v2", "queue-checker-video-transcode-v2"},
		{"video-transcode-v2", "queue-checker-video-transcode-v2-2"}, // the same name once lower-cased
		{"trailing.", "queue-checker-trailing"},
	}
	for _, n := range names {
		if got := uniqueName(resourceName(n.group), seen); got != n.want {
			t.Errorf("name of %q = %q, want %q", n.group, got, n.want)
		}
	}
	durations := []struct {
		d    time.Duration
		want string
	}{
		{30 * 24 * time.Hour, "30d"}, {36 * time.Hour, "36h"}, {90 * time.Minute, "90m"},
		{45 * time.Second, "45s"}, {1500 * time.Millisecond, "1.5s"},
	}
	for _, d := range durations {
		if got := durationText(d.d); got != d.want {
			t.Errorf("durationText(%s) = %q, want %q", d.d, got, d.want)
		}
	}
}

func TestDocumentsProblemsAndVersions(t *testing.T) {
	t.Parallel()
	groups := []Group{
		{Name: "a", Promise: 30 * time.Second, Objective: 0.99, Window: 30 * 24 * time.Hour},
		{Name: "b", Promise: time.Minute, Objective: 0.999, Window: 36 * time.Hour},
	}
	out, problems, err := Documents(groups, V1Alpha)
	if err != nil || out != nil || len(problems) != 1 || problems[0].Index != 1 || !strings.Contains(problems[0].Msg, "36h") {
		t.Errorf("v1alpha of a 36h window: out %q, problems %+v, err %v; want group 1's problem alone", out, problems, err)
	}
	out, problems, err = Documents(groups, V1)
	if err != nil || len(problems) != 0 || strings.Count(string(out), "kind: SLO") != 2 || strings.Count(string(out), "\n---\n") != 1 {
		t.Errorf("v1: problems %+v, err %v, out:\n%s", problems, err, out)
	}
	if _, _, err := Documents(groups, "v2"); err == nil {
		t.Error("an unknown version was accepted")
	}
}
