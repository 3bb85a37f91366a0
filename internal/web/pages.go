package web

import "net/http"

// registerPages adds the human-facing pages: the status page and the planner.
func registerPages(mux *http.ServeMux, o Options) {}
