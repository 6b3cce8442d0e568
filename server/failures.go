package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
)

// logFailures logs every answer with a status of 500 or more (503 as a
// warning) with what it said, so that a 500's fix, "its log says more",
// holds: the method, the path, the client and the error.
func (s *Server) logFailures(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.code < 500 {
			return
		}
		level := slog.LevelError
		if rec.code == http.StatusServiceUnavailable {
			level = slog.LevelWarn
		}
		s.log.Log(r.Context(), level, "request failed", "status", rec.code, "method", r.Method, "path", r.URL.Path, "client", clientAddr(r), "err", rec.what())
	})
}

// recorder keeps the status of an answer and, for a failure, the start of
// its body and the reason a page gave (noteFailure).
type recorder struct {
	http.ResponseWriter
	code int
	note string
	body []byte // the first bytes of a failure's body
}

// maxNoted bounds the body a recorder keeps.
const maxNoted = 2048

func (rw *recorder) WriteHeader(code int) {
	if rw.code == 0 {
		rw.code = code
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *recorder) Write(b []byte) (int, error) {
	if rw.code == 0 {
		rw.code = http.StatusOK
	}
	if rw.code >= 500 && len(rw.body) < maxNoted {
		rw.body = append(rw.body, b[:min(len(b), maxNoted-len(rw.body))]...)
	}
	return rw.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// deadlines).
func (rw *recorder) Unwrap() http.ResponseWriter { return rw.ResponseWriter }

// what is the failure's reason: the page's note, an API error's line, or
// the text of the body.
func (rw *recorder) what() string {
	if rw.note != "" {
		return rw.note
	}
	var eb ErrorBody
	if json.Unmarshal(rw.body, &eb) == nil && eb.Error != "" {
		return eb.Error
	}
	return strings.TrimSpace(string(rw.body))
}

// noteFailure tells logFailures why a page failed (its body is HTML).
func noteFailure(w http.ResponseWriter, why string) {
	if rw, ok := w.(*recorder); ok {
		rw.note = why
	}
}
