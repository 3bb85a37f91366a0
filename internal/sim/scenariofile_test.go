package sim

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A scenario saved by SaveCSV loads back by its file name with the same
// segments and length; a built-in name gives the built-in scenario; any
// other name that is no file is an error listing the built-in ones.
func TestLoadScenario(t *testing.T) {
	t.Parallel()
	sc, err := FromMinutes("g: per minute", []float64{60, 0, 1.5, 7})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trace.csv")
	if err := SaveCSV(path, sc); err != nil {
		t.Fatal(err)
	}
	back, err := LoadScenario(path, 50, time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != path || back.Length != sc.Length || len(back.Segments) != len(sc.Segments) {
		t.Fatalf("loaded %q %v (length %v), want %q %v (length %v)", back.Name, back.Segments, back.Length, path, sc.Segments, sc.Length)
	}
	for i := range sc.Segments {
		if back.Segments[i] != sc.Segments[i] {
			t.Errorf("segment %d = %v, want %v", i, back.Segments[i], sc.Segments[i])
		}
	}

	spike, err := LoadScenario(ScenarioSpike, 50, time.Hour, 1)
	if err != nil {
		t.Fatal(err)
	}
	// ×10 for 5 minutes at a third of the hour.
	if got := spike.RateAt(21 * time.Minute); got != 500 {
		t.Errorf("spike at 21m: %v msg/s, want 500", got)
	}

	if _, err := LoadScenario("no-such-scenario", 50, time.Hour, 1); err == nil || !strings.Contains(err.Error(), ScenarioSteady) {
		t.Errorf("unknown name: error %v, want one listing the built-in scenarios", err)
	}
	if _, err := LoadScenario(filepath.Join(t.TempDir(), "missing.csv"), 50, time.Hour, 1); err == nil {
		t.Error("missing .csv file: no error")
	}
	if err := SaveCSV(filepath.Join(t.TempDir(), "no-dir", "t.csv"), sc); err == nil {
		t.Error("saving into a missing directory: no error")
	}
}
