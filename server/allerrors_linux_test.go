package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestAPITypeErrorsShowTheValue: a field of the wrong type names the
// value given ("ten", true, [1]), not the kind of JSON value it was
// ("string"), and every such field is listed at once, with the problems
// the rest of the spec has.
func TestAPITypeErrorsShowTheValue(t *testing.T) {
	ts := newTest(t, Options{})
	code, data := ts.do("POST", "/api/v1/jobs", `{"count": "ten", "workers": true, "rate": "fast", "batch": [1, 2], "nosuch": 1, "limits": {"rate": 5}}`)
	var eb ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil {
		t.Fatalf("%d %s", code, data)
	}
	got := map[string]FieldError{}
	var order []string
	for _, e := range eb.Errors {
		got[e.Field] = e
		order = append(order, e.Field)
	}
	for field, value := range map[string]string{"count": "ten", "workers": "true", "batch": "[1,2]", "rate": "fast", "limits.rate": "5"} {
		e, ok := got[field]
		switch {
		case !ok:
			t.Errorf("%s is not listed (listed: %v)\n%s", field, order, data)
		case e.Value != value:
			t.Errorf("%s: value %q, want %q (the value given)", field, e.Value, value)
		case e.Reason == "" || e.Fix == "":
			t.Errorf("%s: reason %q, fix %q", field, e.Reason, e.Fix)
		}
	}
	if e := got["count"]; !strings.Contains(e.Reason, "is a JSON string: want a whole number from 0") {
		t.Errorf("count: reason %q", e.Reason)
	}
	if _, ok := got["nosuch"]; !ok {
		t.Errorf("the unknown field is not listed (listed: %v)", order)
	}
	// The body's order: the fields that could not be read, then what
	// validation found in the rest.
	if len(order) < 6 || order[0] != "count" || order[1] != "workers" || order[2] != "batch" || order[3] != "nosuch" || order[4] != "limits.rate" {
		t.Errorf("order %v", order)
	}
	if !strings.Contains(eb.Error, `count "ten": is a JSON string`) {
		t.Errorf("error line: %s", eb.Error)
	}
	// A long value is cut short.
	long := strings.Repeat("x", 500)
	code, data = ts.do("POST", "/api/v1/jobs", `{"count": "`+long+`"}`)
	if json.Unmarshal(data, &eb) != nil || code != http.StatusBadRequest || len(eb.Errors) != 1 || len(eb.Errors[0].Value) > 80 || !strings.HasSuffix(eb.Errors[0].Value, "…") {
		t.Errorf("a long value: %d %s", code, data)
	}
}

// TestFormListsEveryError: the new-job form lists every problem at once,
// as the API does: values the form cannot read, labels too long, and
// what validation finds in the rest.
func TestFormListsEveryError(t *testing.T) {
	ts := newTest(t, Options{})
	form := url.Values{"backend": {"null"}, "count": {"ten"}, "rate": {"fast"}, "workers": {"0"}, "name": {strings.Repeat("n", 300)}}
	resp, html := ts.page("POST", "/jobs", form, nil)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("%d\n%s", resp.StatusCode, html)
	}
	for _, want := range []string{"<code>count</code> = <code>ten</code>", "<code>rate</code> = <code>fast</code>", "<code>workers</code> = <code>0</code>", "<code>name</code>"} {
		if !strings.Contains(html, want) {
			t.Errorf("the form does not list %s", want)
		}
	}
	// The API lists the same fields for the same job.
	code, data := ts.do("POST", "/api/v1/jobs", map[string]any{"backend": "null", "count": "ten", "rate": "fast", "workers": 0, "name": strings.Repeat("n", 300)})
	var eb ErrorBody
	if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil {
		t.Fatalf("API: %d %s", code, data)
	}
	for _, e := range eb.Errors {
		if !strings.Contains(html, "<code>"+e.Field+"</code>") {
			t.Errorf("the API lists %s (%s), the form does not", e.Field, e.Reason)
		}
	}
	if strings.Count(html, "<li>") != len(eb.Errors) {
		t.Errorf("the form lists %d problems, the API %d: %s", strings.Count(html, "<li>"), len(eb.Errors), data)
	}
}
