package sim

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Limits on one run, so that no input makes a run take hours or more
// memory than a laptop has.
const (
	// MaxSlots bounds a fleet's message slots (max workers × concurrency):
	// the world keeps one entry per free slot.
	MaxSlots = 10_000_000
	// MaxMessages bounds the expected arrivals of one policy's run.
	MaxMessages = 50_000_000
	// MaxSteps bounds the sampling intervals of one run.
	MaxSteps = 5_000_000
	// MaxMemory bounds the estimated memory of a comparison, in bytes.
	MaxMemory = 2 << 30
	// MaxCSVRows bounds the rows of a scenario file.
	MaxCSVRows = 2_000_000
	// MaxCSVSeconds bounds a scenario file's times: one leap year.
	MaxCSVSeconds = 366 * 24 * 3600
	// MaxDuration bounds a run's simulated time: one leap year.
	MaxDuration = 366 * 24 * time.Hour
	// MaxWorkers bounds a fleet's max.
	MaxWorkers = 1_000_000
	// MaxStartDelay bounds a worker's start delay.
	MaxStartDelay = 24 * time.Hour
	// MaxServiceCV bounds the lognormal service time's coefficient of
	// variation.
	MaxServiceCV = 100
)

// Estimate is the work a comparison will do, known before it runs.
type Estimate struct {
	Messages float64 // expected arrivals of one policy's run
	Steps    float64 // sampling intervals of one policy's run
	Bytes    float64 // memory at the peak, all policies' series kept
}

// Bytes per item, from the types: a waiting message (two float64, the ring
// buffer doubling), a series point, a worker and its slot entries, a
// scenario segment, a minute of the world's history (the slice doubling).
const (
	bytesPerMessage = 2 * 16
	bytesPerPoint   = 32
	bytesPerSlot    = 8
	bytesPerSegment = 16
	bytesPerMinute  = 2 * 16
)

// Estimate estimates the work of running the given number of policies,
// with every arrival of a run still waiting at its end as the worst case
// for memory.
func (rc RunConfig) Estimate(policies int) Estimate {
	d := rc.Duration.Seconds()
	e := Estimate{
		Messages: rc.World.Scenario.MeanRate(rc.Duration) * d,
	}
	if rc.Interval > 0 {
		e.Steps = math.Floor(d/rc.Interval.Seconds()) + 1
	} else {
		e.Steps = math.Inf(1)
	}
	slots := float64(max(rc.World.Max, 1)) * float64(max(rc.World.Concurrency, 1))
	e.Bytes = float64(policies)*(e.Steps*bytesPerPoint+math.Ceil(d/60)*bytesPerMinute) + e.Messages*bytesPerMessage +
		slots*bytesPerSlot + float64(len(rc.World.Scenario.Segments))*bytesPerSegment
	return e
}

// Err says which limit the estimate is beyond, nil when none.
func (e Estimate) Err() error {
	var errs []error
	if !(e.Messages <= MaxMessages) {
		errs = append(errs, fmt.Errorf("about %.3g messages per policy, more than %d", e.Messages, MaxMessages))
	}
	if !(e.Steps <= MaxSteps) {
		errs = append(errs, fmt.Errorf("%.3g sampling intervals, more than %d", e.Steps, MaxSteps))
	}
	if !(e.Bytes <= MaxMemory) {
		errs = append(errs, fmt.Errorf("about %.3g GB of memory, more than %d GB", e.Bytes/(1<<30), MaxMemory>>30))
	}
	return errors.Join(errs...)
}

// FromMinutes makes a scenario of per-minute message counts, oldest
// first: one segment per minute at the count ÷ 60. A NaN minute (no
// datapoint) is 0, except at the end, where NaN minutes are left out: the
// newest minutes may not be published yet. Its Length is its minutes.
func FromMinutes(name string, counts []float64) (Scenario, error) {
	n := len(counts)
	for n > 0 && math.IsNaN(counts[n-1]) {
		n--
	}
	if n == 0 {
		return Scenario{}, errors.New("no datapoint in the span")
	}
	sc := Scenario{Name: name, Segments: make([]Segment, n), Length: time.Duration(n) * time.Minute}
	for i, c := range counts[:n] {
		r := 0.0
		if !math.IsNaN(c) && !math.IsInf(c, 0) && c > 0 {
			r = c / 60
		}
		sc.Segments[i] = Segment{At: time.Duration(i) * time.Minute, Rate: r}
	}
	return sc, nil
}

// FromHistory makes a scenario of a group's per-minute arrivals as read
// from CloudWatch (FromMinutes), named after the group and its first
// minute.
func FromHistory(group string, h model.MinuteHistory) (Scenario, error) {
	sc, err := FromMinutes(fmt.Sprintf("%s: NumberOfMessagesSent per minute from %s", group, h.Start.Format(time.RFC3339)), h.Counts)
	if err != nil {
		return Scenario{}, fmt.Errorf("group %s: %w", group, err)
	}
	return sc, nil
}

// WriteCSV writes a scenario's segments as a scenario file ParseCSV reads
// back, its name first as a comment line. Evenly spaced segments (a
// per-minute trace) read back with the same length.
func WriteCSV(w io.Writer, sc Scenario) error {
	buf := make([]byte, 0, 64*(len(sc.Segments)+2))
	if sc.Name != "" {
		buf = append(buf, "# "...)
		buf = append(buf, strings.ReplaceAll(sc.Name, "\n", " ")...)
		buf = append(buf, '\n')
	}
	buf = append(buf, csvHeader...)
	buf = append(buf, '\n')
	row := func(at time.Duration, rate float64) {
		buf = strconv.AppendFloat(buf, at.Seconds(), 'f', -1, 64)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, rate, 'g', -1, 64)
		buf = append(buf, '\n')
	}
	for _, seg := range sc.Segments {
		row(seg.At, seg.Rate)
	}
	_, err := w.Write(buf)
	return err
}
