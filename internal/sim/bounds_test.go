package sim

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

func TestEstimateRefusesRunaways(t *testing.T) {
	t.Parallel()
	steady := func(rate float64) Scenario { sc, _ := Builtin(ScenarioSteady, rate, time.Hour); return sc }
	ok := RunConfig{World: Config{Scenario: steady(50), Max: 200, Concurrency: 1}, Duration: 2 * time.Hour, Interval: 5 * time.Second}
	if err := ok.Estimate(len(Policies)).Err(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	e := ok.Estimate(2)
	// 50 msg/s × 7200 s; 1441 steps; 2 × (1441 × 32 + 120 minutes × 32) + 360,000 × 32 + 200 × 8 + 16 bytes.
	if e.Messages != 360000 || e.Steps != 1441 || e.Bytes != 2*(1441*32+120*32)+360000*32+200*8+16 {
		t.Errorf("estimate %+v", e)
	}
	for _, tc := range []struct {
		name string
		rc   RunConfig
		want string
	}{
		{"a billion a second", RunConfig{World: Config{Scenario: steady(1e9), Max: 1}, Duration: time.Hour, Interval: time.Second}, "messages per policy"},
		{"a nanosecond interval", RunConfig{World: Config{Scenario: steady(1), Max: 1}, Duration: time.Hour, Interval: time.Nanosecond}, "sampling intervals"},
		{"an infinite rate", RunConfig{World: Config{Scenario: Scenario{Segments: []Segment{{0, math.MaxFloat64}, {time.Second, math.MaxFloat64}}}, Max: 1}, Duration: time.Hour, Interval: time.Second}, "messages per policy"},
	} {
		if err := tc.rc.Estimate(8).Err(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error about %s", tc.name, err, tc.want)
		}
	}
}

func TestFromMinutes(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	sc, err := FromMinutes("x", []float64{nan, 120, 60, nan, 30, nan, nan})
	if err != nil {
		t.Fatal(err)
	}
	want := []Segment{{0, 0}, {time.Minute, 2}, {2 * time.Minute, 1}, {3 * time.Minute, 0}, {4 * time.Minute, 0.5}}
	if len(sc.Segments) != len(want) || sc.Length != 5*time.Minute {
		t.Fatalf("segments %v, length %v; want %v, 5m", sc.Segments, sc.Length, want)
	}
	for i := range want {
		if sc.Segments[i] != want[i] {
			t.Errorf("segment %d = %v, want %v", i, sc.Segments[i], want[i])
		}
	}
	if _, err := FromMinutes("x", []float64{nan, nan}); err == nil {
		t.Error("all NaN: no error")
	}
}

// A trace written by WriteCSV reads back with the same segments and length.
func TestWriteCSVRoundTrip(t *testing.T) {
	t.Parallel()
	sc, err := FromMinutes("g: NumberOfMessagesSent per minute from 2026-01-01T00:00:00Z", []float64{60, 0, 1.5, 1e6, 7})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, sc); err != nil {
		t.Fatal(err)
	}
	back, err := ParseCSV("trace.csv", &b)
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if back.Length != sc.Length || len(back.Segments) != len(sc.Segments) {
		t.Fatalf("read back %v (length %v), want %v (length %v)", back.Segments, back.Length, sc.Segments, sc.Length)
	}
	for i := range sc.Segments {
		if back.Segments[i] != sc.Segments[i] {
			t.Errorf("segment %d = %v, want %v", i, back.Segments[i], sc.Segments[i])
		}
	}
}

// FuzzParseCSV: no input panics, and what parses is a valid scenario within
// the limits, whose length is past its last row.
func FuzzParseCSV(f *testing.F) {
	for _, s := range []string{
		"t_seconds,arrivals_per_second\n0,5\n60,10\n",
		"t_seconds,arrivals_per_second\n\"0,5\n",
		"t_seconds,arrivals_per_second\n1e300,5\n",
		"t_seconds,arrivals_per_second\n0,1e12\n",
		"# comment\nt_seconds, arrivals_per_second\n\n0 , 1\n",
		"",
		"t_seconds,arrivals_per_second\n0,NaN\n",
		"t_seconds,arrivals_per_second\n5,1\n4,1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sc, err := ParseCSV("fuzz.csv", strings.NewReader(in))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.csv") {
				t.Errorf("error %q does not name the file", err)
			}
			return
		}
		if err := sc.Validate(); err != nil {
			t.Errorf("parsed an invalid scenario: %v", err)
		}
		n := len(sc.Segments)
		if n == 0 || n > MaxCSVRows || sc.Segments[n-1].At > MaxCSVSeconds*time.Second {
			t.Errorf("%d segments, last at %v: beyond the limits", n, sc.Segments[n-1].At)
		}
		if n > 1 && sc.Length <= sc.Segments[n-1].At {
			t.Errorf("length %v not past the last row %v", sc.Length, sc.Segments[n-1].At)
		}
	})
}
