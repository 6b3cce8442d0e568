package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestProblemsNameJSONFields: a 400's reason and fix name the fields as a
// client of the API writes them (fifo, start_receiver), never the
// {placeholder} form job.OptionError keeps for each front end to fill in.
func TestProblemsNameJSONFields(t *testing.T) {
	ts := newTest(t, Options{})
	for _, body := range []string{
		`{"backend": "pipe", "count": 10}`,
		`{"backend": "pipe", "raw": true, "count": 10}`,
		`{"pcap_speed": 2, "rate": "1kpps", "pcap": "/nonexistent.pcap"}`,
	} {
		code, data := ts.do("POST", "/api/v1/jobs", body)
		var eb ErrorBody
		if code != http.StatusBadRequest || json.Unmarshal(data, &eb) != nil || len(eb.Errors) == 0 {
			t.Errorf("%s: %d %s; want 400 with problems", body, code, data)
			continue
		}
		for _, e := range eb.Errors {
			if strings.ContainsAny(e.Reason+e.Fix, "{}") {
				t.Errorf("%s: field %s: reason %q, fix %q: a {placeholder} was left", body, e.Field, e.Reason, e.Fix)
			}
		}
	}
	if !strings.Contains(jsonNames("give {fifo} or {start_receiver}"), "give fifo or start_receiver") {
		t.Errorf("jsonNames: %q", jsonNames("give {fifo} or {start_receiver}"))
	}
	if got := jsonNames("write {from: 1, to: 2}"); got != "write {from: 1, to: 2}" {
		t.Errorf("jsonNames changed a YAML mapping: %q", got)
	}
}

// TestFinishedJobEventID: the stream of a finished job is its report event
// alone, with id 1: event ids count from 1 (docs/api.md), never 0.
func TestFinishedJobEventID(t *testing.T) {
	ts := newTest(t, Options{})
	v := ts.create(`{"count": 10}`)
	if got := ts.wait(v.ID); got.Status != StatusDone {
		t.Fatalf("%+v", got)
	}
	code, data := ts.do("GET", fmt.Sprintf("/api/v1/jobs/%d/events", v.ID), "")
	if code != http.StatusOK || !strings.HasPrefix(string(data), "event: report\nid: 1\n") || strings.Count(string(data), "event: ") != 1 {
		t.Errorf("%d %q; want one report event with id 1", code, data)
	}
}

// TestWholeNumberOutOfRange: a whole number too large for its field (or
// negative for a count) is said to be out of range with the field's
// bounds, by the API and by the form; they said it was not a whole number.
func TestWholeNumberOutOfRange(t *testing.T) {
	ts := newTest(t, Options{})
	for body, want := range map[string]string{
		`{"count": 18446744073709551616}`: "is out of range: want a whole number from 0 to 18446744073709551615",
		`{"count": -5}`:                   "is a JSON number -5: want a whole number from 0",
		`{"batch": 9223372036854775808}`:  "is out of range: want a whole number from -9223372036854775808 to 9223372036854775807",
	} {
		code, data := ts.do("POST", "/api/v1/jobs", body)
		if code != http.StatusBadRequest || !strings.Contains(string(data), want) {
			t.Errorf("%s: %d %s; want 400 and %q", body, code, data, want)
		}
	}
	for field, want := range map[string]string{
		"count": "is out of range: want a whole number from 0 to 18446744073709551615",
		"batch": "is out of range: want a whole number from -9223372036854775808 to 9223372036854775807",
	} {
		fe := func() *FieldError {
			_, fe := formValue(field, reflect.TypeFor[uint64](), "18446744073709551616")
			if field == "batch" {
				_, fe = formValue(field, reflect.TypeFor[int](), "99999999999999999999")
			}
			return fe
		}()
		if fe == nil || fe.Reason != want {
			t.Errorf("form %s: %+v; want %q", field, fe, want)
		}
	}
}
