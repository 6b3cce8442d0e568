package server

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestBodyNotAnObject: a body that is not one JSON object (empty, null, an
// array, cut short, followed by more) is a 400 that says so and starts no
// job; a field of the wrong type names the JSON value it takes, never a Go
// type (uint64, time.Duration, server.CreateRequest).
func TestBodyNotAnObject(t *testing.T) {
	ts := newTest(t, Options{})
	for _, tc := range []struct{ path, body, field, reason string }{
		{"/api/v1/jobs", "", "", "the body is empty"},
		{"/api/v1/jobs", "null", "", "the body is a JSON null, not an object"},
		{"/api/v1/jobs", " [1]", "", "the body is a JSON array, not an object"},
		{"/api/v1/jobs", `"x"`, "", "the body is a JSON string, not an object"},
		{"/api/v1/jobs", `{"rate": "1kpps"`, "", "it ends inside the JSON value"},
		{"/api/v1/jobs", `{"rate": "1kpps"} {"count": 1}`, "", "more follows the JSON object"},
		{"/api/v1/jobs", `{"rate": }`, "", "the body is not valid JSON at byte 10: invalid character '}'"},
		{"/api/v1/jobs", `{"count": -1}`, "count", "is a JSON number -1: want a whole number from 0"},
		{"/api/v1/jobs", `{"rate": 5}`, "rate", "is a JSON number: want a string"},
		{"/api/v1/jobs", `{"duration": "1s"}`, "duration", "is a JSON string: want a whole number of nanoseconds"},
		{"/api/v1/jobs", `{"workers": true}`, "workers", "is a JSON bool: want a whole number"},
		{"/api/v1/preview", "null", "", "the body is a JSON null, not an object"},
		{"/api/v1/preview", `{"frames": "2"}`, "frames", "is a JSON string: want a whole number"},
	} {
		code, data := ts.do("POST", tc.path, tc.body)
		var eb ErrorBody
		if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil || len(eb.Errors) != 1 {
			t.Errorf("POST %s %q: %d %s; want 400 with one problem", tc.path, tc.body, code, data)
			continue
		}
		e := eb.Errors[0]
		if e.Field != tc.field || !strings.Contains(e.Reason, tc.reason) {
			t.Errorf("POST %s %q: field %q, reason %q; want field %q, a reason with %q", tc.path, tc.body, e.Field, e.Reason, tc.field, tc.reason)
		}
		for _, goName := range []string{"uint64", "int64", "time.Duration", "server.", "job.", "struct"} {
			if strings.Contains(e.Reason+e.Fix, goName) {
				t.Errorf("POST %s %q: %q names a Go type (%s)", tc.path, tc.body, e.Reason, goName)
			}
		}
	}
	code, data := ts.do("GET", "/api/v1/jobs", nil)
	var list struct {
		Total int `json:"total"`
	}
	if code != http.StatusOK || json.Unmarshal(data, &list) != nil || list.Total != 0 {
		t.Errorf("after the refused bodies: %d %s; want no job", code, data)
	}
}

// TestWrongMethodSaysWhichItTakes: a known API path asked with a method it
// does not take is a 405 Method Not Allowed (docs/api.md) whose Allow
// header and error name the methods it takes; an unknown path is a 404.
func TestWrongMethodSaysWhichItTakes(t *testing.T) {
	ts := newTest(t, Options{})
	for _, tc := range []struct {
		method, path string
		status       int
		allow, want  string
	}{
		{"PUT", "/api/v1/jobs/1", 405, "GET, HEAD, DELETE", "PUT /api/v1/jobs/1: method not allowed: this path takes GET, DELETE (docs/api.md)"},
		{"GET", "/api/v1/jobs/1/stop", 405, "POST", "GET /api/v1/jobs/1/stop: method not allowed: this path takes POST"},
		{"PUT", "/api/v1/jobs", 405, "GET, HEAD, POST", "this path takes GET, POST"},
		{"DELETE", "/api/v1/jobs", 405, "GET, HEAD, POST", "this path takes GET, POST"},
		{"GET", "/api/v1/preview", 405, "POST", "this path takes POST"},
		{"GET", "/api/v1/nope", 404, "", "no such endpoint: /api/v1/nope: use one of the endpoints docs/api.md lists"},
		{"PUT", "/api/v1/nope", 404, "", "no such endpoint: /api/v1/nope"},
	} {
		req, err := http.NewRequest(tc.method, ts.hs.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := ts.hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var eb ErrorBody
		if resp.StatusCode != tc.status || json.Unmarshal(data, &eb) != nil || !strings.Contains(eb.Error, tc.want) {
			t.Errorf("%s %s: %d %s; want %d with %q", tc.method, tc.path, resp.StatusCode, data, tc.status, tc.want)
		}
		if got := resp.Header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q; want %q", tc.method, tc.path, got, tc.allow)
		}
	}
	// What Allow promises is answered: HEAD on a path GET takes.
	if code, _ := ts.do("HEAD", "/api/v1/jobs", nil); code != http.StatusOK {
		t.Errorf("HEAD /api/v1/jobs: %d; want 200 (Allow names HEAD)", code)
	}
}
