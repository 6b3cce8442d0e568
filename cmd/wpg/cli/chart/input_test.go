package chart

import (
	"strings"
	"testing"
)

// TestPlotsBadInput: a report that is empty, cut short, not JSON, not an
// object, or has a field of the wrong type is refused with where (line and
// column) and what is wrong in JSON terms, never with the Go types it was
// to be decoded into.
func TestPlotsBadInput(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"", "the file is empty: give the JSON that wpg bench, send or recv --json wrote"},
		{" \n\t\n", "the file is empty"},
		{"{", "not a wpg JSON report: line 1, column 2: the JSON ends early (was the file cut short?)"},
		{"{\"schema\": \"wpg.bench/v1\",\n \"tables\": [", "line 2, column 13: the JSON ends early"},
		{"{\"schema\": \"wpg.report/v1\",\n  \"intervals\": [1, }\n", "not a wpg JSON report: line 2, column 21: invalid character '}' looking for beginning of value"},
		{"[1, 2]", "line 1, column 1: the document is a JSON array: a wpg report is an object with a \"schema\" field"},
		{"{\n \"schema\": \"wpg.bench/v1\",\n \"tables\": [{\"size\": \"big\"}]\n}", "matrix report: line 3, column 22: field \"tables.size\" is a JSON string: want a number"},
		{"{\"schema\": \"wpg.report/v1\", \"frames\": \"many\"}", "report: line 1, column 39: field \"frames\" is a JSON string: want a number"},
	}
	for _, tc := range cases {
		_, err := Plots([]byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want it to contain %q", tc.doc, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "struct")) {
			t.Errorf("%q: the error names Go types: %v", tc.doc, err)
		}
	}
}
