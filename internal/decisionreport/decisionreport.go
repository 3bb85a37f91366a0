// Package decisionreport prints the checker's decisions for people and
// programs, as `checker once` shows them: a table with each group's
// reasons, or JSON.
package decisionreport

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/queuechecker/queue-checker/internal/model"
)

// Write prints decisions as `checker once` does: as JSON ({"decisions":
// [...]}, every key of each decision), or as a table of the numbers with
// each group's reasons, and why it was not acted on, below it.
func Write(w io.Writer, format string, ds []model.Decision) error {
	if ds == nil {
		ds = []model.Decision{}
	}
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Decisions []model.Decision `json:"decisions"`
		}{ds})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tBACKLOG\tVISIBLE\tIN FLIGHT\tCURRENT\tRECOMMENDED\tDESIRED\tDIAGNOSIS\tSTATE")
	for _, d := range ds {
		state := "ok"
		switch {
		case d.Held:
			state = "held: " + d.HoldReason
		case d.Capped:
			state = "capped"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", d.Group, d.Backlog, d.Visible, d.InFlight,
			d.CurrentWorkers, d.RecommendedWorkers, d.DesiredWorkers, d.Diagnosis, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range ds {
		if len(d.Reasons) == 0 && d.NotActed == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", d.Group)
		for _, r := range d.Reasons {
			fmt.Fprintf(w, "  - %s\n", r)
		}
		if d.NotActed != nil {
			fmt.Fprintf(w, "  - not acted on: %s\n", d.NotActed.Message)
		}
	}
	return nil
}
