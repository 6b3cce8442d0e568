package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestLoginPageNoLogOutWithoutSession: the login page offers Log out only
// to someone logged in; before, it showed the button to everyone it asked
// for the token (the other pages, behind the login, keep it).
func TestLoginPageNoLogOutWithoutSession(t *testing.T) {
	ts := newTest(t, Options{Token: testToken})
	if resp, html := ts.page("GET", "/login", nil, nil); resp.StatusCode != http.StatusOK || strings.Contains(html, `action="/logout"`) {
		t.Errorf("login page without a session: %d, Log out shown: %v", resp.StatusCode, strings.Contains(html, `action="/logout"`))
	}
	cookie := ts.login()
	if resp, html := ts.page("GET", "/login", nil, cookie); resp.StatusCode != http.StatusOK || !strings.Contains(html, `action="/logout"`) {
		t.Errorf("login page with a session: %d, no Log out", resp.StatusCode)
	}
	if resp, html := ts.page("GET", "/", nil, cookie); resp.StatusCode != http.StatusOK || !strings.Contains(html, `action="/logout"`) {
		t.Errorf("jobs page with a session: %d, no Log out", resp.StatusCode)
	}
}
