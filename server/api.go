package server

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wpg-dev/wpg/job"
	"github.com/wpg-dev/wpg/sysinfo"
	"github.com/wpg-dev/wpg/template"
)

// Paging of GET /api/v1/jobs.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

// FieldError is one problem of a request, as 400 responses list them:
// job.OptionError's fields, and for templates the line and column.
type FieldError struct {
	Field  string `json:"field"`
	Value  string `json:"value"`
	Reason string `json:"reason"`
	Fix    string `json:"fix"`
	Line   int    `json:"line,omitempty"`
	Col    int    `json:"col,omitempty"`
	Path   string `json:"path,omitempty"`
}

// ErrorBody is the body of every error response, whatever its status:
// Errors lists the problems (one for a status other than 400), each with
// its reason and its fix apart; Error is the same in one line (the
// problems' "field value: reason: fix", joined by "; "), for a client that
// shows one message; Job names the job the error is about (409, and 404
// for a job without a report).
type ErrorBody struct {
	Errors []FieldError `json:"errors"`
	Error  string       `json:"error"`
	Job    int64        `json:"job,omitempty"`
}

// apiError is the body of an error about no one field: what is wrong
// (reason) and what to do (fix), about job (0: none).
func apiError(reason, fix string, job int64) ErrorBody {
	return ErrorBody{Errors: []FieldError{{Reason: reason, Fix: fix}}, Job: job}
}

// dbError is the body of a job database failure (500).
func dbError(err error) ErrorBody {
	return apiError("job database: "+err.Error(), "try again; if it goes on, check the disk and the file wpg serve --db names (its log says more)", 0)
}

// line is the problems of b in one line.
func (b ErrorBody) line() string {
	parts := make([]string, 0, len(b.Errors))
	for _, e := range b.Errors {
		head := strings.TrimSpace(e.Field + " " + e.Value)
		if e.Field != "" && e.Value != "" {
			head = fmt.Sprintf("%s %q", e.Field, e.Value)
		}
		var msg []string
		for _, s := range []string{head, e.Reason, e.Fix} {
			if s != "" {
				msg = append(msg, s)
			}
		}
		parts = append(parts, strings.Join(msg, ": "))
	}
	return strings.Join(parts, "; ")
}

// JobView is a job as the API shows it.
type JobView struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// StartedBy is who started it (CreateRequest.StartedBy), Client the
	// address the request came from.
	StartedBy string          `json:"started_by,omitempty"`
	Client    string          `json:"client,omitempty"`
	Status    Status          `json:"status"`
	Backend   string          `json:"backend"`
	Cores     string          `json:"cores,omitempty"`
	Spec      json.RawMessage `json:"spec"`
	CreatedAt time.Time       `json:"created_at"`
	StartedAt time.Time       `json:"started_at"`
	EndedAt   *time.Time      `json:"ended_at,omitempty"`
	Error     string          `json:"error,omitempty"`
	// Frames, Bytes, PPS and BPS: live while running, the report's after.
	Frames    uint64  `json:"frames"`
	Bytes     uint64  `json:"bytes"`
	PPS       float64 `json:"pps"`
	BPS       float64 `json:"bps"`
	Elapsed   float64 `json:"elapsed_seconds"`
	HasReport bool    `json:"has_report"`
}

// SnapshotView is one snapshot of the event stream.
type SnapshotView struct {
	Job     int64        `json:"job"`
	At      time.Time    `json:"at"`
	Elapsed float64      `json:"elapsed_seconds"`
	Frames  uint64       `json:"frames"`
	Bytes   uint64       `json:"bytes"`
	PPS     float64      `json:"pps"`
	BPS     float64      `json:"bps"`
	Workers []WorkerView `json:"workers"`
	Done    bool         `json:"done"`
	// Lateness is the pacing lateness from the start (live: up to about
	// 50 ms before At); LatenessWindow that since the previous snapshot.
	// Zero for a flat-out run.
	Lateness       LatenessView `json:"lateness"`
	LatenessWindow LatenessView `json:"lateness_window"`
	// The report's lateness figures, once Done.
	LatenessMaxNs  int64 `json:"lateness_max_ns"`
	LatenessMeanNs int64 `json:"lateness_mean_ns"`
	P50JitterNs    int64 `json:"p50_jitter_ns"`
	P99JitterNs    int64 `json:"p99_jitter_ns"`
	// Receiver is what the job's own receivers (local paths with
	// start_receiver, or connect) counted so far; absent without one.
	Receiver *ReceiverView `json:"receiver,omitempty"`
}

// ReceiverView is job.ReceiverSnapshot: the receivers' totals so far
// (their progress messages, about every 250 ms; once done, their
// answers), their one-way latency from the start and since the previous
// snapshot (count 0: not measured).
type ReceiverView struct {
	Receivers     int          `json:"receivers"`
	Frames        uint64       `json:"frames"`
	Bytes         uint64       `json:"bytes"`
	Lost          uint64       `json:"lost"`
	Duplicated    uint64       `json:"duplicated"`
	Corrupted     uint64       `json:"corrupted"`
	Latency       LatenessView `json:"latency"`
	LatencyWindow LatenessView `json:"latency_window"`
	// Final is true once the counts are the receivers' answers.
	Final bool `json:"final"`
}

// LatenessView is job.LatenessStats: how many pacer grants, and the
// percentiles of their lateness in nanoseconds.
type LatenessView struct {
	Count int64 `json:"count"`
	P50Ns int64 `json:"p50_ns"`
	P99Ns int64 `json:"p99_ns"`
	MaxNs int64 `json:"max_ns"`
}

func latenessView(l job.LatenessStats) LatenessView {
	return LatenessView{Count: l.Count, P50Ns: l.P50Ns, P99Ns: l.P99Ns, MaxNs: l.MaxNs}
}

// WorkerView is one worker of a snapshot.
type WorkerView struct {
	Worker int     `json:"worker"`
	Frames uint64  `json:"frames"`
	Bytes  uint64  `json:"bytes"`
	PPS    float64 `json:"pps"`
}

// snapshotView shows s, with the lateness window since prev (the previous
// snapshot of the stream; zero: since the start).
func snapshotView(id int64, s, prev job.Snapshot) SnapshotView {
	v := SnapshotView{Job: id, At: s.At, Elapsed: s.Elapsed.Seconds(), Frames: s.Frames, Bytes: s.Bytes, PPS: s.PPS, BPS: s.BPS,
		Done: s.Done, Lateness: latenessView(s.Lateness), LatenessWindow: latenessView(s.LatenessSince(prev)),
		LatenessMaxNs: s.LatenessMaxNs, LatenessMeanNs: s.LatenessMeanNs, P50JitterNs: s.P50JitterNs, P99JitterNs: s.P99JitterNs,
		Workers: make([]WorkerView, len(s.Workers))}
	for i, w := range s.Workers {
		v.Workers[i] = WorkerView{w.Worker, w.Frames, w.Bytes, w.PPS}
	}
	if r := s.Receiver; r != nil {
		v.Receiver = &ReceiverView{Receivers: r.Receivers, Frames: r.Frames, Bytes: r.Bytes, Lost: r.Lost, Duplicated: r.Duplicated,
			Corrupted: r.Corrupted, Latency: latenessView(r.Latency), LatencyWindow: latenessView(s.ReceiverLatencySince(prev)), Final: r.Final}
	}
	return v
}

// CreateRequest is the body of POST /api/v1/jobs: a job.Spec (its JSON
// fields at the top level), a name for people and who starts it.
type CreateRequest struct {
	Name string `json:"name"`
	// StartedBy says who starts the job (any text, at most 200 bytes);
	// the server stores it with the address the request came from.
	StartedBy string `json:"started_by"`
	job.Spec
}

// MaxStartedBy caps CreateRequest.StartedBy and Name in bytes.
const MaxStartedBy = 200

// PreviewRequest is the body of POST /api/v1/preview.
type PreviewRequest struct {
	// Template is the text of a *.wpg.yaml template ("": the embedded
	// default).
	Template string `json:"template"`
	// Frames is how many frames to show (0: 4), capped at
	// server.preview_max.
	Frames int `json:"frames"`
}

// PreviewFrame is one frame of a preview, with its bytes in hex.
type PreviewFrame struct {
	template.PreviewFrame
	Hex string `json:"hex"`
}

// PreviewResponse is the answer of POST /api/v1/preview.
type PreviewResponse struct {
	Template  string         `json:"template"`
	Requested int            `json:"requested"`
	Limit     int            `json:"limit"`
	Capped    bool           `json:"capped"`
	Frames    []PreviewFrame `json:"frames"`
	// Ended is true when the template ran out of frames before Requested.
	Ended bool `json:"ended"`
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/jobs", s.handleCreate)
	mux.HandleFunc("GET /api/v1/jobs", s.handleList)
	mux.HandleFunc("GET /api/v1/jobs/{id}", s.handleGet)
	mux.HandleFunc("POST /api/v1/jobs/{id}/stop", s.handleStop)
	mux.HandleFunc("DELETE /api/v1/jobs/{id}", s.handleDelete)
	mux.HandleFunc("GET /api/v1/jobs/{id}/report", s.handleReport)
	mux.HandleFunc("GET /api/v1/jobs/{id}/samples", s.handleSamples)
	mux.HandleFunc("GET /api/v1/jobs/{id}/events", s.handleEvents)
	mux.HandleFunc("POST /api/v1/preview", s.handlePreview)
	mux.HandleFunc("GET /api/v1/backends", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"backends": s.Backends()})
	})
	mux.HandleFunc("GET /api/v1/sysinfo", s.handleSysinfo)
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		// A known path asked with a method it does not take says which
		// it takes (the catch-all keeps the mux from answering 405).
		var takes []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			q := r.Clone(r.Context())
			q.Method = m
			if _, p := mux.Handler(q); m != r.Method && p != "" && p != "/api/v1/" {
				takes = append(takes, m)
			}
		}
		if len(takes) > 0 {
			writeJSON(w, http.StatusNotFound, apiError(fmt.Sprintf("%s %s: no such endpoint", r.Method, r.URL.Path), fmt.Sprintf("this path takes %s (docs/api.md)", strings.Join(takes, ", ")), 0))
			return
		}
		writeJSON(w, http.StatusNotFound, apiError("no such endpoint: "+r.URL.Path, "use one of the endpoints docs/api.md lists (they start /api/v1/jobs, /api/v1/preview, /api/v1/backends, /api/v1/sysinfo)", 0))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		n := len(s.running)
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "jobs_running": n})
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	s.uiRoutes(mux)

	var h http.Handler = mux
	h = s.guard(h)
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusForbidden, apiError("cross-origin request refused", "send state-changing calls from the same origin, or from a client that sends no Origin or Sec-Fetch-Site header (curl, scripts)", 0))
	}))
	h = cop.Handler(h)
	return h
}

// guard checks the token and caps the body.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/") || r.URL.Path == "/metrics" {
			client := clientAddr(r)
			if left, ok := s.fails.blocked(client); ok {
				s.tooManyFailures(w, left)
				return
			}
			if !s.authorized(r) {
				if r.Header.Get("Authorization") != "" {
					s.fails.fail(client)
				}
				w.Header().Set("WWW-Authenticate", `Bearer realm="wpg"`)
				writeJSON(w, http.StatusUnauthorized, apiError("missing or wrong token", "send Authorization: Bearer TOKEN (the token wpg serve was given)", 0))
				return
			}
		}
		if r.ContentLength > s.opt.MaxBody {
			writeJSON(w, http.StatusRequestEntityTooLarge, s.tooLargeBody())
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBody)
		next.ServeHTTP(w, r)
	})
}

func (s *Server) tooLarge() string {
	return fmt.Sprintf("request body over %d bytes: send less (a template of at most %d bytes)", s.opt.MaxBody, s.opt.MaxBody)
}

func (s *Server) tooLargeBody() ErrorBody {
	return apiError(fmt.Sprintf("request body over %d bytes", s.opt.MaxBody), fmt.Sprintf("send less (a template of at most %d bytes)", s.opt.MaxBody), 0)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	if eb, ok := v.(ErrorBody); ok && eb.Error == "" {
		eb.Error = eb.line()
		v = eb
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // escapes <, > and &
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		code = http.StatusInternalServerError
		b.Reset()
		fmt.Fprintf(&b, "{\"errors\": [{\"reason\": %q, \"fix\": \"report it: this is a bug\"}], \"error\": %q}\n", err.Error(), err.Error())
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

// decode reads a JSON body into v strictly; false when it has answered.
// The body must be one JSON object: an empty body, null, an array or a
// second value after the object is refused, and a field of the wrong type
// is named with the JSON value the field takes, not the Go type behind it.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	var raw json.RawMessage
	err := dec.Decode(&raw)
	if err == nil && dec.More() {
		err = errors.New("more follows the JSON object")
	}
	var tooBig *http.MaxBytesError
	var syn *json.SyntaxError
	fix := "send one JSON object (docs/api.md)"
	if err != nil {
		var reason string
		switch {
		case errors.As(err, &tooBig):
			writeJSON(w, http.StatusRequestEntityTooLarge, s.tooLargeBody())
			return false
		case errors.Is(err, io.EOF):
			reason = "the body is empty"
		case errors.Is(err, io.ErrUnexpectedEOF):
			reason = "the body is not valid JSON: it ends inside the JSON value (cut short?)"
		case errors.As(err, &syn):
			reason = fmt.Sprintf("the body is not valid JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: "))
		default:
			reason = "the body is not valid JSON: " + err.Error()
		}
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Reason: reason, Fix: fix}}})
		return false
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Value: jsonValueKind(t), Reason: "the body is a JSON " + jsonValueKind(t) + ", not an object", Fix: fix}}})
		return false
	}
	strict := json.NewDecoder(bytes.NewReader(raw))
	strict.DisallowUnknownFields()
	err = strict.Decode(v)
	if err == nil {
		return true
	}
	var typ *json.UnmarshalTypeError
	fe := FieldError{Reason: "the body is not valid JSON: " + err.Error(), Fix: fix}
	switch {
	case errors.As(err, &typ):
		fe = FieldError{Field: strings.TrimPrefix(typ.Field, "Spec."), Value: typ.Value, Reason: fmt.Sprintf("is a JSON %s: want %s", typ.Value, jsonWant(typ.Type)), Fix: "see docs/api.md for the field's type"}
		if typ.Type == reflect.TypeFor[time.Duration]() {
			fe.Fix = "give a duration in nanoseconds (10 s = 10000000000)"
		}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		fe = FieldError{Field: name, Reason: "is not a field of this request", Fix: "remove it; docs/api.md lists the fields"}
	}
	writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{fe}})
	return false
}

// jsonValueKind names the JSON value that starts t (trimmed).
func jsonValueKind(t []byte) string {
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// jsonWant is the JSON value a field of Go type t takes, as a client of
// the API writes it.
func jsonWant(t reflect.Type) string {
	if t == reflect.TypeFor[time.Duration]() {
		return "a whole number of nanoseconds"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number from 0"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

// jsonNames writes the {field} placeholders of a job.OptionError's
// reason and fix as the field's JSON name, the name a client of this API
// gives ("give {fifo}" is "give fifo"; the CLI writes "--fifo"). Braces
// around anything but a field name stay as they are.
func jsonNames(s string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '}')
		if j < 0 {
			break
		}
		name := s[i+1 : i+1+j]
		b.WriteString(s[:i])
		if isFieldName(name) {
			b.WriteString(name)
		} else {
			b.WriteString(s[i : i+2+j])
		}
		s = s[i+2+j:]
	}
	b.WriteString(s)
	return b.String()
}

// isFieldName says whether s looks like a JSON field name of a job spec:
// lower-case letters, digits and underscores, starting with a letter.
func isFieldName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// templateFix is the fix of a template error that names none: where to
// look.
func templateFix(te *template.Error) string {
	if te.Line > 0 {
		return fmt.Sprintf("correct the template at line %d, column %d (docs/templates.md)", te.Line, te.Col)
	}
	return "correct the template (docs/templates.md)"
}

// withTemplate puts the position of template error te into fe and, unless
// fe has a reason of its own (own), te's reason and fix apart, where the
// error's one line has both; a fix te does not give says where to look.
func withTemplate(fe *FieldError, te *template.Error, own bool) {
	fe.Line, fe.Col, fe.Path = te.Line, te.Col, te.Path
	if !own {
		switch {
		case te.Msg != "":
			fe.Reason = te.Msg
		case te.Err != nil:
			fe.Reason = te.Err.Error()
		}
		fe.Fix = te.Fix
	}
	if fe.Fix == "" {
		fe.Fix = templateFix(te)
	}
}

func problemsBody(ps job.Problems) ErrorBody {
	b := ErrorBody{}
	for _, p := range ps {
		fe := FieldError{Field: p.Field, Value: p.Value, Reason: jsonNames(p.Reason), Fix: jsonNames(p.Fix)}
		if fe.Reason == "" && p.Err != nil {
			fe.Reason = p.Err.Error()
		}
		var te *template.Error
		if errors.As(p.Err, &te) {
			withTemplate(&fe, te, p.Reason != "")
		}
		b.Errors = append(b.Errors, fe)
	}
	return b
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	req := CreateRequest{Spec: job.NewSpec()}
	if !s.decode(w, r, &req) {
		return
	}
	if fes := checkLabels(req.Name, req.StartedBy); fes != nil {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: fes})
		return
	}
	e, err := s.create(r.Context(), Creator{Name: req.Name, StartedBy: req.StartedBy, Client: clientAddr(r)}, req.Spec)
	var conflict *ConflictError
	switch {
	case err == nil:
		w.Header().Set("Location", fmt.Sprintf("/api/v1/jobs/%d", e.id))
		writeJSON(w, http.StatusCreated, s.view(e, nil))
	case job.AsProblems(err) != nil:
		writeJSON(w, http.StatusBadRequest, problemsBody(job.AsProblems(err)))
	case errors.As(err, &conflict):
		writeJSON(w, http.StatusConflict, conflict.body())
	case errors.Is(err, errClosing):
		writeJSON(w, http.StatusServiceUnavailable, apiError(err.Error(), "start the job again once the server is back", 0))
	default:
		writeJSON(w, http.StatusInternalServerError, apiError(err.Error(), "see the server's log; if the error names a file or a device, mend it and start the job again", 0))
	}
}

// checkLabels bounds a job's name and started_by.
func checkLabels(name, startedBy string) []FieldError {
	var fes []FieldError
	for _, f := range []struct{ field, v string }{{"name", name}, {"started_by", startedBy}} {
		if len(f.v) > MaxStartedBy {
			fes = append(fes, FieldError{Field: f.field, Value: f.v[:32] + "…", Reason: fmt.Sprintf("is %d bytes long: at most %d", len(f.v), MaxStartedBy), Fix: "give a shorter label"})
		}
	}
	return fes
}

// clientAddr is the host the request came from (no port).
func clientAddr(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// view shows a job: a running entry live, else its record.
func (s *Server) view(e *entry, rec *JobRecord) JobView {
	if e != nil {
		select {
		case <-e.done:
			rec = e.final
		default:
			spec, _ := json.Marshal(e.spec)
			snap := e.run.Snapshot()
			return JobView{ID: e.id, Name: e.name, StartedBy: e.startedBy, Client: e.client, Status: StatusRunning, Backend: e.spec.BackendName(), Cores: job.FormatCPUList(e.cores),
				Spec: spec, CreatedAt: e.created.UTC(), StartedAt: e.created.UTC(), Frames: snap.Frames, Bytes: snap.Bytes, PPS: snap.PPS, BPS: snap.BPS,
				Elapsed: snap.Elapsed.Seconds()}
		}
	}
	v := JobView{ID: rec.ID, Name: rec.Name, StartedBy: rec.StartedBy, Client: rec.Client, Status: rec.Status, Cores: rec.Cores, Spec: json.RawMessage(rec.Spec),
		CreatedAt: time.Unix(0, rec.CreatedAt).UTC(), StartedAt: time.Unix(0, rec.StartedAt).UTC(), Error: rec.Error,
		Frames: rec.Frames, Bytes: rec.Bytes, HasReport: rec.Report != nil}
	var spec job.Spec
	if json.Unmarshal([]byte(rec.Spec), &spec) == nil {
		v.Backend = spec.BackendName()
	}
	if rec.EndedAt != 0 {
		t := time.Unix(0, rec.EndedAt).UTC()
		v.EndedAt = &t
		v.Elapsed = t.Sub(v.StartedAt).Seconds()
	}
	if rec.Report != nil {
		var rep struct{ PPS, BPS, Seconds float64 }
		if json.Unmarshal(rec.Report, &rep) == nil {
			v.PPS, v.BPS, v.Elapsed = rep.PPS, rep.BPS, rep.Seconds
		}
	} else if v.Elapsed > 0 {
		// No report (interrupted, or failed on the way): the mean rates
		// of the totals its samples reached.
		v.PPS, v.BPS = float64(v.Frames)/v.Elapsed, float64(v.Bytes)*8/v.Elapsed
	}
	return v
}

func intParam(r *http.Request, name string, def, lo, hi int) (int, *FieldError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &FieldError{Field: name, Value: v, Reason: fmt.Sprintf("is not a whole number from %d to %d", lo, hi), Fix: fmt.Sprintf("e.g. %s=%d", name, def)}
	}
	return n, nil
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	offset, e1 := intParam(r, "offset", 0, 0, 1<<31-1)
	limit, e2 := intParam(r, "limit", DefaultPageLimit, 1, MaxPageLimit)
	if e1 != nil || e2 != nil {
		var b ErrorBody
		for _, e := range []*FieldError{e1, e2} {
			if e != nil {
				b.Errors = append(b.Errors, *e)
			}
		}
		writeJSON(w, http.StatusBadRequest, b)
		return
	}
	recs, total, err := s.store.List(r.Context(), offset, limit)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, dbError(err))
		return
	}
	s.mu.Lock()
	running := len(s.running)
	s.mu.Unlock()
	jobs := make([]JobView, 0, len(recs))
	for _, rec := range recs {
		var e *entry
		if rec.Status == StatusRunning {
			e = s.lookup(rec.ID)
		}
		if e != nil {
			jobs = append(jobs, s.view(e, nil))
		} else {
			jobs = append(jobs, s.view(nil, rec))
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"jobs": jobs, "total": total, "offset": offset, "limit": limit, "running": running})
}

// find resolves {id}: the running entry or the record; false when it has
// answered (400, 404).
func (s *Server) find(w http.ResponseWriter, r *http.Request) (*entry, *JobRecord, bool) {
	id, ok := parseID(r.PathValue("id"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Field: "id", Value: r.PathValue("id"), Reason: "is not a job ID", Fix: "use the id that POST /api/v1/jobs returned (a whole number from 1)"}}})
		return nil, nil, false
	}
	e, rec, err := s.locate(r.Context(), id)
	switch {
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, dbError(err))
		return nil, nil, false
	case e == nil && rec == nil:
		writeJSON(w, http.StatusNotFound, apiError(fmt.Sprintf("no job %d (deleted, pruned, or never started)", id), "GET /api/v1/jobs lists the jobs there are", 0))
		return nil, nil, false
	}
	return e, rec, true
}

// locate returns job id: its entry while it runs, else its record; both
// nil when there is no such job.
func (s *Server) locate(ctx context.Context, id int64) (*entry, *JobRecord, error) {
	if e := s.lookup(id); e != nil {
		select {
		case <-e.done:
		default:
			return e, nil, nil
		}
	}
	rec, err := s.store.Get(ctx, id)
	return nil, rec, err
}

func (s *Server) handleGet(w http.ResponseWriter, r *http.Request) {
	if e, rec, ok := s.find(w, r); ok {
		writeJSON(w, http.StatusOK, s.view(e, rec))
	}
}

func (s *Server) handleStop(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.find(w, r)
	if !ok {
		return
	}
	if e == nil {
		writeJSON(w, http.StatusConflict, apiError(fmt.Sprintf("job %d has already ended (%s)", rec.ID, rec.Status), fmt.Sprintf("nothing to stop: GET /api/v1/jobs/%d/report has its report", rec.ID), rec.ID))
		return
	}
	e.stopAsked.Store(true)
	e.run.Stop()
	writeJSON(w, http.StatusAccepted, s.view(e, nil))
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.find(w, r)
	if !ok {
		return
	}
	if e != nil {
		writeJSON(w, http.StatusConflict, apiError(fmt.Sprintf("job %d is running", e.id), fmt.Sprintf("stop it first (POST /api/v1/jobs/%d/stop), then delete it", e.id), e.id))
		return
	}
	if _, err := s.store.Delete(r.Context(), rec.ID); err != nil {
		writeJSON(w, http.StatusInternalServerError, dbError(err))
		return
	}
	s.forget(rec.ID)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.find(w, r)
	if !ok {
		return
	}
	switch {
	case e != nil:
		writeJSON(w, http.StatusConflict, apiError(fmt.Sprintf("job %d is still running: its report comes at its end", e.id), fmt.Sprintf("wait for its end (GET /api/v1/jobs/%d/events ends with it) or stop it (POST /api/v1/jobs/%d/stop)", e.id, e.id), e.id))
	case rec.Report == nil:
		fix := fmt.Sprintf("mend what its error says and start the job again (GET /api/v1/jobs/%d has its spec)", rec.ID)
		if rec.Status == StatusInterrupted {
			fix = fmt.Sprintf("start the job again (GET /api/v1/jobs/%d has its spec; GET /api/v1/jobs/%d/samples has its seconds up to then)", rec.ID, rec.ID)
		}
		writeJSON(w, http.StatusNotFound, apiError(fmt.Sprintf("job %d (%s) has no report: %s", rec.ID, rec.Status, rec.Error), fix, rec.ID))
	default:
		var b bytes.Buffer
		json.HTMLEscape(&b, rec.Report)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(b.Bytes())
	}
}

func (s *Server) handleSamples(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.find(w, r)
	if !ok {
		return
	}
	id := int64(0)
	if e != nil {
		id = e.id
	} else {
		id = rec.ID
	}
	xs, err := s.store.Samples(r.Context(), id)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, dbError(err))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"job": id, "interval_seconds": SampleInterval.Seconds(), "samples": xs})
}

// handleEvents streams a job as Server-Sent Events: "snapshot" events
// about 4 a second while it runs and a last one (done) at its end, then
// one "report" event with the job and its report, and the stream ends. A finished job gets the report event
// at once.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	e, rec, ok := s.find(w, r)
	if !ok {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(event string, n int, v any) error {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "event: %s\nid: %d\ndata: %s\n\n", event, n, data); err != nil {
			return err
		}
		return rc.Flush()
	}
	final := func(n int, rec *JobRecord) {
		send("report", n, map[string]any{"job": s.view(nil, rec), "report": json.RawMessage(orNull(rec.Report))})
	}
	if e == nil {
		final(1, rec) // ids count from 1, as a running job's snapshots do
		return
	}
	// The monitor takes one snapshot per SnapshotInterval for all the
	// job's streams; a slow client skips to the latest.
	sent := 0
	for {
		data, n, next := e.latest()
		if n > sent && data != nil {
			if _, err := fmt.Fprintf(w, "event: snapshot\nid: %d\ndata: %s\n\n", n, data); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
			sent = n
		}
		select {
		case <-r.Context().Done():
			return
		case <-e.done:
			if data, n, _ := e.latest(); n > sent && data != nil { // the last snapshot, Done, with the receivers' answers
				if _, err := fmt.Fprintf(w, "event: snapshot\nid: %d\ndata: %s\n\n", n, data); err != nil {
					return
				}
				sent = n
			}
			final(sent+1, e.final)
			return
		case <-next:
		}
	}
}

func orNull(b []byte) []byte {
	if b == nil {
		return []byte("null")
	}
	return b
}

func (s *Server) handlePreview(w http.ResponseWriter, r *http.Request) {
	var req PreviewRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.Frames < 0 {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: []FieldError{{Field: "frames", Value: strconv.Itoa(req.Frames), Reason: "is negative", Fix: "give a number of frames from 1 (0: 4)"}}})
		return
	}
	if req.Frames == 0 {
		req.Frames = 4
	}
	resp := PreviewResponse{Requested: req.Frames, Limit: s.opt.PreviewMax, Frames: []PreviewFrame{}}
	n := req.Frames
	if n > s.opt.PreviewMax {
		n, resp.Capped = s.opt.PreviewMax, true
	}
	spec := template.Default()
	if strings.TrimSpace(req.Template) != "" {
		var err error
		if spec, err = template.Parse("template", []byte(req.Template)); err != nil {
			writeJSON(w, http.StatusBadRequest, templateErrors(err))
			return
		}
	}
	resp.Template = spec.File
	frames, err := template.Preview(spec, n)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, templateErrors(err))
		return
	}
	for _, f := range frames {
		resp.Frames = append(resp.Frames, PreviewFrame{PreviewFrame: f, Hex: hex.EncodeToString(f.Bytes)})
	}
	resp.Ended = len(frames) < n
	writeJSON(w, http.StatusOK, resp)
}

func templateErrors(err error) ErrorBody {
	fe := FieldError{Field: "template", Reason: err.Error()}
	var te *template.Error
	if errors.As(err, &te) {
		withTemplate(&fe, te, false)
	}
	if fe.Fix == "" {
		fe.Fix = "correct the template (docs/templates.md)"
	}
	return ErrorBody{Errors: []FieldError{fe}}
}

func (s *Server) handleSysinfo(w http.ResponseWriter, _ *http.Request) {
	s.sysOnce.Do(func() {
		env, err := sysinfo.HostFS().Environment("")
		body := map[string]any{"environment": env, "features": sysinfo.Features()}
		if err != nil {
			body["error"] = err.Error()
		}
		s.sysJSON, _ = json.Marshal(body)
	})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(s.sysJSON)
}
