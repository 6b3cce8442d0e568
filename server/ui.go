package server

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wpg-dev/wpg/examples"
	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/report"
	"github.com/wpg-dev/wpg/sysinfo"
	wpgtemplate "github.com/wpg-dev/wpg/template"
)

//go:embed web/templates/*.html web/static
var webFS embed.FS

// CookieName is the web UI's session cookie: HttpOnly, SameSite=Strict,
// accepted wherever "Authorization: Bearer" is.
const CookieName = "wpg_session"

// MaxCompare caps the jobs of one compare page.
const MaxCompare = 8

// MaxChartSamples caps the samples a page inlines for one job's charts:
// a longer job's are thinned evenly (the samples API has them all).
const MaxChartSamples = 3600

// thin keeps at most MaxChartSamples of xs, evenly spread, the last one
// always.
func thin(xs []Sample) []Sample {
	if len(xs) <= MaxChartSamples {
		return xs
	}
	out := make([]Sample, 0, MaxChartSamples)
	for i := range MaxChartSamples {
		out = append(out, xs[i*(len(xs)-1)/(MaxChartSamples-1)])
	}
	return out
}

// sessionValue is the cookie value for token: a hash of it, so the cookie
// never carries the token itself, and a new token ends every session.
func sessionValue(token string) string {
	h := sha256.Sum256([]byte("wpg serve session\x00" + token))
	return hex.EncodeToString(h[:])
}

// cookieAuthorized reports whether r carries the session cookie of the
// server's token.
func (s *Server) cookieAuthorized(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	if err != nil {
		return false
	}
	want := sessionValue(s.opt.Token)
	return subtle.ConstantTimeCompare([]byte(c.Value), []byte(want)) == 1
}

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

func optTime(t *time.Time) string {
	if t == nil {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
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

type loginData struct {
	Next     string
	Error    string
	NoToken  bool
	LoggedIn bool
}

// safeNext keeps a post-login redirect on this server.
func safeNext(v string) string {
	if !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") || strings.HasPrefix(v, "/\\") {
		return "/"
	}
	return v
}

func (s *Server) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	d := loginData{Next: safeNext(r.URL.Query().Get("next")), NoToken: s.opt.Token == ""}
	d.LoggedIn = !d.NoToken && s.cookieAuthorized(r)
	s.render(w, http.StatusOK, "login", "Log in", d)
}

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.formTooLarge(w, err)
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	if s.opt.Token == "" {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	client := clientAddr(r)
	if left, ok := s.fails.blocked(client); ok {
		secs := int(left/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		s.render(w, http.StatusTooManyRequests, "login", "Log in", loginData{Next: next, Error: fmt.Sprintf("too many wrong tokens from this address: try again in %d s", secs)})
		return
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(r.PostForm.Get("token"))))
	want := sha256.Sum256([]byte(s.opt.Token))
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		s.fails.fail(client)
		s.log.Warn("web UI: wrong token at login", "client", client)
		s.render(w, http.StatusUnauthorized, "login", "Log in", loginData{Next: next, Error: "wrong token: give the token wpg serve was started with (--token or the contents of --token-file)"})
		return
	}
	s.fails.ok(client)
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: sessionValue(s.opt.Token), Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

func (s *Server) formTooLarge(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, s.tooLarge(), http.StatusRequestEntityTooLarge)
		return
	}
	http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
}

// jobsData is the jobs page: running jobs, then the last finished ones.
type jobsData struct {
	Running  []JobView
	Finished []JobView
	Limit    int
	Error    string
}

func (s *Server) jobsData(r *http.Request, finished bool) jobsData {
	d := jobsData{Running: []JobView{}, Finished: []JobView{}, Limit: s.opt.JobHistory}
	s.mu.Lock()
	running := make([]*entry, 0, len(s.running))
	for _, e := range s.running {
		running = append(running, e)
	}
	unfinished := len(s.running) + len(s.pending)
	s.mu.Unlock()
	slices.SortFunc(running, func(a, b *entry) int { return int(b.id - a.id) })
	for _, e := range running {
		d.Running = append(d.Running, s.view(e, nil))
	}
	if !finished || s.opt.JobHistory <= 0 {
		return d
	}
	recs, _, err := s.store.List(r.Context(), 0, s.opt.JobHistory+unfinished)
	if err != nil {
		d.Error = "job database: " + err.Error()
	}
	for _, rec := range recs {
		if rec.Status == StatusRunning || len(d.Finished) == s.opt.JobHistory {
			continue
		}
		d.Finished = append(d.Finished, s.view(nil, rec))
	}
	return d
}

func (s *Server) handleJobsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, http.StatusOK, "jobs", "Jobs", s.jobsData(r, true))
}

func (s *Server) handleRunningFragment(w http.ResponseWriter, r *http.Request) {
	s.fragment(w, http.StatusOK, "jobs", "running", s.jobsData(r, false))
}

// newData is the new-job page: the form as given, its problems, the
// backends and the examples.
type newData struct {
	Form   url.Values
	Errors []FieldError
	// Notice says why a "run again" form (?from=ID) has the defaults.
	Notice   string
	Backends []BackendInfo
	Examples []example
	Template string
	Preview  previewData
}

func (d newData) Value(name string) string { return d.Form.Get(name) }

// Checked reports whether checkbox name is ticked.
func (d newData) Checked(name string) bool { return formBool(d.Form.Get(name)) }

// Opt is the value of backend b's option name.
func (d newData) Opt(b, name string) string { return d.Form.Get("opt." + b + "." + name) }

// OptChecked reports whether backend b's checkbox option name is ticked.
func (d newData) OptChecked(b, name string) bool { return formBool(d.Opt(b, name)) }

func formBool(v string) bool { return v == "on" || v == "true" || v == "1" }

func (s *Server) newData(form url.Values) newData {
	if form == nil {
		form = url.Values{"workers": {"1"}, "rate": {"10kpps"}, "duration": {"10s"}, "backend": {"null"}}
	}
	d := newData{Form: form, Backends: s.Backends(), Examples: s.ui.examples, Template: form.Get("template_text")}
	if _, ok := form["template_text"]; !ok {
		d.Template = string(wpgtemplate.DefaultYAML())
	}
	d.Preview = s.previewData(d.Template, 4)
	return d
}

func (s *Server) handleNewPage(w http.ResponseWriter, r *http.Request) {
	var form url.Values
	notice := ""
	if from := r.URL.Query().Get("from"); from != "" {
		id, ok := parseID(from)
		if ok {
			form = s.formOf(r, id)
		}
		switch {
		case !ok:
			notice = fmt.Sprintf("“%s” is not a job ID (whole numbers from 1): the form has the defaults", from)
		case form == nil:
			notice = fmt.Sprintf("there is no job %d to run again (deleted, pruned, or never started): the form has the defaults", id)
		}
	}
	d := s.newData(form)
	d.Notice = notice
	s.render(w, http.StatusOK, "new", "New job", d)
}

// formOf fills the new-job form from job id's spec (run again).
func (s *Server) formOf(r *http.Request, id int64) url.Values {
	rec, err := s.store.Get(r.Context(), id)
	if err != nil || rec == nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(rec.Spec), &m) != nil {
		return nil
	}
	var spec job.Spec
	json.Unmarshal([]byte(rec.Spec), &spec)
	b := spec.BackendName()
	form := url.Values{"name": {rec.Name}, "backend": {b}, "template_text": {string(wpgtemplate.DefaultYAML())}}
	common := map[string]bool{}
	for _, c := range commonFields {
		common[c] = true
	}
	for k, v := range m {
		str := fmt.Sprint(v)
		if k == "duration" {
			if f, ok := v.(float64); ok {
				str = time.Duration(f).String()
			}
		}
		if k == "limits" || k == "command" {
			continue
		}
		if common[k] || k == "template_text" {
			form.Set(k, str)
		} else {
			form.Set("opt."+b+"."+k, str)
		}
	}
	if bv, ok := m["auto_pin"].(bool); ok && bv {
		form.Set("auto_pin", "on")
	}
	return form
}

// commonFields are the job.Spec fields the new-job form shows for every
// backend (the backends' own come from their registrations).
var commonFields = []string{"rate", "count", "duration", "workers", "cores", "auto_pin", "batch", "size", "start_receiver"}

func (s *Server) handleNewJob(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.formTooLarge(w, err)
		return
	}
	form := r.PostForm
	req, fes := s.requestOf(form)
	if fes == nil {
		fes = checkLabels(req.Name, req.StartedBy)
	}
	if fes != nil {
		d := s.newData(form)
		d.Errors = fes
		s.render(w, http.StatusBadRequest, "new", "New job", d)
		return
	}
	e, err := s.create(r.Context(), Creator{Name: req.Name, StartedBy: req.StartedBy, Client: clientAddr(r)}, req.Spec)
	if err != nil {
		d := s.newData(form)
		code := http.StatusBadRequest
		var conflict *ConflictError
		switch {
		case job.AsProblems(err) != nil:
			d.Errors = problemsBody(job.AsProblems(err)).Errors
		case errors.As(err, &conflict):
			code = http.StatusConflict
			d.Errors = []FieldError{{Field: "cores", Value: job.FormatCPUList(conflict.Cores), Reason: err.Error()}}
			if conflict.AutoPin {
				d.Errors[0].Field, d.Errors[0].Value = "auto_pin", fmt.Sprintf("%d workers", conflict.Workers)
			}
		case errors.Is(err, errClosing):
			code = http.StatusServiceUnavailable
			d.Errors = []FieldError{{Reason: err.Error(), Fix: "start the job again once the server is back"}}
		default:
			code = http.StatusInternalServerError
			d.Errors = []FieldError{{Reason: err.Error()}}
		}
		s.render(w, code, "new", "New job", d)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/jobs/%d", e.id), http.StatusSeeOther)
}

// requestOf turns the new-job form into a CreateRequest: the form's
// values become the JSON fields of a job.Spec (by their JSON names and
// Go types) and go through the API's strict decoder, so the form and
// POST /api/v1/jobs accept exactly the same jobs.
func (s *Server) requestOf(form url.Values) (CreateRequest, []FieldError) {
	m := map[string]any{}
	var fes []FieldError
	fields := specFields()
	backendName := strings.TrimSpace(form.Get("backend"))
	put := func(name, v string) {
		v = strings.TrimSpace(v)
		f, ok := fields[name]
		if !ok || v == "" {
			return
		}
		x, fe := formValue(name, f.Type, v)
		if fe != nil {
			fes = append(fes, *fe)
			return
		}
		if x != nil {
			m[name] = x
		}
	}
	if backendName != "" {
		m["backend"] = backendName
	}
	for _, c := range commonFields {
		put(c, form.Get(c))
	}
	pfx := "opt." + backendName + "."
	for k, vs := range form {
		if strings.HasPrefix(k, pfx) && len(vs) > 0 {
			put(strings.TrimPrefix(k, pfx), vs[len(vs)-1])
		}
	}
	tt := strings.ReplaceAll(form.Get("template_text"), "\r\n", "\n")
	if strings.TrimSpace(tt) != "" && tt != string(wpgtemplate.DefaultYAML()) {
		m["template_text"] = tt
	}
	req := CreateRequest{Spec: job.NewSpec(), Name: strings.TrimSpace(form.Get("name")), StartedBy: strings.TrimSpace(form.Get("started_by"))}
	if fes != nil {
		return req, fes
	}
	data, err := json.Marshal(m)
	if err != nil {
		return req, []FieldError{{Reason: err.Error()}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req.Spec); err != nil {
		return req, []FieldError{{Reason: err.Error()}}
	}
	return req, nil
}

var durationType = reflect.TypeFor[time.Duration]()

// formValue converts one form value to the JSON value of a Spec field of
// type t: "" and unticked boxes are left out.
func formValue(name string, t reflect.Type, v string) (any, *FieldError) {
	bad := func(want, eg string) *FieldError {
		return &FieldError{Field: name, Value: v, Reason: "is not " + want, Fix: "e.g. " + eg}
	}
	if t == durationType {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return nil, bad("a duration", "10s, 1m30s or 500ms")
		}
		return int64(d), nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		if formBool(v) {
			return true, nil
		}
		return nil, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, bad("a whole number", "4")
		}
		return n, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, bad("a whole number from 0", "100000")
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, bad("a number", "0.9")
		}
		return f, nil
	case reflect.String:
		return v, nil
	}
	return nil, &FieldError{Field: name, Value: v, Reason: "cannot be set from the form", Fix: "use POST /api/v1/jobs (docs/api.md)"}
}

// inputType is the HTML input type of a Spec field's Go type.
func inputType(t reflect.Type) string {
	if t == durationType {
		return "text"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool:
		return "checkbox"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "number"
	}
	return "text"
}

// specFields maps job.Spec's JSON names to its fields.
func specFields() map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	t := reflect.TypeFor[job.Spec]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = f
	}
	return out
}

// previewData is the preview fragment: frames or the template's problem.
type previewData struct {
	Frames []PreviewFrame
	Errors []FieldError
	Capped bool
	Limit  int
}

func (s *Server) previewData(text string, n int) previewData {
	d := previewData{Limit: s.opt.PreviewMax}
	if n > s.opt.PreviewMax {
		n, d.Capped = s.opt.PreviewMax, true
	}
	spec := wpgtemplate.Default()
	if strings.TrimSpace(text) != "" {
		var err error
		if spec, err = wpgtemplate.Parse("template", []byte(text)); err != nil {
			d.Errors = templateErrors(err).Errors
			return d
		}
	}
	frames, err := wpgtemplate.Preview(spec, n)
	if err != nil {
		d.Errors = templateErrors(err).Errors
		return d
	}
	for _, f := range frames {
		d.Frames = append(d.Frames, PreviewFrame{PreviewFrame: f, Hex: hexDump(f.Bytes)})
	}
	return d
}

// hexDump writes b as lines of 16 bytes with their offsets.
func hexDump(b []byte) string {
	var sb strings.Builder
	for off := 0; off < len(b); off += 16 {
		end := min(off+16, len(b))
		fmt.Fprintf(&sb, "%04x ", off)
		for i := off; i < end; i++ {
			fmt.Fprintf(&sb, " %02x", b[i])
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func (s *Server) handlePreviewFragment(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.formTooLarge(w, err)
		return
	}
	n := 4
	if v, err := strconv.Atoi(r.PostForm.Get("preview_frames")); err == nil && v > 0 {
		n = v
	}
	s.fragment(w, http.StatusOK, "new", "preview", s.previewData(r.PostForm.Get("template_text"), n))
}

// chartData is what a job page's charts start from: the stored samples,
// and for a running job the stream to follow.
type chartData struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	Running bool     `json:"running"`
	Events  string   `json:"events,omitempty"`
	Samples []Sample `json:"samples"`
}

// jobPage is the job detail page.
type jobPage struct {
	Job     JobView
	Spec    string
	Workers []WorkerView
	Report  string // the table, as wpg send prints it
	// Receiver is a finished job's receiver counts from its report (the
	// live page fills them from the event stream); "" when it had none.
	Receiver string
	Chart    chartData
	Notice   string
}

// receiverCounts is the line of the job page's Receiver section for a
// finished job, from its report's verification (the receivers' answers),
// as the live page writes it from the event stream's receiver counts.
func receiverCounts(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var r struct {
		Frames, Lost, Duplicated, Corrupted uint64
		Latency                             *struct {
			Samples uint64 `json:"samples"`
			P50     int64  `json:"p50_ns"`
			P99     int64  `json:"p99_ns"`
		}
	}
	if json.Unmarshal(v, &r) != nil {
		return ""
	}
	s := fmt.Sprintf("%s frames, %s lost, %s duplicated, %s corrupted", fmtCount(r.Frames), fmtCount(r.Lost), fmtCount(r.Duplicated), fmtCount(r.Corrupted))
	if l := r.Latency; l != nil && l.P50 > 0 {
		s += fmt.Sprintf(", latency p50 %s p99 %s", fmtNs(l.P50), fmtNs(l.P99))
	}
	return s
}

func (s *Server) handleJobPage(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.findPage(w, r)
	if !ok {
		return
	}
	var d jobPage
	var id int64
	if e != nil {
		id = e.id
		d.Job = s.view(e, nil)
		for _, wk := range e.run.Snapshot().Workers {
			d.Workers = append(d.Workers, WorkerView{wk.Worker, wk.Frames, wk.Bytes, wk.PPS})
		}
		d.Chart.Running = true
		d.Chart.Events = fmt.Sprintf("/api/v1/jobs/%d/events", id)
	} else {
		id = rec.ID
		d.Job = s.view(nil, rec)
		if rec.Report != nil {
			var rep report.Report
			if json.Unmarshal(rec.Report, &rep) == nil {
				var b bytes.Buffer
				rep.WriteTable(&b)
				d.Report = b.String()
				d.Receiver = receiverCounts(rep.Verification)
				for _, wk := range rep.Workers {
					d.Workers = append(d.Workers, WorkerView{Worker: wk.Worker, Frames: wk.Frames, Bytes: wk.Bytes, PPS: wk.PPS})
				}
			}
		}
	}
	var spec bytes.Buffer
	json.Indent(&spec, d.Job.Spec, "", "  ")
	d.Spec = spec.String()
	xs, err := s.store.Samples(r.Context(), id)
	if err != nil {
		d.Notice = "job database: " + err.Error()
	}
	d.Chart.ID, d.Chart.Name, d.Chart.Samples = id, d.Job.Name, thin(xs)
	s.render(w, http.StatusOK, "job", fmt.Sprintf("Job %d", id), d)
}

// findPage is find for pages: 400 and 404 as pages.
func (s *Server) findPage(w http.ResponseWriter, r *http.Request) (*entry, *JobRecord, bool) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		s.render(w, http.StatusBadRequest, "error", "Bad job ID", "“"+r.PathValue("id")+"” is not a job ID: job IDs are whole numbers from 1")
		return nil, nil, false
	}
	e, rec, err := s.locate(r.Context(), id)
	switch {
	case err != nil:
		s.render(w, http.StatusInternalServerError, "error", "Job database", "job database: "+err.Error())
		return nil, nil, false
	case e == nil && rec == nil:
		s.render(w, http.StatusNotFound, "error", "No such job", fmt.Sprintf("there is no job %d (deleted, pruned, or never started)", id))
		return nil, nil, false
	}
	return e, rec, true
}

func (s *Server) handleStopForm(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.findPage(w, r)
	if !ok {
		return
	}
	id := int64(0)
	if e != nil {
		id = e.id
		e.stopAsked.Store(true)
		e.run.Stop()
		select { // the page shows the report when it comes at once
		case <-e.done:
		case <-time.After(2 * time.Second):
		}
	} else {
		id = rec.ID
	}
	http.Redirect(w, r, fmt.Sprintf("/jobs/%d", id), http.StatusSeeOther)
}

func (s *Server) handleDeleteForm(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.findPage(w, r)
	if !ok {
		return
	}
	if e != nil {
		s.render(w, http.StatusConflict, "error", "Job running", fmt.Sprintf("job %d is running: stop it first", e.id))
		return
	}
	if _, err := s.store.Delete(r.Context(), rec.ID); err != nil {
		s.render(w, http.StatusInternalServerError, "error", "Job database", "job database: "+err.Error())
		return
	}
	s.forget(rec.ID)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// compareRow is one line of the compare table: a label and a value per
// job.
type compareRow struct {
	Label  string
	Values []string
}

type comparePage struct {
	Jobs   []JobView
	Rows   []compareRow
	Charts []chartData
	Error  string
}

func (s *Server) handleComparePage(w http.ResponseWriter, r *http.Request) {
	var ids []int64
	for _, v := range r.URL.Query()["id"] {
		for _, part := range strings.Split(v, ",") {
			id, ok := parseID(strings.TrimSpace(part))
			if !ok {
				s.render(w, http.StatusBadRequest, "error", "Compare", fmt.Sprintf("“%s” is not a job ID: give ?id=1&id=2 (whole numbers from 1)", part))
				return
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	var d comparePage
	switch {
	case len(ids) < 2:
		d.Error = "pick two or more finished jobs on the jobs page to compare them"
		s.render(w, http.StatusOK, "compare", "Compare", d)
		return
	case len(ids) > MaxCompare:
		d.Error = fmt.Sprintf("%d jobs picked: compare at most %d at once", len(ids), MaxCompare)
		ids = ids[:MaxCompare]
	}
	var reps []*report.Report
	for _, id := range ids {
		rec, err := s.store.Get(r.Context(), id)
		if err != nil {
			s.render(w, http.StatusInternalServerError, "error", "Job database", "job database: "+err.Error())
			return
		}
		if rec == nil {
			s.render(w, http.StatusNotFound, "error", "No such job", fmt.Sprintf("there is no job %d to compare", id))
			return
		}
		var v JobView
		if e := s.lookup(id); e != nil && rec.Status == StatusRunning {
			v = s.view(e, nil)
		} else {
			v = s.view(nil, rec)
		}
		var rep *report.Report
		if rec.Report != nil {
			rep = &report.Report{}
			if json.Unmarshal(rec.Report, rep) != nil {
				rep = nil
			}
		}
		xs, err := s.store.Samples(r.Context(), id)
		if err != nil {
			d.Error = "job database: " + err.Error()
		}
		d.Jobs = append(d.Jobs, v)
		reps = append(reps, rep)
		d.Charts = append(d.Charts, chartData{ID: id, Name: v.Name, Samples: thin(xs)})
	}
	row := func(label string, f func(v JobView, r *report.Report) string) {
		cr := compareRow{Label: label}
		for i, v := range d.Jobs {
			cr.Values = append(cr.Values, f(v, reps[i]))
		}
		d.Rows = append(d.Rows, cr)
	}
	rep := func(f func(r *report.Report) string) func(JobView, *report.Report) string {
		return func(_ JobView, r *report.Report) string {
			if r == nil {
				return "–"
			}
			return f(r)
		}
	}
	row("status", func(v JobView, _ *report.Report) string { return string(v.Status) })
	row("backend", func(v JobView, _ *report.Report) string { return v.Backend })
	row("started", func(v JobView, _ *report.Report) string { return v.StartedAt.Format("2006-01-02 15:04:05Z") })
	row("started by", func(v JobView, _ *report.Report) string { return orDash(v.StartedBy) })
	row("target rate", rep(func(r *report.Report) string { return orDash(r.Rate) }))
	row("frames", func(v JobView, _ *report.Report) string { return fmtCount(v.Frames) })
	row("seconds", func(v JobView, _ *report.Report) string { return fmtSecs(v.Elapsed) })
	row("rate", func(v JobView, _ *report.Report) string { return fmtRate(v.PPS) })
	row("bit rate", func(v JobView, _ *report.Report) string { return fmtBits(v.BPS) })
	row("achieved ratio", rep(func(r *report.Report) string {
		if r.Rate == "" {
			return "–"
		}
		return fmt.Sprintf("%.4f", r.AchievedRatio)
	}))
	row("lateness p50", rep(func(r *report.Report) string { return fmtNs(r.P50JitterNs) }))
	row("lateness p99", rep(func(r *report.Report) string { return fmtNs(r.P99JitterNs) }))
	row("lateness max", rep(func(r *report.Report) string { return fmtNs(r.LatenessMaxNs) }))
	row("workers", rep(func(r *report.Report) string { return strconv.Itoa(len(r.Workers)) }))
	row("plan", rep(func(r *report.Report) string { return orDash(r.Plan) }))
	row("stop", rep(func(r *report.Report) string { return orDash(r.Stop) }))
	s.render(w, http.StatusOK, "compare", "Compare", d)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

type hostPage struct {
	Table    string
	Features []sysinfo.Feature
	Backends []BackendInfo
	Error    string
}

func (s *Server) handleHostPage(w http.ResponseWriter, _ *http.Request) {
	var d hostPage
	env, err := sysinfo.HostFS().Environment("")
	if err != nil {
		d.Error = err.Error()
	}
	var b bytes.Buffer
	env.WriteTable(&b)
	d.Table = b.String()
	d.Features = s.opt.Probes.Features()
	d.Backends = s.Backends()
	s.render(w, http.StatusOK, "host", "Host", d)
}

// Formatting for people.

func fmtRate(pps float64) string { return si(pps, "pps") }
func fmtBits(bps float64) string { return si(bps, "bit/s") }
func fmtBytes(n uint64) string   { return si(float64(n), "B") }

// siPrefixes are si's prefixes, largest first.
var siPrefixes = []struct {
	f float64
	p string
}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}

// si writes v with three significant digits and an SI prefix. A value
// that rounds up to 1000 of a prefix is written with the next one (999.96
// pps is "1 kpps", not "1e+03 pps").
func si(v float64, unit string) string {
	a := math.Abs(v)
	for i, p := range siPrefixes {
		if a < p.f && i < len(siPrefixes)-1 {
			continue
		}
		s := strconv.FormatFloat(v/p.f, 'g', 3, 64)
		if n, _ := strconv.ParseFloat(s, 64); math.Abs(n) >= 1000 && i > 0 {
			p = siPrefixes[i-1]
			s = strconv.FormatFloat(v/p.f, 'g', 3, 64)
		}
		return s + " " + p.p + unit
	}
	return ""
}

func fmtCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func fmtSecs(s float64) string {
	if s <= 0 {
		return "–"
	}
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

func fmtNs(ns int64) string {
	if ns == 0 {
		return "–"
	}
	return time.Duration(ns).String()
}
