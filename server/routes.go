package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/jobs", s.handleCreate)
	mux.HandleFunc("GET /api/v1/jobs", s.handleList)
	mux.HandleFunc("GET /api/v1/jobs/{id}", s.handleGet)
	mux.HandleFunc("POST /api/v1/jobs/{id}/stop", s.handleStop)
	mux.HandleFunc("DELETE /api/v1/jobs/{id}", s.handleDelete)
	mux.HandleFunc("GET /api/v1/jobs/{id}/report", s.handleReport)
	mux.HandleFunc("GET /api/v1/jobs/{id}/report.html", s.handleReportHTML)
	mux.HandleFunc("GET /api/v1/jobs/{id}/samples", s.handleSamples)
	mux.HandleFunc("GET /api/v1/jobs/{id}/events", s.handleEvents)
	mux.HandleFunc("POST /api/v1/preview", s.handlePreview)
	mux.HandleFunc("GET /api/v1/backends", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"backends": s.Backends()})
	})
	mux.HandleFunc("GET /api/v1/sysinfo", s.handleSysinfo)
	mux.HandleFunc("GET /api/v1/openapi.json", s.handleOpenAPI) // openapi.go
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		// A known path asked with a method it does not take is a 405 that
		// says which it takes, in Allow and in the error (the catch-all
		// keeps the mux from answering its own plain-text 405).
		var takes, allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			q := r.Clone(r.Context())
			q.Method = m
			if _, p := mux.Handler(q); m != r.Method && p != "" && p != "/api/v1/" {
				takes = append(takes, m)
				allow = append(allow, m)
				if m == http.MethodGet { // the mux answers HEAD where GET is
					allow = append(allow, http.MethodHead)
				}
			}
		}
		if len(takes) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeJSON(w, http.StatusMethodNotAllowed, apiError(fmt.Sprintf("%s %s: method not allowed", r.Method, r.URL.Path), fmt.Sprintf("this path takes %s (docs/api.md)", strings.Join(takes, ", ")), 0))
			return
		}
		writeJSON(w, http.StatusNotFound, apiError("no such endpoint: "+r.URL.Path, "use one of the endpoints docs/api.md lists (they start /api/v1/jobs, /api/v1/preview, /api/v1/backends, /api/v1/sysinfo; /api/v1/openapi.json describes them all)", 0))
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
	h = s.checkHost(h) // first: a request for another host name is no one's
	h = s.logFailures(h)
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
		if r.Body != nil && r.Body != http.NoBody {
			// The whole body must arrive within BodyTimeout (a client
			// sending a byte every few seconds held its connection for
			// ever); the deadline ends with the body, so an event stream
			// or a long handler after it is not cut off.
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(s.opt.BodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxBody)
		next.ServeHTTP(w, r)
	})
}

// deadlineBody clears the connection's read deadline once the body has
// been read to its end.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// bodyTimedOut reports whether err is a body that did not arrive within
// Options.BodyTimeout.
func bodyTimedOut(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// slowBody is the answer to such a body (408).
func (s *Server) slowBody() ErrorBody {
	return apiError(fmt.Sprintf("the request body did not arrive within %v", s.opt.BodyTimeout), "send the whole body at once, on a connection that can carry it", 0)
}
