package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Go's profiles are served only when debug.pprof turns them on; off, the
// paths are not found, and the default mux net/http/pprof registers on is
// never what answers.
func TestPprof(t *testing.T) {
	t.Parallel()
	c, now := newTestController(t, 3, 5*time.Second)
	for _, on := range []bool{false, true} {
		h := Handler(Options{Controller: c, Gatherer: prometheus.NewRegistry(), Interval: 5 * time.Second,
			Now: func() time.Time { return now }, Pprof: on})
		for _, tc := range []struct {
			path, body string
		}{
			{"/debug/pprof/", "goroutine"},
			{"/debug/pprof/goroutine?debug=1", "goroutine profile: total"},
			{"/debug/pprof/heap?debug=1", "heap profile:"},
			{"/debug/pprof/cmdline", ""},
		} {
			rec := get(t, h, tc.path)
			switch {
			case !on && rec.Code != http.StatusNotFound:
				t.Errorf("pprof off: %s = %d, want 404", tc.path, rec.Code)
			case on && (rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tc.body)):
				t.Errorf("pprof on: %s = %d %.80q, want 200 containing %q", tc.path, rec.Code, rec.Body.String(), tc.body)
			}
		}
		// The rest of the routes are there either way.
		if rec := get(t, h, "/livez"); rec.Code != http.StatusOK {
			t.Errorf("pprof %v: /livez = %d, want 200", on, rec.Code)
		}
	}
}
