package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Defaults of the admission caps (Options.MaxJobs, Options.MaxParses).
const (
	DefaultMaxJobs   = 32
	DefaultMaxParses = 2
)

// busyError is a request refused because the server is at one of its caps
// (429 with Retry-After).
type busyError struct {
	reason, fix string
	retry       time.Duration
}

func (e *busyError) Error() string { return e.reason + ": " + e.fix }

// body is the API's 429 for e.
func (e *busyError) body() ErrorBody { return apiError(e.reason, e.fix, 0) }

// answer writes e's Retry-After (whole seconds, at least 1).
func (e *busyError) retryAfter(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int((e.retry+time.Second-1)/time.Second))))
}

// jobsBusy is the refusal of a job beyond Options.MaxJobs.
func (s *Server) jobsBusy(n int) *busyError {
	return &busyError{
		reason: fmt.Sprintf("%d jobs are running or starting, the most this server runs at once (server.max_jobs)", n),
		fix:    "start it again when one has ended, or stop one; wpg serve --max-jobs (server.max_jobs) sets the cap",
		retry:  5 * time.Second,
	}
}

// parsesBusy is the refusal of a parse beyond Options.MaxParses.
func (s *Server) parsesBusy() *busyError {
	return &busyError{
		reason: fmt.Sprintf("%d templates are being parsed (previews, job checks and starts), the most this server parses at once (server.max_parses)", s.opt.MaxParses),
		fix:    "try again in a moment; wpg serve --max-parses (server.max_parses) sets the cap",
		retry:  time.Second,
	}
}

// parseSlot takes one of the Options.MaxParses turns to parse a template,
// waiting up to parseWait (or until ctx ends) for one; release gives it
// back. False: none came free.
func (s *Server) parseSlot(ctx context.Context) (release func(), ok bool) {
	select {
	case s.parses <- struct{}{}:
		return func() { <-s.parses }, true
	default:
	}
	t := time.NewTimer(s.parseWait)
	defer t.Stop()
	select {
	case s.parses <- struct{}{}:
		return func() { <-s.parses }, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}

// unfinishedLocked is how many jobs run or start now.
func (s *Server) unfinishedLocked() int { return len(s.running) + len(s.pending) }
