package sim

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Segment is one piece of a piecewise-constant arrival rate: from At (an
// offset from the start of the run) until the next segment, messages arrive
// as a Poisson process at Rate messages per second.
type Segment struct {
	At   time.Duration
	Rate float64
}

// Scenario is an arrival rate over time, piecewise constant. Before the first
// segment the rate is 0; the last segment's rate holds for ever, unless the
// scenario is cyclic.
type Scenario struct {
	Name     string
	Segments []Segment
	// Period, when positive, makes the scenario repeat: the rate at t is the
	// rate at t mod Period. A run that outlasts its scenario (the demo) uses it.
	Period time.Duration
	// Length, when positive, is how long the scenario means to run: a run
	// whose duration is not given explicitly lasts this long.
	Length time.Duration
}

// Built-in scenario names.
const (
	ScenarioSteady    = "steady"
	ScenarioStep      = "step"
	ScenarioSpike     = "spike"
	ScenarioDiurnal   = "diurnal"
	ScenarioRamp      = "ramp"
	ScenarioBursty    = "bursty"
	ScenarioCron      = "cron"
	ScenarioDays      = "days"
	ScenarioWeeks     = "weeks"
	ScenarioIrregular = "irregular"
	ScenarioWeb       = "web"
)

// BuiltinScenarios lists the built-in scenario names.
var BuiltinScenarios = []string{ScenarioSteady, ScenarioStep, ScenarioSpike, ScenarioDiurnal, ScenarioRamp, ScenarioBursty, ScenarioCron, ScenarioDays, ScenarioWeeks, ScenarioIrregular, ScenarioWeb}

// Shapes of the built-in scenarios.
const (
	stepFactor     = 3.0              // step: the rate after the step
	spikeFactor    = 10.0             // spike: the rate during the spike
	spikeLength    = 5 * time.Minute  // spike: its length (at most a tenth of the run)
	diurnalDepth   = 0.8              // diurnal: the sinusoid's amplitude, as a share of the base rate
	diurnalStep    = time.Minute      // diurnal: the rate changes in steps this long (at most 1/120 of the run)
	rampLow        = 0.1              // ramp: the rate before and after the climb, as a share of the base rate
	rampHigh       = 2.0              // ramp: the rate the climb reaches
	rampStep       = 10 * time.Second // ramp: the rate changes in steps this long (at most 1/720 of the run)
	burstPeriod    = 10 * time.Minute // bursty: one burst and one lull
	burstLength    = 2 * time.Minute  // bursty: the burst's length
	burstFactor    = 3.0              // bursty: the rate during a burst
	burstLullShare = 0.5              // bursty: the rate between bursts; mean = base rate

	cronPeriod = 20 * time.Minute // cron: one job every period
	cronOffset = 7 * time.Minute  // cron: the job starts this far into each period
	cronLength = 90 * time.Second // cron: the job's length
	cronFactor = 15.0             // cron: the rate during the job

	daysCount    = 3                // days: how many days
	daysDepth    = 0.6              // days: the daily sinusoid's amplitude, as a share of the base rate
	daysTrough   = 3 * time.Hour    // days: the quietest time of day (UTC), the busiest 12 hours later
	daysBatchAt  = 1 * time.Hour    // days: the nightly batch starts (time of day)
	daysBatchFor = 20 * time.Minute // days: the nightly batch's length
	daysBatchAdd = 8.0              // days: the batch adds this many times the base rate
	daysSurgeAt  = 8*time.Hour + 50*time.Minute
	daysSurgeFor = 30 * time.Minute // days: the morning surge's length
	daysSurgeAdd = 3.0              // days: the surge adds this many times the base rate
	daysNoise    = 0.15             // days: each minute's rate is multiplied by 1 + this × a standard normal
	daysDayVary  = 0.2              // days: each day's batch and surge sizes vary by up to ± this share

	weeksCount     = 5              // weeks: how many weeks
	weeksFirstDay  = time.Wednesday // weeks: the simulated clock starts on Wednesday 1 January 2025
	weeksWeekend   = 0.4            // weeks: the level of Saturdays and Sundays, as a share of a weekday's
	weeksMondayAt  = 9 * time.Hour  // weeks: the Monday surge starts (time of day)
	weeksMondayFor = time.Hour      // weeks: its length
	weeksMondayAdd = 5.0            // weeks: it adds this many times the base rate
	weeksHoliday   = 3*7 + 5        // weeks: the day with no traffic (a Monday in the fourth week)

	irregularBase    = 0.2              // irregular: the rate between bursts, as a share of the mean
	irregularGapMin  = time.Minute      // irregular: the shortest quiet gap between two bursts
	irregularGapMax  = 5 * time.Minute  // irregular: the longest
	irregularLenMin  = 20 * time.Second // irregular: the shortest burst
	irregularLenMax  = 90 * time.Second // irregular: the longest
	irregularLevelLo = 1.5              // irregular: a burst's mean rate, as a share of the mean, is drawn from [lo, hi]
	irregularLevelHi = 5.74             // (mean 3.62, which makes the scenario's mean the base rate)
	irregularStep    = 5 * time.Second  // irregular: a burst's rate changes in steps this long
	irregularSpread  = 0.6              // irregular: each step's rate is the burst's times a lognormal of this σ and mean 1
	irregularPeak    = 25.0             // irregular: no step exceeds this many times the mean

	webDays    = 1                // web: how many days
	webDepth   = 0.7              // web: the daily sinusoid's amplitude, as a share of the base rate
	webTrough  = 4 * time.Hour    // web: the quietest time of day (UTC), the busiest 12 hours later
	webSigma   = 0.3              // web: the σ of the log-level noise
	webTau     = 30 * time.Second // web: the noise's correlation time
	webBumps   = 12               // web: bumps a day, at times drawn evenly over it
	webBumpMin = time.Minute      // web: the shortest bump
	webBumpMax = 5 * time.Minute  // web: the longest
	webBumpLo  = 1.5              // web: a bump multiplies the rate by a factor drawn from [lo, hi]
	webBumpHi  = 3.0
)

// Builtin returns the built-in scenario name at base rate (messages per
// second) over a run of the given duration:
//
//   - steady: the base rate throughout.
//   - step: the base rate for the first third, then 3× the base rate.
//   - spike: the base rate, with 10× the base rate for 5 minutes (at most a
//     tenth of the run) starting at one third of the run.
//   - diurnal: one period of a sinusoid over the run, from 0.2× the base rate
//     at the start and end to 1.8× at the middle (mean: the base rate), in
//     1-minute steps (at most 1/120 of the run), each at the sinusoid's value
//     at the middle of the step.
//   - ramp: 0.1× the base rate for the first twelfth of the run, climbing
//     evenly to 2× over the next sixth (20 minutes of 2 hours), holding
//     there for a third, falling evenly back to 0.1× over a sixth and
//     holding there to the end (mean: 1.05× the base rate), in 10-second
//     steps (at most 1/720 of the run), each at the value at the middle of
//     the step.
//   - bursty: repeating 10-minute cycles of a 2-minute burst at 3× the base
//     rate and 8 minutes at 0.5× (mean: the base rate).
//   - cron: the base rate, with a 90-second job at 15× the base rate every
//     20 minutes, 7 minutes into each 20 (at :07, :27 and :47 past the hour).
//   - days: three days (more when the run is longer) of 1-minute steps:
//     a daily sinusoid from 0.4× the base rate at 03:00 to 1.6× at 15:00,
//     plus a nightly batch (+8× the base rate, 01:00 to 01:20) and a
//     morning surge (+3×, 08:50 to 09:20) at the same time each day, their
//     size varying by up to ±20 % from day to day, every minute multiplied
//     by 1 + 0.15 × a standard normal (at least 0). The noise is drawn from
//     seed 1; BuiltinSeeded draws it from another seed. Its Length is the
//     three days.
//   - weeks: five weeks (more when the run is longer) of 1-minute steps,
//     from a Wednesday: weekdays as in days (sinusoid, nightly batch,
//     morning surge), weekends at 0.4× a weekday's sinusoid with no batch
//     and no surge, a Monday surge (+5×, 09:00 to 10:00) every week, a
//     holiday with no traffic at all (the fourth week's Monday), each
//     minute's noise and each day's sizes as in days. Its Length is the
//     five weeks.
//   - irregular: bursts of random size, length and spacing, with quiet
//     minutes between: 0.2× the base rate between bursts; each gap drawn
//     evenly from 1 to 5 minutes, each burst's length from 20 to 90 s, its
//     mean rate from 1.5× to 5.74× the base rate, and within the burst the
//     rate changes every 5 s, each step the burst's rate times a lognormal
//     of mean 1 and σ 0.6, at most 25× the base rate (mean: about the base
//     rate; a burst of about 10,000 messages every 4 minutes at 50 msg/s).
//     It starts with a gap. The draws come from the seed, so each seed
//     gives other bursts.
//   - web: a web server's day (more when the run is longer) of 1-second
//     steps: a daily sinusoid from 0.3× the base rate at 04:00 to 1.7× at
//     16:00, times a lognormal noise of mean 1 whose log is σ 0.3 and
//     correlated over 30 s (each second an AR(1) step), with a dozen bumps
//     a day of 1 to 5 minutes at 1.5× to 3×, at times drawn evenly (mean:
//     about 1.03× the base rate). The draws come from the seed. Its Length
//     is the day.
func Builtin(name string, rate float64, duration time.Duration) (Scenario, error) {
	return BuiltinSeeded(name, rate, duration, 1)
}

// BuiltinSeeded is Builtin with the randomness of the days, weeks and
// irregular scenarios drawn from seed.
func BuiltinSeeded(name string, rate float64, duration time.Duration, seed uint64) (Scenario, error) {
	if !(rate >= 0) || math.IsInf(rate, 0) {
		return Scenario{}, fmt.Errorf("rate %v: must be a finite number >= 0", rate)
	}
	if duration <= 0 {
		return Scenario{}, fmt.Errorf("duration %v: must be > 0", duration)
	}
	sc := Scenario{Name: name}
	switch name {
	case ScenarioSteady:
		sc.Segments = []Segment{{0, rate}}
	case ScenarioStep:
		sc.Segments = []Segment{{0, rate}, {duration / 3, rate * stepFactor}}
	case ScenarioSpike:
		length := min(spikeLength, duration/10)
		sc.Segments = []Segment{{0, rate}, {duration / 3, rate * spikeFactor}, {duration/3 + length, rate}}
	case ScenarioDiurnal:
		sc.Segments = sampled(duration, min(diurnalStep, duration/120), func(x float64) float64 {
			return rate * (1 - diurnalDepth*math.Cos(2*math.Pi*x))
		})
	case ScenarioRamp:
		sc.Segments = sampled(duration, min(rampStep, duration/720), func(x float64) float64 {
			return rate * rampShape(12*x)
		})
	case ScenarioBursty:
		sc.Segments = []Segment{{0, rate * burstFactor}, {burstLength, rate * burstLullShare}}
		sc.Period = burstPeriod
	case ScenarioCron:
		sc.Segments = []Segment{{0, rate}, {cronOffset, rate * cronFactor}, {cronOffset + cronLength, rate}}
		sc.Period = cronPeriod
	case ScenarioDays:
		sc.Segments = daysSegments(rate, max(daysCount, int((duration+24*time.Hour-1)/(24*time.Hour))), seed)
		sc.Length = daysCount * 24 * time.Hour
	case ScenarioWeeks:
		sc.Segments = weeksSegments(rate, max(7*weeksCount, int((duration+24*time.Hour-1)/(24*time.Hour))), seed)
		sc.Length = 7 * weeksCount * 24 * time.Hour
	case ScenarioIrregular:
		sc.Segments = irregularSegments(rate, duration, seed)
	case ScenarioWeb:
		sc.Segments = webSegments(rate, max(webDays, int((duration+24*time.Hour-1)/(24*time.Hour))), seed)
		sc.Length = webDays * 24 * time.Hour
	default:
		return Scenario{}, fmt.Errorf("unknown scenario %q (want %s or a CSV file)", name, strings.Join(BuiltinScenarios, ", "))
	}
	return sc, nil
}

// sampled cuts a run of duration d into steps of the given length (the
// whole run when that is 0), each at rate(x) for x the step's middle as a
// share of the run.
func sampled(d, step time.Duration, rate func(x float64) float64) []Segment {
	if step <= 0 {
		step = d
	}
	segs := make([]Segment, 0, int(d/step)+1)
	for at := time.Duration(0); at < d; at += step {
		mid := (at + min(step, d-at)/2).Seconds() / d.Seconds()
		segs = append(segs, Segment{at, rate(mid)})
	}
	return segs
}

// rampShape is the ramp scenario's rate, as a share of the base rate, at x
// twelfths of the run: low to 1, climbing to 3, high to 7, falling to 9,
// low to the end.
func rampShape(x float64) float64 {
	switch {
	case x < 1:
		return rampLow
	case x < 3:
		return rampLow + (rampHigh-rampLow)*(x-1)/2
	case x < 7:
		return rampHigh
	case x < 9:
		return rampHigh - (rampHigh-rampLow)*(x-7)/2
	default:
		return rampLow
	}
}

// daysSegments are the days scenario's 1-minute steps over n days.
func daysSegments(rate float64, n int, seed uint64) []Segment {
	r := rand.New(rand.NewPCG(seed, 0x64617973))
	const day = 24 * time.Hour
	segs := make([]Segment, 0, n*int(day/time.Minute))
	for d := range n {
		batch := daysBatchAdd * (1 + daysDayVary*(2*r.Float64()-1))
		surge := daysSurgeAdd * (1 + daysDayVary*(2*r.Float64()-1))
		for m := time.Duration(0); m < day; m += time.Minute {
			tod := m + 30*time.Second // the middle of the minute
			v := 1 - daysDepth*math.Cos(2*math.Pi*(tod-daysTrough).Hours()/24)
			if m >= daysBatchAt && m < daysBatchAt+daysBatchFor {
				v += batch
			}
			if m >= daysSurgeAt && m < daysSurgeAt+daysSurgeFor {
				v += surge
			}
			v *= max(0, 1+daysNoise*r.NormFloat64())
			segs = append(segs, Segment{time.Duration(d)*day + m, rate * v})
		}
	}
	return segs
}

// weeksSegments are the weeks scenario's 1-minute steps over n days.
func weeksSegments(rate float64, n int, seed uint64) []Segment {
	r := rand.New(rand.NewPCG(seed, 0x7765656b73))
	const day = 24 * time.Hour
	segs := make([]Segment, 0, n*int(day/time.Minute))
	for d := range n {
		wd := (weeksFirstDay + time.Weekday(d)) % 7
		weekend := wd == time.Saturday || wd == time.Sunday
		batch := daysBatchAdd * (1 + daysDayVary*(2*r.Float64()-1))
		surge := daysSurgeAdd * (1 + daysDayVary*(2*r.Float64()-1))
		monday := weeksMondayAdd * (1 + daysDayVary*(2*r.Float64()-1))
		for m := time.Duration(0); m < day; m += time.Minute {
			tod := m + 30*time.Second // the middle of the minute
			v := 1 - daysDepth*math.Cos(2*math.Pi*(tod-daysTrough).Hours()/24)
			switch {
			case d == weeksHoliday:
				v = 0
			case weekend:
				v *= weeksWeekend
			default:
				if m >= daysBatchAt && m < daysBatchAt+daysBatchFor {
					v += batch
				}
				if m >= daysSurgeAt && m < daysSurgeAt+daysSurgeFor {
					v += surge
				}
				if wd == time.Monday && m >= weeksMondayAt && m < weeksMondayAt+weeksMondayFor {
					v += monday
				}
			}
			v *= max(0, 1+daysNoise*r.NormFloat64())
			segs = append(segs, Segment{time.Duration(d)*day + m, rate * v})
		}
	}
	return segs
}

// irregularSegments are the irregular scenario's gaps and bursts over d.
func irregularSegments(rate float64, d time.Duration, seed uint64) []Segment {
	r := rand.New(rand.NewPCG(seed, 0x6972726567))
	uniform := func(lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }
	var segs []Segment
	for at := time.Duration(0); at < d; {
		segs = append(segs, Segment{at, rate * irregularBase})
		at += time.Duration(uniform(float64(irregularGapMin), float64(irregularGapMax)))
		end := at + time.Duration(uniform(float64(irregularLenMin), float64(irregularLenMax)))
		level := uniform(irregularLevelLo, irregularLevelHi)
		for ; at < end; at += irregularStep {
			g := math.Exp(irregularSpread*r.NormFloat64() - irregularSpread*irregularSpread/2)
			segs = append(segs, Segment{at, rate * math.Min(level*g, irregularPeak)})
		}
		at = end
	}
	return segs
}

// webSegments are the web scenario's 1-second steps over n days.
func webSegments(rate float64, n int, seed uint64) []Segment {
	r := rand.New(rand.NewPCG(seed, 0x776562))
	const day = 24 * time.Hour
	segs := make([]Segment, 0, n*int(day/time.Second))
	a := math.Exp(-time.Second.Seconds() / webTau.Seconds())
	x := webSigma * r.NormFloat64() // the log-level, stationary from the start
	for d := range n {
		type bump struct {
			at, end time.Duration
			factor  float64
		}
		var bumps [webBumps]bump
		for i := range bumps {
			at := time.Duration(r.Float64() * float64(day))
			length := webBumpMin + time.Duration(r.Float64()*float64(webBumpMax-webBumpMin))
			bumps[i] = bump{at, at + length, webBumpLo + (webBumpHi-webBumpLo)*r.Float64()}
		}
		for s := time.Duration(0); s < day; s += time.Second {
			tod := s + time.Second/2 // the middle of the second
			v := 1 - webDepth*math.Cos(2*math.Pi*(tod-webTrough).Hours()/24)
			x = a*x + webSigma*math.Sqrt(1-a*a)*r.NormFloat64()
			v *= math.Exp(x - webSigma*webSigma/2)
			for _, b := range bumps {
				if s >= b.at && s < b.end {
					v *= b.factor
				}
			}
			segs = append(segs, Segment{time.Duration(d)*day + s, rate * v})
		}
	}
	return segs
}

// CSV header of a scenario file.
const csvHeader = "t_seconds,arrivals_per_second"

// ParseCSV reads a scenario from CSV: the header `t_seconds,arrivals_per_second`
// then one row per change of rate, times strictly increasing from 0 or more
// (at most MaxCSVSeconds, at most MaxCSVRows rows), rates >= 0. Each rate
// holds until the next row; the last holds to the end of the run. The
// scenario's Length is the last row's time plus the gap before it (for
// evenly spaced rows, one more step); 0 for a single row. Errors name the
// line.
func ParseCSV(name string, r io.Reader) (Scenario, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	sc := Scenario{Name: name}
	header := false
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			// A *csv.ParseError names the line and column itself.
			return Scenario{}, fmt.Errorf("%s: %w", name, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if !header {
			got := strings.ToLower(strings.Join(trimAll(rec), ","))
			if got != csvHeader {
				return Scenario{}, fmt.Errorf("%s:%d: header must be %q, got %q", name, line, csvHeader, strings.Join(rec, ","))
			}
			header = true
			continue
		}
		if len(rec) != 2 {
			return Scenario{}, fmt.Errorf("%s:%d: want 2 fields (t_seconds,arrivals_per_second), got %d", name, line, len(rec))
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(rec[0]), 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 || t > MaxCSVSeconds {
			return Scenario{}, fmt.Errorf("%s:%d: t_seconds %q: want a number from 0 to %d (366 days)", name, line, rec[0], MaxCSVSeconds)
		}
		rate, err := strconv.ParseFloat(strings.TrimSpace(rec[1]), 64)
		if err != nil || math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 {
			return Scenario{}, fmt.Errorf("%s:%d: arrivals_per_second %q: want a finite number >= 0", name, line, rec[1])
		}
		at := time.Duration(math.Round(t * float64(time.Second)))
		if n := len(sc.Segments); n > 0 && at <= sc.Segments[n-1].At {
			return Scenario{}, fmt.Errorf("%s:%d: t_seconds %v: must be greater than the previous row's %v",
				name, line, t, sc.Segments[n-1].At.Seconds())
		}
		if len(sc.Segments) >= MaxCSVRows {
			return Scenario{}, fmt.Errorf("%s:%d: more than %d rows", name, line, MaxCSVRows)
		}
		sc.Segments = append(sc.Segments, Segment{at, rate})
	}
	if !header {
		return Scenario{}, fmt.Errorf("%s: empty: want the header %q and at least one row", name, csvHeader)
	}
	if len(sc.Segments) == 0 {
		return Scenario{}, fmt.Errorf("%s: no rows after the header", name)
	}
	if n := len(sc.Segments); n > 1 {
		sc.Length = 2*sc.Segments[n-1].At - sc.Segments[n-2].At
	}
	return sc, nil
}

func trimAll(rec []string) []string {
	out := make([]string, len(rec))
	for i, s := range rec {
		out[i] = strings.TrimSpace(s)
	}
	return out
}

// Validate reports a scenario that cannot drive a run.
func (s Scenario) Validate() error {
	if len(s.Segments) == 0 {
		return errors.New("scenario has no segments")
	}
	for i, seg := range s.Segments {
		if !(seg.Rate >= 0) || math.IsInf(seg.Rate, 0) {
			return fmt.Errorf("scenario segment %d: rate %v must be a finite number >= 0", i, seg.Rate)
		}
		if seg.At < 0 || (i > 0 && seg.At <= s.Segments[i-1].At) {
			return fmt.Errorf("scenario segment %d: start %v must be >= 0 and after the previous segment's", i, seg.At)
		}
		if s.Period > 0 && i == 0 && seg.At != 0 {
			return errors.New("scenario segment 0: a repeating scenario must start at 0")
		}
		if s.Period > 0 && seg.At >= s.Period {
			return fmt.Errorf("scenario segment %d: start %v must be within the period %v", i, seg.At, s.Period)
		}
	}
	return nil
}

// RateAt is the arrival rate at offset t from the start of the run.
func (s Scenario) RateAt(t time.Duration) float64 {
	return s.rateAt(t.Seconds())
}

func (s Scenario) rateAt(t float64) float64 {
	if s.Period > 0 {
		p := s.Period.Seconds()
		t -= math.Floor(t/p) * p
	}
	i, found := slices.BinarySearchFunc(s.Segments, t, func(seg Segment, t float64) int {
		switch a := seg.At.Seconds(); {
		case a < t:
			return -1
		case a > t:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	if i < 0 {
		return 0
	}
	return s.Segments[i].Rate
}

// MaxRate is the highest rate over [from, to) offsets from the start.
func (s Scenario) MaxRate(from, to time.Duration) float64 {
	return s.maxRate(from.Seconds(), to.Seconds())
}

func (s Scenario) maxRate(from, to float64) float64 {
	best := s.rateAt(from)
	if s.Period > 0 {
		p := s.Period.Seconds()
		if to-from >= p {
			for _, seg := range s.Segments {
				best = math.Max(best, seg.Rate)
			}
			return best
		}
		base := math.Floor(from/p) * p
		for k := 0.0; k < 2; k++ {
			for _, seg := range s.Segments {
				at := base + k*p + seg.At.Seconds()
				if at > from && at < to {
					best = math.Max(best, seg.Rate)
				}
			}
		}
		return best
	}
	i, _ := slices.BinarySearchFunc(s.Segments, from, func(seg Segment, t float64) int {
		return cmp.Compare(seg.At.Seconds(), t)
	})
	for _, seg := range s.Segments[i:] {
		at := seg.At.Seconds()
		if at >= to {
			break
		}
		if at > from {
			best = math.Max(best, seg.Rate)
		}
	}
	return best
}

// MeanRate is the mean arrival rate over [0, d): the expected number of
// arrivals over d, divided by d.
func (s Scenario) MeanRate(d time.Duration) float64 {
	end := d.Seconds()
	if end <= 0 {
		return s.rateAt(0)
	}
	var cur arrivalCursor
	cur.init(s)
	total := 0.0
	t := 0.0
	for t < end {
		r, until := cur.at(t)
		next := math.Min(until, end)
		total += r * (next - t)
		t = next
	}
	return total / end
}

// arrivalCursor walks a scenario's segments forward in time.
type arrivalCursor struct {
	sc     Scenario
	period float64
	cycle  float64 // start of the current cycle
	i      int     // current segment index, -1 before the first
}

func (c *arrivalCursor) init(s Scenario) {
	c.sc = s
	c.period = s.Period.Seconds()
	c.cycle = 0
	c.i = -1
}

// at returns the rate in force at t (t never decreasing between calls) and
// the time until which it holds.
func (c *arrivalCursor) at(t float64) (rate, until float64) {
	segs := c.sc.Segments
	for {
		if c.period > 0 && t >= c.cycle+c.period {
			c.cycle += math.Floor((t-c.cycle)/c.period) * c.period
			c.i = -1
		}
		end := math.Inf(1)
		if c.i+1 < len(segs) {
			end = c.cycle + segs[c.i+1].At.Seconds()
		} else if c.period > 0 {
			end = c.cycle + c.period
		}
		if t < end {
			r := 0.0
			if c.i >= 0 {
				r = segs[c.i].Rate
			}
			return r, end
		}
		if c.i+1 < len(segs) {
			c.i++
		} else {
			c.cycle += c.period
			c.i = -1
		}
	}
}
