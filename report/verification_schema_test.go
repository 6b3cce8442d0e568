package report

import (
	"encoding/json"
	"testing"
)

// TestMergeVerificationKeepsSchema: the merged report of several
// receivers still names its schema (issue #17 item 16).
func TestMergeVerificationKeepsSchema(t *testing.T) {
	one := json.RawMessage(`{"schema":"wpg.recv/v1","frames":2,"lost":0}`)
	var m map[string]any
	if err := json.Unmarshal(MergeVerification([]json.RawMessage{one, one}), &m); err != nil {
		t.Fatal(err)
	}
	if m["schema"] != "wpg.recv/v1" || m["frames"] != 4.0 || m["receivers"] != 2.0 {
		t.Fatalf("merged %v", m)
	}
}
