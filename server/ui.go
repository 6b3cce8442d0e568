package server

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/examples"
	wpgtemplate "github.com/wpg-dev/wpg/template"
)

//go:embed web/templates/*.html web/static
var webFS embed.FS

// example is one template the new-job page offers.
type example struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// ui holds the parsed pages.
type ui struct {
	pages    map[string]*template.Template
	static   http.Handler
	examples []example
}

var funcs = template.FuncMap{
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m
	},
	"rate":     fmtRate,
	"bits":     fmtBits,
	"bytes":    fmtBytes,
	"count":    fmtCount,
	"secs":     fmtSecs,
	"ns":       fmtNs,
	"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
	"optTime":  func(t *time.Time) string { return optTime(t) },
	"hasField": func(name string) bool { _, ok := specFields()[name]; return ok },
	"inputType": func(name string) string {
		f, ok := specFields()[name]
		if !ok {
			return "text"
		}
		return inputType(f.Type)
	},
}

func newUI() (*ui, error) {
	u := &ui{pages: map[string]*template.Template{}}
	base, err := template.New("base").Funcs(funcs).ParseFS(webFS, "web/templates/layout.html", "web/templates/parts.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(webFS, "web/templates/*.html")
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		b := path.Base(n)
		if b == "layout.html" || b == "parts.html" {
			continue
		}
		t, err := template.Must(base.Clone()).ParseFS(webFS, n)
		if err != nil {
			return nil, err
		}
		u.pages[strings.TrimSuffix(b, ".html")] = t
	}
	static, err := fs.Sub(webFS, "web/static")
	if err != nil {
		return nil, err
	}
	u.static = http.StripPrefix("/static/", http.FileServerFS(static))
	exs, err := fs.Glob(examples.FS, "*.wpg.yaml")
	if err != nil {
		return nil, err
	}
	u.examples = append(u.examples, example{Name: "default (embedded)", Text: string(wpgtemplate.DefaultYAML())})
	for _, n := range exs {
		b, err := examples.FS.ReadFile(n)
		if err != nil {
			return nil, err
		}
		u.examples = append(u.examples, example{Name: path.Base(n), Text: string(b)})
	}
	return u, nil
}

// pageHeaders are set on every page: a strict content security policy
// (no inline scripts, nothing from other origins) and no framing.
func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// pageData is what every page gets, with its own data in Data.
type pageData struct {
	Title string
	Nav   string
	Login bool // the server has a token: show Log out
	Data  any
}

// render executes page name into a buffer first, so an error becomes a
// 500 rather than half a page.
func (s *Server) render(w http.ResponseWriter, code int, name, title string, data any) {
	t := s.ui.pages[name]
	var b bytes.Buffer
	if t == nil {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	login := s.opt.Token != ""
	if ld, ok := data.(loginData); ok && !ld.LoggedIn {
		login = false // no Log out on the login page of someone not logged in
	}
	if code >= 500 {
		why := title
		switch d := data.(type) {
		case string:
			why = d
		case newData:
			why = ErrorBody{Errors: d.Errors}.line()
		case loginData:
			why = d.Error
		}
		noteFailure(w, why)
	}
	if err := t.ExecuteTemplate(&b, name, pageData{Title: title, Nav: name, Login: login, Data: data}); err != nil {
		s.log.Error("web UI: render", "page", name, "err", err)
		http.Error(w, "rendering the page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	pageHeaders(w)
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// fragment executes one named template of page (an htmx fragment).
func (s *Server) fragment(w http.ResponseWriter, code int, page, name string, data any) {
	var b bytes.Buffer
	if err := s.ui.pages[page].ExecuteTemplate(&b, name, data); err != nil {
		http.Error(w, "rendering failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	pageHeaders(w)
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

func (s *Server) uiRoutes(mux *http.ServeMux) {
	mux.Handle("GET /static/", s.ui.static)
	mux.HandleFunc("GET /login", s.handleLoginPage)
	mux.HandleFunc("POST /login", s.handleLogin)
	mux.HandleFunc("POST /logout", s.handleLogout)
	mux.HandleFunc("GET /{$}", s.page(s.handleJobsPage))
	mux.HandleFunc("GET /ui/running", s.page(s.handleRunningFragment))
	mux.HandleFunc("GET /jobs/new", s.page(s.handleNewPage))
	mux.HandleFunc("POST /jobs", s.page(s.handleNewJob))
	mux.HandleFunc("GET /jobs/{id}", s.page(s.handleJobPage))
	mux.HandleFunc("POST /jobs/{id}/stop", s.page(s.handleStopForm))
	mux.HandleFunc("POST /jobs/{id}/delete", s.page(s.handleDeleteForm))
	mux.HandleFunc("GET /compare", s.page(s.handleComparePage))
	mux.HandleFunc("GET /host", s.page(s.handleHostPage))
	mux.HandleFunc("POST /ui/preview", s.page(s.handlePreviewFragment))
	// Any other address is the UI's 404 page (Go's would be a bare line
	// of text); /api/v1/ has its own, in JSON.
	mux.HandleFunc("/", s.page(func(w http.ResponseWriter, r *http.Request) {
		s.render(w, http.StatusNotFound, "error", "No such page", "there is no page "+r.URL.Path+": the jobs are at /, a new job at /jobs/new, the host at /host")
	}))
}

// page requires the token (the cookie, or a Bearer header) on a page:
// a GET without it goes to the login page, anything else gets 401.
func (s *Server) page(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.authorized(r) {
			h(w, r)
			return
		}
		if r.Header.Get("HX-Request") != "" { // htmx: send the whole page to the login
			next := "/"
			if u, err := url.Parse(r.Header.Get("HX-Current-URL")); err == nil {
				next = safeNext(u.RequestURI())
			}
			w.Header().Set("HX-Redirect", "/login?next="+url.QueryEscape(next))
			http.Error(w, "log in again", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet {
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		s.render(w, http.StatusUnauthorized, "login", "Log in", loginData{Next: "/", Error: "your session has ended: log in again"})
	}
}
