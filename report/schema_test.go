package report

import (
	"strings"
	"testing"
)

// ReadSchema: the schema of a report, "" for an object without one, and
// each malformed document refused with what is wrong.
func TestReadSchema(t *testing.T) {
	if s, err := ReadSchema([]byte(`{"schema": "wpg.report/v2", "frames": 1}`), "wpg send --json"); s != "wpg.report/v2" || err != nil {
		t.Errorf("a report: %q, %v", s, err)
	}
	if s, err := ReadSchema([]byte(`{"frames": 1}`), "wpg send --json"); s != "" || err != nil {
		t.Errorf("no schema: %q, %v", s, err)
	}
	for doc, want := range map[string]string{
		" \n":                              "the file is empty: give the JSON that wpg send --json wrote",
		`[1]`:                              "not a wpg JSON report: line 1, column 1: the document is a JSON array",
		`{"schema": `:                      "not a wpg JSON report: line 1, column 12: the JSON ends early",
		strings.Repeat(" ", MaxDocument+1): "report of 67108865 bytes: at most 67108864",
	} {
		if _, err := ReadSchema([]byte(doc), "wpg send --json"); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%.20q: %v; want %q", doc, err, want)
		}
	}
}
