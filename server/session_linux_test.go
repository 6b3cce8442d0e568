package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"
)

// login logs in at the form and returns the session cookie.
func (ts *testServer) login() *http.Cookie {
	ts.t.Helper()
	resp, html := ts.page("POST", "/login", url.Values{"token": {ts.tok}, "next": {"/"}}, nil)
	for _, c := range resp.Cookies() {
		if c.Name == CookieName && c.Value != "" {
			return &http.Cookie{Name: c.Name, Value: c.Value}
		}
	}
	ts.t.Fatalf("login: %d %v\n%.300s", resp.StatusCode, resp.Cookies(), html)
	return nil
}

// status is the status of GET path with cookie c and no token.
func (ts *testServer) status(path string, c *http.Cookie) int {
	ts.t.Helper()
	resp, _ := ts.page("GET", path, nil, c)
	return resp.StatusCode
}

// TestSessions: each login gets a session of its own (random, never a
// function of the token), which logging out revokes on the server, which
// expires after Options.SessionTTL, and which a restarted server does not
// know.
func TestSessions(t *testing.T) {
	db := filepath.Join(t.TempDir(), "jobs.db")
	ts := newTest(t, Options{DB: db, Token: testToken})
	clock := &fakeClock{t: time.Unix(2e9, 0)}
	ts.s.sessions.now = clock.now
	a, b := ts.login(), ts.login()
	if a.Value == b.Value || len(a.Value) < 32 {
		t.Fatalf("two logins: %q and %q; want two random sessions", a.Value, b.Value)
	}
	for _, v := range []string{testToken, hex.EncodeToString(func() []byte { h := sha256.Sum256([]byte("wpg serve session\x00" + testToken)); return h[:] }())} {
		if a.Value == v {
			t.Fatalf("the session is a function of the token: %q", a.Value)
		}
		if code := ts.status("/api/v1/jobs", &http.Cookie{Name: CookieName, Value: v}); code != http.StatusUnauthorized {
			t.Errorf("a cookie made from the token (%.12s…): %d; want 401", v, code)
		}
	}
	if ts.status("/api/v1/jobs", a) != http.StatusOK || ts.status("/", b) != http.StatusOK {
		t.Fatal("fresh sessions refused")
	}
	// Logging out ends that session on the server, not only in the browser.
	if resp, _ := ts.page("POST", "/logout", url.Values{}, a); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", resp.StatusCode)
	}
	if code := ts.status("/api/v1/jobs", a); code != http.StatusUnauthorized {
		t.Errorf("the logged-out session: %d; want 401", code)
	}
	if code := ts.status("/", a); code != http.StatusSeeOther {
		t.Errorf("a page with the logged-out session: %d; want 303 to the login", code)
	}
	if ts.status("/api/v1/jobs", b) != http.StatusOK {
		t.Error("logging out one session ended another")
	}
	// Sessions expire.
	clock.add(DefaultSessionTTL - time.Minute)
	if ts.status("/api/v1/jobs", b) != http.StatusOK {
		t.Error("a session ended before its time")
	}
	clock.add(2 * time.Minute)
	if code := ts.status("/api/v1/jobs", b); code != http.StatusUnauthorized {
		t.Errorf("an expired session: %d; want 401", code)
	}
	// A restarted server knows none of the old sessions.
	c := ts.login()
	ts.hs.Close()
	ts.s.Close()
	s2, err := New(context.Background(), Options{DB: db, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	ts2 := &testServer{t: t, s: s2, hs: httptest.NewServer(s2.Handler()), tok: testToken}
	defer func() { ts2.hs.Close(); s2.Close() }()
	if code := ts2.status("/api/v1/jobs", c); code != http.StatusUnauthorized {
		t.Errorf("a session of the server before the restart: %d; want 401", code)
	}
	if ts2.status("/api/v1/jobs", ts2.login()) != http.StatusOK {
		t.Error("a new login after the restart refused")
	}
}
