package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestUnknownPageIsAPage: a page address the UI does not have (a typo, an
// old bookmark) is the UI's own 404 page with the way back, not Go's bare
// "404 page not found" text; the API's unknown paths stay JSON.
func TestUnknownPageIsAPage(t *testing.T) {
	ts := newTest(t, Options{})
	for _, p := range []string{"/nope", "/jobs", "/jobs/1/nope", "/job/1"} {
		resp, body := ts.page("GET", p, nil, nil)
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(body, "No such page") || !strings.Contains(body, `href="/"`) {
			t.Errorf("GET %s: %d %s:\n%.400s", p, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}
	if resp, _ := ts.page("GET", "/api/v1/nope", nil, nil); !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("GET /api/v1/nope: %s, want JSON", resp.Header.Get("Content-Type"))
	}
	if resp, _ := ts.page("GET", "/", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET /: %d", resp.StatusCode)
	}
}

// TestRunAgainFromNothing: "run again" from a job that is not there (or a
// bad ID) says so above the form of defaults, instead of silently giving
// the defaults as if they were that job's.
func TestRunAgainFromNothing(t *testing.T) {
	ts := newTest(t, Options{})
	for p, want := range map[string]string{
		"/jobs/new?from=999": "there is no job 999 to run again",
		"/jobs/new?from=abc": "is not a job ID",
	} {
		resp, body := ts.page("GET", p, nil, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, page lacks %q", p, resp.StatusCode, want)
		}
	}
	if _, body := ts.page("GET", "/jobs/new", nil, nil); strings.Contains(body, "the form has the defaults") {
		t.Errorf("a plain new-job page has the notice")
	}
}
