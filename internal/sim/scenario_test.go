package sim

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBuiltinShapes(t *testing.T) {
	t.Parallel()
	const d = 2 * time.Hour
	tests := []struct {
		name   string
		at     time.Duration
		want   float64
		approx bool
	}{
		{"steady", 0, 50, false},
		{"steady", d - time.Second, 50, false},
		{"step", d/3 - time.Second, 50, false},
		{"step", d / 3, 150, false},
		{"step", d - time.Second, 150, false},
		{"spike", d/3 - time.Second, 50, false},
		{"spike", d / 3, 500, false},
		{"spike", d/3 + 5*time.Minute - time.Second, 500, false},
		{"spike", d/3 + 5*time.Minute, 50, false},
		// diurnal: 50·(1 − 0.8·cos(2π·t/d)) at the middle of each minute.
		{"diurnal", 30 * time.Second, 50 * (1 - 0.8*math.Cos(2*math.Pi*30/7200)), true},
		{"diurnal", d / 2, 50 * (1 - 0.8*math.Cos(2*math.Pi*3630/7200)), true},
		// ramp: 5 msg/s to 10 min, climbing to 100 at 30 min, down from 70 to 90.
		{"ramp", 5 * time.Second, 5, true},
		{"ramp", 20 * time.Minute, 50 * (0.1 + 1.9*(1205.0/600-1)/2), true},
		{"ramp", 50 * time.Minute, 100, true},
		{"ramp", 80 * time.Minute, 50 * (2 - 1.9*(4805.0/600-7)/2), true},
		{"ramp", d - time.Second, 5, true},
		{"bursty", 0, 150, false},
		{"bursty", 2*time.Minute - time.Second, 150, false},
		{"bursty", 2 * time.Minute, 25, false},
		{"bursty", 10 * time.Minute, 150, false},
		{"bursty", 73 * time.Minute, 25, false},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+tt.at.String(), func(t *testing.T) {
			t.Parallel()
			sc, err := Builtin(tt.name, 50, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := sc.Validate(); err != nil {
				t.Fatal(err)
			}
			got := sc.RateAt(tt.at)
			if math.Abs(got-tt.want) > 1e-9*tt.want {
				t.Errorf("RateAt(%v) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}

func TestBuiltinMeanRates(t *testing.T) {
	t.Parallel()
	const d = 2 * time.Hour
	tests := []struct {
		name string
		want float64 // expected mean rate over the run, from the shapes' definitions
		tol  float64
	}{
		{"steady", 50, 1e-9},
		{"step", (50*2400 + 150*4800) / 7200.0, 1e-9},
		{"spike", (50*(7200-300) + 500*300) / 7200.0, 1e-9},
		{"diurnal", 50, 1e-3}, // one full period of the sinusoid averages out
		{"bursty", 50, 1e-9},  // 2 min at 150 + 8 min at 25 per 10 min
		// 5 msg/s for 40 min (10 + 30), 100 for 40, the climb and the fall at 52.5 for 20 each.
		{"ramp", (5*2400 + 100*2400 + 52.5*2400) / 7200.0, 1e-9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, err := Builtin(tt.name, 50, d)
			if err != nil {
				t.Fatal(err)
			}
			if got := sc.MeanRate(d); math.Abs(got-tt.want) > tt.tol*tt.want {
				t.Errorf("MeanRate = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuiltinRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		scenario string
		rate     float64
		d        time.Duration
		want     string
	}{
		{"unknown", "weekly", 50, time.Hour, `unknown scenario "weekly"`},
		{"negative rate", "steady", -1, time.Hour, "rate -1"},
		{"NaN rate", "steady", math.NaN(), time.Hour, "rate NaN"},
		{"no duration", "steady", 1, 0, "duration 0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Builtin(tt.scenario, tt.rate, tt.d)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseCSV(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []Segment
		wantErr string
	}{
		{"rows", "t_seconds,arrivals_per_second\n0,10\n60,20.5\n", []Segment{{0, 10}, {time.Minute, 20.5}}, ""},
		{"spaces, comments and blank lines", "# traffic\n T_SECONDS , arrivals_per_second\n\n0, 1\n 1.5 ,0\n", []Segment{{0, 1}, {1500 * time.Millisecond, 0}}, ""},
		{"first row later than 0", "t_seconds,arrivals_per_second\n30,5\n", []Segment{{30 * time.Second, 5}}, ""},
		{"empty", "", nil, "empty"},
		{"no header", "0,10\n", nil, "traffic.csv:1: header must be"},
		{"header only", "t_seconds,arrivals_per_second\n", nil, "no rows"},
		{"bad time", "t_seconds,arrivals_per_second\n0,1\nsoon,2\n", nil, "traffic.csv:3: t_seconds \"soon\""},
		{"negative rate", "t_seconds,arrivals_per_second\n0,-1\n", nil, "traffic.csv:2: arrivals_per_second \"-1\""},
		{"infinite rate", "t_seconds,arrivals_per_second\n0,Inf\n", nil, "traffic.csv:2: arrivals_per_second"},
		{"time not increasing", "t_seconds,arrivals_per_second\n0,1\n60,2\n60,3\n", nil, "traffic.csv:4: t_seconds 60: must be greater than the previous row's 60"},
		{"three fields", "t_seconds,arrivals_per_second\n0,1,2\n", nil, "traffic.csv:2: want 2 fields"},
		{"negative time", "t_seconds,arrivals_per_second\n-5,1\n", nil, "traffic.csv:2: t_seconds \"-5\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, err := ParseCSV("traffic.csv", strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sc.Segments) != len(tt.want) {
				t.Fatalf("segments = %v, want %v", sc.Segments, tt.want)
			}
			for i := range tt.want {
				if sc.Segments[i] != tt.want[i] {
					t.Errorf("segment %d = %v, want %v", i, sc.Segments[i], tt.want[i])
				}
			}
		})
	}
}

func TestCSVRateHoldsUntilTheNextRow(t *testing.T) {
	t.Parallel()
	sc, err := ParseCSV("x", strings.NewReader("t_seconds,arrivals_per_second\n10,5\n20,0\n30,7\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		at   time.Duration
		want float64
	}{
		{0, 0}, {9 * time.Second, 0}, {10 * time.Second, 5}, {19 * time.Second, 5},
		{20 * time.Second, 0}, {30 * time.Second, 7}, {100 * time.Hour, 7},
	}
	for _, tt := range tests {
		t.Run(tt.at.String(), func(t *testing.T) {
			t.Parallel()
			if got := sc.RateAt(tt.at); got != tt.want {
				t.Errorf("RateAt(%v) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}

func TestMaxRate(t *testing.T) {
	t.Parallel()
	spike, _ := Builtin("spike", 50, 2*time.Hour)
	bursty, _ := Builtin("bursty", 50, 2*time.Hour)
	tests := []struct {
		name     string
		sc       Scenario
		from, to time.Duration
		want     float64
	}{
		{"before the spike", spike, 0, 39 * time.Minute, 50},
		{"window reaching into the spike", spike, 39 * time.Minute, 40*time.Minute + time.Second, 500},
		{"window ending as the spike starts", spike, 39 * time.Minute, 40 * time.Minute, 50},
		{"lull then the next burst", bursty, 9 * time.Minute, 10*time.Minute + time.Second, 150},
		{"lull only", bursty, 3 * time.Minute, 9 * time.Minute, 25},
		{"several cycles", bursty, 3 * time.Minute, 30 * time.Minute, 150},
		{"second cycle's lull", bursty, 13 * time.Minute, 19 * time.Minute, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.sc.MaxRate(tt.from, tt.to); got != tt.want {
				t.Errorf("MaxRate(%v, %v) = %v, want %v", tt.from, tt.to, got, tt.want)
			}
		})
	}
}

// The number of arrivals over a run is Poisson with mean ∫rate; it must fall
// within 4.5 standard deviations of that mean for every scenario.
func TestArrivalCountsFollowTheScenario(t *testing.T) {
	t.Parallel()
	const d = 2 * time.Hour
	for _, name := range BuiltinScenarios {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := Builtin(name, 20, d)
			if err != nil {
				t.Fatal(err)
			}
			w, err := NewWorld(Config{Start: t0, Scenario: sc, Service: Service{Mean: time.Millisecond},
				Min: 1, Max: 1, Workers: 1, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			w.Snapshot(t0.Add(d))
			mean := sc.MeanRate(d) * d.Seconds()
			got := float64(w.Scores().Messages)
			if math.Abs(got-mean) > 4.5*math.Sqrt(mean) {
				t.Errorf("arrivals = %v, want %v ± %v", got, mean, 4.5*math.Sqrt(mean))
			}
		})
	}
}

func TestCronShape(t *testing.T) {
	t.Parallel()
	sc, err := Builtin(ScenarioCron, 50, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   time.Duration
		want float64
	}{
		{0, 50}, {7*time.Minute - time.Second, 50}, {7 * time.Minute, 750},
		{8*time.Minute + 29*time.Second, 750}, {8*time.Minute + 30*time.Second, 50},
		{27 * time.Minute, 750}, {47*time.Minute + 10*time.Second, 750}, {110 * time.Minute, 50},
	} {
		if got := sc.RateAt(tc.at); got != tc.want {
			t.Errorf("RateAt(%v) = %v, want %v", tc.at, got, tc.want)
		}
	}
	// 90 s at 750 and 1110 s at 50 in every 1200 s.
	if got, want := sc.MeanRate(2*time.Hour), (90*750+1110*50)/1200.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("MeanRate = %v, want %v", got, want)
	}
}

func TestDaysShape(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	sc, err := Builtin(ScenarioDays, 50, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	if sc.Length != 3*day || len(sc.Segments) != 3*24*60 {
		t.Fatalf("length %v, %d segments; want 72h in 1-minute steps", sc.Length, len(sc.Segments))
	}
	for d := range 3 {
		base := time.Duration(d) * day
		night := sc.RateAt(base + 3*time.Hour) // the trough: 0.4× with noise
		batch := sc.RateAt(base + time.Hour + 10*time.Minute)
		surge := sc.RateAt(base + 9*time.Hour + 5*time.Minute)
		afternoon := sc.RateAt(base + 15*time.Hour) // the peak: 1.6× with noise
		if night > 50 || batch < 5*50 || surge < 2.5*50 || afternoon < 50 {
			t.Errorf("day %d: trough %.0f, batch %.0f, surge %.0f, afternoon %.0f msg/s", d, night, batch, surge, afternoon)
		}
	}
	// Each day differs (noise), and another seed gives other noise.
	if sc.RateAt(12*time.Hour) == sc.RateAt(day+12*time.Hour) {
		t.Error("two days have the same rate at noon: no noise")
	}
	other, _ := BuiltinSeeded(ScenarioDays, 50, 2*time.Hour, 2)
	if other.RateAt(12*time.Hour) == sc.RateAt(12*time.Hour) {
		t.Error("seeds 1 and 2 give the same noise")
	}
	// The mean: the sinusoid averages to the base rate over whole days; the
	// batch adds 8×20 and the surge 3×30 base-rate minutes a day (±20 %,
	// noise ±15 % per minute averaging out): about 50 × (1 + 250/1440).
	if got, want := sc.MeanRate(3*day), 50*(1+250.0/1440); math.Abs(got-want) > 0.05*want {
		t.Errorf("MeanRate = %v, want about %v", got, want)
	}
	long, _ := Builtin(ScenarioDays, 50, 100*time.Hour)
	if n := len(long.Segments); n != 5*24*60 {
		t.Errorf("a 100-hour run has %d minutes of days, want 5 days' worth", n)
	}
}

func TestWeeksShape(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	sc, err := Builtin(ScenarioWeeks, 20, 2*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	if sc.Length != 35*day || len(sc.Segments) != 35*24*60 {
		t.Fatalf("length %v, %d segments; want 35 days in 1-minute steps", sc.Length, len(sc.Segments))
	}
	// Day 0 is a Wednesday: days 3 and 4 the weekend, day 5 a Monday.
	for d := range 35 {
		base := time.Duration(d) * day
		wd := (time.Wednesday + time.Weekday(d)) % 7
		batch := sc.RateAt(base + time.Hour + 10*time.Minute)
		monday := sc.RateAt(base + 9*time.Hour + 40*time.Minute)
		afternoon := sc.RateAt(base + 15*time.Hour)
		switch {
		case d == 3*7+5:
			if wd != time.Monday || batch != 0 || monday != 0 || afternoon != 0 {
				t.Errorf("day %d (%v), the holiday: batch %.0f, Monday surge %.0f, afternoon %.0f msg/s, want none", d, wd, batch, monday, afternoon)
			}
		case wd == time.Saturday || wd == time.Sunday:
			if batch > 20 || monday > 20 || afternoon > 24 {
				t.Errorf("day %d (%v): batch %.0f, 09:40 %.0f, afternoon %.0f msg/s, want a quiet weekend", d, wd, batch, monday, afternoon)
			}
		case wd == time.Monday:
			if batch < 5*20 || monday < 4*20 {
				t.Errorf("day %d (Monday): batch %.0f, surge %.0f msg/s", d, batch, monday)
			}
		default:
			if batch < 5*20 || monday > 2.5*20 || afternoon < 12 {
				t.Errorf("day %d (%v): batch %.0f, 09:40 %.0f, afternoon %.0f msg/s", d, wd, batch, monday, afternoon)
			}
		}
	}
	other, _ := BuiltinSeeded(ScenarioWeeks, 20, 2*time.Hour, 2)
	if other.RateAt(12*time.Hour) == sc.RateAt(12*time.Hour) {
		t.Error("seeds 1 and 2 give the same noise")
	}
}

// The irregular scenario: bursts and quiet gaps within their ranges, no step
// above 25× the base rate, a mean near the base rate over a long run, and
// other bursts for another seed.
func TestIrregularShape(t *testing.T) {
	t.Parallel()
	const rate, d = 50.0, 24 * time.Hour
	bursts := func(seed uint64) (sc Scenario, starts []time.Duration) {
		t.Helper()
		sc, err := BuiltinSeeded(ScenarioIrregular, rate, d, seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := sc.Validate(); err != nil {
			t.Fatal(err)
		}
		if sc.Segments[0].At != 0 || sc.Segments[0].Rate != rate*0.2 {
			t.Fatalf("first segment %+v, want a gap at 10 msg/s from 0", sc.Segments[0])
		}
		var start, end time.Duration // the burst being read
		in := false
		for i, s := range sc.Segments {
			if s.Rate > rate*25 {
				t.Errorf("segment %d at %v: %v msg/s, above 25× the base rate", i, s.At, s.Rate)
			}
			base := s.Rate == rate*0.2
			switch {
			case !base && !in:
				if gap := s.At - end; len(starts) > 0 && (gap < time.Minute || gap > 5*time.Minute) {
					t.Errorf("gap of %v before the burst at %v, want 1 to 5 minutes", gap, s.At)
				}
				start, in = s.At, true
				starts = append(starts, start)
			case base && in:
				end, in = s.At, false
				if l := end - start; l < 20*time.Second || l > 90*time.Second {
					t.Errorf("burst at %v lasts %v, want 20 to 90 s", start, l)
				}
			}
		}
		return sc, starts
	}
	sc, one := bursts(1)
	// 24 h of gaps of 3 minutes and bursts of 55 s on average.
	if n := len(one); n < 350 || n > 386 {
		t.Errorf("%d bursts in 24 h, want about 24 h ÷ 235 s ≈ 368 ± 5 %%", n)
	}
	if m := sc.MeanRate(d); math.Abs(m-rate) > 0.05*rate {
		t.Errorf("mean rate %v, want %v ± 5 %%", m, rate)
	}
	peak := 0.0
	for _, s := range sc.Segments {
		peak = math.Max(peak, s.Rate)
	}
	if peak < 15*rate {
		t.Errorf("highest step %v msg/s, want bursts reaching at least 15× the base rate", peak)
	}
	_, two := bursts(2)
	if slices.Equal(one[:10], two[:10]) {
		t.Errorf("seeds 1 and 2 give the same bursts: %v", one[:10])
	}
	_, again := bursts(1)
	if !slices.Equal(one, again) {
		t.Error("seed 1 gives other bursts on a second call")
	}
}
