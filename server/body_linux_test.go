package server

import (
	"encoding/json"
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
// does not take is a 404 (docs/api.md) that names the methods it takes,
// not "no such endpoint" for a path that GET answers.
func TestWrongMethodSaysWhichItTakes(t *testing.T) {
	ts := newTest(t, Options{})
	for _, tc := range []struct{ method, path, want string }{
		{"PUT", "/api/v1/jobs/1", "PUT /api/v1/jobs/1: no such endpoint: this path takes GET, DELETE (docs/api.md)"},
		{"GET", "/api/v1/jobs/1/stop", "GET /api/v1/jobs/1/stop: no such endpoint: this path takes POST"},
		{"DELETE", "/api/v1/jobs", "this path takes GET, POST"},
		{"GET", "/api/v1/preview", "this path takes POST"},
		{"GET", "/api/v1/nope", "no such endpoint: /api/v1/nope: use one of the endpoints docs/api.md lists"},
	} {
		code, data := ts.do(tc.method, tc.path, nil)
		var eb ErrorBody
		if code != http.StatusNotFound || json.Unmarshal(data, &eb) != nil || !strings.Contains(eb.Error, tc.want) {
			t.Errorf("%s %s: %d %s; want 404 with %q", tc.method, tc.path, code, data, tc.want)
		}
	}
}
