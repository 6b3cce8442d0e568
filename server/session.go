package server

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CookieName is the web UI's session cookie: HttpOnly, SameSite=Strict,
// accepted wherever "Authorization: Bearer" is.
const CookieName = "wpg_session"

// DefaultSessionTTL is how long a login lasts (Options.SessionTTL).
const DefaultSessionTTL = 12 * time.Hour

// maxSessions bounds the sessions a server keeps: a new login past it
// ends the oldest.
const maxSessions = 4096

// sessions are the web UI's logins: each a random cookie value of its
// own, kept (as its SHA-256) in memory only, so a restart ends them all,
// until it expires or its owner logs out.
type sessions struct {
	mu  sync.Mutex
	m   map[[sha256.Size]byte]time.Time // the value's hash -> expiry
	ttl time.Duration
	now func() time.Time
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{m: map[[sha256.Size]byte]time.Time{}, ttl: ttl, now: time.Now}
}

// create starts a session and returns its cookie value.
func (ss *sessions) create() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	v := base64.RawURLEncoding.EncodeToString(b[:])
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	if len(ss.m) >= maxSessions {
		var oldest [sha256.Size]byte
		var at time.Time
		for k, exp := range ss.m {
			if !exp.After(now) {
				delete(ss.m, k)
			} else if at.IsZero() || exp.Before(at) {
				oldest, at = k, exp
			}
		}
		if len(ss.m) >= maxSessions {
			delete(ss.m, oldest)
		}
	}
	ss.m[sha256.Sum256([]byte(v))] = now.Add(ss.ttl)
	return v, nil
}

// valid reports whether v is a session that has not ended.
func (ss *sessions) valid(v string) bool {
	k := sha256.Sum256([]byte(v))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	exp, ok := ss.m[k]
	if ok && !exp.After(ss.now()) {
		delete(ss.m, k)
		return false
	}
	return ok
}

// revoke ends session v.
func (ss *sessions) revoke(v string) {
	k := sha256.Sum256([]byte(v))
	ss.mu.Lock()
	delete(ss.m, k)
	ss.mu.Unlock()
}

// cookieAuthorized reports whether r carries the cookie of a session
// that has not ended.
func (s *Server) cookieAuthorized(r *http.Request) bool {
	c, err := r.Cookie(CookieName)
	return err == nil && s.sessions.valid(c.Value)
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
	v, err := s.sessions.create()
	if err != nil {
		s.render(w, http.StatusInternalServerError, "login", "Log in", loginData{Next: next, Error: "no session: " + err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: v, Path: "/", HttpOnly: true, MaxAge: int(s.sessions.ttl / time.Second),
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// handleLogout ends the request's session on the server and deletes its
// cookie.
func (s *Server) handleLogout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(CookieName); err == nil {
		s.sessions.revoke(c.Value)
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// authorized reports whether r carries the token (always, without one):
// as "Authorization: Bearer TOKEN" or as the web UI's session cookie.
func (s *Server) authorized(r *http.Request) bool {
	if s.opt.Token == "" {
		return true
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return s.cookieAuthorized(r)
	}
	const pfx = "Bearer "
	if len(h) < len(pfx) || !strings.EqualFold(h[:len(pfx)], pfx) {
		return false
	}
	got := sha256.Sum256([]byte(h[len(pfx):]))
	want := sha256.Sum256([]byte(s.opt.Token))
	return subtle.ConstantTimeCompare(got[:], want[:]) == 1
}
