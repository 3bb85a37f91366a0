// Package simulate is `checker simulate` behind its flags: it checks the
// options (every problem at once, each naming its flag), takes a group's
// settings from a configuration file, makes the traffic (a built-in
// scenario, a CSV file or the group's arrivals from CloudWatch), runs the
// policies in the simulator (internal/sim) and prints their scores and
// chart (docs/simulation.md).
package simulate

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/queuechecker/queue-checker/internal/config"
	"github.com/queuechecker/queue-checker/internal/model"
	"github.com/queuechecker/queue-checker/internal/policy"
	"github.com/queuechecker/queue-checker/internal/sim"
	"github.com/queuechecker/queue-checker/internal/sim/chart"
	"github.com/queuechecker/queue-checker/internal/sim/peers"
	"github.com/queuechecker/queue-checker/internal/sim/report"
)

// Start is the simulated clock's time zero; only offsets from it show.
var Start = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// progressMessages is the run size, in simulated messages over all policies,
// above which a terminal gets a progress bar (a few seconds of work).
const progressMessages = 5_000_000

// Options are the flags of `checker simulate`, each field the flag named
// in its comment where the name differs.
type Options struct {
	Scenario      string
	Rate          float64
	Duration      time.Duration
	ServiceTime   time.Duration
	ServiceDist   string
	ServiceCV     float64
	Concurrency   int
	StartDelay    time.Duration
	Interval      time.Duration
	LatencyTarget time.Duration
	Min, Max      int
	Workers       int
	Policy        string
	Seed          uint64
	Output        string
	WorkerCost    float64
	Chart         string
	ScaleIn       string
	Visibility    time.Duration // visibility-timeout
	WarmUp        time.Duration
	RestartAt     time.Duration

	AssumedServiceTime time.Duration
	DownstreamPool     int
	PoolChanges        string // downstream-pool-change
	ServiceChanges     string // service-time-change
	MetricDelay        time.Duration
	MetricsExact       bool
	StartDelayCV       float64
	DeletedCount       bool
	Learn              string
	PlanActs           bool
	// poolChanges are PoolChanges read by checkWorld.
	poolChanges []sim.PoolChange

	ConfigFile     string // config
	Group          string
	FromCloudWatch time.Duration
	SaveTrace      string

	Peers peers.Params

	// Set holds the flags given on the command line, by name: a flag not
	// given leaves the value --config's group gives.
	Set map[string]bool

	// Settings maps a configured group to the policy's settings at an
	// interval, as the daemon does.
	Settings func(g config.Group, interval time.Duration) policy.Settings
	// Arrivals reads the group's per-minute arrivals of the last span from
	// CloudWatch, for --from-cloudwatch.
	Arrivals func(ctx context.Context, cfg config.Config, g config.Group, span time.Duration) (model.MinuteHistory, error)
}

// UsageError is a problem of the options: the command prints its usage
// and exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Simulation is a checked run of the policies, ready to run.
type Simulation struct {
	rc          sim.RunConfig
	policies    []string
	output      string
	chart       string
	chartFormat string
}

// New checks the options and makes the run they ask for: every problem
// of the options at once, as a *UsageError naming each flag; a problem of
// AWS or of a file as another error.
func New(ctx context.Context, o Options) (*Simulation, error) {
	rc, policies, err := o.RunConfig(ctx)
	if err != nil {
		return nil, err
	}
	s := &Simulation{rc: rc, policies: policies, output: o.Output, chart: o.Chart}
	if o.Chart != "" {
		if s.chartFormat, err = chart.Format(o.Chart); err != nil {
			return nil, &UsageError{Err: fmt.Errorf("--chart: %w", err)}
		}
	}
	return s, nil
}

// Run runs the policies, draws the chart when asked and prints the scores
// to stdout, as a table or JSON; a long run shows its progress on stderr
// when stderr is a terminal.
func (s *Simulation) Run(ctx context.Context, stdout, stderr io.Writer) error {
	rc := s.rc
	if bar := progressBar(stderr, rc, s.policies); bar != nil {
		rc.Progress = func(d time.Duration) { _ = bar.Add64(int64(d / time.Second)) }
		defer func() { _ = bar.Finish() }()
	}
	results, err := sim.Run(ctx, rc, s.policies)
	if err != nil {
		return err
	}
	if s.chartFormat != "" {
		if err := chart.WriteFile(s.chart, s.chartFormat, rc, results); err != nil {
			return err
		}
	}
	if s.output == "json" {
		return report.JSON(stdout, results)
	}
	return report.Table(stdout, rc, results)
}

// progressBar is a bar on stderr for a long run when stderr is a terminal;
// nil otherwise.
func progressBar(stderr io.Writer, rc sim.RunConfig, policies []string) *progressbar.ProgressBar {
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	if rc.World.Scenario.MeanRate(rc.Duration)*rc.Duration.Seconds()*float64(len(policies)) < progressMessages {
		return nil
	}
	total := int64(rc.Duration/time.Second) * int64(len(policies))
	return progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("simulating"),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
}

// ParseDays reads a duration that may also be given in days: "90s", "2h",
// "2d", "1d12h" (at most 366 days).
func ParseDays(s string) (time.Duration, error) {
	days := 0.0
	rest := s
	if i := strings.IndexByte(s, 'd'); i >= 0 {
		v, err := strconv.ParseFloat(s[:i], 64)
		if err != nil || v < 0 || v > 366 {
			return 0, fmt.Errorf("%q: want a duration such as 90s, 2h or 2d (at most 366d)", s)
		}
		days, rest = v, s[i+1:]
	}
	var extra time.Duration
	if rest != "" {
		v, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("%q: want a duration such as 90s, 2h or 2d", s)
		}
		extra = v
	}
	return time.Duration(days*24*float64(time.Hour)) + extra, nil
}
