package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wpg-dev/wpg/internal/sys"
)

// TestEveryErrorHasAFix walks the API's error cases, a spec field at a
// time, the body, the query parameters, job IDs and the preview, and
// checks that every error the API returns has a reason and a fix, apart:
// several 400s had an empty fix with the remedy inside the reason ("give
// 1 to 256 …" as the reason of workers 1000), which a client that shows
// the fix beside the field could not show.
func TestEveryErrorHasAFix(t *testing.T) {
	ts := newTest(t, Options{})
	cases := []struct{ method, path, body string }{
		// the body
		{"POST", "/api/v1/jobs", ``},
		{"POST", "/api/v1/jobs", `not json`},
		{"POST", "/api/v1/jobs", `{"rate": `},
		{"POST", "/api/v1/jobs", `[1]`},
		{"POST", "/api/v1/jobs", `{} {}`},
		{"POST", "/api/v1/jobs", `{"rate": 5}`},
		{"POST", "/api/v1/jobs", `{"duration": "10s"}`},
		{"POST", "/api/v1/jobs", `{"count": -1}`},
		{"POST", "/api/v1/jobs", `{"nosuch": 1}`},
		{"POST", "/api/v1/jobs", `{"name": "` + strings.Repeat("n", MaxStartedBy+1) + `"}`},
		// a spec field at a time
		{"POST", "/api/v1/jobs", `{"backend": "nope"}`},
		{"POST", "/api/v1/jobs", `{"workers": 1000}`},
		{"POST", "/api/v1/jobs", `{"workers": 0}`},
		{"POST", "/api/v1/jobs", `{"batch": 0}`},
		{"POST", "/api/v1/jobs", `{"backend": "afpacket", "interface": "lo", "ring_depth": -1}`},
		{"POST", "/api/v1/jobs", `{"duration": -1}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "slots": -5}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "fail_under": 2}`},
		{"POST", "/api/v1/jobs", `{"backend": "pcapfile"}`},
		{"POST", "/api/v1/jobs", `{"backend": "afpacket"}`},
		{"POST", "/api/v1/jobs", `{"backend": "afpacket", "interface": "lo", "tx_copy": "x"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "rt_priority": 200}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "burst": -1}`},
		{"POST", "/api/v1/jobs", `{"backend": "pipe", "start_receiver": true, "pipe_size": 1}`},
		{"POST", "/api/v1/jobs", `{"rate": "fast"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1000"}`},
		{"POST", "/api/v1/jobs", `{"rate": "10GBps"}`},
		{"POST", "/api/v1/jobs", `{"rate": "200%"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1Tpps"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "rate_layer": "l9"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "wait": "nap"}`},
		{"POST", "/api/v1/jobs", `{"rate": "1kpps", "wake_boost": "x"}`},
		{"POST", "/api/v1/jobs", `{"clock": "sundial"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "size": "huge"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "size": "2GiB"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "size": "1"}`},
		{"POST", "/api/v1/jobs", `{"size": "huge"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "verify": "maybe"}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "payload_file": "/nonexistent/x"}`},
		{"POST", "/api/v1/jobs", `{"template": "/nonexistent.wpg.yaml"}`},
		{"POST", "/api/v1/jobs", `{"template_text": "streams: [\n  {name: x, bad: 1}\n]\n"}`},
		{"POST", "/api/v1/jobs", `{"template_text": "streams:\n  - ipv4: {src: 2001:db8::1}\n"}`},
		{"POST", "/api/v1/jobs", `{"plan": "eager"}`},
		{"POST", "/api/v1/jobs", `{"cores": "abc"}`},
		{"POST", "/api/v1/jobs", `{"cores": "5-2"}`},
		{"POST", "/api/v1/jobs", `{"cores": "99999"}`},
		{"POST", "/api/v1/jobs", `{"cores": "0", "auto_pin": true}`},
		{"POST", "/api/v1/jobs", `{"cores": "0", "workers": 2}`},
		{"POST", "/api/v1/jobs", `{"qdisc_bypass": true}`},
		{"POST", "/api/v1/jobs", `{"wait": "spin"}`},
		{"POST", "/api/v1/jobs", `{"backend": "pipe", "count": 10}`},
		{"POST", "/api/v1/jobs", `{"backend": "shm", "start_receiver": true, "raw": true}`},
		// query parameters and IDs
		{"GET", "/api/v1/jobs?limit=0", ``},
		{"GET", "/api/v1/jobs?offset=-1&limit=x", ``},
		{"GET", "/api/v1/jobs/abc", ``},
		{"GET", "/api/v1/jobs/0/report", ``},
		// the preview
		{"POST", "/api/v1/preview", `{"frames": -1}`},
		{"POST", "/api/v1/preview", `{"template": "streams: [\n  {name: x, bad: 1}\n]\n"}`},
		{"POST", "/api/v1/preview", `{"template": "streams:\n  - udp: {dport: 70000}\n"}`},
		{"POST", "/api/v1/preview", `nope`},
	}
	for _, c := range cases {
		code, data := ts.do(c.method, c.path, c.body)
		if code != http.StatusBadRequest {
			t.Errorf("%s %s %.80s: %d, want 400: %s", c.method, c.path, c.body, code, data)
			continue
		}
		var body ErrorBody
		if err := json.Unmarshal(data, &body); err != nil || len(body.Errors) == 0 {
			t.Errorf("%s %s %.80s: no errors[] in %s", c.method, c.path, c.body, data)
			continue
		}
		if body.Error == "" {
			t.Errorf("%s %s %.80s: no error line in %s", c.method, c.path, c.body, data)
		}
		for _, e := range body.Errors {
			switch {
			case e.Reason == "" || e.Fix == "":
				t.Errorf("%s %s %.80s: field %q has reason %q, fix %q: want both", c.method, c.path, c.body, e.Field, e.Reason, e.Fix)
			case strings.Contains(e.Reason, e.Fix):
				t.Errorf("%s %s %.80s: field %q: the reason %q holds the fix %q: want them apart", c.method, c.path, c.body, e.Field, e.Reason, e.Fix)
			}
		}
	}
}

// checkErrorShape fails unless data is an error body of the one shape
// every API error has (docs/api.md): errors[] of at least one problem with
// a reason and a fix apart, and error, the same in one line.
func checkErrorShape(t *testing.T, what string, data []byte) ErrorBody {
	t.Helper()
	var raw map[string]json.RawMessage
	var body ErrorBody
	if err := json.Unmarshal(data, &raw); err != nil || json.Unmarshal(data, &body) != nil {
		t.Errorf("%s: not a JSON error body: %s", what, data)
		return body
	}
	if _, ok := raw["errors"]; !ok || len(body.Errors) == 0 {
		t.Errorf("%s: no errors[] in %s", what, data)
	}
	if body.Error == "" {
		t.Errorf("%s: no error line in %s", what, data)
	}
	for _, e := range body.Errors {
		switch {
		case e.Reason == "" || e.Fix == "":
			t.Errorf("%s: reason %q, fix %q: want both", what, e.Reason, e.Fix)
		case strings.Contains(e.Reason, e.Fix):
			t.Errorf("%s: the reason %q holds the fix %q: want them apart", what, e.Reason, e.Fix)
		case !strings.Contains(body.Error, e.Reason) || !strings.Contains(body.Error, e.Fix):
			t.Errorf("%s: the error line %q lacks the reason or the fix of %+v", what, body.Error, e)
		}
	}
	return body
}

// TestEveryStatusHasTheShape walks the API's errors other than 400 (404,
// 409, 401, 403, 413, 429, 500, 503) and checks that each has the shape of
// a 400: a reason and a fix apart, in errors[]; they were one "error"
// string, which a client showing the fix beside the form could not split.
func TestEveryStatusHasTheShape(t *testing.T) {
	ts := newTest(t, Options{MaxBody: 4096})
	running := ts.create(`{"rate": "1kpps"}`)
	defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", running.ID), nil)
	ended := ts.create(`{"count": 10}`)
	ts.wait(ended.ID)
	type want struct {
		method, path, body string
		code               int
		job                int64
		hdr                []string
	}
	cases := []want{
		{"GET", "/api/v1/jobs/999", "", http.StatusNotFound, 0, nil},
		{"DELETE", "/api/v1/jobs/999", "", http.StatusNotFound, 0, nil},
		{"GET", "/api/v1/jobs/999/report", "", http.StatusNotFound, 0, nil},
		{"GET", "/api/v1/nope", "", http.StatusNotFound, 0, nil},
		{"PUT", "/api/v1/jobs/1", "", http.StatusMethodNotAllowed, 0, nil},
		{"DELETE", fmt.Sprintf("/api/v1/jobs/%d", running.ID), "", http.StatusConflict, running.ID, nil},
		{"GET", fmt.Sprintf("/api/v1/jobs/%d/report", running.ID), "", http.StatusConflict, running.ID, nil},
		{"POST", fmt.Sprintf("/api/v1/jobs/%d/stop", ended.ID), "", http.StatusConflict, ended.ID, nil},
		{"POST", "/api/v1/jobs", `{"name": "` + strings.Repeat("x", 5000) + `"}`, http.StatusRequestEntityTooLarge, 0, nil},
		{"POST", "/api/v1/jobs", `{}`, http.StatusForbidden, 0, []string{"Sec-Fetch-Site", "cross-site"}},
	}
	if allowed, err := sys.AllowedCPUs(); err == nil && len(allowed) > 0 {
		c := strconv.Itoa(allowed[0])
		held := ts.create(`{"rate": "1kpps", "cores": "` + c + `"}`)
		defer ts.do("POST", fmt.Sprintf("/api/v1/jobs/%d/stop", held.ID), nil)
		cases = append(cases, want{"POST", "/api/v1/jobs", `{"rate": "1kpps", "cores": "` + c + `"}`, http.StatusConflict, held.ID, nil})
	}
	for _, c := range cases {
		what := fmt.Sprintf("%s %s %.40s", c.method, c.path, c.body)
		code, data := ts.do(c.method, c.path, c.body, c.hdr...)
		if code != c.code {
			t.Errorf("%s: %d, want %d: %s", what, code, c.code, data)
			continue
		}
		if b := checkErrorShape(t, what, data); b.Job != c.job {
			t.Errorf("%s: job %d, want %d", what, b.Job, c.job)
		}
	}

	// The token: 401, then 429 after too many wrong ones.
	tk := newTest(t, Options{Token: testToken})
	tk.tok = "wrong"
	code, data := tk.do("GET", "/api/v1/jobs", nil)
	if code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d %s", code, data)
	}
	checkErrorShape(t, "401", data)
	for range failLimit {
		code, data = tk.do("GET", "/api/v1/jobs", nil)
	}
	if code != http.StatusTooManyRequests {
		t.Errorf("too many wrong tokens: %d %s", code, data)
	}
	checkErrorShape(t, "429", data)

	// Shutting down: 503.
	ts.s.mu.Lock()
	ts.s.closing = true
	ts.s.mu.Unlock()
	code, data = ts.do("POST", "/api/v1/jobs", `{"count": 1}`)
	ts.s.mu.Lock()
	ts.s.closing = false
	ts.s.mu.Unlock()
	if code != http.StatusServiceUnavailable {
		t.Errorf("while shutting down: %d %s", code, data)
	}
	checkErrorShape(t, "503", data)

	// The job database failing: 500 (a server of its own, whose database
	// is closed under it).
	s, err := New(context.Background(), Options{DB: filepath.Join(t.TempDir(), "jobs.db")})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	s.store.db.Close()
	resp, err := hs.Client().Get(hs.URL + "/api/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("a closed database: %d %s", resp.StatusCode, data)
	}
	checkErrorShape(t, "500", data)
	s.Close()
}
