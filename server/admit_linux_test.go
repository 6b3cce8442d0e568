package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// retryAfter posts body to path and checks the answer is 429 with a
// Retry-After of whole seconds and an error naming key.
func (ts *testServer) busy(method, path, body, key string) {
	ts.t.Helper()
	req, err := http.NewRequest(method, ts.hs.URL+path, strings.NewReader(body))
	if err != nil {
		ts.t.Fatal(err)
	}
	resp, err := ts.hs.Client().Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	defer resp.Body.Close()
	var eb ErrorBody
	json.NewDecoder(resp.Body).Decode(&eb)
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 || !strings.Contains(eb.Error, key) {
		ts.t.Errorf("%s %s: %d, Retry-After %q, %q; want 429 with Retry-After and %s", method, path, resp.StatusCode, resp.Header.Get("Retry-After"), eb.Error, key)
	}
}

// TestAdmission: the server runs at most Options.MaxJobs jobs
// (server.max_jobs) and parses at most Options.MaxParses templates at once
// (server.max_parses: previews, a job's checks and its start); beyond
// either it answers 429 with Retry-After (the new-job page's preview says
// so in place), and takes the request again once there is room.
func TestAdmission(t *testing.T) {
	ts := newTest(t, Options{MaxJobs: 2, MaxParses: 1})
	ts.s.parseWait = 10 * time.Millisecond
	a := ts.create(`{"rate": "100pps"}`)
	b := ts.create(`{"rate": "100pps"}`)
	ts.busy("POST", "/api/v1/jobs", `{"rate": "100pps"}`, "server.max_jobs")
	resp, html := ts.page("POST", "/jobs", url.Values{"backend": {"null"}, "rate": {"100pps"}}, nil)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(html, "server.max_jobs") {
		t.Errorf("the form's third job: %d %.300s", resp.StatusCode, html)
	}
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", a.ID), nil)
	ts.wait(a.ID)
	c := ts.create(`{"rate": "100pps"}`)

	// The one parse slot taken: previews and job starts wait, then 429.
	release, ok := ts.s.parseSlot(t.Context())
	if !ok {
		t.Fatal("no parse slot free")
	}
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", b.ID), nil)
	ts.wait(b.ID)
	ts.busy("POST", "/api/v1/preview", `{"frames": 1}`, "server.max_parses")
	ts.busy("POST", "/api/v1/jobs", `{"count": 1}`, "server.max_parses")
	resp, html = ts.page("POST", "/ui/preview", url.Values{"template_text": {""}}, nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(html, "server.max_parses") {
		t.Errorf("the new-job page's preview while busy: %d %.300s", resp.StatusCode, html)
	}
	release()
	if code, data := ts.do("POST", "/api/v1/preview", `{"frames": 1}`); code != http.StatusOK {
		t.Errorf("preview after the slot came free: %d %s", code, data)
	}
	ts.wait(ts.create(`{"count": 1}`).ID)
	ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", c.ID), nil)
	ts.wait(c.ID)
}
