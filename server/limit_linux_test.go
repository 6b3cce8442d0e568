package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for the limiter.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Wrong tokens from one address are limited: after failLimit of them in
// failWindow every call (the right token too) gets 429 with Retry-After,
// the login form as well, until the window has passed.
func TestWrongTokenLimit(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	ts.s.fails.now = clock.now
	ts.tok = ""
	for i := range failLimit {
		if code, _ := ts.do("GET", "/api/v1/jobs", nil, "Authorization", "Bearer guess"+fmt.Sprint(i)); code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d, want 401", i, code)
		}
	}
	code, body := ts.do("GET", "/api/v1/jobs", nil, "Authorization", "Bearer "+testToken)
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), "too many wrong tokens") {
		t.Fatalf("after %d wrong tokens, the right one: %d %s, want 429", failLimit, code, body)
	}
	resp, err := http.PostForm(ts.hs.URL+"/login", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("login while blocked: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	clock.add(failWindow)
	if code, _ := ts.do("GET", "/api/v1/jobs", nil, "Authorization", "Bearer "+testToken); code != http.StatusOK {
		t.Errorf("after the window, the right token: %d, want 200", code)
	}
	// Wrong logins count too, and a right one clears the count.
	for range failLimit - 1 {
		resp, err := http.PostForm(ts.hs.URL+"/login", url.Values{"token": {"nope"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err = client.PostForm(ts.hs.URL+"/login", url.Values{"token": {testToken}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("right login after %d wrong ones: %d", failLimit-1, resp.StatusCode)
	}
	if _, blocked := ts.s.fails.blocked("127.0.0.1"); blocked {
		t.Error("still blocked after a right login")
	}
}

// The table of addresses stays bounded however many addresses fail.
func TestFailLimiterBounded(t *testing.T) {
	l := newFailLimiter()
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	l.now = clock.now
	for i := range 3 * failClients {
		l.fail(fmt.Sprintf("198.18.%d.%d", i/256, i%256))
		clock.add(time.Millisecond)
	}
	if len(l.m) > failClients {
		t.Fatalf("%d addresses kept, at most %d", len(l.m), failClients)
	}
}
