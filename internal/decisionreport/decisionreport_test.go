package decisionreport

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/queuechecker/queue-checker/internal/model"
)

func decisions() []model.Decision {
	return []model.Decision{
		{Group: "thumbnails", Backlog: 1510, Visible: 1500, InFlight: 10, CurrentWorkers: 4, RecommendedWorkers: 12,
			DesiredWorkers: 10, Diagnosis: "under_provisioned", Capped: true, Reasons: []string{"drain floor: 12", "capped at max 10"}},
		{Group: "emails", Diagnosis: "unknown", Held: true, HoldReason: "no data",
			NotActed: model.NotActedOn("", true)},
		{Group: "quiet", Diagnosis: "idle"},
	}
}

func TestTable(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Write(&b, "table", decisions()); err != nil {
		t.Fatal(err)
	}
	want := `GROUP       BACKLOG  VISIBLE  IN FLIGHT  CURRENT  RECOMMENDED  DESIRED  DIAGNOSIS          STATE
thumbnails  1510     1500     10         4        12           10       under_provisioned  capped
emails      0        0        0          0        0            0        unknown            held: no data
quiet       0        0        0          0        0            0        idle               ok

thumbnails:
  - drain floor: 12
  - capped at max 10

emails:
  - not acted on: the configuration was reloaded during this cycle; the next cycle acts on the new one
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ds   []model.Decision
		n    int
	}{
		{"three", decisions(), 3},
		{"none is an empty list", nil, 0},
	} {
		var b bytes.Buffer
		if err := Write(&b, "json", tc.ds); err != nil {
			t.Fatal(err)
		}
		var doc map[string][]map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, b.Bytes())
		}
		ds, ok := doc["decisions"]
		if !ok || ds == nil || len(ds) != tc.n {
			t.Fatalf("%s: decisions %v, want a list of %d", tc.name, doc, tc.n)
		}
		if tc.n > 1 {
			var na model.NotActed
			if err := json.Unmarshal(ds[1]["not_acted"], &na); err != nil || na.Cause != model.NotActedReload {
				t.Errorf("%s: emails' not_acted %s (%v), want the reload", tc.name, ds[1]["not_acted"], err)
			}
			if string(ds[0]["not_acted"]) != "null" {
				t.Errorf("%s: thumbnails' not_acted %s, want null", tc.name, ds[0]["not_acted"])
			}
		}
	}
}
