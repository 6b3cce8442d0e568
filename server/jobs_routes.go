package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/wpg-dev/wpg/job"
	reporthtml "github.com/wpg-dev/wpg/report/html"
)

// Paging of GET /api/v1/jobs.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

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

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	raw, ok := s.readBody(w, r)
	if !ok {
		return
	}
	req := CreateRequest{Spec: job.NewSpec()}
	fes := decodeFields(raw, &req)
	if fes = append(fes, checkLabels(req.Name, req.StartedBy)...); fes != nil {
		writeJSON(w, http.StatusBadRequest, ErrorBody{Errors: s.problemsWith(r.Context(), fes, req.Spec)})
		return
	}
	e, err := s.create(r.Context(), Creator{Name: req.Name, StartedBy: req.StartedBy, Client: clientAddr(r)}, req.Spec)
	var conflict *ConflictError
	var busy *busyError
	switch {
	case err == nil:
		w.Header().Set("Location", fmt.Sprintf("/api/v1/jobs/%d", e.id))
		writeJSON(w, http.StatusCreated, s.view(e, nil))
	case job.AsProblems(err) != nil:
		writeJSON(w, http.StatusBadRequest, problemsBody(job.AsProblems(err)))
	case errors.As(err, &conflict):
		writeJSON(w, http.StatusConflict, conflict.body())
	case errors.As(err, &busy):
		busy.retryAfter(w)
		writeJSON(w, http.StatusTooManyRequests, busy.body())
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

// findReport resolves {id} to a finished job with a report; false when it
// has answered (400, 404: no job or no report, 409: running).
func (s *Server) findReport(w http.ResponseWriter, r *http.Request) (*JobRecord, bool) {
	e, rec, ok := s.find(w, r)
	if !ok {
		return nil, false
	}
	switch {
	case e != nil:
		writeJSON(w, http.StatusConflict, apiError(fmt.Sprintf("job %d is still running: its report comes at its end", e.id), fmt.Sprintf("wait for its end (GET /api/v1/jobs/%d/events ends with it) or stop it (POST /api/v1/jobs/%d/stop)", e.id, e.id), e.id))
		return nil, false
	case rec.Report == nil:
		fix := fmt.Sprintf("mend what its error says and start the job again (GET /api/v1/jobs/%d has its spec)", rec.ID)
		if rec.Status == StatusInterrupted {
			fix = fmt.Sprintf("start the job again (GET /api/v1/jobs/%d has its spec; GET /api/v1/jobs/%d/samples has its seconds up to then)", rec.ID, rec.ID)
		}
		writeJSON(w, http.StatusNotFound, apiError(fmt.Sprintf("job %d (%s) has no report: %s", rec.ID, rec.Status, rec.Error), fix, rec.ID))
		return nil, false
	}
	return rec, true
}

func (s *Server) handleReport(w http.ResponseWriter, r *http.Request) {
	if rec, ok := s.findReport(w, r); ok {
		var b bytes.Buffer
		json.HTMLEscape(&b, rec.Report)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(b.Bytes())
	}
}

// reportPageCSP is the Content-Security-Policy of a job's HTML report: the
// page is self-contained (report/html: inline styles and SVG, no script,
// nothing to fetch), so it may load nothing, run nothing, and it is
// sandboxed, an origin of its own, whatever its text holds.
const reportPageCSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// handleReportHTML serves a finished job's report as the self-contained
// HTML page of wpg report html (package report/html).
func (s *Server) handleReportHTML(w http.ResponseWriter, r *http.Request) {
	rec, ok := s.findReport(w, r)
	if !ok {
		return
	}
	// The seconds the server stored for the job are the report's
	// intervals, as --interval gives a CLI run's.
	xs, err := s.store.Samples(r.Context(), rec.ID)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, dbError(err))
		return
	}
	var seconds struct {
		Seconds float64 `json:"seconds"`
	}
	_ = json.Unmarshal(rec.Report, &seconds)
	var b bytes.Buffer
	if err := reporthtml.Render(&b, withIntervals(rec.Report, sampleIntervals(xs, seconds.Seconds))); err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError(fmt.Sprintf("job %d's report as HTML: %v", rec.ID, err), fmt.Sprintf("GET /api/v1/jobs/%d/report has it as JSON; report this: the server stored a report it cannot show", rec.ID), rec.ID))
		return
	}
	pageHeaders(w) // a page's, with its own policy
	w.Header().Set("Content-Security-Policy", reportPageCSP)
	// Saved, the file is named for the job.
	w.Header().Set("Content-Disposition", fmt.Sprintf(`inline; filename="wpg-job-%d.html"`, rec.ID))
	w.Write(b.Bytes())
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
