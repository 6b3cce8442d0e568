package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/wpg-dev/wpg/job"
	wpgtemplate "github.com/wpg-dev/wpg/template"
)

func (s *Server) formTooLarge(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		http.Error(w, s.tooLarge(), http.StatusRequestEntityTooLarge)
		return
	}
	if bodyTimedOut(err) {
		http.Error(w, s.slowBody().line(), http.StatusRequestTimeout)
		return
	}
	http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
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

func (s *Server) newData(ctx context.Context, form url.Values) newData {
	if form == nil {
		form = url.Values{"workers": {"1"}, "rate": {"10kpps"}, "duration": {"10s"}, "backend": {"null"}}
	}
	d := newData{Form: form, Backends: s.Backends(), Examples: s.ui.examples, Template: form.Get("template_text")}
	if _, ok := form["template_text"]; !ok {
		d.Template = string(wpgtemplate.DefaultYAML())
	}
	d.Preview = s.previewData(ctx, d.Template, 4)
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
	d := s.newData(r.Context(), form)
	d.Notice = notice
	s.render(w, http.StatusOK, "new", "New job", d)
}

func (s *Server) handleNewJob(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.formTooLarge(w, err)
		return
	}
	form := r.PostForm
	req, fes := s.requestOf(form)
	if fes = append(fes, checkLabels(req.Name, req.StartedBy)...); fes != nil {
		d := s.newData(r.Context(), form)
		d.Errors = s.problemsWith(r.Context(), fes, req.Spec)
		s.render(w, http.StatusBadRequest, "new", "New job", d)
		return
	}
	e, err := s.create(r.Context(), Creator{Name: req.Name, StartedBy: req.StartedBy, Client: clientAddr(r)}, req.Spec)
	if err != nil {
		d := s.newData(r.Context(), form)
		code := http.StatusBadRequest
		var conflict *ConflictError
		var busy *busyError
		switch {
		case job.AsProblems(err) != nil:
			d.Errors = problemsBody(job.AsProblems(err)).Errors
		case errors.As(err, &conflict):
			code = http.StatusConflict
			d.Errors = []FieldError{{Field: "cores", Value: job.FormatCPUList(conflict.Cores), Reason: err.Error()}}
			if conflict.AutoPin {
				d.Errors[0].Field, d.Errors[0].Value = "auto_pin", fmt.Sprintf("%d workers", conflict.Workers)
			}
		case errors.As(err, &busy):
			code = http.StatusTooManyRequests
			busy.retryAfter(w)
			d.Errors = busy.body().Errors
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

// previewData is the preview fragment: frames or the template's problem.
type previewData struct {
	Frames []PreviewFrame
	Errors []FieldError
	Capped bool
	Limit  int
}

func (s *Server) previewData(ctx context.Context, text string, n int) previewData {
	d := previewData{Limit: s.opt.PreviewMax}
	if n > s.opt.PreviewMax {
		n, d.Capped = s.opt.PreviewMax, true
	}
	_, frames, code, eb := s.preview(ctx, text, n)
	if code != http.StatusOK {
		d.Errors = eb.Errors
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
	s.fragment(w, http.StatusOK, "new", "preview", s.previewData(r.Context(), r.PostForm.Get("template_text"), n))
}
