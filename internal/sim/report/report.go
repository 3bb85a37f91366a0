// Package report prints a simulator comparison: the table of scores
// under the run's header, or the results as JSON.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/queuechecker/queue-checker/internal/capacity"
	"github.com/queuechecker/queue-checker/internal/sim"
)

// JSON writes the results as one indented JSON object, {"results": [...]}.
func JSON(w io.Writer, results []sim.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Results []sim.Result `json:"results"`
	}{results})
}

// Table prints a run's header, one row per policy, with the cost as a
// multiple of the oracle's when the oracle ran, the policies' labels and,
// in kill mode, the duplicate deliveries.
func Table(w io.Writer, rc sim.RunConfig, results []sim.Result) error {
	c := rc.World
	service, startDelay, metrics := worldDesc(c)
	if _, err := fmt.Fprintf(w, "scenario %s over %v: mean %.3g msg/s; service %v %s%s; concurrency %d; start delay %v%s; latency target %v; workers %d..%d, starting at %d; %s; seed %d\n",
		c.Scenario.Name, rc.Duration, c.Scenario.MeanRate(rc.Duration), c.Service.Mean, serviceDesc(c.Service), service,
		max(c.Concurrency, 1), c.StartDelay, startDelay, c.LatencyTarget, c.Min, c.Max, c.Workers, metrics, c.Seed); err != nil {
		return err
	}
	if c.WarmUp > 0 {
		if _, err := fmt.Fprintf(w, "scores leave out the first %v\n", c.WarmUp); err != nil {
			return err
		}
	}
	if rc.RestartAt > 0 {
		if _, err := fmt.Fprintf(w, "the checker (model, backlog) restarts at %v and warm-starts from the CloudWatch history published by then\n", rc.RestartAt); err != nil {
			return err
		}
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	oracle := 0.0
	for _, r := range results {
		if r.Policy == sim.PolicyOracle {
			oracle = r.WorkerSeconds
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	priced := rc.WorkerCostPerHour > 0
	head := "policy\tslo\tmean wait\tp50\tp99\tmax wait\tmax oldest\tworker-hours\t× oracle\t"
	if priced {
		head += "dollars\tvs oracle\t"
	}
	fmt.Fprintln(tw, head+"actions\tlaunches\tmessages\t")
	for _, r := range results {
		mult := "-"
		if oracle > 0 {
			mult = fmt.Sprintf("%.2f", r.WorkerSeconds/oracle)
		}
		money := ""
		if priced && r.Dollars != nil {
			vs := "-"
			if oracle > 0 {
				// What the policy pays beyond the oracle; negative: less.
				vs = SignedDollars(*r.Dollars - sim.WorkerDollars(oracle, rc.WorkerCostPerHour))
			}
			money = capacity.FormatDollars(*r.Dollars) + "\t" + vs + "\t"
		}
		fmt.Fprintf(tw, "%s\t%.2f%%\t%.2fs\t%.2fs\t%.2fs\t%.1fs\t%.1fs\t%.1f\t%s\t%s%d\t%d\t%d\t\n",
			r.Policy, 100*r.SLOAttainment, r.MeanWait, r.P50Wait, r.P99Wait, r.MaxWait, r.MaxOldestAge,
			r.WorkerSeconds/3600, mult, money, r.ScalingActions, r.Launches, r.Messages)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	width := 16 // the names' column: the longest name, at least 16
	for _, r := range results {
		width = max(width, len(r.Policy))
	}
	for _, r := range results {
		label := sim.PolicyLabels[r.Policy]
		if r.Workers > 0 {
			// A fleet that never moves: how many workers it is.
			label = fmt.Sprintf("%d workers: %s", r.Workers, label)
		}
		if _, err := fmt.Fprintf(w, "  %-*s %s\n", width, r.Policy, label); err != nil {
			return err
		}
	}
	if err := sloLines(w, results); err != nil {
		return err
	}
	return scaleIn(w, rc, results)
}

// sloLines shows, for each policy, each hour's share of messages started
// within the promise as the simulator counts it and as the daemon would
// estimate it from its samples (internal/slo), with the estimate's trust.
func sloLines(w io.Writer, results []sim.Result) error {
	if len(results) == 0 || len(results[0].SLO) == 0 {
		return nil
	}
	if _, err := fmt.Fprintln(w, "\nwithin the promise each hour (warm-up included), true → as the daemon would estimate it:"); err != nil {
		return err
	}
	width := 0
	for _, r := range results {
		width = max(width, len(r.Policy))
	}
	for _, r := range results {
		var b strings.Builder
		for i, h := range r.SLO {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%.2f → %.2f %%", 100*h.Share, 100*h.EstShare)
			if h.Trust != "good" {
				fmt.Fprintf(&b, " (%s)", h.Trust)
			}
		}
		if _, err := fmt.Fprintf(w, "  %-*s %s\n", width, r.Policy, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// SignedDollars writes a difference of dollars with its sign: "+$12.50",
// "-$3.00", "$0.00".
func SignedDollars(x float64) string {
	s := capacity.FormatDollars(x)
	if x > 0 && !strings.HasPrefix(s, "<") {
		return "+" + s
	}
	return s
}

// serviceDesc names a service-time distribution for the header, with the
// lognormal's coefficient of variation.
func serviceDesc(s sim.Service) string {
	if s.Dist == sim.DistLognormal {
		return fmt.Sprintf("lognormal (cv %g)", s.CV)
	}
	if s.Dist == "" {
		return sim.DistExponential
	}
	return s.Dist
}

// scaleIn prints, under the table in kill mode, each policy's
// duplicate deliveries; in graceful mode there are none and it prints
// nothing.
func scaleIn(w io.Writer, rc sim.RunConfig, results []sim.Result) error {
	c := rc.World
	if c.ScaleIn != sim.ScaleInKill {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nscale-in kill: removed workers drop the messages in hand; they come back after the %v visibility timeout\nduplicate deliveries:", c.VisibilityTimeout); err != nil {
		return err
	}
	for _, r := range results {
		share := 0.0
		if r.Messages > 0 {
			share = 100 * float64(r.Duplicates) / float64(r.Messages)
		}
		if _, err := fmt.Fprintf(w, " %s %d (%.2f%%);", r.Policy, r.Duplicates, share); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// worldDesc describes, for the table's header, where the world departs
// from the settings: the service time they assume when it differs, the
// downstream pool, the service changes, and the start delays' spread; and
// how the metrics arrive.
func worldDesc(c sim.Config) (service, startDelay, metrics string) {
	var b strings.Builder
	if a := c.SettingsServiceTime(); a != c.Service.Mean {
		fmt.Fprintf(&b, ", the settings assume %v", a)
	}
	if c.DownstreamPool > 0 || len(c.PoolChanges) > 0 {
		fmt.Fprintf(&b, "; downstream pool %d", c.DownstreamPool)
		for _, ch := range c.PoolChanges {
			fmt.Fprintf(&b, ", %d from %v", ch.Connections, ch.At)
		}
	}
	for i, ch := range c.ServiceChanges {
		sep := ", "
		if i == 0 {
			sep = "; service "
		}
		fmt.Fprintf(&b, "%s×%g from %v", sep, ch.Factor, ch.At)
	}
	if c.StartDelayCV > 0 {
		startDelay = fmt.Sprintf(" (lognormal, cv %g)", c.StartDelayCV)
	}
	metrics = fmt.Sprintf("CloudWatch metrics per minute, %v late", c.MetricDelay)
	if c.MetricsExact {
		metrics = "exact metrics (last 60 s, as of each sample)"
	}
	if c.NoDeleted {
		metrics += ", no deleted count"
	}
	return b.String(), startDelay, metrics
}
