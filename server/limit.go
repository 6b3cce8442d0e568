package server

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Wrong tokens are limited per client address: after failLimit wrong
// tokens (login form or Authorization header) within failWindow, that
// address gets 429 Too Many Requests until the window from its first
// failure has passed. A right token clears the count. The table is
// bounded (failClients addresses; expired entries go first, then the
// oldest), so no flood of addresses can grow it.
const (
	failLimit   = 10
	failWindow  = time.Minute
	failClients = 4096
)

type failLimiter struct {
	mu  sync.Mutex
	m   map[string]failEntry
	now func() time.Time
}

type failEntry struct {
	n     int
	first time.Time
}

func newFailLimiter() *failLimiter {
	return &failLimiter{m: map[string]failEntry{}, now: time.Now}
}

// blocked reports whether client has used up its wrong tokens, and for
// how much longer.
func (l *failLimiter) blocked(client string) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[client]
	if !ok {
		return 0, false
	}
	left := failWindow - l.now().Sub(e.first)
	if left <= 0 {
		delete(l.m, client)
		return 0, false
	}
	return left, e.n >= failLimit
}

// fail counts a wrong token from client.
func (l *failLimiter) fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	e, ok := l.m[client]
	if !ok || now.Sub(e.first) >= failWindow {
		if !ok && len(l.m) >= failClients {
			l.evict(now)
		}
		e = failEntry{first: now}
	}
	e.n++
	l.m[client] = e
}

// ok forgets client's wrong tokens (it gave the right one).
func (l *failLimiter) ok(client string) {
	l.mu.Lock()
	delete(l.m, client)
	l.mu.Unlock()
}

// evict makes room: expired entries, or else the oldest one.
func (l *failLimiter) evict(now time.Time) {
	var oldest string
	var at time.Time
	for k, e := range l.m {
		if now.Sub(e.first) >= failWindow {
			delete(l.m, k)
			continue
		}
		if oldest == "" || e.first.Before(at) {
			oldest, at = k, e.first
		}
	}
	if len(l.m) >= failClients {
		delete(l.m, oldest)
	}
}

// tooManyFailures answers a client that has used up its wrong tokens.
func (s *Server) tooManyFailures(w http.ResponseWriter, left time.Duration) {
	secs := int(left/time.Second) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeJSON(w, http.StatusTooManyRequests, apiError(fmt.Sprintf("too many wrong tokens from this address (%d in %v)", failLimit, failWindow), fmt.Sprintf("try again in %d s with the token wpg serve was given", secs), 0))
}
