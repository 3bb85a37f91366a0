package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// The pages are rendered by html/template from templates/ and styled and
// scripted by assets/, all embedded: a page loads nothing from outside the
// checker, and the Content-Security-Policy header forbids it anyway.

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// site holds what the pages need.
type site struct {
	o     Options
	pages map[string]*template.Template
	err   error // a template that did not parse; every page then answers 500 with it
}

// registerPages adds the human-facing pages: the status page and the planner.
func registerPages(mux *http.ServeMux, o Options) {
	s := &site{o: o}
	s.pages, s.err = parsePages()
	mux.HandleFunc("GET /{$}", s.serveStatus)
	mux.HandleFunc("GET /api/v1/groups", serveGroups(o))
	mux.HandleFunc("GET /plan", s.servePlan)
	mux.HandleFunc("GET /plan.json", s.servePlanExport)
	mux.HandleFunc("GET /plan.csv", s.servePlanExport)
	mux.Handle("GET /static/", http.StripPrefix("/static/", assetHandler()))
}

var templateFuncs = template.FuncMap{
	"field": fieldHTML,
	"meter": meterHTML,
	"shown": truthy,
	"clock": formatClock,
	"isoTime": func(t time.Time) string {
		return t.UTC().Format(time.RFC3339)
	},
	"sub":  func(a, b int) int { return a - b },
	"addf": func(a, b float64) float64 { return a + b },
}

// parsePages parses every page with the shared layout.
func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range []string{"status", "plan", "summary"} {
		t, err := template.New("layout.html").Funcs(templateFuncs).ParseFS(templateFS,
			"templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse the %s page: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

// contentSecurityPolicy allows the page's own stylesheet, script and images,
// and nothing else: no outside font, script or frame.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

// render executes a page into a buffer first, so a failing template gives
// a clean 500 instead of half a page.
func (s *site) render(w http.ResponseWriter, _ *http.Request, page string, status int, data any) {
	if s.err != nil {
		http.Error(w, s.err.Error(), http.StatusInternalServerError)
		return
	}
	var b bytes.Buffer
	if err := s.pages[page].Execute(&b, data); err != nil {
		http.Error(w, fmt.Sprintf("render the %s page: %v", page, err), http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// assetHandler serves the embedded stylesheet, script and icon, with an
// ETag of their content so browsers revalidate cheaply.
func assetHandler() http.Handler {
	sub, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return http.NotFoundHandler()
	}
	type asset struct {
		body []byte
		etag string
	}
	assets := map[string]asset{}
	_ = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		assets[p] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		securityHeaders(w.Header())
		w.Header().Set("ETag", a.etag)
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(a.body))
	})
}
