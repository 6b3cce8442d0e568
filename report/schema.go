package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// MaxDocument bounds a report document that wpg reads back to draw it
// (wpg plot, wpg report html, a job's report.html).
const MaxDocument = 64 << 20

// ReadSchema is the first look at a report document doc: at most
// MaxDocument bytes, not blank, a JSON object. It returns the document's
// "schema" field ("" where it has none). A blank document's error says
// to give the JSON that what wrote (e.g. "wpg send or recv --json"); one
// that is not JSON says where (JSONError).
func ReadSchema(doc []byte, what string) (string, error) {
	if len(doc) > MaxDocument {
		return "", fmt.Errorf("report of %d bytes: at most %d", len(doc), MaxDocument)
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return "", errors.New("the file is empty: give the JSON that " + what + " wrote")
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(doc, &head); err != nil {
		return "", fmt.Errorf("not a wpg JSON report: %w", JSONError(doc, err))
	}
	return head.Schema, nil
}
