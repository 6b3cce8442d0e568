package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CookieName is the web UI's session cookie: HttpOnly, SameSite=Strict,
// accepted wherever "Authorization: Bearer" is.
const CookieName = "wpg_session"

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
