package web

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/queuechecker/queue-checker/internal/planreport"
)

// servePlanExport is GET /plan.json and GET /plan.csv: the plan of the same
// query as /plan, in the formats of `checker plan --output json|csv`.
func (s *site) servePlanExport(w http.ResponseWriter, r *http.Request) {
	csv := strings.HasSuffix(r.URL.Path, ".csv")
	plan, f, err := planFromQuery(r.URL.Query(), s.o.views().Groups())
	if err != nil {
		if csv {
			var b strings.Builder
			for _, e := range f.errorList() {
				b.WriteString(e.Message + "\n")
			}
			http.Error(w, strings.TrimSuffix(b.String(), "\n"), http.StatusBadRequest)
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"errors": f.errorList()})
		return
	}
	var b bytes.Buffer
	name := "plan"
	if plan.Queue != "" {
		name = "plan-" + fileSafe(plan.Queue)
	}
	if csv {
		err = planreport.WriteCSV(&b, plan)
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.csv"`)
	} else {
		err = planreport.WriteJSON(&b, plan)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	if err != nil {
		w.Header().Del("Content-Disposition")
		http.Error(w, "write the plan: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b.Bytes())
}

// fileSafe keeps letters, digits, dots, dashes and underscores of a name.
func fileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 64 {
			break
		}
	}
	return b.String()
}
